import { Budget, RunContext, Usage } from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber, RuntimeFlags, RuntimeFlagsPatch, Supervisor } from "effect"
import { guarded, inPlace, type Settle } from "../src/internal/guarded.js"

/** The run-loop steps an effect takes (Effect's op supervision sees every one). */
const steps = <A, E>(self: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    let count = 0
    const counter = new (class extends Supervisor.AbstractSupervisor<void> {
      get value() {
        return Effect.void
      }
      override onEffect() {
        count++
      }
    })()
    yield* Effect.supervised(
      Effect.withRuntimeFlagsPatch(self, RuntimeFlagsPatch.enable(RuntimeFlags.OpSupervision)),
      counter
    )
    return count
  })

describe("guarded regions", () => {
  it("are built in place on this Effect release (the fiber's flags and the primitive encoding are as described)", () => {
    expect(inPlace).toBe(true)
  })

  it.effect("a budget reservation's region takes 4 steps around its work, not the mask's 7", () =>
    Effect.gen(function*() {
      const budget = Budget.unsafeMake()
      const bare = yield* steps(Effect.withFiberRuntime(() => Effect.void))
      const reserved = yield* steps(budget.modelCall(Effect.void, () => Usage.zero))
      // the reservation's own step, then the match, the flag update, the work's end and the settlement's
      expect(reserved - bare).toBe(4)
    }))

  it.effect("the context RunContext.provide sets costs its step and the region's 4", () =>
    Effect.gen(function*() {
      const bare = yield* steps(Effect.withFiberRuntime(() => Effect.void))
      const provided = yield* steps(Effect.void.pipe(RunContext.provide({ runId: "r" })))
      expect(provided - bare).toBe(4)
    }))
})

/** A settlement that logs what it saw, then passes it on (`map` applied to a value). */
const logging = (
  log: Array<string>,
  name: string,
  map: (a: number) => number = (a) => a
): Settle<number, string, never, string, never, number, never, never> => ({
  onFailure: (cause) => {
    log.push(
      `${name} failed ${Cause.isInterruptedOnly(cause) ? "interrupted" : Cause.isDie(cause) ? "defect" : "failure"}${
        Cause.isInterrupted(cause) ? "+i" : ""
      }`
    )
    return Exit.failCause(cause)
  },
  onSuccess: (a) => {
    log.push(`${name} ${a}`)
    return Exit.succeed(map(a))
  }
})

type Shape = "fused" | "nested"

/**
 * An outer region around an inner one: `fused`, the outer work's fiber-runtime step returns the
 * inner region as it is (fused into the outer one); `nested`, the work reaches it behind a step of
 * its own (so it is a region inside the outer one's work, as before fusion).
 */
/** The inner region, opened from a step running on the fiber. */
const region =
  (work: Effect.Effect<number, string>, inner: Settle<number, string, never, string, never, number, never, never>) =>
  (fiber: Fiber.RuntimeFiber<number, string>) => guarded(fiber, work, inner)

const twoRegions = (
  shape: Shape,
  work: Effect.Effect<number, string>,
  inner: Settle<number, string, never, string, never, number, never, never>,
  outer: Settle<number, string, never, string, never, number, never, never>
) =>
  Effect.withFiberRuntime<number, string>((fiber) =>
    guarded(
      fiber,
      shape === "fused"
        ? Effect.withFiberRuntime(region(work, inner))
        : Effect.flatMap(Effect.void, () => Effect.withFiberRuntime(region(work, inner))),
      outer
    )
  )

