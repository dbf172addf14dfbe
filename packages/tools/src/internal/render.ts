/**
 * Text the model is shown: a tool's output, rendered and capped in size.
 *
 * @internal
 */
import { errorMessage, Utf8 } from "@agentkit/core"

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
  Utf8.truncate(typeof value === "string" ? value : toJson(value), options?.maxBytes ?? DEFAULT_MAX_BYTES)

const toJson = (value: unknown): string => {
  try {
    // The ancestors of the value being visited: a value that is its own ancestor is a cycle;
    // a value merely seen twice (a shared reference) is rendered twice.
    const ancestors: Array<unknown> = []
    const json = JSON.stringify(value, function(this: unknown, _key: string, v: unknown): unknown {
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
    return JSON.stringify(`[unrenderable value: ${errorMessage(error)}]`)
  }
}
