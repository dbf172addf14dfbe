/**
 * Text the model is shown: a tool's output, rendered and capped in size.
 *
 * @internal
 */

/** Options of `renderValue`. */
export interface RenderOptions {
  /** The largest UTF-8 size of the text kept, in bytes; 65536 (64 KiB) by default. */
  readonly maxBytes?: number | undefined
}

/** The default output limit: 64 KiB of UTF-8. */
export const DEFAULT_MAX_BYTES = 65536

/**
 * Renders a tool's (encoded) output as the text the model sees: a string as is, anything else as
 * compact JSON (a `bigint` as its digits in a string, a circular reference as `"[Circular]"`,
 * `undefined` and other values with no JSON form as `null`). Text longer than `maxBytes` UTF-8 bytes
 * is cut on a character boundary and `…[truncated N bytes]` is appended, N being the bytes dropped.
 */
export const renderValue = (value: unknown, options?: RenderOptions): string =>
  truncate(typeof value === "string" ? value : toJson(value), options?.maxBytes ?? DEFAULT_MAX_BYTES)

const toJson = (value: unknown): string => {
  try {
    // The ancestors of the value being visited: a value that is its own ancestor is a cycle;
    // a value merely seen twice (a shared reference) is rendered twice.
    const ancestors: Array<unknown> = []
    const json = JSON.stringify(value, function (this: unknown, _key: string, v: unknown): unknown {
      if (typeof v === "bigint") return v.toString()
      if (typeof v !== "object" || v === null) return v
      while (ancestors.length > 0 && ancestors[ancestors.length - 1] !== this) ancestors.pop()
      if (ancestors.includes(v)) return "[Circular]"
      ancestors.push(v)
      return v
    }) as string | undefined
    return json ?? "null"
  } catch (error) {
    // A throwing `toJSON` or getter: say so rather than fail the call.
    return JSON.stringify(`[unrenderable value: ${error instanceof Error ? error.message : String(error)}]`)
  }
}

const utf8Length = (unit: number, next: number): number =>
  unit < 0x80 ? 1 : unit < 0x800 ? 2 : isPair(unit, next) ? 4 : 3

const isPair = (unit: number, next: number): boolean =>
  unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff

/** Cuts `text` to at most `maxBytes` UTF-8 bytes, never inside a surrogate pair, and marks the cut. */
const truncate = (text: string, maxBytes: number): string => {
  const limit = Math.max(0, maxBytes)
  // Each UTF-16 code unit is at most 3 UTF-8 bytes: most outputs fit without counting.
  if (text.length * 3 <= limit) return text
  let bytes = 0
  let cut = -1
  let keptBytes = 0
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    const size = utf8Length(unit, text.charCodeAt(i + 1))
    if (cut < 0 && bytes + size > limit) {
      cut = i
      keptBytes = bytes
    }
    bytes += size
    if (size === 4) i++
  }
  return cut < 0 ? text : `${text.slice(0, cut)}…[truncated ${bytes - keptBytes} bytes]`
}
