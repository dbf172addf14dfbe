/**
 * The seed page ("How do I give an agent a tool?"), example by example, in this API.
 */
import {
  DepthExceeded,
  Invoker,
  RunContext,
  ToolArgumentError,
  ToolCall,
  ToolDefinitionError,
  ToolShapeError,
  Tracing
} from "@agentkit/core"
import type { ChatModel } from "@agentkit/core"
import { asTool, Tool, ToolRegistry } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"

const lookupOrder = Tool.make("lookup_order", {
  description:
    "Look up an order by its id and return its status line.\n\nUse this whenever the user mentions an order number.",
  parameters: { order_id: Schema.String },
  sideEffecting: false,
  idempotent: true,
  handler: ({ order_id }) => Effect.succeed(`order ${order_id}: shipped 2026-08-14, arriving Tuesday`)
})

const cancelOrder = Tool.make("cancel_order", {
  description:
    "Cancel an order. This really cancels it — there is no undo.\n\nOnly call it after the user has confirmed the order id.",
  // Schema.Struct(...) keeps `args` typed (see the README on inline `optionalWith`).
  parameters: Schema.Struct({
    order_id: Schema.String,
    reason: Schema.optionalWith(Schema.String, { default: () => "customer request" })
  }),
  sideEffecting: true,
  handler: ({ order_id, reason }) => `order ${order_id} cancelled (${reason})`
})

const runLayer = RunContext.layer({ correlationId: "run-9", scope: { orgId: 7, domainId: 42 } })

/** A chat model that must never be called: these tests only run tools. */
const noChat: ChatModel.Service = { chat: () => Effect.die("no model call expected in a tool test") }

describe("seed: lookup_order and cancel_order", () => {
  it("what the model is shown for lookup_order, byte for byte", () => {
    expect(lookupOrder.schema.name).toBe("lookup_order")
    expect(JSON.stringify(lookupOrder.schema.parameters)).toBe(
      "{\"type\":\"object\",\"properties\":{\"order_id\":{\"type\":\"string\"}},\"required\":[\"order_id\"]}"
    )
    expect(lookupOrder.schema.description).toBe(
      "Look up an order by its id and return its status line.\n\nUse this whenever the user mentions an order number."
    )
  })

  it("the flags are what the definitions declare", () => {
    expect([lookupOrder.sideEffecting, lookupOrder.idempotent]).toEqual([false, true])
    expect([cancelOrder.sideEffecting, cancelOrder.idempotent, cancelOrder.requiresApproval]).toEqual([
      true,
      false,
      false
    ])
  })

  it("cancel_order advertises its defaulted reason as optional", () => {
    expect(JSON.stringify(cancelOrder.schema.parameters)).toBe(
      "{\"type\":\"object\",\"properties\":{\"order_id\":{\"type\":\"string\"},\"reason\":{\"type\":\"string\"}},\"required\":[\"order_id\"]}"
    )
  })

  it.effect("lookup_order runs", () =>
    Effect.gen(function*() {
      expect(yield* lookupOrder.run({ order_id: "A-771" })).toBe("order A-771: shipped 2026-08-14, arriving Tuesday")
    }).pipe(Effect.provide(runLayer)))

  it.effect("a call the model got wrong is rejected by name, with the seed's exact text", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(cancelOrder.run({ order: "A-771" }))
      expect(error).toBeInstanceOf(ToolArgumentError)
      expect(error.message).toBe(
        "tool 'cancel_order' call rejected: unexpected argument(s) ['order']; missing required argument(s) ['order_id']. Accepted arguments: ['order_id', 'reason']"
      )
      if (!(error instanceof ToolArgumentError)) return
      expect(error.toolName).toBe("cancel_order")
      expect(error.unexpected).toEqual(["order"])
      expect(error.missing).toEqual(["order_id"])
      expect(error.invalid).toEqual([])
      expect(error.accepted).toEqual(["order_id", "reason"])
    }).pipe(Effect.provide(runLayer)))

  it.effect("the default reason is applied when the model leaves it out", () =>
    Effect.gen(function*() {
      expect(yield* cancelOrder.run({ order_id: "A-1" })).toBe("order A-1 cancelled (customer request)")
      expect(yield* cancelOrder.run({ order_id: "A-1", reason: "duplicate" })).toBe("order A-1 cancelled (duplicate)")
    }).pipe(Effect.provide(runLayer)))
})

