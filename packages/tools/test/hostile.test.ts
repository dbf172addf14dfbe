/**
 * Hostile arguments, targeted: strict keys at every depth, prototype keys, values too deep or too
 * strange to inspect, and what the handler receives (plain, frozen data).
 */
import {
  DEFECT_TEXT,
  RunContext,
  ToolArgumentError,
  ToolDefinitionError,
  ToolExecutionError,
  toolFailureText,
  Tracing
} from "@agentkit/core"
import { Tool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Option, Schema } from "effect"

const DESCRIPTION = "A tool the hostile-input tests send arguments to."
const context = Effect.runSync(RunContext.make({ correlationId: "hostile" }))
const runSync = <A, E>(effect: Effect.Effect<A, E, RunContext>) =>
  Effect.runSyncExit(Effect.provideService(effect, RunContext, context))

const Address = Schema.Struct({ street: Schema.String, city: Schema.optional(Schema.String) })
const Card = Schema.Struct({ kind: Schema.Literal("card"), number: Schema.String })
const Bank = Schema.Struct({ kind: Schema.Literal("bank"), iban: Schema.String })

const received: Array<unknown> = []
const ship = Tool.make("ship_order", {
  description: DESCRIPTION,
  parameters: Schema.Struct({
    order_id: Schema.String,
    shipping: Schema.optional(Address),
    billing: Schema.NullOr(Address).pipe(Schema.optionalWith({ default: () => null })),
    items: Schema.optional(Schema.Array(Schema.Struct({ sku: Schema.String, qty: Schema.Int }))),
    by_warehouse: Schema.optional(Schema.Record({ key: Schema.String, value: Address })),
    payment: Schema.optional(Schema.Union(Card, Bank)),
    either: Schema.optional(Schema.Union(Address, Schema.Struct({ po_box: Schema.String }))),
    notes: Schema.optional(
      Schema.Struct({ text: Schema.String }, Schema.Record({ key: Schema.String, value: Schema.String }))
    ),
    meta: Schema.optional(Schema.Unknown)
  }),
  sideEffecting: true,
  handler: (args) => {
    received.push(args)
    return "shipped"
  }
})
const ACCEPTED = "['billing', 'by_warehouse', 'either', 'items', 'meta', 'notes', 'order_id', 'payment', 'shipping']"

const rejected = (input: unknown): ToolArgumentError => {
  const before = received.length
  const exit = runSync(ship.run(input))
  expect(received.length).toBe(before) // the handler never ran
  if (Exit.isSuccess(exit)) throw new Error(`expected a rejection, got ${String(exit.value)}`)
  expect(Cause.isDie(exit.cause)).toBe(false)
  const error = Option.getOrThrow(Cause.failureOption(exit.cause))
  expect(error).toBeInstanceOf(ToolArgumentError)
  return error as ToolArgumentError
}
const accepted = (input: unknown): Record<string, unknown> => {
  const exit = runSync(ship.run(input))
  if (Exit.isFailure(exit)) throw new Error(`expected success, got ${Cause.pretty(exit.cause)}`)
  return received.at(-1) as Record<string, unknown>
}

