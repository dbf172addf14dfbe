import { PythonText } from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Chunk, Data, Either, Equal, FastCheck as fc, Option, Schema } from "effect"
import type { ArgumentProblems } from "../../src/internal/arguments.js"
import { acceptedArguments, deepFreeze, makeArgumentDecoder } from "../../src/internal/arguments.js"

const compareCodePoints = PythonText.compare

const CancelOrder = Schema.Struct({
  order_id: Schema.String,
  reason: Schema.optionalWith(Schema.String, { default: () => "customer request" })
})
const cancelOrder = makeArgumentDecoder(CancelOrder)

/** The three lists of the problems (`invalidArguments` is checked where it is the point). */
const problems = <A>(result: Either.Either<A, ArgumentProblems>): Omit<ArgumentProblems, "invalidArguments"> => {
  if (Either.isRight(result)) throw new Error(`expected problems, got ${JSON.stringify(result.right)}`)
  const { invalidArguments, ...lists } = result.left
  if (lists.invalid.length === 0) expect(invalidArguments).toEqual([])
  return lists
}
const decoded = <A>(result: Either.Either<A, ArgumentProblems>): A => {
  if (Either.isLeft(result)) throw new Error(`expected a value, got ${JSON.stringify(result.left)}`)
  return result.right
}

describe("makeArgumentDecoder: keys", () => {
  it("reports the seed's unexpected and missing keys together, and no type problem", () => {
    expect(problems(cancelOrder({ order: "A-771" }))).toEqual({
      unexpected: ["order"],
      missing: ["order_id"],
      invalid: []
    })
  })

  it("reports unexpected keys alone, even when the required ones are there", () => {
    expect(problems(cancelOrder({ order_id: "A-771", force: true }))).toEqual({
      unexpected: ["force"],
      missing: [],
      invalid: []
    })
  })

  it("checks keys before types", () => {
    // order_id has the wrong type, but a wrong key is reported first and alone.
    expect(problems(cancelOrder({ order_id: 5, extra: 1 }))).toEqual({
      unexpected: ["extra"],
      missing: [],
      invalid: []
    })
  })

  it("sorts every list by code point, not by locale", () => {
    const decode = makeArgumentDecoder(Schema.Struct({ b: Schema.String, a: Schema.String, B: Schema.String }))
    expect(problems(decode({ z: 1, é: 2, Z: 3, "\u{1F600}": 4, "\uFFFD": 5 }))).toEqual({
      unexpected: ["Z", "z", "é", "\uFFFD", "\u{1F600}"],
      missing: ["B", "a", "b"],
      invalid: []
    })
  })

  it("counts a key sent as null as present", () => {
    expect(problems(cancelOrder({ order_id: null }))).toEqual({
      unexpected: [],
      missing: [],
      invalid: ["order_id: Expected string, actual null"]
    })
  })

  it("accepts any extra key when the struct declares a rest record, and passes it through", () => {
    const decode = makeArgumentDecoder(
      Schema.Struct({ q: Schema.String }, Schema.Record({ key: Schema.String, value: Schema.Unknown }))
    )
    expect(decoded(decode({ q: "x", colour: "red" }))).toEqual({ q: "x", colour: "red" })
    expect(problems(decode({ colour: "red" }))).toEqual({ unexpected: [], missing: ["q"], invalid: [] })
  })

  it("names the top-level key each invalid value is under, from its path: a rest key holding '.' or ': ' is named whole", () => {
    const decode = makeArgumentDecoder(
      Schema.Struct(
        { q: Schema.String },
        Schema.Record({ key: Schema.String, value: Schema.Struct({ n: Schema.Number }) })
      )
    )
    const result = decode({ q: 1, "a: b": { n: "x" }, ": ": { n: null }, "c.d": { n: true } })
    expect(Either.isLeft(result) && result.left.invalidArguments).toEqual([": ", "a: b", "c.d", "q"])
    expect(problems(result).invalid).toEqual([
      ": .n: Expected number, actual null",
      "a: b.n: Expected number, actual \"x\"",
      "c.d.n: Expected number, actual true",
      "q: Expected string | { readonly n: number }, actual 1"
    ])
    const root = cancelOrder(null)
    expect(Either.isLeft(root) && root.left.invalidArguments).toEqual(["(root)"])
  })

  it("rejects input that is not an object of arguments", () => {
    for (
      const [input, kind] of [[null, "null"], [[], "array"], ["x", "string"], [undefined, "undefined"], [3, "number"]]
    ) {
      expect(problems(cancelOrder(input))).toEqual({
        unexpected: [],
        missing: [],
        invalid: [`(root): expected an object of arguments, got ${kind}`]
      })
    }
  })
})