describe("seed: getting the context inside a tool (whoami)", () => {
  const description = "Report which run and which tenant this call belongs to."

  const whoamiEffect = Tool.make("whoami", {
    description,
    parameters: {},
    sideEffecting: false,
    handler: () =>
      Effect.gen(function*() {
        const run = yield* RunContext
        return `run=${run.correlationId} org=${String(run.scope.orgId)} scope=${run.scope.key}`
      })
  })

  const whoamiPromise = Tool.make("whoami", {
    description,
    parameters: {},
    sideEffecting: false,
    handler: async (_args, { context }) =>
      `run=${context.correlationId} org=${String(context.scope.orgId)} scope=${context.scope.key}`
  })

  it("the context is never an advertised parameter", () => {
    for (const tool of [whoamiEffect, whoamiPromise]) {
      expect(JSON.stringify(tool.schema.parameters)).toBe("{\"type\":\"object\",\"properties\":{},\"required\":[]}")
      expect(tool.accepted).toEqual([])
    }
  })

  it.effect("an Effect handler reads the run with `yield* RunContext`", () =>
    Effect.gen(function*() {
      expect(yield* whoamiEffect.run({})).toBe("run=run-9 org=7 scope=org7:dom42")
    }).pipe(Effect.provide(runLayer)))

  it.effect("a Promise handler reads the run from its second argument's `context`", () =>
    Effect.gen(function*() {
      expect(yield* whoamiPromise.run({})).toBe("run=run-9 org=7 scope=org7:dom42")
    }).pipe(Effect.provide(runLayer)))

  it.effect("the model cannot pass a context: a `ctx` or `context` key is an unexpected argument", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(whoamiPromise.run({ ctx: "forged", context: {} }))
      expect(error.message).toBe(
        "tool 'whoami' call rejected: unexpected argument(s) ['context', 'ctx']. Accepted arguments: []"
      )
    }).pipe(Effect.provide(runLayer)))
})

describe("seed: validating what a tool returns (quote)", () => {
  const Quote = Schema.Struct({ symbol: Schema.String, price: Schema.Number }).annotations({ identifier: "Quote" })

  const quote = Tool.make("quote", {
    description: "Return the last traded price for a ticker symbol.\n\nThe return type is checked on every call.",
    parameters: { symbol: Schema.String },
    success: Quote,
    sideEffecting: false,
    // not of the success schema's type: it does not compile (see types.test.ts), so `as never`; a JavaScript caller gets this runtime check
    handler: (({ symbol }: { readonly symbol: string }) =>
      Effect.succeed(symbol === "BAD" ? { symbol, price: "a lot" } : { symbol, price: 101.5 })) as never
  })

  const shapeEvents = (span: Tracing.RecordedSpan) => span.events.filter((e) => e.name === "tool.shape_mismatch")

  it.effect("a good value comes back and renders as JSON", () =>
    Effect.gen(function*() {
      const value = yield* quote.run({ symbol: "ACME" })
      expect(value).toEqual({ symbol: "ACME", price: 101.5 })
      expect(quote.render(value)).toBe("{\"symbol\":\"ACME\",\"price\":101.5}")
    }).pipe(Effect.provide(runLayer)))

  it.effect("a bad value is a ToolShapeError naming the tool and the expected shape", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(quote.run({ symbol: "BAD" }))
      expect(error).toBeInstanceOf(ToolShapeError)
      if (!(error instanceof ToolShapeError)) return
      expect(error.message).toBe("tool 'quote' returned value not matching schema 'Quote'")
      expect(error.toolName).toBe("quote")
      expect(error.expected).toBe("Quote")
      expect(error.raw).toEqual({ symbol: "BAD", price: "a lot" })
      expect(error.errors).toEqual(["price: Expected number, actual \"a lot\""])
    }).pipe(Effect.provide(runLayer)))

  it.effect("the mismatch adds `tool.shape_mismatch` exactly once to the current span", () => {
    const tracer = Tracing.recording()
    return Effect.gen(function*() {
      yield* Effect.flip(quote.run({ symbol: "BAD" }).pipe(Effect.withSpan("around quote")))
      const span = tracer.one("around quote")
      expect(shapeEvents(span)).toEqual([
        { name: "tool.shape_mismatch", attributes: { tool_name: "quote", expected_shape: "Quote" } }
      ])
      expect(tracer.spans.flatMap(shapeEvents)).toHaveLength(1)
    }).pipe(Effect.provide(runLayer), Effect.provide(tracer.layer))
  })

  it.effect("a good value adds no event", () => {
    const tracer = Tracing.recording()
    return Effect.gen(function*() {
      yield* quote.run({ symbol: "ACME" }).pipe(Effect.withSpan("around quote"))
      expect(tracer.one("around quote").events).toEqual([])
    }).pipe(Effect.provide(runLayer), Effect.provide(tracer.layer))
  })

  it.effect("through the Invoker, the event lands on the `execute_tool quote` span, once", () => {
    const tracer = Tracing.recording()
    return Effect.gen(function*() {
      const invoker = Invoker.make(noChat, {})
      const call = ToolCall.make({ id: "c1", name: "quote", arguments: { symbol: "BAD" } })
      const error = yield* Effect.flip(invoker.tool(call, quote).pipe(Effect.withSpan("invoke_agent support")))
      expect(error).toBeInstanceOf(ToolShapeError)
      const span = tracer.one("execute_tool quote")
      expect(shapeEvents(span)).toEqual([
        { name: "tool.shape_mismatch", attributes: { tool_name: "quote", expected_shape: "Quote" } }
      ])
      expect(span.attributes.get("error.type")).toBe("ToolShapeError")
      expect(shapeEvents(tracer.one("invoke_agent support"))).toEqual([])
      expect(tracer.spans.flatMap(shapeEvents)).toHaveLength(1)
    }).pipe(Effect.provide(runLayer), Effect.provide(tracer.layer))
  })

  it.effect("through the Invoker, a good value comes back with the text the model sees", () =>
    Effect.gen(function*() {
      const invoker = Invoker.make(noChat, {})
      const outcome = yield* invoker.tool(
        ToolCall.make({ id: "c1", name: "quote", arguments: { symbol: "ACME" } }),
        quote
      )
      expect(outcome).toEqual({
        value: { symbol: "ACME", price: 101.5 },
        text: "{\"symbol\":\"ACME\",\"price\":101.5}"
      })
    }).pipe(Effect.provide(runLayer)))
})

