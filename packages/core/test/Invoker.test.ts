import {
  BudgetExceeded,
  ChatModelError,
  ExecutionLedger,
  Invoker,
  Message,
  ModelCatalog,
  Quota,
  RunContext,
  ToolExecutionError,
  Tracing,
  Usage
} from "@agentkit/core"
import type { Budget, CallMetadata, Chat, ChatMiddleware, ToolCall, ToolMiddleware } from "@agentkit/core"
import { FakeLLM, FakeTool, Fixture } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, FiberId, Layer, Queue, Ref } from "effect"

const { replying: scriptedModel } = FakeLLM
const { invokable: makeTool } = FakeTool
const { request, response } = Fixture

type Model = ReturnType<typeof scriptedModel>

/**
 * The fake model's catalog entry: free, so a call reserves no money and the usage the fake
 * reports is what the budget charges (the reservation tests price it).
 */
const fakeCatalog = ModelCatalog.layer({
  m: {
    provider: "fake",
    contextWindow: 1_000_000,
    maxOutputTokens: 1000,
    prices: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    capabilities: ["tools"]
  }
})

const setup = (options: {
  readonly model?: Model
  readonly budget?: Budget.Limits
  readonly chatMiddleware?: ReadonlyArray<ChatMiddleware>
  readonly toolMiddleware?: ReadonlyArray<ToolMiddleware>
  readonly tracing?: boolean
  readonly scope?: { readonly orgId: number; readonly domainId: number }
}) => {
  const model = options.model ?? scriptedModel()
  const layer = Layer.mergeAll(
    Invoker.layer({ chatMiddleware: options.chatMiddleware, toolMiddleware: options.toolMiddleware }).pipe(
      Layer.provide(model.layer)
    ),
    RunContext.layer({
      correlationId: "run-1",
      budget: options.budget,
      tracing: options.tracing,
      scope: options.scope
    }),
    fakeCatalog
  )
  return { model, layer }
}

const call = (id = "c1", name = "t", args: Record<string, unknown> = {}): ToolCall.ToolCall => ({
  id,
  name,
  arguments: args
})

const chatRecorder = (log: Array<string>, name: string): ChatMiddleware => (next) => (chatCall) =>
  Effect.sync(() => log.push(`${name}>`)).pipe(
    Effect.zipRight(next(chatCall)),
    Effect.ensuring(Effect.sync(() => log.push(`<${name}`)))
  )

const toolRecorder = (log: Array<string>, name: string): ToolMiddleware => (next) => (toolCall) =>
  Effect.sync(() => log.push(`${name}>`)).pipe(
    Effect.zipRight(next(toolCall)),
    Effect.ensuring(Effect.sync(() => log.push(`<${name}`)))
  )

const timeout = () => new ChatModelError({ reason: "timeout", retryable: true, message: "timed out" })

