/**
 * The SQLite stores' gate: one operation at a time, first come first served, the permit handed
 * from holder to waiter, never lost to an interruption, and never waited on by the operation that
 * holds it. (That it wakes one waiter per release, not all, shows in the bench: `pnpm bench --case
 * sqlite` with 1,000 concurrent runs.)
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, FiberId } from "effect"
import * as Gate from "../src/internal/gate.js"

/** Yields until `done()` (the other fibers run meanwhile). */
const until = (done: () => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 1000 && !done(); i++) yield* Effect.yieldNow()
    expect(done()).toBe(true)
  })

describe("the SQLite gate", () => {
  it.effect("runs one operation at a time, in the order they came", () =>
    Effect.gen(function*() {
      const gate = Gate.make()
      const order: Array<number> = []
      let inside = 0
      let most = 0
      const op = (n: number) =>
        gate.run(
          Effect.gen(function*() {
            inside++
            most = Math.max(most, inside)
            yield* Effect.yieldNow()
            order.push(n)
            inside--
          })
        )
      yield* Effect.forEach(Array.from({ length: 50 }, (_, n) => n), op, { concurrency: "unbounded", discard: true })
      expect(most).toBe(1)
      expect(order).toEqual(Array.from({ length: 50 }, (_, n) => n))
    }))

  it.effect("a holder that fails, dies or is interrupted lets the next one in", () =>
    Effect.gen(function*() {
      const gate = Gate.make()
      expect(Exit.isFailure(yield* Effect.exit(gate.run(Effect.fail("no"))))).toBe(true)
      expect(Exit.isFailure(yield* Effect.exit(gate.run(Effect.die("boom"))))).toBe(true)
      const holding = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(gate.run(Effect.zipRight(Deferred.succeed(holding, undefined), Effect.never)))
      yield* Deferred.await(holding)
      const next = yield* Effect.fork(gate.run(Effect.succeed("next")))
      yield* Fiber.interrupt(holder)
      expect(yield* Fiber.join(next)).toBe("next")
    }))

  it.effect("a waiter interrupted in line leaves it; one interrupted as the permit reaches it passes it on", () =>
    Effect.gen(function*() {
      const gate = Gate.make()
      const release = yield* Deferred.make<void>()
      const holding = yield* Deferred.make<void>()
      // the holder's last step interrupts `handed`, just before the permit is handed to it
      const holder = yield* Effect.fork(
        gate.run(
          Effect.zipRight(
            Deferred.succeed(holding, undefined),
            Effect.zipRight(Deferred.await(release), Effect.sync(() => handed.unsafeInterruptAsFork(FiberId.none)))
          )
        )
      )
      yield* Deferred.await(holding)
      const ran: Array<string> = []
      const waiter = (name: string) => Effect.fork(gate.run(Effect.sync(() => ran.push(name))))
      const left = yield* waiter("left")
      const handed = yield* waiter("handed")
      const last = yield* waiter("last")
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(left)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      yield* Fiber.join(last)
      expect(Exit.isInterrupted(yield* Fiber.await(handed))).toBe(true)
      expect(ran).toEqual(["last"])
      // and the gate is free
      expect(yield* gate.run(Effect.succeed("free"))).toBe("free")
    }))

  it.effect("an operation inside the gate (or a fiber it forks) goes straight through", () =>
    Effect.gen(function*() {
      const gate = Gate.make()
      const nested = yield* gate.run(
        Effect.gen(function*() {
          const inner = yield* gate.run(Effect.succeed("inner"))
          const child = yield* Effect.fork(gate.run(Effect.succeed("child")))
          return [inner, yield* Fiber.join(child)]
        })
      )
      expect(nested).toEqual(["inner", "child"])
    }))

  it.effect("200 operations queued behind a holder all run, each once, after it lets go", () =>
    Effect.gen(function*() {
      const gate = Gate.make()
      const release = yield* Deferred.make<void>()
      const holding = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(
        gate.run(Effect.zipRight(Deferred.succeed(holding, undefined), Deferred.await(release)))
      )
      yield* Deferred.await(holding)
      let done = 0
      const fibers = yield* Effect.forEach(Array.from({ length: 200 }), () =>
        Effect.fork(gate.run(Effect.sync(() => done++))))
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      yield* Effect.forEach(fibers, Fiber.join, { discard: true })
      yield* until(() =>
        done === 200
      )
    }))
})
