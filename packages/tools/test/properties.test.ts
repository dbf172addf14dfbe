/**
 * Property tests: argument validation against random input. The handler runs exactly when the
 * arguments decode; a rejection is always a ToolArgumentError whose lists are exactly right.
 */
import { RunContext, ToolArgumentError } from "@agentkit/core"
import { Tool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, FastCheck as fc, Option, Schema } from "effect"

const context = Effect.runSync(RunContext.make({ correlationId: "prop" }))
const runSync = <A, E>(effect: Effect.Effect<A, E, RunContext>) =>
  Effect.runSyncExit(Effect.provideService(effect, RunContext, context))

const DECLARED = ["id", "qty", "note", "mode"] as const
const REQUIRED = ["id", "qty"] as const

let handlerCalls = 0
const fixed = Tool.make("fixed", {
  description: "A fixed tool the property tests throw random arguments at.",
  // Wrapped in Schema.Struct: an inline `Schema.optionalWith(...)` directly among the fields would
  // leave the handler's `args` untyped (a TypeScript inference limitation; see the README).
  parameters: Schema.Struct({
    id: Schema.String,
    qty: Schema.Int,
    note: Schema.optional(Schema.String),
    mode: Schema.optionalWith(Schema.Literal("a", "b"), { default: () => "a" as const })
  }),
  sideEffecting: true,
  handler: (args) => {
    handlerCalls++
    return args
  }
})

/** Code-point order, written independently of the implementation. */
const byCodePoint = (a: string, b: string): number => {
  const x = Array.from(a, (c) => c.codePointAt(0)!)
  const y = Array.from(b, (c) => c.codePointAt(0)!)
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!
  return x.length - y.length
}
const sortCP = (items: Iterable<string>) => Array.from(items).sort(byCodePoint)
const pyList = (items: ReadonlyArray<string>) => `[${items.map((s) => `'${s}'`).join(", ")}]`

/** Tricky key names beside random ones: inherited names, near-misses, case variants, non-BMP. */
const keyArb = fc.oneof(
  fc.string(),
  fc.constantFrom(
    ...DECLARED,
    "__proto__",
    "constructor",
    "toString",
    "hasOwnProperty",
    "ID",
    "id ",
    "qty_",
    "𝒳",
    "é",
    ""
  )
)

/** Random argument objects: some declared keys with plausible or arbitrary values, plus random extra keys. */
const argsArb = fc
  .tuple(
    fc.record(
      {
        id: fc.oneof(fc.string(), fc.anything()),
        qty: fc.oneof(fc.integer(), fc.double(), fc.anything()),
        note: fc.oneof(fc.string(), fc.constant(undefined), fc.anything()),
        mode: fc.oneof(fc.constantFrom("a", "b", "c"), fc.anything())
      },
      { requiredKeys: [] }
    ),
    fc.oneof(fc.constant({}), fc.dictionary(keyArb, fc.anything(), { maxKeys: 4 }))
  )
  .map(([declared, extra]) => {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(extra)) {
      Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true })
    }
    for (const [k, v] of Object.entries(declared)) {
      Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true })
    }
    return out
  })

/** The paths of the own `__proto__` keys inside a value, written independently of the implementation. */
const protoPaths = (value: unknown, path: string): Array<string> => {
  if (typeof value !== "object" || value === null) return []
  return Object.keys(value).flatMap((k) =>
    k === "__proto__" && !Array.isArray(value)
      ? [`${path}.${k}`]
      : protoPaths((value as Record<string, unknown>)[k], `${path}.${k}`)
  )
}

/** The non-finite numbers inside a value (outside `__proto__` keys, which are never read), written independently of the implementation. */
const nonFinite = (value: unknown): Array<number> => {
  if (typeof value === "number") return Number.isFinite(value) ? [] : [value]
  if (typeof value !== "object" || value === null) return []
  return Object.keys(value).flatMap((k) =>
    k === "__proto__" && !Array.isArray(value) ? [] : nonFinite((value as Record<string, unknown>)[k])
  )
}

const isValid = (args: Record<string, unknown>): boolean =>
  typeof args["id"] === "string" &&
  Number.isSafeInteger(args["qty"]) &&
  (args["note"] === undefined || typeof args["note"] === "string") &&
  (args["mode"] === undefined || args["mode"] === "a" || args["mode"] === "b")