describe("Invoker chat pipeline", () => {
  it.effect("without middleware: the model answers, deltas reach emit", () => {
    const { model, layer } = setup({})
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      const deltas: Array<string> = []
      const answer = yield* invoker.chat(request("m"), { emit: (delta) => deltas.push(delta.text) })
      expect(answer.content).toBe("ok")
      expect(deltas).toEqual(["o", "k"])
      expect(model.calls).toBe(1)
      // no emit given: deltas are dropped quietly
      yield* invoker.chat(request("m"))
      expect(model.calls).toBe(2)
    }).pipe(Effect.provide(layer))
  })

  it.effect("middleware order: the first in the list is outermost", () => {
    const log: Array<string> = []
    const model = scriptedModel(() =>
      Effect.sync(() => {
        log.push("model")
        return response()
      })
    )
    const { layer } = setup({
      model,
      chatMiddleware: [chatRecorder(log, "a"), chatRecorder(log, "b"), chatRecorder(log, "c")]
    })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* invoker.chat(request())
      expect(log).toEqual(["a>", "b>", "c>", "model", "<c", "<b", "<a"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("a middleware can rewrite the request: the model sees the rewritten model and messages", () => {
    const rewrite: ChatMiddleware = (next) => (chatCall) =>
      next({
        ...chatCall,
        request: {
          ...chatCall.request,
          model: "rewritten",
          messages: [Message.system("be brief"), ...chatCall.request.messages]
        }
      })
    const { model, layer } = setup({ chatMiddleware: [rewrite] })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      const answer = yield* invoker.chat(request("original", "hello"))
      expect(model.requests).toHaveLength(1)
      expect(model.requests[0]?.model).toBe("rewritten")
      expect(model.requests[0]?.messages).toEqual([Message.system("be brief"), Message.user("hello")])
      expect(answer.model).toBe("rewritten")
    }).pipe(Effect.provide(layer))
  })

  it.effect("a middleware can observe and transform the result", () => {
    const seen: Array<string> = []
    const observe: ChatMiddleware = (next) => (chatCall) =>
      Effect.tap(next(chatCall), (answer) => Effect.sync(() => seen.push(answer.content)))
    const shout: ChatMiddleware = (next) => (chatCall) =>
      Effect.map(next(chatCall), (answer) => ({ ...answer, content: answer.content.toUpperCase() }))
    const { layer } = setup({ chatMiddleware: [observe, shout] })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      const answer = yield* invoker.chat(request())
      expect(answer.content).toBe("OK")
      expect(seen).toEqual(["OK"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("a middleware can short-circuit: the model is never called, so the Budget is not charged", () => {
    const canned: ChatMiddleware = () => () => Effect.succeed(response({ content: "canned" }))
    const { model, layer } = setup({ chatMiddleware: [canned] })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      const answer = yield* invoker.chat(request())
      expect(answer.content).toBe("canned")
      expect(model.calls).toBe(0)
      const run = yield* RunContext
      expect(run.budget.modelCalls).toBe(0)
      expect(run.budget.spentUsd).toBe(0)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a middleware can re-invoke next: retry-once calls the model twice; both requests count, only the answer is charged", () => {
    const retryOnce: ChatMiddleware = (next) => (chatCall) => Effect.catchAll(next(chatCall), () => next(chatCall))
    const model = scriptedModel((
      n
    ) => (n === 1 ? Effect.fail(timeout()) : Effect.succeed(response({ content: "second" }))))
    const { layer } = setup({ model, chatMiddleware: [retryOnce] })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      const answer = yield* invoker.chat(request())
      expect(answer.content).toBe("second")
      expect(model.calls).toBe(2)
      const run = yield* RunContext
      // each attempt reserves at the innermost point and is counted when it returns: it reached the provider
      expect(run.budget.modelCalls).toBe(2)
      expect(run.budget.spentUsd).toBe(0.01)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a middleware sees and may wrap the emit sink", () => {
    const tag: ChatMiddleware = (next) => (chatCall) =>
      next({ ...chatCall, emit: (delta) => chatCall.emit({ text: `[${delta.text}]` }) })
    const { layer } = setup({ chatMiddleware: [tag] })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      const deltas: Array<Chat.ChatDelta> = []
      yield* invoker.chat(request(), { emit: (delta) => deltas.push(delta) })
      expect(deltas).toEqual([{ text: "[o]" }, { text: "[k]" }])
    }).pipe(Effect.provide(layer))
  })

  it.effect("the middleware gets the run context", () => {
    const ids: Array<string> = []
    const readContext: ChatMiddleware = (next) => (chatCall) =>
      Effect.zipRight(
        Effect.sync(() => ids.push(`${chatCall.context.correlationId}@${chatCall.context.depth}`)),
        next(chatCall)
      )
    const { layer } = setup({ chatMiddleware: [readContext] })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* invoker.chat(request())
      const child = yield* RunContext.child
      yield* invoker.chat(request()).pipe(Effect.provideService(RunContext, child))
      expect(ids).toEqual(["run-1@0", "run-1@1"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("features: the Invoker passes on its model's (a forced tool choice), none by default; the toolChoice reaches the model", () =>
    Effect.gen(function*() {
      const plain = yield* Effect.provide(Invoker, setup({}).layer)
      expect(plain.features).toEqual({})
      const forced = FakeLLM.script([FakeLLM.Turn({ content: "ok" })], { features: { toolChoice: true } })
      const layer = Layer.mergeAll(
        Layer.provide(Invoker.layer(), forced.layer),
        RunContext.layer({ correlationId: "run-1" })
      )
      const tool: Chat.ToolSchema = { name: "structured_output", description: "d", parameters: { type: "object" } }
      yield* Effect.gen(function*() {
        const invoker = yield* Invoker
        expect(invoker.features).toEqual({ toolChoice: true })
        yield* invoker.chat({ ...request(), tools: [tool], toolChoice: { type: "tool", name: "structured_output" } })
      }).pipe(Effect.provide(layer))
      expect(forced.requests[0]!.toolChoice).toEqual({ type: "tool", name: "structured_output" })
    }))

  it.effect("a call a middleware marks as served from a cache reaches the caller with zero usage", () => {
    const cached: ChatMiddleware = () => (chatCall) =>
      Effect.sync(() => {
        chatCall.meta.cacheHit = true
        return response({ usage: Usage.make({ inputTokens: 100, outputTokens: 20, costUsd: 0.5 }) })
      })
    const { layer, model } = setup({ chatMiddleware: [cached] })
    return Effect.gen(function*() {
      const answer = yield* (yield* Invoker).chat(request())
      expect(answer.usage).toEqual(Usage.zero)
      expect(model.calls).toBe(0)
      expect((yield* RunContext).budget.modelCalls).toBe(0)
    }).pipe(Effect.provide(layer))
  })

  describe("per-call metadata", () => {
    it.effect("the meta record is fresh for every call", () => {
      const metas: Array<CallMetadata> = []
      const snapshots: Array<CallMetadata> = []
      const mark: ChatMiddleware = (next) => (chatCall) =>
        Effect.suspend(() => {
          snapshots.push({ ...chatCall.meta })
          metas.push(chatCall.meta)
          chatCall.meta["mark"] = metas.length
          return next(chatCall)
        })
      const { layer } = setup({ chatMiddleware: [mark] })
      return Effect.gen(function*() {
        const invoker = yield* Invoker
        yield* invoker.chat(request())
        yield* invoker.chat(request())
        expect(metas[0]).not.toBe(metas[1])
        expect(snapshots).toEqual([{}, {}])
      }).pipe(Effect.provide(layer))
    })

    it.effect("a meta given by the caller is seen by the middleware, and the caller's object is not written to", () => {
      const seen: Array<unknown> = []
      const mark: ChatMiddleware = (next) => (chatCall) =>
        Effect.suspend(() => {
          seen.push(chatCall.meta["outputAdapter"])
          chatCall.meta.servedBy = "other-model"
          return next(chatCall)
        })
      const { layer } = setup({ chatMiddleware: [mark] })
      return Effect.gen(function*() {
        const invoker = yield* Invoker
        const meta: CallMetadata = { outputAdapter: "json" }
        yield* invoker.chat(request(), { meta })
        expect(seen).toEqual(["json"])
        expect(meta).toEqual({ outputAdapter: "json" })
      }).pipe(Effect.provide(layer))
    })

    it.effect("meta.cacheHit = true makes the Invoker skip charging the Budget", () => {
      const cache: ChatMiddleware = () => (chatCall) =>
        Effect.sync(() => {
          chatCall.meta.cacheHit = true
          return response({ content: "from cache" })
        })
      const { model, layer } = setup({ chatMiddleware: [cache], budget: { maxModelCalls: 0 } })
      return Effect.gen(function*() {
        const invoker = yield* Invoker
        expect((yield* invoker.chat(request())).content).toBe("from cache")
        expect((yield* invoker.chat(request())).content).toBe("from cache")
        const run = yield* RunContext
        expect(run.budget.modelCalls).toBe(0)
        expect(run.budget.spentUsd).toBe(0)
        expect(run.budget.tokens).toBe(0)
        expect(model.calls).toBe(0)
      }).pipe(Effect.provide(layer))
    })

    it.effect("a cache hit on one call does not leak into the next call that reuses the caller's meta", () => {
      let hits = 0
      // serves the first call from cache, lets the second through to the model
      const cacheFirst: ChatMiddleware = (next) => (chatCall) =>
        Effect.suspend(() => {
          if (hits > 0) return next(chatCall)
          hits += 1
          chatCall.meta.cacheHit = true
          return Effect.succeed(response({ content: "from cache" }))
        })
      const { model, layer } = setup({ chatMiddleware: [cacheFirst] })
      return Effect.gen(function*() {
        const invoker = yield* Invoker
        const meta: CallMetadata = {}
        yield* invoker.chat(request(), { meta })
        yield* invoker.chat(request(), { meta })
        expect(model.calls).toBe(1)
        const run = yield* RunContext
        expect(run.budget.modelCalls).toBe(1)
        expect(run.budget.spentUsd).toBe(0.01)
      }).pipe(Effect.provide(layer))
    })
  })

  for (const tracing of [true, false]) {
    describe(`Budget enforcement (no middleware needed), tracing ${tracing ? "on" : "off"}`, () => {
      it.effect("maxCostUsd 0.015 at $0.01 a call: call 2 runs then fails, call 3 is refused before the model", () => {
        const { model, layer } = setup({ tracing, budget: { maxCostUsd: 0.015 } })
        return Effect.gen(function*() {
          const invoker = yield* Invoker
          const run = yield* RunContext
          yield* invoker.chat(request())
          const second = yield* Effect.flip(invoker.chat(request()))
          expect(second).toBeInstanceOf(BudgetExceeded)
          expect(second.message).toBe("cost $0.02 > $0.015")
          expect(model.calls).toBe(2)
          expect(run.budget.spentUsd).toBe(0.02)
          const third = yield* Effect.flip(invoker.chat(request()))
          expect(third.message).toBe("cost $0.02 > $0.015")
          expect(model.calls).toBe(2)
          expect(run.budget.modelCalls).toBe(2)
        }).pipe(Effect.provide(layer))
      })

      it.effect("maxModelCalls 1: call 2 is refused before the model with calls 2 > 1 and not counted", () => {
        const { model, layer } = setup({ tracing, budget: { maxModelCalls: 1 } })
        return Effect.gen(function*() {
          const invoker = yield* Invoker
          yield* invoker.chat(request())
          expect((yield* Effect.flip(invoker.chat(request()))).message).toBe("calls 2 > 1")
          expect((yield* Effect.flip(invoker.chat(request()))).message).toBe("calls 2 > 1")
          expect(model.calls).toBe(1)
          expect((yield* RunContext).budget.modelCalls).toBe(1)
        }).pipe(Effect.provide(layer))
      })

      it.effect("the reservation is the innermost step: a refused call passes the middleware and never reaches the model", () => {
        const log: Array<string> = []
        const { model, layer } = setup({
          tracing,
          budget: { maxModelCalls: 0 },
          chatMiddleware: [chatRecorder(log, "a")]
        })
        return Effect.gen(function*() {
          const invoker = yield* Invoker
          expect((yield* Effect.flip(invoker.chat(request()))).message).toBe("calls 1 > 0")
          expect(log).toEqual(["a>", "<a"])
          expect(model.calls).toBe(0)
        }).pipe(Effect.provide(layer))
      })

      it.effect("a failed model call is counted (it reached the provider) and not charged", () => {
        const model = scriptedModel(() => Effect.fail(timeout()))
        const { layer } = setup({ tracing, model })
        return Effect.gen(function*() {
          const invoker = yield* Invoker
          const error = yield* Effect.flip(invoker.chat(request()))
          expect(error._tag).toBe("ChatModelError")
          const run = yield* RunContext
          expect(run.budget.modelCalls).toBe(1)
          expect(run.budget.spentUsd).toBe(0)
          expect(run.budget.inFlightModelCalls).toBe(0)
        }).pipe(Effect.provide(layer))
      })

      it.effect("1,000 concurrent calls under maxModelCalls 10: exactly 10 reach the model, 990 are refused, none counted twice", () => {
        let reached = 0
        const model = scriptedModel(() => Effect.promise(() => Promise.resolve(++reached)).pipe(Effect.as(response())))
        const { layer } = setup({ tracing, model, budget: { maxModelCalls: 10 } })
        return Effect.gen(function*() {
          const invoker = yield* Invoker
          const exits = yield* Effect.forEach(
            Array.from({ length: 1000 }),
            () => Effect.exit(invoker.chat(request())),
            {
              concurrency: "unbounded"
            }
          )
          expect(reached).toBe(10)
          expect(exits.filter(Exit.isSuccess)).toHaveLength(10)
          const refused = exits.flatMap((exit) => (Exit.isFailure(exit) ? [Fixture.failureOf(exit)] : []))
          expect(refused).toHaveLength(990)
          expect(new Set(refused.map((error) => error.message))).toEqual(new Set(["calls 11 > 10"]))
          const run = yield* RunContext
          expect([run.budget.modelCalls, run.budget.inFlightModelCalls]).toEqual([10, 0])
        }).pipe(Effect.provide(layer))
      })

      it.effect("1,000 calls of $0.0000125 total exactly $0.0125 (integer nano-USD, no rounding per charge)", () => {
        const model = scriptedModel(() =>
          Effect.succeed(response({ usage: Usage.make({ inputTokens: 1, costUsd: 0.0000125 }) }))
        )
        const { layer } = setup({ tracing, model })
        return Effect.gen(function*() {
          const invoker = yield* Invoker
          yield* Effect.forEach(Array.from({ length: 1000 }), () => invoker.chat(request()), {
            concurrency: 50,
            discard: true
          })
          const run = yield* RunContext
          expect(run.budget.spentUsd).toBe(0.0125)
          expect(run.budget.spentNanos).toBe(12_500_000)
        }).pipe(Effect.provide(layer))
      })

      it.effect("the Budget is charged where the model answers: a metering middleware does not charge its quota for the call that broke the budget", () => {
        const scope = { orgId: 1, domainId: 1 }
        const quota = Quota.unsafeMake({ maxUsd: 1 })
        const meter: ChatMiddleware = (next) => (chatCall) =>
          quota.guard(chatCall.context.scope.key).pipe(
            Effect.zipRight(next(chatCall)),
            Effect.tap((answer) => quota.charge(chatCall.context.scope.key, answer.usage))
          )
        const model = scriptedModel(() => Effect.succeed(response({ usage: Usage.make({ costUsd: 0.04 }) })))
        const { layer } = setup({ tracing, model, chatMiddleware: [meter], budget: { maxCostUsd: 0.1 }, scope })
        return Effect.gen(function*() {
          const invoker = yield* Invoker
          yield* invoker.chat(request())
          yield* invoker.chat(request())
          expect((yield* Effect.flip(invoker.chat(request()))).message).toBe("cost $0.12 > $0.1")
          const run = yield* RunContext
          expect(run.budget.spentUsd).toBe(0.12)
          expect(quota.charges("org1:dom1")).toHaveLength(2)
          yield* Effect.flip(invoker.chat(request()))
          expect(model.calls).toBe(3)
          expect(quota.charges("org1:dom1")).toHaveLength(2)
        }).pipe(Effect.provide(layer))
      })
    })
  }

  describe("tracing", () => {
    it.effect("a `chat {model}` span with the GenAI request, response and usage attributes", () => {
      const tracer = Tracing.recording()
      const { layer } = setup({})
      return Effect.gen(function*() {
        const invoker = yield* Invoker
        yield* invoker.chat(request("m"))
        const span = tracer.one("chat m")
        expect(span.kind).toBe("client")
        expect(span.ended).toBe(true)
        expect(span.attributes.get("gen_ai.operation.name")).toBe("chat")
        expect(span.attributes.get("gen_ai.request.model")).toBe("m")
        expect(span.attributes.get("gen_ai.response.model")).toBe("m")
        expect(span.attributes.get("gen_ai.provider.name")).toBe("fake")
        expect(span.attributes.get("gen_ai.response.finish_reasons")).toEqual(["end_turn"])
        expect(span.attributes.get("gen_ai.usage.input_tokens")).toBe(100)
        expect(span.attributes.get("gen_ai.usage.output_tokens")).toBe(20)
        expect(span.attributes.has("error.type")).toBe(false)
      }).pipe(Effect.provide(layer), Effect.provide(tracer.layer))
    })

    it.effect("an interrupted model call's and tool call's spans end, and a span made by the provider is their child", () => {
      const tracer = Tracing.recording()
      const started = Deferred.unsafeMake<void>(FiberId.none)
      const model = scriptedModel(() =>
        Effect.withSpan(Effect.zipRight(Deferred.succeed(started, undefined), Effect.never), "provider http")
      )
      const { layer } = setup({ model })
      return Effect.gen(function*() {
        const invoker = yield* Invoker
        const chatFiber = yield* Effect.fork(invoker.chat(request("m")))
        yield* Deferred.await(started)
        yield* Fiber.interrupt(chatFiber)
        const running = yield* Deferred.make<void>()
        const tool = makeTool("t", () => Effect.zipRight(Deferred.succeed(running, undefined), Effect.never))
        const toolFiber = yield* Effect.fork(invoker.tool(call(), tool))
        yield* Deferred.await(running)
        yield* Fiber.interrupt(toolFiber)
        const chat = tracer.one("chat m")
        const provider = tracer.one("provider http")
        expect([chat.ended, provider.ended, tracer.one("execute_tool t").ended]).toEqual([true, true, true])
        expect(provider.parentSpanId).toBe(chat.spanId)
        const { budget } = yield* RunContext
        expect([budget.modelCalls, budget.inFlightModelCalls, budget.toolCalls, budget.inFlightToolCalls]).toEqual([
          1,
          0,
          1,
          0
        ])
      }).pipe(Effect.provide(layer), Effect.provide(tracer.layer))
    })

    it.effect("the provider's metadata lands on the Invoker's span: response id and provider attributes", () => {
      const tracer = Tracing.recording()
      const model = scriptedModel((_n, req) =>
        Effect.succeed(
          response({
            model: req.model,
            requestId: "req_9",
            metadata: {
              responseId: "msg_9",
              attributes: { "anthropic.request.id": "req_9", "gen_ai.request.max_tokens": 64 }
            }
          })
        )
      )
      const plain = scriptedModel((_n, req) => Effect.succeed(response({ model: req.model, requestId: "req_only" })))
      return Effect.gen(function*() {
        yield* Effect.flatMap(Invoker, (invoker) => invoker.chat(request("meta"))).pipe(
          Effect.provide(setup({ model }).layer)
        )
        yield* Effect.flatMap(Invoker, (invoker) => invoker.chat(request("plain"))).pipe(
          Effect.provide(setup({ model: plain }).layer)
        )
        const span = tracer.one("chat meta")
        expect(span.attributes.get("gen_ai.response.id")).toBe("msg_9")
        expect(span.attributes.get("anthropic.request.id")).toBe("req_9")
        expect(span.attributes.get("gen_ai.request.max_tokens")).toBe(64)
        // without a response id of its own, the request id stands in
        expect(tracer.one("chat plain").attributes.get("gen_ai.response.id")).toBe("req_only")
      }).pipe(Effect.provide(tracer.layer))
    })

    it.effect("a provider's attribute never overrides the response's own; an own key __proto__ is dropped, the rest kept", () => {
      const tracer = Tracing.recording()
      const attributes = JSON.parse(
        "{\"__proto__\": {\"polluted\": true}, \"gen_ai.response.model\": \"spoofed\", \"vendor.tier\": \"gold\"}"
      ) as Record<string, string>
      const model = scriptedModel((_n, req) => Effect.succeed(response({ model: req.model, metadata: { attributes } })))
      return Effect.gen(function*() {
        yield* Effect.flatMap(Invoker, (invoker) => invoker.chat(request("hostile"))).pipe(
          Effect.provide(setup({ model }).layer)
        )
        const span = tracer.one("chat hostile")
        expect(span.attributes.get("gen_ai.response.model")).toBe("hostile")
        expect(span.attributes.get("vendor.tier")).toBe("gold")
        expect(span.attributes.has("__proto__")).toBe(false)
        expect(span.attributes.has("polluted")).toBe(false)
      }).pipe(Effect.provide(tracer.layer))
    })

    it.effect("spans made inside middleware are children of the invoker's span; retries stay inside one span", () => {
      const tracer = Tracing.recording()
      const retryOnce: ChatMiddleware = (next) => (chatCall) => Effect.catchAll(next(chatCall), () => next(chatCall))
      const attempt: ChatMiddleware = (next) => (chatCall) => Effect.withSpan(next(chatCall), "attempt")
      const model = scriptedModel((n) => (n === 1 ? Effect.fail(timeout()) : Effect.succeed(response())))
      const { layer } = setup({ model, chatMiddleware: [retryOnce, attempt] })
      return Effect.gen(function*() {
        const invoker = yield* Invoker
        yield* invoker.chat(request("m")).pipe(Effect.withSpan("invoke_agent support"))
        const agent = tracer.one("invoke_agent support")
        const chat = tracer.one("chat m")
        expect(chat.parentSpanId).toBe(agent.spanId)
        const attempts = tracer.named("attempt")
        expect(attempts).toHaveLength(2)
        expect(tracer.childrenOf(chat)).toEqual(attempts)
        expect(Exit.isFailure(attempts[0]!.exit!)).toBe(true)
        expect(Exit.isSuccess(attempts[1]!.exit!)).toBe(true)
        expect(Exit.isSuccess(chat.exit!)).toBe(true)
      }).pipe(Effect.provide(layer), Effect.provide(tracer.layer))
    })

    it.effect("the span is named after the caller's request, even when a middleware rewrites the model", () => {
      const tracer = Tracing.recording()
      const rewrite: ChatMiddleware = (next) => (chatCall) =>
        next({ ...chatCall, request: { ...chatCall.request, model: "b" } })
      const { layer } = setup({ chatMiddleware: [rewrite] })
      return Effect.gen(function*() {
        const invoker = yield* Invoker
        yield* invoker.chat(request("a"))
        const span = tracer.one("chat a")
        expect(span.attributes.get("gen_ai.request.model")).toBe("a")
        expect(span.attributes.get("gen_ai.response.model")).toBe("b")
      }).pipe(Effect.provide(layer), Effect.provide(tracer.layer))
    })

    it.effect("error.type on a failed model call", () => {
      const tracer = Tracing.recording()
      const model = scriptedModel(() => Effect.fail(timeout()))
      const { layer } = setup({ model })
      return Effect.gen(function*() {
        const invoker = yield* Invoker
        yield* Effect.flip(invoker.chat(request("m")))
        const span = tracer.one("chat m")
        expect(span.attributes.get("error.type")).toBe("ChatModelError")
        expect(Exit.isFailure(span.exit!)).toBe(true)
        expect(span.attributes.has("gen_ai.usage.input_tokens")).toBe(false)
      }).pipe(Effect.provide(layer), Effect.provide(tracer.layer))
    })

    it.effect("error.type on a call the Budget refuses", () => {
      const tracer = Tracing.recording()
      const { layer } = setup({ budget: { maxModelCalls: 0 } })
      return Effect.gen(function*() {
        const invoker = yield* Invoker
        yield* Effect.flip(invoker.chat(request("m")))
        expect(tracer.one("chat m").attributes.get("error.type")).toBe("BudgetExceeded")
      }).pipe(Effect.provide(layer), Effect.provide(tracer.layer))
    })

    it.effect("with tracing: false in the run context, no spans are recorded", () => {
      const tracer = Tracing.recording()
      const { model, layer } = setup({ tracing: false })
      return Effect.gen(function*() {
        const invoker = yield* Invoker
        yield* invoker.chat(request("m"))
        yield* invoker.tool(call(), makeTool("t", () => Effect.succeed("done")))
        expect(model.calls).toBe(1)
        expect(tracer.spans).toHaveLength(0)
      }).pipe(Effect.provide(layer), Effect.provide(tracer.layer))
    })
  })
})

describe("Invoker tool pipeline", () => {
  it.effect("runs the tool with the call's arguments and the run context; the outcome has value and rendered text", () => {
    const { layer } = setup({})
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      const tool = makeTool("t", (args) => Effect.map(RunContext, (context) => ({ args, run: context.correlationId })))
      const outcome = yield* invoker.tool(call("c1", "t", { q: 1 }), tool)
      expect(outcome.value).toEqual({ args: { q: 1 }, run: "run-1" })
      expect(outcome.text).toBe("{\"args\":{\"q\":1},\"run\":\"run-1\"}")
    }).pipe(Effect.provide(layer))
  })

  it.effect("middleware order: the first in the list is outermost", () => {
    const log: Array<string> = []
    const { layer } = setup({ toolMiddleware: [toolRecorder(log, "a"), toolRecorder(log, "b")] })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      const tool = makeTool("t", () =>
        Effect.sync(() => {
          log.push("tool")
          return "done"
        }))
      yield* invoker.tool(call(), tool)
      expect(log).toEqual(["a>", "b>", "tool", "<b", "<a"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("chat middleware do not run for tool calls, nor tool middleware for chat calls", () => {
    const log: Array<string> = []
    const { layer } = setup({
      chatMiddleware: [chatRecorder(log, "chat")],
      toolMiddleware: [toolRecorder(log, "tool")]
    })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* invoker.tool(call(), makeTool("t", () => Effect.succeed(1)))
      expect(log).toEqual(["tool>", "<tool"])
      yield* invoker.chat(request())
      expect(log).toEqual(["tool>", "<tool", "chat>", "<chat"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("a middleware can rewrite the arguments, swap the context, short-circuit and re-invoke", () => {
    let runs = 0
    const seen: Array<unknown> = []
    const tool = makeTool("t", (args) =>
      Effect.flatMap(RunContext, (context) =>
        Effect.suspend(() => {
          runs += 1
          seen.push({ args, depth: context.depth })
          return runs === 1
            ? Effect.fail(new ToolExecutionError({ toolName: "t", cause: "flaky" }))
            : Effect.succeed("ok")
        })))
    // a middleware that gives the pipeline another context puts it on the record and provides it
    const rewrite: ToolMiddleware = (next) => (invocation) =>
      Effect.flatMap(
        Effect.orDie(invocation.context.child()),
        (child) =>
          next({ ...invocation, context: child, call: { ...invocation.call, arguments: { q: "rewritten" } } }).pipe(
            Effect.provideService(RunContext, child)
          )
      )
    const retryOnce: ToolMiddleware = (next) => (invocation) =>
      Effect.catchAll(next(invocation), () => next(invocation))
    const { layer } = setup({ toolMiddleware: [rewrite, retryOnce] })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      const outcome = yield* invoker.tool(call("c1", "t", { q: "original" }), tool)
      expect(outcome.text).toBe("ok")
      expect(runs).toBe(2)
      expect(seen).toEqual([
        { args: { q: "rewritten" }, depth: 1 },
        { args: { q: "rewritten" }, depth: 1 }
      ])
    }).pipe(Effect.provide(layer))
  })

  it.effect("a short-circuiting middleware: the tool never runs and the call is not counted (it never reached the terminal)", () => {
    const dedupe: ToolMiddleware = () => (invocation) =>
      Effect.sync(() => {
        invocation.meta.deduplicated = true
        return { value: "stored", text: "stored" }
      })
    const { layer } = setup({ toolMiddleware: [dedupe], budget: { maxToolCalls: 1 } })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      let runs = 0
      const tool = makeTool("t", () => Effect.sync(() => ++runs))
      expect((yield* invoker.tool(call(), tool)).text).toBe("stored")
      expect((yield* invoker.tool(call("c2"), tool)).text).toBe("stored")
      expect(runs).toBe(0)
      expect((yield* RunContext).budget.toolCalls).toBe(0)
    }).pipe(Effect.provide(layer))
  })

  it.effect("the tool meta record is fresh per call and the caller's object is not written to", () => {
    const snapshots: Array<CallMetadata> = []
    const mark: ToolMiddleware = (next) => (invocation) =>
      Effect.suspend(() => {
        snapshots.push({ ...invocation.meta })
        invocation.meta.deduplicated = true
        return next(invocation)
      })
    const { layer } = setup({ toolMiddleware: [mark] })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      const tool = makeTool("t", () => Effect.succeed("ok"))
      const meta: CallMetadata = { attempt: 1 }
      yield* invoker.tool(call(), tool, { meta })
      yield* invoker.tool(call(), tool, { meta })
      yield* invoker.tool(call(), tool)
      expect(snapshots).toEqual([{ attempt: 1 }, { attempt: 1 }, {}])
      expect(meta).toEqual({ attempt: 1 })
    }).pipe(Effect.provide(layer))
  })

  for (const tracing of [true, false]) {
    describe(`reservations and permits, tracing ${tracing ? "on" : "off"}`, () => {
      it.effect("tool calls reserve against maxToolCalls: the refused call never runs and is not counted", () => {
        const { layer } = setup({ tracing, budget: { maxToolCalls: 2 } })
        return Effect.gen(function*() {
          const invoker = yield* Invoker
          let runs = 0
          const tool = makeTool("t", () => Effect.sync(() => ++runs))
          yield* invoker.tool(call("c1"), tool)
          yield* invoker.tool(call("c2"), tool)
          const error = yield* Effect.flip(invoker.tool(call("c3"), tool))
          expect(error).toBeInstanceOf(BudgetExceeded)
          expect((error as BudgetExceeded).message).toBe("tool calls 3 > 2")
          expect(runs).toBe(2)
          const run = yield* RunContext
          expect(run.budget.toolCalls).toBe(2)
          expect(run.budget.modelCalls).toBe(0)
          expect(((yield* Effect.flip(invoker.tool(call("c4"), tool))) as BudgetExceeded).message).toBe(
            "tool calls 3 > 2"
          )
        }).pipe(Effect.provide(layer))
      })

      it.effect("the tool's own typed failure passes through", () => {
        const { layer } = setup({ tracing })
        return Effect.gen(function*() {
          const invoker = yield* Invoker
          const tool = makeTool(
            "t",
            () => Effect.fail(new ToolExecutionError({ toolName: "t", cause: new Error("card declined") }))
          )
          const error = yield* Effect.flip(invoker.tool(call(), tool))
          expect(error).toBeInstanceOf(ToolExecutionError)
          expect(error.message).toBe("card declined")
        }).pipe(Effect.provide(layer))
      })

      it.effect("a tool call interrupted while it runs is counted and gives its permit back; a model call interrupted while the model works is counted", () => {
        const started = Deferred.unsafeMake<void>(FiberId.none)
        const model = scriptedModel(() => Effect.zipRight(Deferred.succeed(started, undefined), Effect.never))
        const { layer } = setup({ tracing, model, budget: { maxConcurrency: 1 } })
        return Effect.gen(function*() {
          const invoker = yield* Invoker
          const running = yield* Deferred.make<void>()
          const tool = makeTool("t", () => Effect.zipRight(Deferred.succeed(running, undefined), Effect.never))
          const toolFiber = yield* Effect.fork(invoker.tool(call(), tool))
          yield* Deferred.await(running)
          expect(Exit.isInterrupted(yield* Fiber.interrupt(toolFiber))).toBe(true)
          const chatFiber = yield* Effect.fork(invoker.chat(request()))
          yield* Deferred.await(started)
          expect(Exit.isInterrupted(yield* Fiber.interrupt(chatFiber))).toBe(true)
          const { budget } = yield* RunContext
          expect([budget.toolCalls, budget.inFlightToolCalls, budget.freePermits]).toEqual([1, 0, 1])
          expect([budget.modelCalls, budget.inFlightModelCalls]).toEqual([1, 0])
          // and the caller is interruptible again after each
          expect(yield* Effect.checkInterruptible(Effect.succeed)).toBe(true)
        }).pipe(Effect.provide(layer))
      })

      for (const ledger of [true, false]) {
        it.effect(`a side-effecting, non-idempotent tool ${ledger ? "is claimed in the execution ledger: one execution per key" : "without an execution ledger is not claimed: each call with the key runs"}`, () => {
          const { layer } = setup({ tracing })
          return Effect.gen(function*() {
            const invoker = yield* Invoker
            let runs = 0
            const charge = makeTool("charge", () => Effect.sync(() => `charged ${++runs}`), {
              sideEffecting: true,
              idempotent: false
            })
            const meta = { executionKey: "run-1/charge-once" }
            const first = yield* invoker.tool(call("c1", "charge"), charge, { meta })
            const again = yield* invoker.tool(call("c2", "charge"), charge, { meta })
            expect([first.text, again.text, runs]).toEqual(
              ledger ? ["charged 1", "charged 1", 1] : ["charged 1", "charged 2", 2]
            )
          }).pipe(Effect.provide(ledger ? Layer.merge(layer, ExecutionLedger.memory()) : layer))
        })
      }

      describe("concurrency limit", () => {
        it.effect("maxConcurrency 2: of 5 concurrent tool calls, never more than 2 are in flight", () => {
          const { layer } = setup({ tracing, budget: { maxConcurrency: 2 } })
          return Effect.gen(function*() {
            const invoker = yield* Invoker
            const gate = yield* Deferred.make<void>()
            const entered = yield* Queue.unbounded<number>()
            const inFlight = yield* Ref.make(0)
            const maxSeen = yield* Ref.make(0)
            const tool = makeTool("t", () =>
              Effect.gen(function*() {
                const now = yield* Ref.updateAndGet(inFlight, (n) => n + 1)
                yield* Ref.update(maxSeen, (max) => Math.max(max, now))
                yield* Queue.offer(entered, now)
                yield* Deferred.await(gate)
                yield* Ref.update(inFlight, (n) => n - 1)
                return "done"
              }))
            const all = yield* Effect.fork(
              Effect.all(
                Array.from({ length: 5 }, (_, i) => invoker.tool(call(`c${i}`), tool)),
                { concurrency: "unbounded" }
              )
            )
            yield* Queue.take(entered)
            yield* Queue.take(entered)
            // give the other three every chance to start: they must stay parked on the semaphore
            yield* Effect.repeatN(Effect.yieldNow(), 100)
            expect(yield* Queue.size(entered)).toBe(0)
            expect(yield* Ref.get(inFlight)).toBe(2)
            yield* Deferred.succeed(gate, undefined)
            const outcomes = yield* Fiber.join(all)
            expect(outcomes.map((o) => o.text)).toEqual(["done", "done", "done", "done", "done"])
            expect(yield* Ref.get(maxSeen)).toBe(2)
            const run = yield* RunContext
            expect(run.budget.toolCalls).toBe(5)
          }).pipe(Effect.provide(layer))
        })

        it.effect("a delegating tool takes no permit: it runs while another tool holds the only one", () => {
          const { layer } = setup({ tracing, budget: { maxConcurrency: 1 } })
          return Effect.gen(function*() {
            const invoker = yield* Invoker
            const gate = yield* Deferred.make<void>()
            const holding = yield* Deferred.make<void>()
            const holder = makeTool(
              "holder",
              () => Effect.zipRight(Deferred.succeed(holding, undefined), Deferred.await(gate))
            )
            const subAgent = makeTool("sub_agent", () => Effect.succeed("delegated"), { delegating: true })
            const plain = makeTool("plain", () => Effect.succeed("plain"))

            const held = yield* Effect.fork(invoker.tool(call("c1", "holder"), holder))
            yield* Deferred.await(holding)

            const delegated = yield* Effect.fork(invoker.tool(call("c2", "sub_agent"), subAgent))
            const blocked = yield* Effect.fork(invoker.tool(call("c3", "plain"), plain))
            yield* Effect.repeatN(Effect.yieldNow(), 100)
            const done = delegated.unsafePoll()
            expect(done !== null && Exit.isSuccess(done)).toBe(true)
            expect(blocked.unsafePoll()).toBeNull()

            yield* Deferred.succeed(gate, undefined)
            yield* Fiber.join(held)
            expect((yield* Fiber.join(blocked)).text).toBe("plain")
          }).pipe(Effect.provide(layer))
        })

        it.effect("a delegating tool whose sub-run calls a tool does not deadlock with a limit of 1", () => {
          const { layer } = setup({ tracing, budget: { maxConcurrency: 1 } })
          return Effect.gen(function*() {
            const invoker = yield* Invoker
            const inner = makeTool("inner", () => Effect.succeed("inner done"))
            const subAgent = makeTool(
              "sub_agent",
              () =>
                Effect.gen(function*() {
                  const child = yield* RunContext.child
                  const outcome = yield* invoker.tool(call("c2", "inner"), inner).pipe(
                    Effect.provideService(RunContext, child)
                  )
                  return `sub: ${outcome.text}`
                }),
              { delegating: true }
            )
            const fiber = yield* Effect.fork(invoker.tool(call("c1", "sub_agent"), subAgent))
            yield* Effect.repeatN(Effect.yieldNow(), 100)
            const exit = fiber.unsafePoll()
            expect(exit).not.toBeNull()
            expect((yield* Fiber.join(fiber)).text).toBe("sub: inner done")
          }).pipe(Effect.provide(layer))
        })
      })
    })
  }

  describe("tracing", () => {
    it.effect("an `execute_tool {tool}` span with the tool name and call id; middleware spans are its children", () => {
      const tracer = Tracing.recording()
      const inner: ToolMiddleware = (next) => (invocation) => Effect.withSpan(next(invocation), "tool-middleware")
      const { layer } = setup({ toolMiddleware: [inner] })
      return Effect.gen(function*() {
        const invoker = yield* Invoker
        yield* invoker.tool(call("call-7", "t"), makeTool("t", () => Effect.succeed("done")))
        const span = tracer.one("execute_tool t")
        expect(span.kind).toBe("internal")
        expect(span.ended).toBe(true)
        expect(span.attributes.get("gen_ai.operation.name")).toBe("execute_tool")
        expect(span.attributes.get("gen_ai.tool.name")).toBe("t")
        expect(span.attributes.get("gen_ai.tool.call.id")).toBe("call-7")
        expect(span.attributes.get("gen_ai.tool.type")).toBe("function")
        expect(tracer.childrenOf(span).map((s) => s.name)).toEqual(["tool-middleware"])
        expect(span.attributes.has("error.type")).toBe(false)
      }).pipe(Effect.provide(layer), Effect.provide(tracer.layer))
    })

    it.effect("error.type on a failed tool call: the error's tag, or Error for an untagged one", () => {
      const tracer = Tracing.recording()
      const { layer } = setup({ budget: { maxToolCalls: 2 } })
      return Effect.gen(function*() {
        const invoker = yield* Invoker
        yield* Effect.flip(
          invoker.tool(
            call("c1", "tagged"),
            makeTool("tagged", () => Effect.fail(new ToolExecutionError({ toolName: "tagged", cause: "x" })))
          )
        )
        yield* Effect.flip(invoker.tool(call("c2", "plain"), makeTool("plain", () => Effect.fail("nope"))))
        yield* Effect.flip(invoker.tool(call("c3", "over"), makeTool("over", () => Effect.succeed(1))))
        expect(tracer.one("execute_tool tagged").attributes.get("error.type")).toBe("ToolExecutionError")
        expect(tracer.one("execute_tool plain").attributes.get("error.type")).toBe("Error")
        expect(tracer.one("execute_tool over").attributes.get("error.type")).toBe("BudgetExceeded")
      }).pipe(Effect.provide(layer), Effect.provide(tracer.layer))
    })
  })
})