describe("strict arguments at every depth", () => {
  it("an unknown key one level down is rejected by its path (the seed's hazard, nested)", () => {
    const error = rejected({ order_id: "A-1", shipping: { adress: "office" } })
    expect(error.unexpected).toEqual(["shipping.adress"])
    expect(error.missing).toEqual(["shipping.street"])
    expect(error.message).toBe(
      `tool 'ship_order' call rejected: unexpected argument(s) ['shipping.adress']; missing required argument(s) ['shipping.street']. Accepted arguments: ${ACCEPTED}`
    )
  })

  it("in array items, record values and nullable structs too; top-level problems are listed with them", () => {
    const error = rejected({
      order: "A-1",
      items: [{ sku: "a", qty: 1 }, { sku: "b", qty: 2, colour: "red" }, { qty: 3 }],
      by_warehouse: { eu: { street: "s", zip: "1" } },
      billing: { street: "s", country: "fr" }
    })
    expect(error.unexpected).toEqual(["billing.country", "by_warehouse.eu.zip", "items.1.colour", "order"])
    expect(error.missing).toEqual(["items.2.sku", "order_id"])
    expect(error.invalid).toEqual([])
  })

  it("in the matching member of a tagged union", () => {
    expect(rejected({ order_id: "A-1", payment: { kind: "card", number: "4242", cvv: "1" } }).unexpected).toEqual([
      "payment.cvv"
    ])
    expect(rejected({ order_id: "A-1", payment: { kind: "bank" } }).missing).toEqual(["payment.iban"])
  })

  it("a union of structs that cannot be told apart names the path as a value problem", () => {
    const error = rejected({ order_id: "A-1", either: { strete: "x" } })
    expect(error.unexpected).toEqual([])
    expect(error.missing).toEqual([])
    expect(error.invalid.length).toBeGreaterThan(0)
    expect(error.invalid).toEqual([
      "either.po_box: is missing",
      "either.street: is missing",
      "either.strete: is unexpected, expected: \"po_box\"",
      "either.strete: is unexpected, expected: \"street\" | \"city\""
    ])
    expect(error.message).toContain("invalid argument(s) ['either']")
  })

  it("a level that declares a rest record accepts any key there, and only there", () => {
    const args = accepted({ order_id: "A-1", notes: { text: "t", colour: "red" } })
    expect(args["notes"]).toEqual({ text: "t", colour: "red" })
    expect(rejected({ order_id: "A-1", notes: { text: "t", colour: 1 } }).invalid).toEqual([
      "notes.colour: Expected string, actual 1"
    ])
    expect(rejected({ order_id: "A-1", shipping: { street: 1 } }).invalid).toEqual([
      "shipping.street: Expected string, actual 1"
    ])
  })

  it("a nested empty struct takes an object with no keys (Effect's {} would take anything)", () => {
    const options = Tool.make("configure", {
      description: DESCRIPTION,
      parameters: Schema.Struct({
        name: Schema.String,
        options: Schema.Struct({}),
        list: Schema.Array(Schema.Struct({}))
      }),
      sideEffecting: false,
      handler: (args) => args
    })
    const run = (input: unknown) => runSync(options.run(input))
    expect(Exit.isSuccess(run({ name: "n", options: {}, list: [{}, {}] }))).toBe(true)
    const failure = (input: unknown) => {
      const exit = run(input)
      if (Exit.isSuccess(exit)) throw new Error("expected a rejection")
      return Option.getOrThrow(Cause.failureOption(exit.cause)) as ToolArgumentError
    }
    expect(failure({ name: "n", options: { verbose: true }, list: [{}, { x: 1 }] }).unexpected).toEqual([
      "list.1.x",
      "options.verbose"
    ])
    expect(failure({ name: "n", options: 42, list: [] }).invalid).toEqual(["options: Expected {}, actual 42"])
    expect(failure({ name: "n", options: [], list: [] }).invalid).toEqual(["options: Expected {}, actual []"])
  })

  it("valid nested arguments pass, with defaults applied", () => {
    const args = accepted({ order_id: "A-1", shipping: { street: "s" }, payment: { kind: "card", number: "4242" } })
    expect(args).toEqual({
      order_id: "A-1",
      shipping: { street: "s" },
      billing: null,
      payment: { kind: "card", number: "4242" }
    })
  })
})

