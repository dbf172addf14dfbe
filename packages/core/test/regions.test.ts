import { Budget, type BudgetExceeded, Tracing, Usage } from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber } from "effect"

/**
 * The regions a call runs in, one inside the other as the Invoker opens them: the call's span
 * (`Tracing.span`, its `onEnd` the outer settlement) around its budget reservation
 * (`Budget.modelCall`, its `usageOf` the inner settlement). Each runs its work interruptibly and
 * its settlement uninterruptibly, however the work ends.
 */
const describeExit = (exit: Exit.Exit<unknown, unknown>): string =>
  Exit.isSuccess(exit)
    ? `value ${String(exit.value)}`
    : Cause.isInterruptedOnly(exit.cause)
    ? "interrupted"
    : Cause.isDie(exit.cause)
    ? "defect"
    : "failure"

const call = (
  budget: Budget.Budget,
  log: Array<string>,
  work: Effect.Effect<number, string>,
  usageOf: (a: number) => Usage.Usage = () => Usage.zero
) =>
  budget.modelCall(work, (a) => {
    log.push(`inner ${a}`)
    return usageOf(a)
  }).pipe(
    Tracing.span("outer", {
      onEnd: (exit) => {
        log.push(`outer ${describeExit(exit)}`)
        return undefined
      }
    })
  )

describe("a budget reservation inside a span", () => {
  const outcomes: ReadonlyArray<
    [string, (fiber: Fiber.RuntimeFiber<unknown, unknown>) => Effect.Effect<number, string>, string, string]
  > = [
    ["a value", () => Effect.succeed(1), "value 1", "value 1"],
    ["a failure", () => Effect.fail("boom"), "failure", "failure"],
    ["a defect", () => Effect.die("bug"), "defect", "defect"],
    ["an interruption of the work", () => Effect.interrupt, "interrupted", "interrupted"],
    [
      "an interruption sent to the fiber while the work waits",
      (fiber) => Effect.andThen(Effect.sync(() => fiber.unsafeInterruptAsFork(fiber.id())), Effect.never),
      "interrupted",
      "interrupted"
    ]
  ]
  for (const [what, work, outer, result] of outcomes) {
    it.effect(`for ${what}: the reservation is counted, then the span sees the outcome and ends`, () =>
      Effect.gen(function*() {
        const budget = Budget.unsafeMake()
        const log: Array<string> = []
        const tracer = Tracing.recording()
        const exit = yield* Effect.withFiberRuntime<number, string | BudgetExceeded>((fiber) =>
          call(budget, log, work(fiber as Fiber.RuntimeFiber<unknown, unknown>))
        ).pipe(Effect.provide(tracer.layer), Effect.fork, Effect.flatMap(Fiber.await))
        expect(log.filter((line) => line.startsWith("outer"))).toEqual([`outer ${outer}`])
        expect(describeExit(exit)).toBe(result)
        expect([budget.modelCalls, budget.inFlightModelCalls]).toEqual([1, 0])
        expect(tracer.one("outer").ended).toBe(true)
      }))
  }

  it.effect("an interruption sent from the inner settlement is taken between the two: the span sees it, the caller is interrupted", () =>
    Effect.gen(function*() {
      const budget = Budget.unsafeMake()
      const log: Array<string> = []
      const exit = yield* Effect.withFiberRuntime<number, string | BudgetExceeded>((fiber) =>
        call(budget, log, Effect.succeed(1), () => {
          fiber.unsafeInterruptAsFork(fiber.id()) // sent from the uninterruptible settlement
          return Usage.zero
        })
      ).pipe(Effect.fork, Effect.flatMap(Fiber.await))
      // the reservation's region ends (interruptible again) before the span's settlement runs:
      // the span's settlement sees the interruption, as Effect's own nested regions give it
      expect(log).toEqual(["inner 1", "outer interrupted"])
      expect(Exit.isInterrupted(exit)).toBe(true)
      expect([budget.modelCalls, budget.inFlightModelCalls]).toEqual([1, 0])
    }))

  it.effect("an inner settlement that throws is a defect the span sees; the call is counted; the fiber is interruptible after", () =>
    Effect.gen(function*() {
      const budget = Budget.unsafeMake()
      const log: Array<string> = []
      const exit = yield* Effect.exit(
        call(budget, log, Effect.succeed(1), () => {
          throw new Error("unreadable usage")
        })
      )
      expect(log).toEqual(["inner 1", "outer defect"])
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      expect([budget.modelCalls, budget.inFlightModelCalls]).toEqual([1, 0])
      const after = yield* Effect.fork(Effect.never)
      expect(Exit.isInterrupted(yield* Fiber.interrupt(after))).toBe(true)
    }))
})
