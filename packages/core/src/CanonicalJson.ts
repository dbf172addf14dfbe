/**
 * Canonical JSON and stable hashes of JSON-like values: one encoding for every key that must not
 * depend on object key order (idempotency, audit, cache keys, approval digests).
 *
 * @since 0.1.0
 */
import { createHash } from "node:crypto"
import { compare } from "./PythonText.js"

const write = (value: unknown, path: Set<object>): string => {
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
  if (value === null) return "null"
  const object = value as object
  if (path.has(object)) return '"[Circular]"'
  path.add(object)
  try {
    if (Array.isArray(object)) return `[${object.map((item) => write(item, path)).join(",")}]`
    if (object instanceof Date) return JSON.stringify(Number.isNaN(object.getTime()) ? "Invalid Date" : object.toISOString())
    if (object instanceof Map) {
      const entries = Array.from(object, ([k, v]) => [write(k, path), write(v, path)] as const)
      entries.sort((a, b) => compare(a[0], b[0]))
      return `{"$map":[${entries.map(([k, v]) => `[${k},${v}]`).join(",")}]}`
    }
    if (object instanceof Set) {
      const items = Array.from(object, (item) => write(item, path)).sort(compare)
      return `{"$set":[${items.join(",")}]}`
    }
    if (ArrayBuffer.isView(object)) {
      return JSON.stringify(Buffer.from(object.buffer, object.byteOffset, object.byteLength).toString("base64"))
    }
    const toJSON = (object as { readonly toJSON?: unknown }).toJSON
    if (typeof toJSON === "function") {
      const json: unknown = toJSON.call(object)
      if (json !== object) return write(json, path)
    }
    const keys = Object.keys(object).sort(compare)
    const parts: Array<string> = []
    for (const key of keys) {
      const item = (object as Record<string, unknown>)[key]
      if (item === undefined) continue
      parts.push(`${JSON.stringify(key)}:${write(item, path)}`)
    }
    return `{${parts.join(",")}}`
  } finally {
    path.delete(object)
  }
}

/**
 * Canonical JSON: object keys sorted by code point at every level, `undefined` members dropped,
 * deterministic texts for values JSON has no form for (BigInt, non-finite numbers, cycles, Map,
 * Set, typed arrays). Never contains a memory address.
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
export const stringify = (value: unknown): string => write(value, new Set())

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
 * idempotency and audit keys and the approval digest use it).
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
 * `hash` of an object that is never changed after it is hashed (a tool call's arguments),
 * computed once per object: the audit and idempotency middleware of one call share it.
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
export const hashOnce = (value: object): string => {
  let hashed = objectHashes.get(value)
  if (hashed === undefined) {
    hashed = hash(value)
    objectHashes.set(value, hashed)
  }
  return hashed
}