describe("prototype keys", () => {
  const parsed = (json: string) => JSON.parse(json) as unknown

  it("__proto__ is an unexpected key at any depth, even under a rest record or an unknown value", () => {
    expect(rejected(parsed("{\"order_id\":\"A-1\",\"__proto__\":{\"isAdmin\":true}}")).unexpected).toEqual([
      "__proto__"
    ])
    expect(rejected(parsed("{\"order_id\":\"A-1\",\"notes\":{\"text\":\"t\",\"__proto__\":{\"x\":\"y\"}}}")).unexpected)
      .toEqual(["notes.__proto__"])
    expect(rejected(parsed("{\"order_id\":\"A-1\",\"by_warehouse\":{\"__proto__\":{\"street\":\"s\"}}}")).unexpected)
      .toEqual(["by_warehouse.__proto__"])
    expect(rejected(parsed("{\"order_id\":\"A-1\",\"meta\":{\"a\":[{\"__proto__\":{\"polluted\":1}}]}}")).unexpected)
      .toEqual(["meta.a.0.__proto__"])
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
    expect(({} as Record<string, unknown>)["isAdmin"]).toBeUndefined()
  })

  it("constructor and prototype keys are plain data keys: the handler gets plain objects", () => {
    const args = accepted(
      parsed(
        "{\"order_id\":\"A-1\",\"notes\":{\"text\":\"t\",\"constructor\":\"c\",\"prototype\":\"p\"},\"meta\":{\"constructor\":{\"prototype\":{\"x\":1}}}}"
      )
    )
    const notes = args["notes"] as Record<string, unknown>
    expect(Object.getPrototypeOf(notes)).toBe(Object.prototype)
    expect(Object.hasOwn(notes, "constructor") && notes["constructor"]).toBe("c")
    expect(notes["prototype"]).toBe("p")
    const meta = args["meta"] as Record<string, Record<string, unknown>>
    expect(Object.getPrototypeOf(meta)).toBe(Object.prototype)
    expect(Object.getPrototypeOf(meta["constructor"])).toBe(Object.prototype)
    expect(Object.isFrozen(meta["constructor"])).toBe(true)
    expect(({} as { constructor: unknown }).constructor).toBe(Object)
  })

  it("a parameter named __proto__ is a definition error", () => {
    expect(() =>
      Tool.make("proto", {
        description: DESCRIPTION,
        parameters: Object.fromEntries([["__proto__", Schema.String]]) as { readonly __proto__: typeof Schema.String },
        sideEffecting: false,
        handler: () => "x"
      })
    ).toThrow(new ToolDefinitionError({ message: "tool 'proto': a parameter cannot be named '__proto__'" }))
  })
})

