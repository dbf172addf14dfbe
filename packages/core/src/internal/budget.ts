/**
 * A budget's reservation regions in place, for a caller already in a step running on the fiber
 * (the Invoker, when nothing stands between it and the reservation): the same regions as
 * `Budget.modelCall` and `Budget.toolCall`, without the step those take to reach the fiber. The
 * budget's class body sets them (it holds the counters).
 *
 * Each is a guarded region (`guarded.ts`): call it as the step's last act and return what it
 * returns.
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import type { Budget } from "../Budget.js"
import type { BudgetExceeded } from "../BudgetError.js"
import type { ChatResponse } from "../Chat.js"
import type * as Usage from "../Usage.js"

/** The regions, as the budget's class body provides them. */
export interface Regions {
  /** A model call's region; its response's usage is charged to `tally` (the run's) as it is counted. */
  readonly modelCall: <E, R>(
    budget: Budget,
    fiber: Fiber.RuntimeFiber<unknown, unknown>,
    self: Effect.Effect<ChatResponse, E, R>,
    tally: Tally
  ) => Effect.Effect<ChatResponse, E | BudgetExceeded, R>
  /** A tool execution's region; `map` turns its value into the region's (in the settlement). */
  readonly toolCall: <A, E, R, B>(
    budget: Budget,
    fiber: Fiber.RuntimeFiber<unknown, unknown>,
    self: Effect.Effect<A, E, R>,
    permit: boolean,
    map: (a: A) => B
  ) => Effect.Effect<B, E | BudgetExceeded, R>
}

let regions: Regions | undefined

/** Called once, by `Budget`'s class body. */
export const provide = (provided: Regions): void => {
  regions = provided
}

/** What a model call's usage is charged to besides the budget: the run's tally (`RunContext`'s `charge`). */
export interface Tally {
  charge(usage: Usage.Usage): void
}

/** `Budget.modelCall` of a chat call, in the caller's step on `fiber`, its usage charged to `tally`. */
export const modelCall: Regions["modelCall"] = (budget, fiber, self, tally) =>
  regions!.modelCall(budget, fiber, self, tally)

/** `Budget.toolCall`, in the caller's step on `fiber`, with its value mapped in the settlement. */
export const toolCall: Regions["toolCall"] = (budget, fiber, self, permit, map) =>
  regions!.toolCall(budget, fiber, self, permit, map)
