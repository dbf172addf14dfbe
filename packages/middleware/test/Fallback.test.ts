import { ConfigurationError, Invoker } from "@agentkit/core"
import { Fallback, Retry } from "@agentkit/middleware"
import { FakeLLM, Fixture } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, TestClock } from "effect"
import { setup } from "./fixtures.js"

const { replying: model } = FakeLLM
const { badRequestError: badRequest, request, response, timeoutError: timeout } = Fixture

describe("Fallback", () => {
  it.effect("'a' times out: 'b' answers and is recorded as the model that served", () => {
    const llm = model((
      _n,
      req
    ) => (req.model === "a" ? Effect.fail(timeout()) : Effect.succeed(response({ model: req.model }))))
    const layer = setup({ chatModel: llm.layer, chatMiddleware: [Fallback.fallback(["a", "b"])] })
    return Effect.gen(function*() {
      const answer = yield* (yield* Invoker).chat(request("a"))
      expect(answer.content).toBe("ok")
      expect(answer.model).toBe("b")
      expect(llm.requests.map((r) => r.model)).toEqual(["a", "b"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("meta.servedBy names the model that answered", () => {
    const seen: Array<string | undefined> = []
    const llm = model((
      _n,
      req
    ) => (req.model === "m" ? Effect.fail(timeout()) : Effect.succeed(response({ model: req.model }))))
    const layer = setup({
      chatModel: llm.layer,
      chatMiddleware: [
        (next) => (call) => Effect.tap(next(call), () => Effect.sync(() => seen.push(call.meta.servedBy))),
        Fallback.fallback(["backup"])
      ]
    })
    return Effect.gen(function*() {
      yield* (yield* Invoker).chat(request("m"))
      expect(seen).toEqual(["backup"])
      // the request's own model is tried first
      expect(llm.requests.map((r) => r.model)).toEqual(["m", "backup"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("a non-retryable error propagates without falling over", () => {
    const llm = model(() => Effect.fail(badRequest()))
    const layer = setup({ chatModel: llm.layer, chatMiddleware: [Fallback.fallback(["b"])] })
    return Effect.gen(function*() {
      const error = yield* Effect.flip((yield* Invoker).chat(request("a")))
      expect(error.message).toBe("400 bad request")
      expect(llm.calls).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("after a delta reached emit there is no fall-over", () => {
    const llm = model((_n, _req, emit) => {
      emit({ text: "Hel" })
      return Effect.fail(timeout())
    })
    const layer = setup({ chatModel: llm.layer, chatMiddleware: [Fallback.fallback(["b"])] })
    return Effect.gen(function*() {
      yield* Effect.flip((yield* Invoker).chat(request("a")))
      expect(llm.calls).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("every model fails: the last error propagates", () => {
    const llm = model((_n, req) => Effect.fail(timeout(`down: ${req.model}`)))
    const layer = setup({ chatModel: llm.layer, chatMiddleware: [Fallback.fallback(["b", "c"])] })
    return Effect.gen(function*() {
      const error = yield* Effect.flip((yield* Invoker).chat(request("a")))
      expect(error.message).toBe("down: c")
      expect(llm.requests.map((r) => r.model)).toEqual(["a", "b", "c"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("fallback over retry with a breaker: model A with retries, then model B", () => {
    const llm = model((
      _n,
      req
    ) => (req.model === "a" ? Effect.fail(timeout()) : Effect.succeed(response({ model: req.model }))))
    const layer = setup({
      chatModel: llm.layer,
      chatMiddleware: [Fallback.fallback(["b"]), Retry.retry({ maxAttempts: 2, breaker: { failureThreshold: 2 } })]
    })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      const first = yield* Effect.fork(invoker.chat(request("a")))
      yield* TestClock.adjust("1 second")
      expect((yield* Fiber.join(first)).model).toBe("b")
      expect(llm.requests.map((r) => r.model)).toEqual(["a", "a", "b"])
      // a's circuit is open now: the next call goes straight to b
      expect((yield* invoker.chat(request("a"))).model).toBe("b")
      expect(llm.requests.map((r) => r.model)).toEqual(["a", "a", "b", "b"])
    }).pipe(Effect.provide(layer))
  })

  it("an empty list throws ConfigurationError", () => {
    expect(() => Fallback.fallback([])).toThrow(ConfigurationError)
  })
})