describe("values too deep or too strange to inspect", () => {
  const nest = (depth: number, leaf: unknown = 1): unknown => {
    let value = leaf
    for (let i = 0; i < depth; i++) value = [value]
    return value
  }

  it("64 levels below the arguments pass; 65 are rejected with a fixed clause naming the path", () => {
    accepted({ order_id: "A-1", meta: nest(64) })
    const error = rejected({ order_id: "A-1", meta: nest(65) })
    const path = ["meta", ...Array(64).fill("0")].join(".")
    expect(error.invalid).toEqual([`${path}: nested deeper than 64 levels`])
    expect(error.message).toBe(
      `tool 'ship_order' call rejected: invalid argument(s) ['meta']: ${path}: nested deeper than 64 levels. Accepted arguments: ${ACCEPTED}`
    )
  })

  it("10,000-deep nesting, under any argument, is a typed error and no crash", () => {
    expect(rejected({ order_id: "A-1", meta: nest(10_000) }).invalid[0]).toMatch(
      /^meta(\.0){64}: nested deeper than 64 levels$/
    )
    expect(rejected({ order_id: nest(10_000, "x") }).invalid[0]).toMatch(
      /^order_id(\.0){64}: nested deeper than 64 levels$/
    )
    let deep: Record<string, unknown> = {}
    for (let i = 0; i < 10_000; i++) deep = { street: deep }
    expect(rejected({ order_id: "A-1", shipping: deep }).invalid[0]).toMatch(
      /^shipping(\.street){64}: nested deeper than 64 levels$/
    )
  })

  it("getters and proxies that throw", () => {
    const throwing = new Proxy({}, {
      ownKeys: () => {
        throw new Error("boom")
      }
    })
    const revoked = Proxy.revocable({}, {})
    revoked.revoke()
    const getter = {
      street: "s",
      get city(): string {
        throw new Error("no")
      }
    }
    expect(rejected(throwing).invalid).toEqual(["(root): cannot be read (a getter or proxy threw)"])
    expect(rejected(revoked.proxy).invalid).toEqual(["(root): cannot be read (a getter or proxy threw)"])
    expect(rejected({ order_id: "A-1", shipping: getter }).invalid).toEqual([
      "shipping.city: cannot be read (a getter or proxy threw)"
    ])
    expect(rejected({ order_id: "A-1", meta: [1, throwing] }).invalid).toEqual([
      "meta.1: cannot be read (a getter or proxy threw)"
    ])
    const lying = new Proxy({ order_id: "A-1" }, {
      get: () => {
        throw new Error("get")
      }
    })
    expect(rejected(lying).invalid).toEqual(["order_id: cannot be read (a getter or proxy threw)"])
  })

  it("values that are not JSON data, and cycles", () => {
    class Point {
      x = 1
    }
    const cyclic: Record<string, unknown> = { a: 1 }
    cyclic["self"] = cyclic
    const error = rejected({
      order_id: 1n,
      meta: { f: () => 1, s: Symbol("s"), d: new Date(0), m: new Map(), p: new Point(), c: cyclic }
    })
    expect(error.invalid).toEqual([
      "meta.c.self: a circular reference",
      "meta.d: expected JSON data, got a class instance",
      "meta.f: expected JSON data, got a function",
      "meta.m: expected JSON data, got a class instance",
      "meta.p: expected JSON data, got a class instance",
      "meta.s: expected JSON data, got a symbol",
      "order_id: expected JSON data, got a bigint"
    ])
    expect(rejected(new Point()).invalid).toEqual(["(root): expected an object of arguments, got a class instance"])
    expect(rejected(new Map([["order_id", "A-1"]])).invalid).toEqual([
      "(root): expected an object of arguments, got a class instance"
    ])
  })

  it("more than 1,000,000 values is rejected; a shared object counts each time it appears", () => {
    const big = Array.from({ length: 1_000_001 }, () => 0)
    expect(rejected({ order_id: "A-1", meta: big }).invalid).toEqual(["(root): more than 1000000 values"])
    // a DAG whose tree would have 2^40 nodes
    let dag: unknown = 0
    for (let i = 0; i < 40; i++) dag = [dag, dag]
    expect(rejected({ order_id: "A-1", meta: dag }).invalid).toEqual(["(root): more than 1000000 values"])
  })

  it("huge strings are values like any other", () => {
    const text = "x".repeat(20_000_000)
    expect((accepted({ order_id: text }) as { order_id: string }).order_id).toBe(text)
  })
})

describe("what the handler receives", () => {
  it("plain data, frozen, read once, cut off from the caller's objects", () => {
    let reads = 0
    const source = {
      order_id: "A-1",
      meta: { list: [1, { a: 2 }] },
      get notes() {
        reads++
        return { text: "t" }
      }
    }
    const args = accepted(source) as { meta: { list: Array<unknown> }; notes: { text: string } }
    expect(reads).toBe(1)
    expect(
      Object.isFrozen(args) && Object.isFrozen(args.meta) && Object.isFrozen(args.meta.list) &&
        Object.isFrozen(args.meta.list[1])
    ).toBe(true)
    expect(args.meta).not.toBe(source.meta)
    source.meta.list.push(3)
    expect(args.meta.list).toEqual([1, { a: 2 }])
    expect(Object.getPrototypeOf(args.meta.list[1])).toBe(Object.prototype)
  })

  it("a null-prototype input is accepted; symbol and non-enumerable keys are not seen", () => {
    const input = Object.assign(Object.create(null) as Record<string, unknown>, { order_id: "A-1" })
    Object.defineProperty(input, "hidden", { value: 1, enumerable: false })
    ;(input as Record<symbol, unknown>)[Symbol("s")] = 1
    expect(accepted(input)).toEqual({ order_id: "A-1", billing: null })
  })
})

