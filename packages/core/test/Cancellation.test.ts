import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber, Option } from "effect"
import { Cancellation, Cancelled, RunContext } from "@agentkit/core"

/** An effect that signals `started`, then waits forever; its interruption is recorded in `log`. */
const blocked = (started: Deferred.Deferred<void>, log: Array<string>, name = "work") =>
  Deferred.succeed(started, undefined).pipe(
    Effect.zipRight(Effect.never),
    Effect.onInterrupt(() => Effect.sync(() => log.push(`${name} interrupted`))),
    Effect.ensuring(Effect.sync(() => log.push(`${name} finalized`)))
  )

const expectCancelled = <A, E>(exit: Exit.Exit<A, E>) => {
  expect(Exit.isFailure(exit)).toBe(true)
  if (Exit.isFailure(exit)) {
    const failure = Cause.failureOption(exit.cause)
    expect(Option.isSome(failure)).toBe(true)
    const error = Option.getOrThrow(failure)
    expect(error).toBeInstanceOf(Cancelled)
    expect((error as Cancelled)._tag).toBe("Cancelled")
    expect((error as Cancelled).message).toBe("run cancelled")
  }
}

describe("CancellationToken", () => {
  it("starts uncancelled; cancel() flips it", () => {
    const token = Cancellation.make()
    expect(token.isCancelled).toBe(false)
    token.cancel()
    expect(token.isCancelled).toBe(true)
  })

  it("cancel() is idempotent: listeners are told once", () => {
    const token = Cancellation.make()
    let calls = 0
    token.onCancel(() => calls++)
    token.cancel()
    token.cancel()
    token.cancel()
    expect(token.isCancelled).toBe(true)
    expect(calls).toBe(1)
  })

  it("onCancel on a cancelled token calls the listener at once; the returned function unsubscribes", () => {
    const token = Cancellation.make()
    const heard: Array<string> = []
    const off = token.onCancel(() => heard.push("removed"))
    token.onCancel(() => heard.push("kept"))
    off()
    token.cancel()
    expect(heard).toEqual(["kept"])
    token.onCancel(() => heard.push("late"))
    expect(heard).toEqual(["kept", "late"])
  })

  it.effect("Cancellation.check: a no-op before cancel, a Cancelled failure after", () =>
    Effect.gen(function* () {
      const token = Cancellation.make()
      yield* Cancellation.check(token)
      token.cancel()
      const error = yield* Effect.flip(Cancellation.check(token))
      expect(error).toBeInstanceOf(Cancelled)
      expect(error._tag).toBe("Cancelled")
      expect(error.message).toBe("run cancelled")
    }))

  it.effect("a context without an explicit handle has its own, uncancelled one (check is a no-op)", () =>
    Effect.gen(function* () {
      const context = yield* RunContext
      yield* Cancellation.check(context.cancellation)
      expect(context.cancellation.isCancelled).toBe(false)
    }).pipe(Effect.provide(RunContext.layer())))

  it.effect("a child shares the token: cancelling the parent makes both checks fail", () =>
    Effect.gen(function* () {
      const parent = yield* RunContext.make()
      const child = yield* parent.child()
      const grandchild = yield* child.child()
      expect(child.cancellation).toBe(parent.cancellation)
      parent.cancellation.cancel()
      yield* Effect.flip(Cancellation.check(parent.cancellation))
      yield* Effect.flip(Cancellation.check(child.cancellation))
      yield* Effect.flip(Cancellation.check(grandchild.cancellation))
    }))
})

