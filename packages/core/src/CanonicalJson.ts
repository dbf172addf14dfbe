/**
 * Canonical JSON and stable hashes of JSON-like values: one encoding for every key that must not
 * depend on object key order (idempotency, audit, cache keys, approval digests).
 *
 * @since 0.1.0
 */
import type * as NodeCrypto from "node:crypto"
import { createRequire } from "node:module"
import { CanonicalJsonError } from "./CanonicalJsonError.js"
import { compare } from "./PythonText.js"

// node:crypto is loaded on the first hash, not when the package is imported (it costs a few ms of
// the import, issue 19); `createRequire` works on every Node 20 (`process.getBuiltinModule` only
// from 20.16).
let nodeCrypto: typeof NodeCrypto | undefined
const createHash = (algorithm: string): NodeCrypto.Hash =>
  (nodeCrypto ??= createRequire(import.meta.url)("node:crypto") as typeof NodeCrypto).createHash(algorithm)

/** What kind of object a frame writes. */
type Kind = "array" | "object" | "map" | "set" | "toJSON"

/** An object being written: its children, read and visited one at a time, and their texts so far. */
class Frame {
  readonly parts: Array<string> = []
  index = 0
  constructor(
    readonly kind: Kind,
    readonly object: object,
    /** The array's items, the object's sorted keys, the map's keys and values in turn, the set's items, or `[json]`. */
    readonly items: ReadonlyArray<unknown>
  ) {}

  /** The path segment of the child being read (for the error's path). */
  label(): string {
    const i = this.index - 1
    switch (this.kind) {
      case "array":
        return String(i)
      case "object":
        return this.items[i] as string
      case "map":
        return `<map entry ${i >> 1} ${i % 2 === 0 ? "key" : "value"}>`
      case "set":
        return `<set item ${i}>`
      case "toJSON":
        return "toJSON()"
    }
  }

  /** Adds the text of the child just read. */
  add(text: string): void {
    this.parts.push(this.kind === "object" ? `${JSON.stringify(this.items[this.index - 1])}:${text}` : text)
  }

  finish(): string {
    const parts = this.parts
    switch (this.kind) {
      case "array":
        return `[${parts.join(",")}]`
      case "object":
        return `{${parts.join(",")}}`
      case "map": {
        const entries: Array<readonly [string, string]> = []
        for (let i = 0; i < parts.length; i += 2) entries.push([parts[i]!, parts[i + 1]!])
        entries.sort((a, b) => compare(a[0], b[0]))
        return `{"$map":[${entries.map(([k, v]) => `[${k},${v}]`).join(",")}]}`
      }
      case "set":
        return `{"$set":[${parts.sort(compare).join(",")}]}`
      case "toJSON":
        return parts[0]!
    }
  }
}

const MAX_REASON = 200

/** The text of a leaf, or `undefined` for an object (a frame to open). */
const leaf = (value: unknown): string | undefined => {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value)
    case "number":
      return Number.isFinite(value) ? JSON.stringify(value) : JSON.stringify(String(value))
    case "boolean":
      return value ? "true" : "false"
    case "bigint":
      return JSON.stringify(`${value}n`)
    case "undefined":
      return "null"
    case "symbol":
      return JSON.stringify(value.toString())
    case "function":
      return JSON.stringify(`[function ${value.name}]`)
  }
  return value === null ? "null" : undefined
}

/** Opens the frame of an object, or returns its text when it has no children to visit. */
const open = (object: object): Frame | string => {
  // an array's hole reads `undefined` and is written `null`, as JSON.stringify does
  if (Array.isArray(object)) return new Frame("array", object, object)
  if (object instanceof Date) {
    return JSON.stringify(Number.isNaN(object.getTime()) ? "Invalid Date" : object.toISOString())
  }
  if (object instanceof Map) {
    const children: Array<unknown> = []
    for (const [k, v] of object) children.push(k, v)
    return new Frame("map", object, children)
  }
  if (object instanceof Set) return new Frame("set", object, Array.from(object))
  if (ArrayBuffer.isView(object)) {
    return JSON.stringify(Buffer.from(object.buffer, object.byteOffset, object.byteLength).toString("base64"))
  }
  const toJSON = (object as { readonly toJSON?: unknown }).toJSON
  if (typeof toJSON === "function") {
    const json: unknown = toJSON.call(object)
    if (json !== object) return new Frame("toJSON", object, [json])
  }
  return new Frame("object", object, Object.keys(object).sort(compare))
}

const pathOf = (stack: ReadonlyArray<Frame>): string =>
  stack.length === 0 ? "(root)" : stack.map((frame) => frame.label()).join(".")