describe("a handler's defect", () => {
  const dies = Tool.make("boom", {
    description: DESCRIPTION,
    parameters: {},
    sideEffecting: false,
    handler: (): Effect.Effect<string> => Effect.die(new TypeError("secret=hunter2 is not a function"))
  })

  it("is a ToolExecutionError marked defect: the model sees a generic failure, the error keeps the details", () => {
    const exit = runSync(dies.run({}))
    if (Exit.isSuccess(exit)) throw new Error("expected a failure")
    expect(Cause.isDie(exit.cause)).toBe(false)
    const error = Option.getOrThrow(Cause.failureOption(exit.cause)) as ToolExecutionError
    expect(error).toBeInstanceOf(ToolExecutionError)
    expect(error.defect).toBe(true)
    expect(error.message).toBe("secret=hunter2 is not a function")
    expect(toolFailureText("boom", error)).toBe(`ERROR: tool 'boom' failed: ${DEFECT_TEXT}`)
  })

  it("goes to the trace as an exception event on the current span", () => {
    const tracer = Tracing.recording()
    Effect.runSyncExit(
      dies.run({}).pipe(
        Effect.withSpan("execute_tool boom"),
        Effect.provideService(RunContext, context),
        Effect.provide(tracer.layer)
      )
    )
    const [event] = tracer.one("execute_tool boom").events
    expect(event?.name).toBe("exception")
    expect(event?.attributes).toMatchObject({
      "exception.type": "TypeError",
      "exception.message": "secret=hunter2 is not a function"
    })
    expect(String(event?.attributes["exception.stacktrace"])).toContain("TypeError: secret=hunter2")
  })

  it("a thrown error or a rejected promise is still the tool's answer, reflected as before", () => {
    const throws = Tool.make("throws", {
      description: DESCRIPTION,
      parameters: {},
      sideEffecting: false,
      handler: (): string => {
        throw new Error("card declined")
      }
    })
    const exit = runSync(throws.run({}))
    if (Exit.isSuccess(exit)) throw new Error("expected a failure")
    const error = Option.getOrThrow(Cause.failureOption(exit.cause)) as ToolExecutionError
    expect(error.defect).toBeUndefined()
    expect(toolFailureText("throws", error)).toBe("ERROR: tool 'throws' failed: ToolExecutionError: card declined")
  })
})

describe("numbers are finite JSON numbers, as the advertised JSON Schema says", () => {
  const charged: Array<number> = []
  const charge = Tool.make("charge", {
    description: DESCRIPTION,
    parameters: { amount: Schema.Number, splits: Schema.optional(Schema.Array(Schema.Number)) },
    sideEffecting: true,
    handler: ({ amount }) => {
      charged.push(amount)
      return `charged ${amount}`
    }
  })
  const rejectedCharge = (input: unknown): ToolArgumentError => {
    const exit = runSync(charge.run(input))
    expect(charged).toEqual([]) // the handler never ran
    if (Exit.isSuccess(exit)) throw new Error(`expected a rejection, got ${String(exit.value)}`)
    const error = Option.getOrThrow(Cause.failureOption(exit.cause))
    expect(error).toBeInstanceOf(ToolArgumentError)
    return error as ToolArgumentError
  }

  it("a hostile model's 1e309 (Infinity once parsed), NaN and -Infinity are rejected by path, naming why", () => {
    const overflow = rejectedCharge(JSON.parse("{\"amount\": 1e309}"))
    expect(overflow.invalid).toEqual(["amount: expected a finite number, got Infinity"])
    expect(overflow.invalidArguments).toEqual(["amount"])
    expect(rejectedCharge({ amount: Number.NaN }).invalid).toEqual(["amount: expected a finite number, got NaN"])
    expect(rejectedCharge({ amount: 1, splits: [1, -Infinity] }).invalid).toEqual([
      "splits.1: expected a finite number, got -Infinity"
    ])
    expect(charge.schema.parameters).toMatchObject({ properties: { amount: { type: "number" } } })
  })

  it("finite numbers, however large, pass", () => {
    const exit = runSync(charge.run(JSON.parse("{\"amount\": 1.7976931348623157e308}")))
    expect(Exit.isSuccess(exit)).toBe(true)
    charged.length = 0
  })
})