describe("properties: argument validation", () => {
  it("random arguments either decode (the handler runs once) or fail with ToolArgumentError (the handler never runs)", () => {
    fc.assert(
      fc.property(fc.oneof(argsArb, fc.anything()), (input) => {
        const before = handlerCalls
        const exit = runSync(fixed.run(input))
        if (Exit.isSuccess(exit)) {
          expect(handlerCalls).toBe(before + 1)
          return
        }
        expect(handlerCalls).toBe(before)
        expect(Cause.isDie(exit.cause)).toBe(false)
        const failure = Cause.failureOption(exit.cause)
        expect(Option.isSome(failure)).toBe(true)
        expect(Option.getOrThrow(failure)).toBeInstanceOf(ToolArgumentError)
      }),
      { numRuns: 500 }
    )
  })

  it("the outcome, `unexpected` and `missing` are exactly what the keys and values say", () => {
    fc.assert(
      fc.property(argsArb, (input) => {
        const keys = Object.keys(input)
        // a `__proto__` key is unexpected wherever it is, so it can never reach a prototype
        const nestedProto = keys.flatMap((k) => protoPaths(input[k], k))
        const unexpected = sortCP([
          ...keys.filter((k) => !(DECLARED as ReadonlyArray<string>).includes(k)),
          ...nestedProto
        ])
        const missing = sortCP(REQUIRED.filter((k) => !keys.includes(k)))
        const exit = runSync(fixed.run(input))
        // a value that is not JSON data (NaN, ±Infinity) is reported alone: nothing else is checked
        const notJson = nonFinite(input)
        if (notJson.length > 0) {
          expect(Exit.isFailure(exit)).toBe(true)
          if (Exit.isSuccess(exit)) return
          const error = Option.getOrThrow(Cause.failureOption(exit.cause)) as ToolArgumentError
          expect([error.unexpected, error.missing]).toEqual([[], []])
          expect(error.invalid.filter((text) => /: expected a finite number, got /.test(text))).toHaveLength(
            notJson.length
          )
          return
        }
        if (unexpected.length === 0 && missing.length === 0 && isValid(input)) {
          expect(Exit.isSuccess(exit)).toBe(true)
          if (Exit.isSuccess(exit)) {
            expect(exit.value).toEqual({ ...input, mode: input["mode"] ?? "a" })
          }
          return
        }
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isSuccess(exit)) return
        const error = Option.getOrThrow(Cause.failureOption(exit.cause)) as ToolArgumentError
        expect(error).toBeInstanceOf(ToolArgumentError)
        expect(error.toolName).toBe("fixed")
        expect(error.unexpected).toEqual(unexpected)
        expect(error.missing).toEqual(missing)
        expect(error.accepted).toEqual(["id", "mode", "note", "qty"])
        if (unexpected.length > 0 || missing.length > 0) {
          expect(error.invalid).toEqual([])
        } else {
          expect(error.invalid.length).toBeGreaterThan(0)
        }
      }),
      { numRuns: 500 }
    )
  })

  it("for random key sets, the message lists exactly the unexpected and missing keys, sorted", () => {
    // Names without quotes or backslashes, so the expected message needs no Python-repr escaping.
    const names = fc.oneof(
      fc.constantFrom(...DECLARED),
      fc
        .array(fc.constantFrom("a", "b", "z", "A", "Z", "0", "_", "-", "é", "𝒳"), { minLength: 1, maxLength: 6 })
        .map((chars) => chars.join(""))
    )
    fc.assert(
      fc.property(fc.uniqueArray(names, { maxLength: 8 }), (keys) => {
        const valid: Record<string, unknown> = { id: "A-1", qty: 1, note: "n", mode: "b" }
        const input = Object.fromEntries(keys.map((k) => [k, valid[k] ?? "extra"]))
        const unexpected = sortCP(keys.filter((k) => !(DECLARED as ReadonlyArray<string>).includes(k)))
        const missing = sortCP(REQUIRED.filter((k) => !keys.includes(k)))
        const exit = runSync(fixed.run(input))
        // a value that is not JSON data (NaN, ±Infinity) is reported alone: nothing else is checked
        const notJson = nonFinite(input)
        if (notJson.length > 0) {
          expect(Exit.isFailure(exit)).toBe(true)
          if (Exit.isSuccess(exit)) return
          const error = Option.getOrThrow(Cause.failureOption(exit.cause)) as ToolArgumentError
          expect([error.unexpected, error.missing]).toEqual([[], []])
          expect(error.invalid.filter((text) => /: expected a finite number, got /.test(text))).toHaveLength(
            notJson.length
          )
          return
        }
        if (unexpected.length === 0 && missing.length === 0) {
          expect(Exit.isSuccess(exit)).toBe(true)
          return
        }
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isSuccess(exit)) return
        const error = Option.getOrThrow(Cause.failureOption(exit.cause)) as ToolArgumentError
        expect(error.unexpected).toEqual(unexpected)
        expect(error.missing).toEqual(missing)
        const clauses = [
          ...(unexpected.length > 0 ? [`unexpected argument(s) ${pyList(unexpected)}`] : []),
          ...(missing.length > 0 ? [`missing required argument(s) ${pyList(missing)}`] : [])
        ]
        expect(error.message).toBe(
          `tool 'fixed' call rejected: ${clauses.join("; ")}. Accepted arguments: ['id', 'mode', 'note', 'qty']`
        )
      }),
      { numRuns: 500 }
    )
  })

  it("decoded arguments are deep-frozen, whatever their nesting", () => {
    const seen: Array<unknown> = []
    const open = Tool.make("open", {
      description: "A tool with a rest record that accepts any extra keys.",
      parameters: Schema.Struct({ q: Schema.String }, Schema.Record({ key: Schema.String, value: Schema.Unknown })),
      sideEffecting: false,
      handler: (args) => {
        seen.push(args)
        return "ok"
      }
    })
    const json = fc.jsonValue({ maxDepth: 4 })
    const isDeepFrozen = (value: unknown): boolean =>
      typeof value !== "object" || value === null ||
      (Object.isFrozen(value) && Object.values(value).every(isDeepFrozen))
    fc.assert(
      fc.property(
        fc.dictionary(fc.string().filter((k) => k !== "q" && k !== "__proto__"), json, { maxKeys: 5 }),
        (extra) => {
          seen.length = 0
          const exit = runSync(open.run({ ...extra, q: "x" }))
          // a nested `__proto__` key (fast-check makes some) is refused, by its path
          const proto = Object.keys(extra).flatMap((k) => protoPaths(extra[k], k))
          if (proto.length > 0) {
            expect(seen).toHaveLength(0)
            if (Exit.isSuccess(exit)) throw new Error("expected a rejection")
            expect((Option.getOrThrow(Cause.failureOption(exit.cause)) as ToolArgumentError).unexpected).toEqual(
              sortCP(proto)
            )
            return
          }
          expect(Exit.isSuccess(exit)).toBe(true)
          expect(seen).toHaveLength(1)
          expect(isDeepFrozen(seen[0])).toBe(true)
        }
      ),
      { numRuns: 200 }
    )
  })
})
