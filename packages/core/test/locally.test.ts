import { RunContext } from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, FiberRef } from "effect"

/** How many values the fiber's context ref holds (the runtime's stack of them, newest first). */
const depth = Effect.withFiberRuntime<number>((fiber) =>
  Effect.succeed(
    (fiber as unknown as { _fiberRefs: { locals: Map<unknown, ReadonlyArray<unknown>> } })._fiberRefs.locals.get(
      FiberRef.currentContext
    )?.length ?? 0
  )
)

describe("locally: a fiber ref set and restored in place", () => {
  it.effect("a fiber that provides a context again and again keeps one value of it, as FiberRef.set does", () =>
    Effect.gen(function*() {
      const before = yield* depth
      for (let i = 0; i < 100; i++) yield* Effect.void.pipe(RunContext.provide({ runId: `run-${i}` }))
      expect(yield* depth).toBe(before)
      // and the same while one is provided: the inner ones replace the fiber's own value, never pile up
      const inside = yield* Effect.gen(function*() {
        const start = yield* depth
        for (let i = 0; i < 100; i++) yield* Effect.void.pipe(RunContext.provide({ runId: `inner-${i}` }))
        return [start, yield* depth]
      }).pipe(RunContext.provide({ runId: "outer" }))
      expect(inside[1]).toBe(inside[0])
      expect(yield* depth).toBe(before)
    }))

  it.effect("matches FiberRef.locally's stack: the same depth after a locally of the same ref", () =>
    Effect.gen(function*() {
      const viaEffect = yield* Effect.locally(
        depth,
        FiberRef.currentContext,
        yield* FiberRef.get(FiberRef.currentContext)
      )
      const viaProvide = yield* depth.pipe(RunContext.provide({ runId: "r" }))
      expect(viaProvide).toBe(viaEffect)
    }))

  it.effect("in a fiber whose value it inherited, pushes a value of its own, as FiberRef.locally does (and replaces it after)", () =>
    Effect.gen(function*() {
      const inChild = <A, E>(self: Effect.Effect<A, E>) => Effect.flatMap(Effect.fork(self), Fiber.join)
      const inherited = yield* inChild(depth)
      const viaEffect = yield* inChild(
        Effect.locally(depth, FiberRef.currentContext, yield* FiberRef.get(FiberRef.currentContext))
      )
      const viaProvide = yield* inChild(depth.pipe(RunContext.provide({ runId: "r" })))
      const twice = yield* inChild(
        depth.pipe(RunContext.provide({ runId: "inner" }), RunContext.provide({ runId: "outer" }))
      )
      expect([viaEffect, viaProvide, twice]).toEqual([inherited + 1, inherited + 1, inherited + 1])
    }))
})
