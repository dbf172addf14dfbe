/**
 * `makeTestCtx` (spec-tools-testing §5.3, DESIGN "Testing"): one layer providing `RunContext`,
 * `Invoker` and `ChatModel`.
 */
import {
  Budget,
  Cancellation,
  ChatModel,
  ConfigurationError,
  Invoker,
  Message,
  RunContext,
  Scope
} from "@agentkit/core"
import type { ChatMiddleware, ToolMiddleware } from "@agentkit/core"
import { failure, FakeLLM, FakeTool, makeTestCtx, Tracing, Turn } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"

const request = { model: "claude-sonnet-4-6", messages: [Message.user("hi")], tools: [] }

describe("makeTestCtx", () => {
  it.effect("defaults: correlation id `test-run`, autonomy `auto`, empty scope `orgNone:domNone`, depth 0", () =>
    Effect.gen(function*() {
      const context = yield* RunContext
      expect(context.correlationId).toBe("test-run")
      expect(context.autonomy).toBe("auto")
      expect(context.scope.key).toBe("orgNone:domNone")
      expect(context.depth).toBe(0)
      expect(context.tracing).toBe(true)
      expect(context.cancellation.isCancelled).toBe(false)
      // an unlimited budget with the default depth and concurrency
      expect(context.budget).toBeInstanceOf(Budget.Budget)
      expect(context.budget.maxCostUsd).toBeUndefined()
      expect(context.budget.maxDepth).toBe(4)
      expect(context.budget.maxConcurrency).toBe(8)
    }).pipe(Effect.provide(makeTestCtx({ llm: FakeLLM.script([]) }))))

  it.effect("provides the ChatModel (the fake) and an Invoker over it", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ content: "from the model" }), Turn({ content: "via the invoker" })])
      const program = Effect.gen(function*() {
        const model = yield* ChatModel
        const invoker = yield* Invoker
        const direct = yield* model.chat(request, { emit: () => {} })
        const piped = yield* invoker.chat(request)
        return [direct.content, piped.content]
      })
      expect(yield* program.pipe(Effect.provide(makeTestCtx({ llm })))).toEqual(["from the model", "via the invoker"])
      expect(llm.calls).toBe(2)
    }))

  it.effect("accepts any ChatModel layer as llm", () =>
    Effect.gen(function*() {
      const layer = ChatModel.layer({
        chat: (req) =>
          Effect.succeed({
            content: `echo ${req.model}`,
            toolCalls: [],
            usage: FakeLLM.defaultUsage,
            finishReason: "end_turn" as const,
            model: req.model,
            provider: "custom"
          })
      })
      const response = yield* Effect.flatMap(Invoker, (invoker) => invoker.chat(request)).pipe(
        Effect.provide(makeTestCtx({ llm: layer }))
      )
      expect(response).toMatchObject({ content: "echo claude-sonnet-4-6", provider: "custom" })
    }))

  it.effect("options: correlation id, scope fields, autonomy, tracing", () =>
    Effect.gen(function*() {
      const context = yield* RunContext.pipe(
        Effect.provide(
          makeTestCtx({
            llm: FakeLLM.script([]),
            correlationId: "run-9",
            scope: { orgId: 7, domainId: "support", userId: "u1" },
            autonomy: "gated",
            tracing: false
          })
        )
      )
      expect(context.correlationId).toBe("run-9")
      expect(context.scope.key).toBe("org7:domsupport")
      expect(context.scope.userId).toBe("u1")
      expect(context.autonomy).toBe("gated")
      expect(context.tracing).toBe(false)
    }))

  it.effect("options: a Scope value and a Budget value are used as they are", () =>
    Effect.gen(function*() {
      const scope = Scope.make({ orgId: 1 })
      const budget = Budget.unsafeMake({ maxCostUsd: 1 })
      const context = yield* RunContext.pipe(Effect.provide(makeTestCtx({ llm: FakeLLM.script([]), scope, budget })))
      expect(context.scope).toBe(scope)
      expect(context.budget).toBe(budget)
    }))

  it.effect("options: budget limits are checked and enforced by the Invoker", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ usage: { costUsd: 0.01 } }), Turn({ usage: { costUsd: 0.01 } })])
      const exit = yield* Effect.flatMap(Invoker, (invoker) =>
        Effect.zipRight(invoker.chat(request), invoker.chat(request))).pipe(
          // the fake bills what its script says: its model is free in the catalog (no money reserved)
          Effect.provide(
            Layer.merge(makeTestCtx({ llm, budget: { maxCostUsd: 0.015 } }), FakeLLM.freeCatalog(request.model))
          ),
          Effect.flip
        )
      expect(exit).toMatchObject({ _tag: "BudgetExceeded", message: "cost $0.02 > $0.015" })
      const bad = yield* Effect.flip(RunContext.pipe(Effect.provide(makeTestCtx({ llm, budget: { maxCostUsd: -1 } }))))
      expect(bad).toBeInstanceOf(ConfigurationError)
    }))

  it.effect("an unknown autonomy tier is a ConfigurationError when the layer is built", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        RunContext.pipe(Effect.provide(makeTestCtx({ llm: FakeLLM.script([]), autonomy: "yolo" as never })))
      )
      expect(error).toBeInstanceOf(ConfigurationError)
      expect(error).toMatchObject({ field: "autonomy" })
      expect(error.message).toMatch(/^autonomy must be one of 'auto', 'gated', 'manual'; got .yolo.$/)
    }))

  it.effect("options: the cancellation handle is the one given", () =>
    Effect.gen(function*() {
      const token = Cancellation.make()
      const context = yield* RunContext.pipe(
        Effect.provide(makeTestCtx({ llm: FakeLLM.script([]), cancellation: token }))
      )
      expect(context.cancellation).toBe(token)
    }))

  it.effect("chat middleware are applied in order, the first outermost", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const mark = (name: string): ChatMiddleware => (next) => (call) =>
        Effect.sync(() => log.push(`${name}>`)).pipe(
          Effect.zipRight(next(call)),
          Effect.tap(() => Effect.sync(() => log.push(`<${name}`)))
        )
      const llm = FakeLLM.script([Turn({ content: "ok" })])
      yield* Effect.flatMap(Invoker, (invoker) => invoker.chat(request)).pipe(
        Effect.provide(makeTestCtx({ llm, chatMiddleware: [mark("a"), mark("b")] }))
      )
      expect(log).toEqual(["a>", "b>", "<b", "<a"])
    }))

  it.effect("tool middleware are applied in order, the first outermost; chat middleware do not touch tools", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const mark = (name: string): ToolMiddleware => (next) => (invocation) =>
        Effect.sync(() => log.push(`${name}>${invocation.tool.name}`)).pipe(
          Effect.zipRight(next(invocation)),
          Effect.tap(() => Effect.sync(() => log.push(`<${name}`)))
        )
      const chatOnly: ChatMiddleware = (next) => (call) =>
        Effect.zipRight(Effect.sync(() => log.push("chat")), next(call))
      const tool = FakeTool.make("search", { responses: ["hit"] })
      const outcome = yield* Effect.flatMap(
        Invoker,
        (invoker) => invoker.tool({ id: "c1", name: "search", arguments: { q: "x" } }, tool)
      ).pipe(
        Effect.provide(
          makeTestCtx({ llm: FakeLLM.script([]), toolMiddleware: [mark("a"), mark("b")], chatMiddleware: [chatOnly] })
        )
      )
      expect(outcome).toEqual({ value: "hit", text: "hit" })
      expect(log).toEqual(["a>search", "b>search", "<b", "<a"])
      expect(tool.calls).toEqual([{ q: "x" }])
    }))

  it.effect("with no middleware, the Invoker adds nothing: one model call per chat, no retry", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([failure(), Turn({ content: "second" })])
      const error = yield* Effect.flatMap(Invoker, (invoker) => invoker.chat(request)).pipe(
        Effect.provide(makeTestCtx({ llm })),
        Effect.flip
      )
      expect(error).toMatchObject({ _tag: "ChatModelError", retryable: true })
      expect(llm.calls).toBe(1)
    }))

  it.effect("the recording tracer is re-exported from core", () =>
    Effect.gen(function*() {
      const tracer = Tracing.recording()
      const llm = FakeLLM.script([Turn({ content: "ok" })])
      yield* Effect.flatMap(Invoker, (invoker) => invoker.chat(request)).pipe(
        Effect.provide(makeTestCtx({ llm })),
        Effect.provide(tracer.layer)
      )
      expect(tracer.spans.map((span) => span.name)).toEqual(["chat claude-sonnet-4-6"])
    }))
})