const reasonOf = (error: unknown): string => {
  let text: string
  try {
    text = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
  } catch {
    text = "a value that cannot be read"
  }
  return text.length > MAX_REASON ? `${text.slice(0, MAX_REASON)}…` : text
}

/**
 * Writes `value` without recursion: an explicit stack of open objects, so no depth of nesting can
 * overflow the call stack. A cycle (an object met again inside itself) is written `"[Circular]"`;
 * a shared object met twice side by side is written twice.
 */
const write = (value: unknown): string => {
  const stack: Array<Frame> = []
  const onPath = new Set<object>()
  try {
    let text = leaf(value)
    if (text === undefined) {
      const opened = open(value as object)
      if (typeof opened === "string") return opened
      stack.push(opened)
      onPath.add(opened.object)
    }
    for (;;) {
      const top = stack[stack.length - 1]
      if (top === undefined) return text!
      if (text !== undefined) top.add(text)
      text = undefined
      if (top.index === top.items.length) {
        stack.pop()
        onPath.delete(top.object)
        text = top.finish()
        continue
      }
      const at = top.index++
      const child = top.kind === "object"
        ? (top.object as Record<string, unknown>)[top.items[at] as string]
        : top.items[at]
      if (child === undefined && top.kind === "object") continue
      const childText = leaf(child)
      if (childText !== undefined) {
        top.add(childText)
        continue
      }
      const object = child as object
      if (onPath.has(object)) {
        top.add("\"[Circular]\"")
        continue
      }
      const opened = open(object)
      if (typeof opened === "string") {
        top.add(opened)
        continue
      }
      stack.push(opened)
      onPath.add(object)
    }
  } catch (error) {
    // A getter, proxy trap or `toJSON` that throws, or a text past the engine's string limit.
    throw new CanonicalJsonError({ path: pathOf(stack), reason: reasonOf(error) })
  }
}

/**
 * Canonical JSON: object keys sorted by code point at every level, `undefined` members dropped,
 * deterministic texts for values JSON has no form for (BigInt, non-finite numbers, cycles, Map,
 * Set, typed arrays). Never contains a memory address. It is written without recursion, so any
 * depth of nesting is fine; a value that cannot be read (a getter, proxy trap or `toJSON` that
 * throws, or a text longer than the engine's string limit) throws `CanonicalJsonError` naming the
 * path, and never anything else.
 *
 * @example
 * ```ts
 * import { CanonicalJson } from "@agentkit/core"
 *
 * CanonicalJson.stringify({ b: 1, a: [2, { d: 3, c: undefined }] }) // '{"a":[2,{"d":3}],"b":1}'
 * ```
 *
 * @since 0.1.0
 * @category encoding
 */
export const stringify = (value: unknown): string => write(value)

/**
 * SHA-256 (hex) of a string.
 *
 * @example
 * ```ts
 * import { CanonicalJson } from "@agentkit/core"
 *
 * CanonicalJson.sha256("abc").length // 64
 * ```
 *
 * @since 0.1.0
 * @category hashing
 */
export const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex")

/**
 * A stable hash of a value: SHA-256 of its canonical JSON, so key order never changes it (the
 * idempotency and audit keys and the approval digest use it). Throws `CanonicalJsonError` for a
 * value that cannot be read, like `stringify`.
 *
 * @example
 * ```ts
 * import { CanonicalJson } from "@agentkit/core"
 *
 * CanonicalJson.hash({ a: 1, b: 2 }) === CanonicalJson.hash({ b: 2, a: 1 }) // true
 * ```
 *
 * @since 0.1.0
 * @category hashing
 */
export const hash = (value: unknown): string => sha256(stringify(value))

const objectHashes = new WeakMap<object, string>()

/**
 * `hash` of a value that is never changed after it is hashed (a tool call's arguments), computed
 * once per object: the audit and idempotency middleware of one call share it. Any value is
 * accepted (a primitive is simply hashed); like `hash`, it throws `CanonicalJsonError` for a
 * value that cannot be read, and a failure is not cached.
 *
 * @example
 * ```ts
 * import { CanonicalJson } from "@agentkit/core"
 *
 * const args = Object.freeze({ order_id: "A-771" })
 * CanonicalJson.hashOnce(args) === CanonicalJson.hash(args) // true, and the second call is a lookup
 * ```
 *
 * @since 0.1.0
 * @category hashing
 */
export const hashOnce = (value: unknown): string => {
  if (typeof value !== "object" || value === null) return hash(value)
  let hashed = objectHashes.get(value)
  if (hashed === undefined) {
    hashed = hash(value)
    objectHashes.set(value, hashed)
  }
  return hashed
}