describe("makeArgumentDecoder: values", () => {
  const Order = Schema.Struct({
    order_id: Schema.String,
    unit: Schema.optional(Schema.Literal("c", "f")),
    note: Schema.optional(Schema.NullOr(Schema.Number)),
    items: Schema.Array(Schema.Struct({ sku: Schema.String, qty: Schema.Int }))
  })
  const decode = makeArgumentDecoder(Order)

  it("reports each type problem as <path>: <message>, sorted, with nested paths joined by dots", () => {
    expect(problems(decode({ order_id: 3, items: [{ sku: "a", qty: 1.5 }, { sku: "b", qty: "2" }] }))).toEqual({
      unexpected: [],
      missing: [],
      invalid: [
        "items.0.qty: Expected an integer, actual 1.5",
        "items.1.qty: Expected number, actual \"2\"",
        "order_id: Expected string, actual 3"
      ]
    })
  })

  it("reports a nested missing key by its path, with the keys, before any type problem", () => {
    expect(problems(decode({ order_id: 3, items: [{ sku: "a", qty: 1.5 }, { sku: "b" }] }))).toEqual({
      unexpected: [],
      missing: ["items.1.qty"],
      invalid: []
    })
  })

  it("merges the alternatives of a union into one message, without the optional key's undefined", () => {
    expect(problems(decode({ order_id: "x", items: [], unit: "k", note: "n" })).invalid).toEqual([
      `note: Expected number | null, actual "n"`,
      `unit: Expected "c" | "f", actual "k"`
    ])
  })

  it("applies defaults", () => {
    expect(decoded(cancelOrder({ order_id: "A-771" }))).toEqual({ order_id: "A-771", reason: "customer request" })
    expect(decoded(cancelOrder({ order_id: "A-771", reason: "duplicate" }))).toEqual({
      order_id: "A-771",
      reason: "duplicate"
    })
  })

  it("decodes transformations (the handler gets the Type side)", () => {
    const decodeWhen = makeArgumentDecoder(Schema.Struct({ n: Schema.NumberFromString, when: Schema.Date }))
    const args = decoded(decodeWhen({ n: "42", when: "2026-08-14T00:00:00.000Z" }))
    expect(args.n).toBe(42)
    expect(args.when).toBeInstanceOf(Date)
    expect(problems(decodeWhen({ n: "x", when: "2026-08-14" })).invalid).toEqual([
      `n: Unable to decode "x" into a number`
    ])
  })

  it("never throws, even when a filter does", () => {
    const decodeBoom = makeArgumentDecoder(
      Schema.Struct({
        x: Schema.String.pipe(Schema.filter(() => {
          throw new Error("boom")
        }))
      })
    )
    expect(problems(decodeBoom({ x: "a" })).invalid).toEqual(["(root): boom"])
  })

  it("throws at make time, not per call, for a schema that is not a struct", () => {
    expect(() => makeArgumentDecoder(Schema.String)).toThrow("tool parameters must be a struct")
  })
})

describe("frozen arguments", () => {
  const Nested = Schema.Struct({
    items: Schema.Array(Schema.Struct({ sku: Schema.String, tags: Schema.Array(Schema.String) })),
    meta: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
    maybe: Schema.Option(Schema.String),
    when: Schema.Date,
    chunk: Schema.Chunk(Schema.Number)
  })
  const decode = makeArgumentDecoder(Nested)
  const input = {
    items: [{ sku: "a", tags: ["x"] }],
    meta: { deep: { list: [1, 2] } },
    maybe: { _tag: "Some", value: "v" },
    when: "2026-08-14T00:00:00.000Z",
    chunk: [1, 2]
  }

  it("deep-freezes plain objects and arrays: mutation throws (strict mode)", () => {
    const args = decoded(decode(input)) as unknown as {
      items: Array<{ sku: string; tags: Array<string> }>
      meta: { deep: { list: Array<number> } }
      extra?: number
    }
    expect(Object.isFrozen(args)).toBe(true)
    expect(() => {
      args.extra = 1
    }).toThrow(TypeError)
    expect(() => args.items.push({ sku: "b", tags: [] })).toThrow(TypeError)
    expect(() => {
      args.items[0]!.sku = "z"
    }).toThrow(TypeError)
    expect(() => args.items[0]!.tags.push("y")).toThrow(TypeError)
    expect(() => args.meta.deep.list.push(3)).toThrow(TypeError)
  })

  it("freezes a copy: the caller's own objects stay mutable and later edits to them do not leak in", () => {
    const source = {
      items: [{ sku: "a", tags: ["x"] }],
      meta: { deep: { list: [1, 2] } },
      maybe: { _tag: "Some", value: "v" },
      when: "2026-08-14T00:00:00.000Z",
      chunk: [1]
    }
    const args = decoded(decode(source)) as unknown as { meta: { deep: { list: Array<number> } } }
    expect(Object.isFrozen(source.meta)).toBe(false)
    expect(Object.isFrozen(source.meta.deep.list)).toBe(false)
    source.meta.deep.list.push(3)
    expect(args.meta.deep.list).toEqual([1, 2])
    const cyclic: { self?: unknown } = {}
    cyclic.self = cyclic
    const copy = deepFreeze(cyclic)
    expect(copy).not.toBe(cyclic)
    expect(copy.self).toBe(copy)
  })

  it("leaves class instances (Option, Date, Chunk) unfrozen, so they keep working", () => {
    const args = decoded(decode(input))
    expect(Object.isFrozen(args.maybe)).toBe(false)
    expect(Object.isFrozen(args.when)).toBe(false)
    expect(Object.isFrozen(args.chunk)).toBe(false)
    expect(Equal.equals(args.maybe, Option.some("v"))).toBe(true)
    expect(Equal.equals(args.chunk, Chunk.make(1, 2))).toBe(true)
    expect(args.when.getTime()).toBe(Date.UTC(2026, 7, 14))
  })

  it("deepFreeze leaves Data values and typed arrays alone and survives cycles", () => {
    const point = Data.struct({ x: 1 })
    const bytes = new Uint8Array([1, 2])
    const cyclic: { self?: unknown; list: Array<unknown> } = { list: [] }
    cyclic.self = cyclic
    cyclic.list.push(cyclic, point, bytes)
    const frozen = deepFreeze(cyclic)
    expect(Object.isFrozen(frozen)).toBe(true)
    expect(Object.isFrozen(frozen.list)).toBe(true)
    expect(Object.isFrozen(point)).toBe(false)
    expect(Object.isFrozen(bytes)).toBe(false)
    expect(Equal.equals(point, Data.struct({ x: 1 }))).toBe(true)
  })
})

