/**
 * What a run's `usage` counts (issue 15, DESIGN's budget rules): a retried call reserves and is
 * counted once per attempt, but only an answer has usage; an interrupted call is counted (it may
 * have reached the provider) with no usage; a cache hit is neither counted nor charged, and the
 * run's usage counts it as 0; a structured-output repair is a call like any other.
 */
import { Agent } from "@agentkit/agents"
import { Budget, Usage } from "@agentkit/core"
import { Memoize, Retry } from "@agentkit/middleware"
import { failure, FakeLLM, makeTestCtx, runWithClock, Turn } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Schema } from "effect"

const usage = { inputTokens: 100, outputTokens: 20, costUsd: 0.01 }
const agent = Agent.make({ name: "plain", model: "m", prompt: "Answer briefly." })

describe("a run's usage under retries, interruptions and caches", () => {
  it.effect("retried: 2 attempts counted against the budget, the usage is the answer's only", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([failure(), Turn({ content: "ok", usage })])
      const budget = Budget.unsafeMake()
      const exit = yield* runWithClock(
        agent.run("hi").pipe(
          Effect.provide(makeTestCtx({ llm, budget, chatMiddleware: [Retry.retry({ maxAttempts: 3 })] }))
        )
      )
      const result = yield* exit
      expect(result.usage).toEqual(Usage.make(usage))
      expect([budget.modelCalls, budget.spentUsd]).toEqual([2, 0.01])
    }))

  it.effect("interrupted mid-call: counted (it may have reached the provider), nothing charged", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const llm = FakeLLM.respond(() => Effect.zipRight(Deferred.succeed(started, undefined), Effect.never))
      const budget = Budget.unsafeMake()
      const fiber = yield* Effect.fork(agent.run("hi").pipe(Effect.provide(makeTestCtx({ llm, budget }))))
      yield* Deferred.await(started)
      const exit = yield* Fiber.interrupt(fiber)
      expect(Exit.isInterrupted(exit)).toBe(true)
      expect([budget.modelCalls, budget.spentUsd, budget.snapshot().inFlightModelCalls]).toEqual([1, 0, 0])
    }))

  it.effect("cached: the second run is served from the cache, its usage is 0, the budget is not touched", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.respond(() => Turn({ content: "ok", usage }))
      const memoize = Memoize.memoize({ store: Memoize.memoryStore() })
      const budget = Budget.unsafeMake()
      const layer = makeTestCtx({ llm, budget, chatMiddleware: [memoize] })
      const first = yield* agent.run("hi").pipe(Effect.provide(layer))
      const second = yield* agent.run("hi").pipe(Effect.provide(layer))
      expect(first.usage).toEqual(Usage.make(usage))
      expect(second.output).toBe("ok")
      expect(second.usage).toEqual(Usage.zero)
      expect([llm.calls, budget.modelCalls, budget.spentUsd]).toEqual([1, 1, 0.01])
    }))

  it.effect("a structured-output repair is counted and charged like any call", () =>
    Effect.gen(function*() {
      const typed = Agent.make({ name: "typed", model: "m", output: Schema.Struct({ n: Schema.Int }) })
      const llm = FakeLLM.script([Turn({ content: "{}", usage }), Turn({ content: "{\"n\":1}", usage })])
      const budget = Budget.unsafeMake()
      const result = yield* typed.run("hi").pipe(Effect.provide(makeTestCtx({ llm, budget })))
      expect(result.parsed).toEqual({ n: 1 })
      expect(result.usage).toEqual(Usage.make({ inputTokens: 200, outputTokens: 40, costUsd: 0.02 }))
      expect([budget.modelCalls, budget.spentUsd]).toEqual([2, 0.02])
    }))
})
