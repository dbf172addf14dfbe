import { ConfigurationError, Invoker, RunContext, Tracing, Usage } from "@agentkit/core"
import type { ChatMiddleware } from "@agentkit/core"
import { Memoize } from "@agentkit/middleware"
import { FakeLLM, Fixture } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, TestClock } from "effect"
import { setup } from "./fixtures.js"

const { replying: model } = FakeLLM
const { request, response, timeoutError: timeout } = Fixture

const hits = (seen: Array<boolean | undefined>): ChatMiddleware => (next) => (call) =>
  Effect.tap(next(call), () => Effect.sync(() => seen.push(call.meta.cacheHit)))

describe("Memoize", () => {
  it.effect("a repeat is served from the cache: no model call, no budget charge, content replayed to emit", () => {
    const llm = model((_n, req, emit) => {
      emit({ text: "hel" })
      emit({ text: "lo" })
      return Effect.succeed(response({ model: req.model, content: "hello" }))
    })
    const seen: Array<boolean | undefined> = []
    const tracer = Tracing.recording()
    const layer = setup({
      chatModel: llm.layer,
      chatMiddleware: [hits(seen), Memoize.memoize()],
      budget: { maxCostUsd: 1 }
    })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      const first: Array<string> = []
      const second: Array<string> = []
      const a = yield* invoker.chat(request(), { emit: (d) => first.push(d.text) })
      const b = yield* invoker.chat(request(), { emit: (d) => second.push(d.text) })
      // the same answer; the caller (the run's usage) counts a hit as 0
      expect(b).toStrictEqual({ ...a, usage: Usage.zero })
      expect(llm.calls).toBe(1)
      expect(first).toEqual(["hel", "lo"])
      expect(second).toEqual(["hello"])
      expect(seen).toEqual([undefined, true])
      // Python charged a hit again; here the run pays once
      const run = yield* RunContext
      expect(run.budget.spentUsd).toBe(0.01)
      expect(run.budget.modelCalls).toBe(1)
      const [miss, hit] = tracer.named("chat m")
      expect(miss!.events.map((e) => e.name)).not.toContain("cache.hit")
      const event = hit!.events.find((e) => e.name === "cache.hit")
      expect(event?.attributes["cache_key"]).toMatch(/^memo:[0-9a-f]{64}$/)
    }).pipe(Effect.provide(layer), Effect.provide(tracer.layer))
  })

  it.effect("the key covers model, messages and tools: a different request is a miss", () => {
    const llm = model()
    const layer = setup({ chatModel: llm.layer, chatMiddleware: [Memoize.memoize()] })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* invoker.chat(request("m", "hi"))
      yield* invoker.chat(request("m", "hello"))
      yield* invoker.chat(request("other", "hi"))
      yield* invoker.chat({ ...request("m", "hi"), tools: [{ name: "t", description: "d", parameters: {} }] })
      yield* invoker.chat(request("m", "hi"))
      expect(llm.calls).toBe(4)
    }).pipe(Effect.provide(layer))
  })

  it.effect("two tenants on one store never see each other's entries, even with a key that ignores everything", () => {
    const llm = model((n, req) => Effect.succeed(response({ model: req.model, content: `answer ${n}` })))
    const store = Memoize.memoryStore()
    const chat = (orgId: number, middleware: ChatMiddleware) =>
      Effect.flatMap(Invoker, (i) => i.chat(request())).pipe(
        Effect.provide(setup({ chatModel: llm.layer, chatMiddleware: [middleware], scope: { orgId } }))
      )
    return Effect.gen(function*() {
      for (const middleware of [Memoize.memoize({ store }), Memoize.memoize({ store, key: () => "same" })]) {
        const calls = llm.calls
        const one = yield* chat(1, middleware)
        const two = yield* chat(2, middleware)
        expect(two.content).not.toBe(one.content)
        expect((yield* chat(1, middleware)).content).toBe(one.content)
        expect((yield* chat(2, middleware)).content).toBe(two.content)
        expect(llm.calls).toBe(calls + 2)
      }
      expect(store.size).toBe(4)
    })
  })

  it.effect("concurrent identical misses share one model call", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const llm = model((_n, req) => Effect.as(Deferred.await(gate), response({ model: req.model })))
      const seen: Array<boolean | undefined> = []
      const layer = setup({ chatModel: llm.layer, chatMiddleware: [hits(seen), Memoize.memoize()] })
      yield* Effect.gen(function*() {
        const invoker = yield* Invoker
        const fibers = yield* Effect.forEach([1, 2, 3], () => Effect.fork(invoker.chat(request())))
        yield* Effect.yieldNow()
        yield* Deferred.succeed(gate, undefined)
        const results = yield* Fiber.joinAll(fibers)
        expect(results.map((r) => r.content)).toEqual(["ok", "ok", "ok"])
        expect(llm.calls).toBe(1)
        expect(seen.filter((h) => h === true)).toHaveLength(2)
        const run = yield* RunContext
        expect(run.budget.modelCalls).toBe(1)
      }).pipe(Effect.provide(layer))
    }))

  it.effect("failures are never cached", () => {
    const llm = model((n, req) => (n === 1 ? Effect.fail(timeout()) : Effect.succeed(response({ model: req.model }))))
    const store = Memoize.memoryStore()
    const layer = setup({ chatModel: llm.layer, chatMiddleware: [Memoize.memoize({ store })] })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* Effect.flip(invoker.chat(request()))
      expect(store.size).toBe(0)
      yield* invoker.chat(request())
      yield* invoker.chat(request())
      expect(llm.calls).toBe(2)
    }).pipe(Effect.provide(layer))
  })

  it.effect("entries expire after their ttl", () => {
    const llm = model()
    const layer = setup({ chatModel: llm.layer, chatMiddleware: [Memoize.memoize({ ttl: "10 minutes" })] })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* invoker.chat(request())
      yield* TestClock.adjust("9 minutes")
      yield* invoker.chat(request())
      expect(llm.calls).toBe(1)
      yield* TestClock.adjust("1 minute")
      yield* invoker.chat(request())
      expect(llm.calls).toBe(2)
    }).pipe(Effect.provide(layer))
  })

  it.effect("the memory store drops the least recently used entry past maxEntries", () => {
    const llm = model()
    const store = Memoize.memoryStore({ maxEntries: 2 })
    const layer = setup({ chatModel: llm.layer, chatMiddleware: [Memoize.memoize({ store })] })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* invoker.chat(request("m", "a"))
      yield* invoker.chat(request("m", "b"))
      yield* invoker.chat(request("m", "a")) // a is now the most recent
      yield* invoker.chat(request("m", "c")) // evicts b
      expect(store.size).toBe(2)
      expect(llm.calls).toBe(3)
      yield* invoker.chat(request("m", "a"))
      expect(llm.calls).toBe(3)
      yield* invoker.chat(request("m", "b"))
      expect(llm.calls).toBe(4)
    }).pipe(Effect.provide(layer))
  })

  it("bad options throw ConfigurationError", () => {
    expect(() => Memoize.memoize({ ttl: "0 seconds" })).toThrow(ConfigurationError)
    expect(() => Memoize.memoryStore({ maxEntries: 0 })).toThrow(ConfigurationError)
  })
})
