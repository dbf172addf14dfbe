import { ChatModel, ChatModelError } from "@agentkit/core"
import { FakeLLM, Fixture } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Chunk, Effect, Either, Fiber, Stream, TestClock } from "effect"

const { replying: scriptedModel } = FakeLLM
const { request, response } = Fixture

const overloaded = () => new ChatModelError({ reason: "overloaded", retryable: true, message: "529 overloaded" })

describe("ChatModel", () => {
  it.effect("ChatModel.layer provides the implementation", () => {
    const model = scriptedModel()
    return Effect.gen(function*() {
      const service = yield* ChatModel
      const deltas: Array<string> = []
      const answer = yield* service.chat(request("x"), { emit: (delta) => deltas.push(delta.text) })
      expect(answer.model).toBe("x")
      expect(deltas).toEqual(["o", "k"])
      expect(model.requests).toEqual([request("x")])
    }).pipe(Effect.provide(model.layer))
  })

  describe("ChatModel.stream", () => {
    it.effect("yields the deltas in order, then ends", () => {
      const model = scriptedModel((_, __, emit) =>
        Effect.sync(() => {
          for (const text of ["Order ", "A-771 ", "shipped."]) emit({ text })
          return response()
        })
      )
      return Effect.gen(function*() {
        const deltas = yield* Stream.runCollect(ChatModel.stream(request()))
        expect(Chunk.toReadonlyArray(deltas).map((d) => d.text)).toEqual(["Order ", "A-771 ", "shipped."])
        expect(model.calls).toBe(1)
      }).pipe(Effect.provide(model.layer))
    })

    it.effect("a model that dies ends the stream with the defect instead of leaving it waiting forever", () => {
      const model = scriptedModel((_, __, emit) =>
        Effect.suspend(() => {
          emit({ text: "partial" })
          return Effect.die(new Error("provider crashed"))
        })
      )
      return Effect.gen(function*() {
        const fiber = yield* Effect.fork(Effect.exit(Stream.runCollect(ChatModel.stream(request()))))
        // no clock is moved: a stream that ends does so on its own
        for (let i = 0; i < 20; i++) yield* Effect.yieldNow()
        const done = yield* Fiber.poll(fiber)
        expect(done._tag).toBe("Some")
        const exit = yield* Fiber.join(fiber)
        expect(exit._tag).toBe("Failure")
        if (exit._tag === "Failure") expect(Cause.squash(exit.cause)).toMatchObject({ message: "provider crashed" })
      }).pipe(Effect.provide(model.layer))
    })

    it.effect("an interrupted model call ends the stream too", () => {
      const model = scriptedModel(() => Effect.interrupt)
      return Effect.gen(function*() {
        const fiber = yield* Effect.fork(Effect.exit(Stream.runCollect(ChatModel.stream(request()))))
        for (let i = 0; i < 20; i++) yield* Effect.yieldNow()
        expect((yield* Fiber.poll(fiber))._tag).toBe("Some")
      }).pipe(Effect.provide(model.layer))
    })

    it.effect("an answer without deltas is an empty stream", () => {
      const model = scriptedModel(() => Effect.succeed(response()))
      return Effect.gen(function*() {
        expect(Chunk.size(yield* Stream.runCollect(ChatModel.stream(request())))).toBe(0)
      }).pipe(Effect.provide(model.layer))
    })

    it.effect("loses no delta when many arrive at once", () => {
      const model = scriptedModel((_, __, emit) =>
        Effect.sync(() => {
          for (let i = 0; i < 1000; i++) emit({ text: String(i) })
          return response()
        })
      )
      return Effect.gen(function*() {
        const deltas = Chunk.toReadonlyArray(yield* Stream.runCollect(ChatModel.stream(request())))
        expect(deltas).toHaveLength(1000)
        expect(deltas[999]?.text).toBe("999")
      }).pipe(Effect.provide(model.layer))
    })

    it.effect("deltas that arrive over time are passed on as they arrive", () => {
      const model = scriptedModel((_, __, emit) =>
        Effect.gen(function*() {
          emit({ text: "a" })
          yield* Effect.sleep("1 second")
          emit({ text: "b" })
          return response()
        })
      )
      return Effect.gen(function*() {
        const seen: Array<string> = []
        const fiber = yield* Effect.fork(
          Stream.runForEach(ChatModel.stream(request()), (delta) => Effect.sync(() => seen.push(delta.text)))
        )
        yield* Effect.repeatN(Effect.yieldNow(), 20)
        expect(seen).toEqual(["a"])
        yield* TestClock.adjust("1 second")
        yield* Fiber.join(fiber)
        expect(seen).toEqual(["a", "b"])
      }).pipe(Effect.provide(model.layer))
    })

    it.effect("a failing model fails the stream with its error, after the deltas it sent", () => {
      const model = scriptedModel((_, __, emit) =>
        Effect.suspend(() => {
          emit({ text: "partial" })
          return Effect.fail(overloaded())
        })
      )
      return Effect.gen(function*() {
        const items = yield* Stream.runCollect(Stream.either(ChatModel.stream(request())))
        const array = Chunk.toReadonlyArray(items)
        expect(array).toHaveLength(2)
        expect(array[0]).toEqual(Either.right({ text: "partial" }))
        const last = array[1]!
        expect(Either.isLeft(last)).toBe(true)
        if (Either.isLeft(last)) {
          expect(last.left).toBeInstanceOf(ChatModelError)
          expect(last.left.message).toBe("529 overloaded")
        }
        const error = yield* Effect.flip(Stream.runCollect(ChatModel.stream(request())))
        expect(error.reason).toBe("overloaded")
      }).pipe(Effect.provide(model.layer))
    })

    it.effect("a consumer that stops early interrupts the model call", () => {
      let interrupted = false
      const model = scriptedModel((_, __, emit) =>
        Effect.suspend(() => {
          emit({ text: "first" })
          return Effect.never
        }).pipe(
          Effect.onInterrupt(() =>
            Effect.sync(() => {
              interrupted = true
            })
          )
        )
      )
      return Effect.gen(function*() {
        const first = yield* Stream.runCollect(Stream.take(ChatModel.stream(request()), 1))
        expect(Chunk.toReadonlyArray(first).map((d) => d.text)).toEqual(["first"])
        expect(interrupted).toBe(true)
      }).pipe(Effect.provide(model.layer))
    })
  })
})