describe("RunContext.cancellable", () => {
  it.effect("cancelling the token from another fiber interrupts the work, runs its finalizers, fails with Cancelled", () =>
    Effect.gen(function* () {
      const token = Cancellation.make()
      const started = yield* Deferred.make<void>()
      const log: Array<string> = []
      const fiber = yield* Effect.fork(
        RunContext.cancellable(blocked(started, log)).pipe(RunContext.provide({ cancellation: token }))
      )
      yield* Deferred.await(started)
      yield* Effect.fork(Effect.sync(() => token.cancel()))
      const exit = yield* Fiber.await(fiber)
      expectCancelled(exit)
      expect(log).toEqual(["work interrupted", "work finalized"])
    }))

  it.live("cancelling from plain JavaScript (a timer callback) stops the run with Cancelled", () =>
    Effect.gen(function* () {
      const token = Cancellation.make()
      const log: Array<string> = []
      const started = yield* Deferred.make<void>()
      setTimeout(() => token.cancel(), 10)
      const exit = yield* Effect.exit(
        RunContext.cancellable(blocked(started, log)).pipe(RunContext.provide({ cancellation: token }))
      )
      expectCancelled(exit)
      expect(yield* Deferred.isDone(started)).toBe(true)
      expect(log).toEqual(["work interrupted", "work finalized"])
    }))

  it.effect("a pre-cancelled token fails at once, without running the effect", () =>
    Effect.gen(function* () {
      const token = Cancellation.make()
      token.cancel()
      let ran = false
      const exit = yield* Effect.exit(
        RunContext.cancellable(
          Effect.sync(() => {
            ran = true
          })
        ).pipe(RunContext.provide({ cancellation: token }))
      )
      expectCancelled(exit)
      expect(ran).toBe(false)
    }))

  it.effect("work holding a child context is cancelled through the parent's token", () =>
    Effect.gen(function* () {
      const parent = yield* RunContext.make()
      const child = yield* parent.child()
      const started = yield* Deferred.make<void>()
      const log: Array<string> = []
      const fiber = yield* Effect.fork(
        RunContext.cancellable(blocked(started, log, "sub-run")).pipe(Effect.provideService(RunContext, child))
      )
      yield* Deferred.await(started)
      parent.cancellation.cancel()
      expectCancelled(yield* Fiber.await(fiber))
      expect(log).toEqual(["sub-run interrupted", "sub-run finalized"])
    }))

  it.effect("interrupting the fiber directly is an ordinary interruption, not Cancelled", () =>
    Effect.gen(function* () {
      const token = Cancellation.make()
      const started = yield* Deferred.make<void>()
      const log: Array<string> = []
      const fiber = yield* Effect.fork(
        RunContext.cancellable(blocked(started, log)).pipe(RunContext.provide({ cancellation: token }))
      )
      yield* Deferred.await(started)
      const exit = yield* Fiber.interrupt(fiber)
      expect(Exit.isInterrupted(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        expect(Cause.isInterruptedOnly(exit.cause)).toBe(true)
        expect(Option.isNone(Cause.failureOption(exit.cause))).toBe(true)
      }
      expect(token.isCancelled).toBe(false)
      expect(log).toEqual(["work interrupted", "work finalized"])
    }))

  it.effect("a direct interruption stops the wrapped work before the caller's own finalizers run", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      const log: Array<string> = []
      // e.g. acquireUseRelease(open, (conn) => cancellable(use(conn)), close): close must not run
      // while `use` is still running
      const fiber = yield* Effect.fork(
        Effect.acquireUseRelease(
          Effect.sync(() => log.push("acquire")),
          () => RunContext.cancellable(blocked(started, log, "use")),
          () => Effect.sync(() => log.push("release"))
        ).pipe(RunContext.provide({}))
      )
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      expect(log).toEqual(["acquire", "use interrupted", "use finalized", "release"])
    }))

  it.effect("cancellation also stops the wrapped work before the caller's finalizers", () =>
    Effect.gen(function* () {
      const token = Cancellation.make()
      const started = yield* Deferred.make<void>()
      const log: Array<string> = []
      const fiber = yield* Effect.fork(
        RunContext.cancellable(blocked(started, log)).pipe(
          Effect.ensuring(Effect.sync(() => log.push("caller finalized"))),
          RunContext.provide({ cancellation: token })
        )
      )
      yield* Deferred.await(started)
      token.cancel()
      expectCancelled(yield* Fiber.await(fiber))
      expect(log).toEqual(["work interrupted", "work finalized", "caller finalized"])
    }))

  it.effect("success and the effect's own failures pass through unchanged", () =>
    Effect.gen(function* () {
      const value = yield* RunContext.cancellable(Effect.succeed(42))
      expect(value).toBe(42)
      const error = yield* Effect.flip(RunContext.cancellable(Effect.fail("boom" as const)))
      expect(error).toBe("boom")
    }).pipe(RunContext.provide({})))

  it.effect("the effect sees the run context", () =>
    Effect.gen(function* () {
      const id = yield* RunContext.cancellable(Effect.map(RunContext, (context) => context.correlationId))
      expect(id).toBe("run-x")
    }).pipe(RunContext.provide({ correlationId: "run-x" })))

  it.effect("cancelling after the run finished changes nothing (the listener is removed)", () =>
    Effect.gen(function* () {
      const token = Cancellation.make()
      let listenersCalled = 0
      const original = token.onCancel.bind(token)
      token.onCancel = (listener) =>
        original(() => {
          listenersCalled++
          listener()
        })
      const value = yield* RunContext.cancellable(Effect.succeed("done")).pipe(RunContext.provide({ cancellation: token }))
      expect(value).toBe("done")
      token.cancel()
      expect(listenersCalled).toBe(0)
    }))

  it.effect("one token can stop many runs at once", () =>
    Effect.gen(function* () {
      const token = Cancellation.make()
      const log: Array<string> = []
      const starts = yield* Effect.all([Deferred.make<void>(), Deferred.make<void>(), Deferred.make<void>()])
      const fibers = yield* Effect.forEach(starts, (started, i) =>
        Effect.fork(RunContext.cancellable(blocked(started, log, `run${i}`)).pipe(RunContext.provide({ cancellation: token })))
      )
      yield* Effect.forEach(starts, Deferred.await)
      token.cancel()
      for (const fiber of fibers) expectCancelled(yield* Fiber.await(fiber))
      expect(log.filter((line) => line.endsWith("finalized")).sort()).toEqual(["run0 finalized", "run1 finalized", "run2 finalized"])
    }))
})
