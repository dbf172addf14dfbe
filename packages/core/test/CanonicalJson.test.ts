import { CanonicalJson, CanonicalJsonError, PythonText } from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"

describe("CanonicalJson", () => {
  it("sorts keys at every level and drops undefined members", () => {
    expect(CanonicalJson.stringify({ b: 1, a: [2, { d: 3, c: undefined }] })).toBe("{\"a\":[2,{\"d\":3}],\"b\":1}")
  })

  it("has a text for what JSON cannot say: BigInt, non-finite numbers, cycles, Map, Set, Date", () => {
    const cyclic: { self?: unknown } = {}
    cyclic.self = cyclic
    expect(CanonicalJson.stringify([10n, Number.NaN, cyclic])).toBe("[\"10n\",\"NaN\",{\"self\":\"[Circular]\"}]")
    expect(CanonicalJson.stringify(new Map([["b", 1], ["a", 2]]))).toBe("{\"$map\":[[\"a\",2],[\"b\",1]]}")
    expect(CanonicalJson.stringify(new Set(["b", "a"]))).toBe("{\"$set\":[\"a\",\"b\"]}")
    expect(CanonicalJson.stringify(new Date(0))).toBe("\"1970-01-01T00:00:00.000Z\"")
  })

  it("hashes equal values alike whatever their key order, and different values apart", () => {
    expect(CanonicalJson.hash({ a: 1, b: { c: 2, d: 3 } })).toBe(CanonicalJson.hash({ b: { d: 3, c: 2 }, a: 1 }))
    expect(CanonicalJson.hash({ a: 1 })).not.toBe(CanonicalJson.hash({ a: 2 }))
    expect(CanonicalJson.sha256("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
  })
})

/** The recursive writer this module had before it was made iterative: the texts must not change (digests are stored). */
const recursive = (value: unknown, path: Set<object> = new Set()): string => {
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
  if (path.has(object)) return "\"[Circular]\""
  path.add(object)
  try {
    if (Array.isArray(object)) return `[${object.map((item) => recursive(item, path)).join(",")}]`
    if (object instanceof Date) {
      return JSON.stringify(Number.isNaN(object.getTime()) ? "Invalid Date" : object.toISOString())
    }
    if (object instanceof Map) {
      const entries = Array.from(object, ([k, v]) => [recursive(k, path), recursive(v, path)] as const)
      entries.sort((a, b) => PythonText.compare(a[0], b[0]))
      return `{"$map":[${entries.map(([k, v]) => `[${k},${v}]`).join(",")}]}`
    }
    if (object instanceof Set) {
      const items = Array.from(object, (item) => recursive(item, path)).sort(PythonText.compare)
      return `{"$set":[${items.join(",")}]}`
    }
    if (ArrayBuffer.isView(object)) {
      return JSON.stringify(Buffer.from(object.buffer, object.byteOffset, object.byteLength).toString("base64"))
    }
    const toJSON = (object as { readonly toJSON?: unknown }).toJSON
    if (typeof toJSON === "function") {
      const json: unknown = toJSON.call(object)
      if (json !== object) return recursive(json, path)
    }
    const parts: Array<string> = []
    for (const key of Object.keys(object).sort(PythonText.compare)) {
      const item = (object as Record<string, unknown>)[key]
      if (item === undefined) continue
      parts.push(`${JSON.stringify(key)}:${recursive(item, path)}`)
    }
    return `{${parts.join(",")}}`
  } finally {
    path.delete(object)
  }
}

const nest = (depth: number, leaf: unknown, wrap: (inner: unknown) => unknown): unknown => {
  let value = leaf
  for (let i = 0; i < depth; i++) value = wrap(value)
  return value
}

const catchError = (f: () => unknown): unknown => {
  try {
    f()
  } catch (error) {
    return error
  }
  throw new Error("expected a throw")
}

describe("CanonicalJson: hostile values", () => {
  it("writes exactly what the recursive writer wrote, for any value fast-check makes (property)", () => {
    const extra = fc.oneof(
      fc.bigInt().map((n) => n),
      fc.constantFrom(
        Number.NaN,
        Infinity,
        -Infinity,
        -0,
        undefined,
        null,
        Symbol("s"),
        () => 1,
        new Date(0),
        new Date(Number.NaN)
      ),
      fc.uint8Array({ maxLength: 8 })
    )
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: "small" },
        fc.anything({
          withMap: true,
          withSet: true,
          withBigInt: true,
          withDate: true,
          withTypedArray: true,
          withNullPrototype: true
        }),
        extra,
        tie("list"),
        tie("record"),
        tie("map")
      ),
      list: fc.array(tie("value"), { maxLength: 4 }),
      record: fc.dictionary(fc.string(), tie("value"), { maxKeys: 4 }),
      map: fc.array(fc.tuple(tie("value"), tie("value")), { maxLength: 3 }).map((entries) => new Map(entries))
    }))
    fc.assert(
      fc.property(value, (v) => {
        expect(CanonicalJson.stringify(v)).toBe(recursive(v))
      }),
      { numRuns: 3000 }
    )
  })

  it("writes plain JSON as sorted JSON.stringify would (property)", () => {
    const sorted = (v: unknown): string =>
      Array.isArray(v)
        ? `[${v.map(sorted).join(",")}]`
        : typeof v === "object" && v !== null
        ? `{${
          Object.keys(v).sort(PythonText.compare).map((k) =>
            `${JSON.stringify(k)}:${sorted((v as Record<string, unknown>)[k])}`
          ).join(",")
        }}`
        : JSON.stringify(v)
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(CanonicalJson.stringify(v)).toBe(sorted(v))
        expect(JSON.parse(CanonicalJson.stringify(v))).toEqual(JSON.parse(JSON.stringify(v)))
      }),
      { numRuns: 2000 }
    )
  })

  it("writes 100,000-deep arrays and objects without overflowing the stack", () => {
    const deepArray = nest(100_000, 1, (inner) => [inner])
    expect(CanonicalJson.stringify(deepArray)).toBe(`${"[".repeat(100_000)}1${"]".repeat(100_000)}`)
    const deepObject = nest(100_000, "x", (inner) => ({ a: inner }))
    const text = CanonicalJson.stringify(deepObject)
    expect(text.length).toBe(100_000 * 6 + 3)
    expect(CanonicalJson.hash(deepObject)).toHaveLength(64)
    const deepMap = nest(20_000, 0, (inner) => new Map([["k", inner]]))
    expect(CanonicalJson.stringify(deepMap).startsWith("{\"$map\":[[\"k\",{\"$map\":")).toBe(true)
  })

  it("a cycle at any depth is [Circular]; a shared object is written each time", () => {
    const cyclic: { next?: unknown } = {}
    const deep = nest(10_000, cyclic, (inner) => [inner])
    cyclic.next = deep
    const text = CanonicalJson.stringify(deep)
    expect(text).toContain("\"[Circular]\"")
    const shared = { a: 1 }
    expect(CanonicalJson.stringify([shared, shared])).toBe("[{\"a\":1},{\"a\":1}]")
    const self: Array<unknown> = []
    self.push(self, new Map([[self, self]]), new Set([self]))
    expect(CanonicalJson.stringify(self)).toBe(recursive(self))
  })

  it("a value that cannot be read throws CanonicalJsonError naming the path, and nothing else", () => {
    const trap = new Proxy({}, {
      ownKeys: () => {
        throw new Error("ownKeys trap")
      }
    })
    const getter = {
      ok: 1,
      get bad(): never {
        throw new TypeError("getter")
      }
    }
    const revocable = Proxy.revocable([1, 2], {})
    revocable.revoke()
    const toJSON = {
      toJSON: () => {
        throw new Error("toJSON")
      }
    }
    const cases: ReadonlyArray<readonly [unknown, string, string]> = [
      [trap, "(root)", "Error: ownKeys trap"],
      [{ items: [0, 1, { name: getter }] }, "items.2.name.bad", "TypeError: getter"],
      [[revocable.proxy], "0", "TypeError"],
      [new Map([["k", toJSON]]), "<map entry 0 value>", "Error: toJSON"],
      [nest(5000, trap, (inner) => ({ a: inner })), `${Array(5000).fill("a").join(".")}`, "Error: ownKeys trap"]
    ]
    for (const [value, path, reason] of cases) {
      const error = catchError(() => CanonicalJson.stringify(value))
      expect(error).toBeInstanceOf(CanonicalJsonError)
      expect((error as CanonicalJsonError).path).toBe(path)
      expect((error as CanonicalJsonError).reason.startsWith(reason)).toBe(true)
      expect(catchError(() => CanonicalJson.hash(value))).toBeInstanceOf(CanonicalJsonError)
      expect(catchError(() => CanonicalJson.hashOnce(value))).toBeInstanceOf(CanonicalJsonError)
    }
    const long = catchError(() =>
      CanonicalJson.stringify({
        get x(): never {
          throw new Error("x".repeat(10_000))
        }
      })
    ) as CanonicalJsonError
    expect(long.reason.length).toBeLessThanOrEqual(201)
    expect(long.message).toBe(`cannot write the value at x as canonical JSON: ${long.reason}`)
  })

  it("hashOnce takes any value: a primitive is hashed, an object hashed once", () => {
    for (const value of [5, "x", null, undefined, true, 10n, Symbol("s")]) {
      expect(CanonicalJson.hashOnce(value)).toBe(CanonicalJson.hash(value))
    }
    let reads = 0
    const args = Object.freeze({
      get n() {
        reads++
        return 1
      }
    })
    expect(CanonicalJson.hashOnce(args)).toBe(CanonicalJson.hash({ n: 1 }))
    expect(CanonicalJson.hashOnce(args)).toBe(CanonicalJson.hash({ n: 1 }))
    expect(reads).toBe(1)
  })

  it("writes an array's holes as null (valid JSON)", () => {
    // eslint-disable-next-line no-sparse-arrays
    expect(CanonicalJson.stringify([, 1, ,])).toBe("[null,1,null]")
  })

  it("handles huge strings", () => {
    const big = "é".repeat(5_000_000)
    expect(CanonicalJson.stringify({ big })).toBe(`{"big":"${big}"}`)
  })
})