describe("acceptedArguments and compareCodePoints", () => {
  it("lists the declared keys sorted by code point, whatever the declaration order", () => {
    expect(acceptedArguments(Schema.Struct({ reason: Schema.String, order_id: Schema.String, Zed: Schema.Number })))
      .toEqual(["Zed", "order_id", "reason"])
    expect(acceptedArguments(CancelOrder)).toEqual(["order_id", "reason"])
  })

  it("orders astral characters after the rest of the BMP, as Python does", () => {
    expect(["\u{1F600}", "\uFFFD", "a"].sort(compareCodePoints)).toEqual(["a", "\uFFFD", "\u{1F600}"])
    expect(["ab", "a", "b"].sort(compareCodePoints)).toEqual(["a", "ab", "b"])
  })
})

// ---------------------------------------------------------------------------------------------------
// Properties

const isSorted = (items: ReadonlyArray<string>): boolean =>
  items.every((item, i) => i === 0 || compareCodePoints(items[i - 1]!, item) < 0)

describe("makeArgumentDecoder (property)", () => {
  const Rich = Schema.Struct({
    order_id: Schema.String,
    reason: Schema.optionalWith(Schema.String, { default: () => "customer request" }),
    qty: Schema.optional(Schema.Int),
    unit: Schema.NullOr(Schema.Literal("c", "f")),
    items: Schema.Array(Schema.Struct({ sku: Schema.NonEmptyString, n: Schema.Number }))
  })
  const decode = makeArgumentDecoder(Rich)
  const keys = fc.constantFrom("order_id", "reason", "qty", "unit", "items", "order", "__proto__", "constructor")
  const values = fc.oneof(fc.jsonValue(), fc.anything())

  it("either decodes to a frozen value or reports problems, and never throws", () => {
    fc.assert(
      fc.property(fc.oneof(fc.dictionary(keys, values), fc.dictionary(fc.string(), values), fc.anything()), (input) => {
        const result = decode(input)
        if (Either.isRight(result)) {
          expect(Object.isFrozen(result.right)).toBe(true)
          expect(Object.isFrozen(result.right.items)).toBe(true)
          return
        }
        const { invalid, missing, unexpected } = result.left
        expect(unexpected.length + missing.length + invalid.length).toBeGreaterThan(0)
        if (unexpected.length + missing.length > 0) expect(invalid).toEqual([])
        expect(isSorted(unexpected) && isSorted(missing) && isSorted(invalid)).toBe(true)
      }),
      { numRuns: 500 }
    )
  })

  it("accepts every encoded value of the schema that JSON carries (finite numbers)", () => {
    const encode = Schema.encodeSync(Rich)
    // JSON has no NaN or infinities, and tool arguments take finite numbers only (tested above)
    const finite = (v: unknown): boolean =>
      typeof v === "number"
        ? Number.isFinite(v)
        : typeof v === "object" && v !== null
        ? Object.values(v).every(finite)
        : true
    fc.assert(
      fc.property(Arbitrary.make(Rich).filter((value) => finite(encode(value))), (value) => {
        const args = decoded(decode(encode(value)))
        expect(args).toEqual(value)
      }),
      { numRuns: 200 }
    )
  })
})
