/**
 * The run's Budget ends a run mid-loop: the Invoker enforces it, with no middleware
 * (spec-runtime §2.2, §9 "Budget 0.015 with $0.01 tool turns → MeterExceeded mid-loop").
 */
import { Agent, ReActCognition } from "@agentkit/agents"
import { Budget, BudgetExceeded } from "@agentkit/core"
import { FakeLLM, FakeTool, Fixture, makeTestCtx, Seed, Turn } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"

const { failureOf } = Fixture
const { lookupCall, MODEL, TASK } = Seed

/** The fake bills what its script says: its model is free in the catalog, so a call reserves no money. */
const free = FakeLLM.freeCatalog(MODEL)

const dime = { inputTokens: 10, outputTokens: 5, costUsd: 0.01 }

for (const tracing of [true, false]) {
  describe(`budget, tracing ${tracing ? "on" : "off"}`, () => {
    it.effect("maxCostUsd 0.015 with $0.01 tool turns → BudgetExceeded `cost $0.02 > $0.015` after the second call", () =>
      Effect.gen(function*() {
        const lookup = FakeTool.make("lookup_order", { responses: ["shipped"] })
        const agent = Agent.make({ name: "support", model: MODEL, cognition: ReActCognition.make({ tools: [lookup] }) })
        const llm = FakeLLM.script([
          Turn({ toolCalls: [lookupCall("c1")], usage: dime }),
          Turn({ toolCalls: [lookupCall("c2")], usage: dime }),
          Turn({ content: "never reached", usage: dime })
        ])
        const budget = Budget.unsafeMake({ maxCostUsd: 0.015 })
        const exit = yield* agent.run(TASK).pipe(
          Effect.provide(Layer.merge(makeTestCtx({ tracing, llm, budget }), free)),
          Effect.exit
        )
        const error = failureOf(exit)
        expect(error).toBeInstanceOf(BudgetExceeded)
        expect(error).toMatchObject({ _tag: "BudgetExceeded", limit: "cost", message: "cost $0.02 > $0.015" })
        expect(llm.calls).toBe(2)
        // the second turn's tool call never ran: the run ended when the call was charged
        expect(lookup.calls).toHaveLength(1)
        expect(budget.spentUsd).toBe(0.02)
        expect(budget.modelCalls).toBe(2)
      }))

    it.effect("limits given as plain options to makeTestCtx work the same", () =>
      Effect.gen(function*() {
        const lookup = FakeTool.make("lookup_order")
        const agent = Agent.make({ name: "support", model: MODEL, cognition: ReActCognition.make({ tools: [lookup] }) })
        const llm = FakeLLM.script([
          Turn({ toolCalls: [lookupCall("c1")], usage: dime }),
          Turn({ toolCalls: [lookupCall("c2")], usage: dime })
        ])
        const exit = yield* agent.run(TASK).pipe(
          Effect.provide(Layer.merge(makeTestCtx({ tracing, llm, budget: { maxCostUsd: 0.015 } }), free)),
          Effect.exit
        )
        expect(failureOf(exit)).toMatchObject({ limit: "cost", message: "cost $0.02 > $0.015" })
      }))

    it.effect("maxModelCalls 1 → the second model call is refused before it is sent, and ends the run", () =>
      Effect.gen(function*() {
        const lookup = FakeTool.make("lookup_order")
        const agent = Agent.make({ name: "support", model: MODEL, cognition: ReActCognition.make({ tools: [lookup] }) })
        const llm = FakeLLM.script([Turn({ toolCalls: [lookupCall("c1")] }), Turn({ content: "too late" })])
        const exit = yield* agent.run(TASK).pipe(
          Effect.provide(makeTestCtx({ tracing, llm, budget: { maxModelCalls: 1 } })),
          Effect.exit
        )
        expect(failureOf(exit)).toMatchObject({ _tag: "BudgetExceeded", limit: "modelCalls", message: "calls 2 > 1" })
        expect(llm.calls).toBe(1) // a reservation: the refused call never reached the model
      }))

    it.effect("maxToolCalls 1 with two calls in one turn → the run ends with BudgetExceeded, not a reflected error", () =>
      Effect.gen(function*() {
        const lookup = FakeTool.make("lookup_order")
        const agent = Agent.make({ name: "support", model: MODEL, cognition: ReActCognition.make({ tools: [lookup] }) })
        const llm = FakeLLM.script([
          Turn({ toolCalls: [lookupCall("c1"), lookupCall("c2")] }),
          Turn({ content: "never reached" })
        ])
        const exit = yield* agent.run(TASK).pipe(
          Effect.provide(makeTestCtx({ tracing, llm, budget: { maxToolCalls: 1 } })),
          Effect.exit
        )
        expect(failureOf(exit)).toMatchObject({
          _tag: "BudgetExceeded",
          limit: "toolCalls",
          message: "tool calls 2 > 1"
        })
        expect(llm.calls).toBe(1)
        expect(lookup.calls.length).toBeLessThanOrEqual(1)
      }))

    it.effect("a run within its budget completes and the budget shows what it spent", () =>
      Effect.gen(function*() {
        const lookup = FakeTool.make("lookup_order")
        const agent = Agent.make({ name: "support", model: MODEL, cognition: ReActCognition.make({ tools: [lookup] }) })
        const llm = FakeLLM.script([
          Turn({ toolCalls: [lookupCall("c1")], usage: dime }),
          Turn({ content: "fine", usage: dime })
        ])
        const budget = Budget.unsafeMake({ maxCostUsd: 0.05, maxModelCalls: 2, maxToolCalls: 1 })
        const result = yield* agent.run(TASK).pipe(
          Effect.provide(Layer.merge(makeTestCtx({ tracing, llm, budget }), free))
        )
        expect(result.output).toBe("fine")
        expect(result.usage.costUsd).toBe(0.02)
        expect([budget.spentUsd, budget.modelCalls, budget.toolCalls, budget.tokens]).toEqual([0.02, 2, 1, 30])
      }))

    it.effect("at the model's list prices a call reserves up to its output limit: under maxCostUsd 0.015 the first call is refused before it is sent", () =>
      Effect.gen(function*() {
        const agent = Agent.make({ name: "support", model: MODEL })
        const llm = FakeLLM.script([Turn({ content: "never reached", usage: dime })])
        const budget = Budget.unsafeMake({ maxCostUsd: 0.015 })
        const exit = yield* agent.run(TASK).pipe(Effect.provide(makeTestCtx({ tracing, llm, budget })), Effect.exit)
        // 64,000 output tokens at $15 a million: $0.96 and the input
        expect(failureOf(exit)).toMatchObject({ _tag: "BudgetExceeded", limit: "cost" })
        expect((failureOf(exit) as BudgetExceeded).message).toMatch(/^cost \$0\.96\d* > \$0\.015$/)
        expect([llm.calls, budget.modelCalls, budget.spentUsd]).toEqual([0, 0, 0])
      }))

    it.effect("an agent's maxTokens bounds its calls' reservations: 256 output tokens fit under maxCostUsd 0.015", () =>
      Effect.gen(function*() {
        const agent = Agent.make({ name: "support", model: MODEL, maxTokens: 256 })
        const llm = FakeLLM.script([
          Turn({ content: "fine", usage: { inputTokens: 40, outputTokens: 3, costUsd: 0.000165 } })
        ])
        const budget = Budget.unsafeMake({ maxCostUsd: 0.015 })
        const result = yield* agent.run(TASK).pipe(Effect.provide(makeTestCtx({ tracing, llm, budget })))
        expect(result.output).toBe("fine")
        expect([llm.calls, budget.spentUsd, budget.reservedNanos]).toEqual([1, 0.000165, 0])
      }))
  })
}
