/**
 * `FakeLLM.freeCatalog`: the fake's models cost nothing in the catalog, so under a cost ceiling a
 * call reserves no money and the script's usage is all the budget charges; without it, a call is
 * reserved at the model's list prices up to its output limit.
 */
import { Invoker, Message, ModelCatalog, RunContext } from "@agentkit/core"
import { FakeLLM, makeTestCtx, Turn } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"

const request = { model: "claude-sonnet-4-6", messages: [Message.user("hi")], tools: [] }

describe("FakeLLM.freeCatalog", () => {
  it.effect("a known model keeps its output limit and capabilities at no price; an unknown one gets every capability", () =>
    Effect.gen(function*() {
      const catalog = yield* ModelCatalog.current
      const sonnet = Option.getOrThrow(catalog.lookup("claude-sonnet-4-6"))
      expect(sonnet.prices).toEqual({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 })
      expect(sonnet.maxOutputTokens).toBe(ModelCatalog.defaults["claude-sonnet-4-6"]!.maxOutputTokens)
      expect(sonnet.capabilities).toEqual(ModelCatalog.defaults["claude-sonnet-4-6"]!.capabilities)
      expect(Option.getOrThrow(catalog.lookup("my-fake")).capabilities).toEqual(ModelCatalog.capabilities)
      expect(Option.getOrThrow(catalog.lookup("gpt-4o")).prices.input).toBe(2.5) // the others as they are
    }).pipe(Effect.provide(FakeLLM.freeCatalog("claude-sonnet-4-6", "my-fake"))))

  it.effect("under maxCostUsd the call reserves nothing with it, and its list price up to its output limit without it", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ usage: { costUsd: 0.001 } })])
      const ask = Effect.flatMap(Invoker, (invoker) => invoker.chat(request))
      const refused = yield* Effect.flip(ask.pipe(Effect.provide(makeTestCtx({ llm, budget: { maxCostUsd: 0.5 } }))))
      expect(refused).toMatchObject({ _tag: "BudgetExceeded", limit: "cost" })
      expect(llm.calls).toBe(0)
      const spent = yield* Effect.zipRight(ask, Effect.map(RunContext, (context) => context.budget.spentUsd)).pipe(
        Effect.provide(
          Layer.merge(makeTestCtx({ llm, budget: { maxCostUsd: 0.5 } }), FakeLLM.freeCatalog(request.model))
        )
      )
      expect([llm.calls, spent]).toEqual([1, 0.001])
    }))
})
