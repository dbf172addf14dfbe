import { Cancellation, Cancelled, RunContext } from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber, FiberId, HashSet, Option } from "effect"
import { listen, unlisten } from "../src/internal/cancellation.js"

/** An effect that signals `started`, then waits forever; its interruption is recorded in `log`. */
const blocked = (started: Deferred.Deferred<void>, log: Array<string>, name = "work") =>
  Deferred.succeed(started, undefined).pipe(
    Effect.zipRight(Effect.never),
    Effect.onInterrupt(() => Effect.sync(() => log.push(`${name} interrupted`))),
    Effect.ensuring(Effect.sync(() => log.push(`${name} finalized`)))
  )

/**
 * A cancellable run of `blocked` forked under a fresh token, once it has started; with
 * `callerFinalizer`, the caller around it logs "caller finalized" when it ends.
 */
const startBlocked = (options: { readonly callerFinalizer?: boolean } = {}) =>
  Effect.gen(function*() {
    const token = Cancellation.make()
    const started = yield* Deferred.make<void>()
    const log: Array<string> = []
    const run = RunContext.cancellable(blocked(started, log))
    const fiber = yield* Effect.fork(
      (options.callerFinalizer === true ? Effect.ensuring(run, Effect.sync(() => log.push("caller finalized"))) : run)
        .pipe(
          RunContext.provide({ cancellation: token })
        )
    )
    yield* Deferred.await(started)
    return { token, fiber, log }
  })

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

  it("listeners are told in the order they came, each once; removing one (before or after a second came) leaves the others", () => {
    const token = Cancellation.make()
    const heard: Array<string> = []
    const first = () => heard.push("first")
    const offFirst = token.onCancel(first)
    token.onCancel(first) // the same listener again: still told once
    const offSecond = token.onCancel(() => heard.push("second"))
    token.onCancel(() => heard.push("third"))
    offSecond()
    token.cancel()
    expect(heard).toEqual(["first", "third"])
    offFirst() // after the cancel: nothing to remove, no error

    const other = Cancellation.make()
    const heardOther: Array<string> = []
    const offOnly = other.onCancel(() => heardOther.push("removed"))
    offOnly()
    other.onCancel(() => heardOther.push("later"))
    other.cancel()
    expect(heardOther).toEqual(["later"])
  })

  it.effect("Cancellation.check: a no-op before cancel, a Cancelled failure after", () =>
    Effect.gen(function*() {
      const token = Cancellation.make()
      yield* Cancellation.check(token)
      token.cancel()
      const error = yield* Effect.flip(Cancellation.check(token))
      expect(error).toBeInstanceOf(Cancelled)
      expect(error._tag).toBe("Cancelled")
      expect(error.message).toBe("run cancelled")
    }))

  it.effect("a context without an explicit handle has its own, uncancelled one (check is a no-op)", () =>
    Effect.gen(function*() {
      const context = yield* RunContext
      yield* Cancellation.check(context.cancellation)
      expect(context.cancellation.isCancelled).toBe(false)
    }).pipe(Effect.provide(RunContext.layer())))

  it.effect("a child shares the token: cancelling the parent makes both checks fail", () =>
    Effect.gen(function*() {
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

describe("CancellationToken listener objects (the run's boundary listens with itself)", () => {
  const counting = () => {
    const listener = { calls: 0, cancelled: () => listener.calls++ }
    return listener
  }

  it("are called once on cancel beside function listeners, not once removed, and at once when added after", () => {
    const token = Cancellation.make()
    const kept = counting()
    const removed = counting()
    let functionCalls = 0
    listen(token, kept)
    listen(token, kept) // added twice, called once
    listen(token, removed)
    token.onCancel(() => functionCalls++)
    unlisten(token, removed)
    token.cancel()
    token.cancel()
    expect([kept.calls, removed.calls, functionCalls]).toEqual([1, 0, 1])
    const late = counting()
    listen(token, late)
    expect(late.calls).toBe(1)
  })
})

describe("RunContext.cancellable", () => {
  it.effect("cancelling the token from another fiber interrupts the work, runs its finalizers, fails with Cancelled", () =>
    Effect.gen(function*() {
      const { fiber, log, token } = yield* startBlocked()
      yield* Effect.fork(Effect.sync(() => token.cancel()))
      const exit = yield* Fiber.await(fiber)
      expectCancelled(exit)
      expect(log).toEqual(["work interrupted", "work finalized"])
    }))

  it.live("cancelling from plain JavaScript (a timer callback) stops the run with Cancelled", () =>
    Effect.gen(function*() {
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
    Effect.gen(function*() {
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
    Effect.gen(function*() {
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
    Effect.gen(function*() {
      const { fiber, log, token } = yield* startBlocked()
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
    Effect.gen(function*() {
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
    Effect.gen(function*() {
      const { fiber, log, token } = yield* startBlocked({ callerFinalizer: true })
      token.cancel()
      expectCancelled(yield* Fiber.await(fiber))
      expect(log).toEqual(["work interrupted", "work finalized", "caller finalized"])
    }))

  it.effect("success and the effect's own failures pass through unchanged", () =>
    Effect.gen(function*() {
      const value = yield* RunContext.cancellable(Effect.succeed(42))
      expect(value).toBe(42)
      const error = yield* Effect.flip(RunContext.cancellable(Effect.fail("boom" as const)))
      expect(error).toBe("boom")
    }).pipe(RunContext.provide({})))

  it.effect("the effect sees the run context", () =>
    Effect.gen(function*() {
      const id = yield* RunContext.cancellable(Effect.map(RunContext, (context) => context.correlationId))
      expect(id).toBe("run-x")
    }).pipe(RunContext.provide({ correlationId: "run-x" })))

  it.effect("cancelling after the run finished changes nothing (the listener is removed)", () =>
    Effect.gen(function*() {
      const token = Cancellation.make()
      let listenersCalled = 0
      const original = token.onCancel.bind(token)
      token.onCancel = (listener) =>
        original(() => {
          listenersCalled++
          listener()
        })
      const value = yield* RunContext.cancellable(Effect.succeed("done")).pipe(
        RunContext.provide({ cancellation: token })
      )
      expect(value).toBe("done")
      token.cancel()
      expect(listenersCalled).toBe(0)
    }))

  it.effect("one token can stop many runs at once", () =>
    Effect.gen(function*() {
      const token = Cancellation.make()
      const log: Array<string> = []
      const starts = yield* Effect.all([Deferred.make<void>(), Deferred.make<void>(), Deferred.make<void>()])
      const fibers = yield* Effect.forEach(starts, (started, i) =>
        Effect.fork(
          RunContext.cancellable(blocked(started, log, `run${i}`)).pipe(RunContext.provide({ cancellation: token }))
        ))
      yield* Effect.forEach(starts, Deferred.await)
      token.cancel()
      for (const fiber of fibers) {
        expectCancelled(yield* Fiber.await(fiber))
      }
      expect(log.filter((line) => line.endsWith("finalized")).sort()).toEqual([
        "run0 finalized",
        "run1 finalized",
        "run2 finalized"
      ])
    }))
})

describe("RunContext.cancellable: one fiber per run (the token interrupts the run's own fiber)", () => {
  const notCancelled = <A, E>(exit: Exit.Exit<A, E>) =>
    Exit.isFailure(exit) && Option.isSome(Cause.failureOption(exit.cause)) &&
    Cause.failureOption(exit.cause).pipe(Option.getOrThrow) instanceof Cancelled

  it.live("cancel() after a run that suspended and returned is a no-op: the caller goes on, not interrupted", () =>
    Effect.gen(function*() {
      const token = Cancellation.make()
      const log: Array<string> = []
      const fiber = yield* Effect.fork(
        Effect.gen(function*() {
          const value = yield* RunContext.cancellable(Effect.as(Effect.sleep("2 millis"), "done"))
          log.push(value)
          token.cancel()
          yield* Effect.sleep("2 millis") // a step that would be interrupted if the cancel reached this fiber
          log.push("caller went on")
          return "caller done"
        }).pipe(RunContext.provide({ cancellation: token }))
      )
      const exit = yield* Fiber.await(fiber)
      expect(exit).toEqual(Exit.succeed("caller done"))
      expect(log).toEqual(["done", "caller went on"])
    }))

  it.effect("cancel racing a completing run: a cancel that lands when the work can no longer be interrupted keeps its result; the caller is not interrupted", () =>
    Effect.gen(function*() {
      const token = Cancellation.make()
      const log: Array<string> = []
      const fiber = yield* Effect.fork(
        Effect.gen(function*() {
          // started uninterruptibly: the cancel lands while the work finishes, and cannot stop it
          const value = yield* Effect.uninterruptible(
            RunContext.cancellable(
              Effect.sync(() => token.cancel()).pipe(Effect.zipRight(Effect.yieldNow()), Effect.as("finished"))
            )
          )
          log.push(value)
          yield* Effect.yieldNow() // interruptible again: a cancellation left behind would stop the caller here
          log.push("caller went on")
          return value
        }).pipe(RunContext.provide({ cancellation: token }))
      )
      const exit = yield* Fiber.await(fiber)
      expect(exit).toEqual(Exit.succeed("finished"))
      expect(log).toEqual(["finished", "caller went on"])
      expect(token.isCancelled).toBe(true)
    }))

  it.effect("a cancel from inside the work stops it at its next step: Cancelled, and the caller goes on", () =>
    Effect.gen(function*() {
      const token = Cancellation.make()
      const log: Array<string> = []
      const exit = yield* Effect.exit(
        RunContext.cancellable(
          Effect.sync(() => token.cancel()).pipe(
            Effect.zipRight(Effect.sync(() => log.push("next step ran"))),
            Effect.ensuring(Effect.sync(() => log.push("work finalized")))
          )
        ).pipe(RunContext.provide({ cancellation: token }))
      )
      expectCancelled(exit)
      log.push("caller went on")
      expect(log).toEqual(["work finalized", "caller went on"])
    }))

  for (const order of ["cancel first", "interrupt first"] as const) {
    it.effect(`an outer interruption is never turned into Cancelled, even with the token cancelled at the same time (${order})`, () =>
      Effect.gen(function*() {
        const { fiber, log, token } = yield* startBlocked({ callerFinalizer: true })
        const outside = FiberId.make(4242, 0)
        yield* Effect.sync(() => {
          if (order === "cancel first") token.cancel()
          fiber.unsafeInterruptAsFork(outside)
          if (order === "interrupt first") token.cancel()
        })
        const exit = yield* Fiber.await(fiber)
        expect(Exit.isInterrupted(exit)).toBe(true)
        expect(notCancelled(exit)).toBe(false)
        if (Exit.isFailure(exit)) expect(HashSet.has(Cause.interruptors(exit.cause), outside)).toBe(true)
        expect(log).toEqual(["work interrupted", "work finalized", "caller finalized"])
      }))
  }

  it.effect("the caller's other child fibers are not touched by a cancel", () =>
    Effect.gen(function*() {
      const token = Cancellation.make()
      const started = yield* Deferred.make<void>()
      const log: Array<string> = []
      const fiber = yield* Effect.fork(
        Effect.gen(function*() {
          const sibling = yield* Effect.fork(
            Effect.onInterrupt(Effect.never, () => Effect.sync(() => log.push("sibling interrupted")))
          )
          const exit = yield* Effect.exit(RunContext.cancellable(blocked(started, log)))
          log.push(Option.isNone(yield* Fiber.poll(sibling)) ? "sibling still running" : "sibling ended")
          yield* Fiber.interrupt(sibling)
          return exit
        }).pipe(RunContext.provide({ cancellation: token }))
      )
      yield* Deferred.await(started)
      token.cancel()
      const exit = yield* Fiber.join(fiber)
      expectCancelled(exit)
      expect(log).toEqual(["work interrupted", "work finalized", "sibling still running", "sibling interrupted"])
    }))

  it.effect("a fiber the work forks and leaves running is interrupted when the run ends", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const value = yield* RunContext.cancellable(
        Effect.fork(Effect.onInterrupt(Effect.never, () => Effect.sync(() => log.push("left-over interrupted")))).pipe(
          Effect.zipRight(Effect.yieldNow()),
          Effect.as("done")
        )
      )
      expect(value).toBe("done")
      expect(log).toEqual(["left-over interrupted"])
    }).pipe(RunContext.provide({})))

  it.effect("a daemon fiber the work forks outlives the run, as Effect.forkDaemon promises", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const daemon = yield* RunContext.cancellable(
        Effect.forkDaemon(Effect.onInterrupt(Effect.never, () => Effect.sync(() => log.push("daemon interrupted"))))
          .pipe(Effect.tap(() => Effect.yieldNow()))
      )
      expect(Option.isNone(yield* Fiber.poll(daemon))).toBe(true)
      expect(log).toEqual([])
      yield* Fiber.interrupt(daemon)
      expect(log).toEqual(["daemon interrupted"])
    }).pipe(RunContext.provide({})))

  it.effect("nested runs with their own tokens: cancelling the inner one stops only it; cancelling the outer one stops both", () =>
    Effect.gen(function*() {
      const outer = Cancellation.make()
      const inner = Cancellation.make()
      const log: Array<string> = []
      const innerStarted = yield* Deferred.make<void>()
      const first = yield* Effect.fork(
        RunContext.cancellable(
          Effect.gen(function*() {
            const exit = yield* Effect.exit(
              RunContext.cancellable(blocked(innerStarted, log, "inner")).pipe(
                RunContext.provide({ cancellation: inner })
              )
            )
            log.push(notCancelled(exit) ? "inner cancelled" : "inner other")
            return "outer done"
          })
        ).pipe(RunContext.provide({ cancellation: outer }))
      )
      yield* Deferred.await(innerStarted)
      inner.cancel()
      expect(yield* Fiber.await(first)).toEqual(Exit.succeed("outer done"))
      expect(log).toEqual(["inner interrupted", "inner finalized", "inner cancelled"])

      const again = Cancellation.make()
      const restarted = yield* Deferred.make<void>()
      log.length = 0
      const second = yield* Effect.fork(
        RunContext.cancellable(
          RunContext.cancellable(blocked(restarted, log, "inner")).pipe(
            RunContext.provide({ cancellation: Cancellation.make() })
          )
        ).pipe(RunContext.provide({ cancellation: again }))
      )
      yield* Deferred.await(restarted)
      again.cancel()
      expectCancelled(yield* Fiber.await(second))
      expect(log).toEqual(["inner interrupted", "inner finalized"])
    }))
})