describe("a region built as another region's work (fused)", () => {
  it.effect("takes the steps of one region", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const one = yield* steps(
        Effect.withFiberRuntime<number, string>((fiber) => guarded(fiber, Effect.succeed(1), logging(log, "only")))
      )
      const fused = yield* steps(twoRegions("fused", Effect.succeed(1), logging(log, "inner"), logging(log, "outer")))
      const nested = yield* steps(twoRegions("nested", Effect.succeed(1), logging(log, "inner"), logging(log, "outer")))
      expect(fused).toBe(one)
      expect(nested).toBeGreaterThan(fused)
    }))

  const outcomes: ReadonlyArray<
    [string, (fiber: Fiber.RuntimeFiber<unknown, unknown>) => Effect.Effect<number, string>]
  > = [
    ["a value", () => Effect.succeed(1)],
    ["a failure", () => Effect.fail("boom")],
    ["a defect", () => Effect.die("bug")],
    ["an interruption of the work", () => Effect.interrupt],
    [
      "an interruption sent to the fiber while the work waits",
      (fiber) => Effect.andThen(Effect.sync(() => fiber.unsafeInterruptAsFork(fiber.id())), Effect.never)
    ],
    // the work interrupts its fiber as its last act, read at the next step or in the region's end
    ["an interruption landing as the work ends, in a step of its own", (fiber) =>
      Effect.suspend(() => {
        fiber.unsafeInterruptAsFork(fiber.id())
        return Effect.succeed(1)
      })],
    ["an interruption landing in the step that ends the work", (fiber) =>
      Effect.sync(() => {
        fiber.unsafeInterruptAsFork(fiber.id())
        return 1
      })]
  ]
  for (const [what, work] of outcomes) {
    it.effect(`means what the nested regions mean, for ${what}: inner settlement first, its outcome to the outer one, the fiber interruptible after`, () =>
      Effect.gen(function*() {
        const results: Array<unknown> = []
        for (const shape of ["fused", "nested"] as const) {
          const log: Array<string> = []
          const exit = yield* Effect.exit(
            Effect.withFiberRuntime<number, string>((fiber) =>
              twoRegions(shape, work(fiber), logging(log, "inner", (a) => a + 10), logging(log, "outer"))
            ).pipe(Effect.fork, Effect.flatMap(Fiber.join))
          )
          results.push({
            log,
            exit: Exit.isSuccess(exit)
              ? exit.value
              : Cause.isInterruptedOnly(exit.cause)
              ? "interrupted"
              : Cause.pretty(exit.cause)
          })
        }
        expect(results[0]).toEqual(results[1])
      }))
  }

  it.effect("an interruption sent from the inner settlement ends the caller once both settlements ran", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const exit = yield* Effect.withFiberRuntime<number, string>((fiber) => {
        const inner: Settle<number, string, never, string, never, number, never, never> = {
          onFailure: (cause) => Exit.failCause(cause),
          onSuccess: (a) => {
            log.push("inner")
            fiber.unsafeInterruptAsFork(fiber.id()) // sent from the uninterruptible settlement
            return Exit.succeed(a)
          }
        }
        return twoRegions("fused", Effect.succeed(1), inner, logging(log, "outer"))
      }).pipe(Effect.fork, Effect.flatMap(Fiber.await))
      // the two settlements are one uninterruptible step: the outer one sees the work's outcome
      // (nested, it would see the interruption, taken between them), and the caller is interrupted
      expect(log).toEqual(["inner", "outer 1"])
      expect(Exit.isInterrupted(exit)).toBe(true)
    }))

  it.effect("an inner settlement that throws is a defect the outer settlement sees; the region still ends", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const throwing: Settle<number, string, never, string, never, number, never, never> = {
        onFailure: (cause) => Exit.failCause(cause),
        onSuccess: () => {
          throw new Error("unreadable usage")
        }
      }
      const exit = yield* Effect.exit(twoRegions("fused", Effect.succeed(1), throwing, logging(log, "outer")))
      expect(log).toEqual(["outer failed defect"])
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      // interruptible again: an interruption now ends this fiber
      const after = yield* Effect.fork(Effect.never)
      expect(Exit.isInterrupted(yield* Fiber.interrupt(after))).toBe(true)
      const flags = yield* Effect.withFiberRuntime((fiber) =>
        Effect.succeed(
          RuntimeFlags.interruption(
            (fiber as unknown as { currentRuntimeFlags: RuntimeFlags.RuntimeFlags }).currentRuntimeFlags
          )
        )
      )
      expect(flags).toBe(true)
    }))

  it.effect("a region opened behind fiber-runtime steps (Effect.withFiberRuntime, as RunContext.cancellable opens) is fused too", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const one = yield* steps(
        Effect.withFiberRuntime<number, string>((fiber) => guarded(fiber, Effect.succeed(1), logging(log, "only")))
      )
      // an outer region whose work is two fiber-runtime steps, then the inner region
      const behind = Effect.withFiberRuntime<number, string>((fiber) =>
        guarded(
          fiber,
          Effect.withFiberRuntime<number, string>(() =>
            Effect.withFiberRuntime<number, string>((fiber) =>
              guarded(fiber, Effect.succeed(1), logging(log, "inner", (a) => a + 10))
            )
          ),
          logging(log, "outer")
        )
      )
      log.length = 0
      expect(yield* steps(behind)).toBe(one)
      expect(log).toEqual(["inner 1", "outer 11"])
    }))

  it.effect("a fiber-runtime step run in the region's step that throws is a defect of the work: the settlement runs, the caller is interruptible after", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const exit = yield* Effect.exit(
        Effect.withFiberRuntime<number, string>((fiber) =>
          guarded(
            fiber,
            Effect.withFiberRuntime<number, string>(() => {
              throw new Error("bug")
            }),
            logging(log, "outer")
          )
        )
      )
      expect(log).toEqual(["outer failed defect"])
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      const after = yield* Effect.fork(Effect.never)
      expect(Exit.isInterrupted(yield* Fiber.interrupt(after))).toBe(true)
    }))

  it.effect("a fiber-runtime step that interrupts its own fiber stops the steps after it, as the run loop does", () =>
    Effect.gen(function*() {
      for (const inRegion of [false, true]) {
        let ran = false
        const work = Effect.withFiberRuntime<number, string>((fiber) => {
          fiber.unsafeInterruptAsFork(fiber.id())
          return Effect.withFiberRuntime(() => {
            ran = true
            return Effect.succeed(1)
          })
        })
        const log: Array<string> = []
        const exit = yield* Effect.fork(
          inRegion
            ? Effect.withFiberRuntime<number, string>((fiber) => guarded(fiber, work, logging(log, "outer")))
            : work
        ).pipe(Effect.flatMap(Fiber.await))
        expect([inRegion, ran, Exit.isInterrupted(exit)]).toEqual([inRegion, false, true])
        if (inRegion) expect(log).toEqual(["outer failed interrupted+i"])
      }
    }))

  it.effect("a long chain of fiber-runtime steps still runs to its end", () =>
    Effect.gen(function*() {
      let ran = 0
      let chain: Effect.Effect<number, string> = Effect.sync(() => ran)
      for (let i = 0; i < 50; i++) {
        const next = chain
        chain = Effect.withFiberRuntime(() => {
          ran++
          return next
        })
      }
      const log: Array<string> = []
      expect(yield* Effect.withFiberRuntime<number, string>((fiber) => guarded(fiber, chain, logging(log, "outer"))))
        .toBe(50)
      expect(log).toEqual(["outer 50"])
    }))

  it.effect("work that does something with the inner region (maps it) is not fused: the inner settlement runs before the map", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const value = yield* Effect.withFiberRuntime<number, string>((fiber) =>
        guarded(
          fiber,
          Effect.withFiberRuntime<number, string>((fiber) =>
            Effect.map(guarded(fiber, Effect.succeed(1), logging(log, "inner", (a) => a + 10)), (a) => {
              log.push(`map ${a}`)
              return a * 2
            })
          ),
          logging(log, "outer")
        )
      )
      expect(value).toBe(22)
      expect(log).toEqual(["inner 1", "map 11", "outer 22"])
    }))
})
