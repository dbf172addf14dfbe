import { describe, expect, it } from "@effect/vitest"
import { Effect, RuntimeFlags, RuntimeFlagsPatch, Supervisor } from "effect"
import { Budget, RunContext, Usage } from "@agentkit/core"
import { inPlace } from "../src/internal/guarded.js"

/** The run-loop steps an effect takes (Effect's op supervision sees every one). */
const steps = <A, E>(self: Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    let count = 0
    const counter = new (class extends Supervisor.AbstractSupervisor<void> {
      get value() {
        return Effect.void
      }
      override onEffect() {
        count++
      }
    })()
    yield* Effect.supervised(Effect.withRuntimeFlagsPatch(self, RuntimeFlagsPatch.enable(RuntimeFlags.OpSupervision)), counter)
    return count
  })

describe("guarded regions", () => {
  it("are built in place on this Effect release (the fiber's flags and the primitive encoding are as described)", () => {
    expect(inPlace).toBe(true)
  })

  it.effect("a budget reservation's region takes 4 steps around its work, not the mask's 7", () =>
    Effect.gen(function* () {
      const budget = Budget.unsafeMake()
      const bare = yield* steps(Effect.withFiberRuntime(() => Effect.void))
      const reserved = yield* steps(budget.modelCall(Effect.void, () => Usage.zero))
      // the reservation's own step, then the match, the flag update, the work's end and the settlement's
      expect(reserved - bare).toBe(4)
    }))

  it.effect("the context RunContext.provide sets costs its step and the region's 4", () =>
    Effect.gen(function* () {
      const bare = yield* steps(Effect.withFiberRuntime(() => Effect.void))
      const provided = yield* steps(Effect.void.pipe(RunContext.provide({ runId: "r" })))
      expect(provided - bare).toBe(4)
    }))
})