describe("seed: collecting tools (ToolRegistry)", () => {
  it("names are sorted, schemas follow them, get finds a tool", () => {
    const registry = ToolRegistry.fromTools([lookupOrder, cancelOrder])
    expect(registry.names()).toEqual(["cancel_order", "lookup_order"])
    expect(registry.schemas()).toHaveLength(2)
    expect(registry.schemas().map((s) => s.name)).toEqual(["cancel_order", "lookup_order"])
    expect(registry.get("lookup_order").name).toBe("lookup_order")
  })

  it("registering a name twice throws rather than overwriting", () => {
    expect(() => ToolRegistry.fromTools([lookupOrder, cancelOrder, lookupOrder])).toThrow(
      new ToolDefinitionError({
        message: "ToolRegistry: tool 'lookup_order' already registered. Pass { replace: true } to swap deliberately."
      })
    )
  })
})

describe("seed: an agent as a tool (asTool)", () => {
  const researcher = {
    run: (task: string) => Effect.succeed({ output: `researched: ${task}` })
  }
  const research = asTool(researcher, {
    name: "research",
    description: "Delegate a research sub-task to the researcher agent."
  })

  it("the schema is the one `task` string", () => {
    expect(JSON.stringify(research.schema.parameters)).toBe(
      "{\"type\":\"object\",\"properties\":{\"task\":{\"type\":\"string\",\"description\":\"the sub-task / goal to run\"}},\"required\":[\"task\"]}"
    )
    expect(research.sideEffecting).toBe(false)
  })

  it.effect("it runs the sub-agent and renders its output", () =>
    Effect.gen(function*() {
      const value = yield* research.run({ task: "find the capital of France" })
      expect(value).toBe("researched: find the capital of France")
    }).pipe(Effect.provide(runLayer)))

  it.effect("a depth overflow reaches the caller as DepthExceeded", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(research.run({ task: "x" }))
      expect(error).toBeInstanceOf(DepthExceeded)
      expect(error.message).toBe("agent depth 1 > max_depth 0")
    }).pipe(Effect.provide(RunContext.layer({ budget: { maxDepth: 0 } }))))
})
