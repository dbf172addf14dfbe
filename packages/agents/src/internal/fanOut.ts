/**
 * Fan-out of sub-runs: each on its own child run context, at most the tree's `maxConcurrency` at
 * once, results in input order, the first failure interrupting the others (structured
 * concurrency: their tools in flight see the interruption and run their finalizers).
 *
 * The bound is a local one (`Effect.forEach`'s concurrency), never the tree's permits: a sub-run
 * holds no permit while it runs, only its tool executions take one each, so `maxConcurrency: 1`
 * runs the sub-runs one after the other instead of deadlocking (the Python [HAZARD]). @internal
 */
import { endsRun, RunContext } from "@agentkit/core"
import type { DepthExceeded } from "@agentkit/core"
import * as Effect from "effect/Effect"
import type { PendingEntry } from "../Approval.js"
import { RunSuspended } from "../Errors.js"

/** Runs `run(item, childContext)` for each item on `context.child(segment(item, index))`. */
export const fanOut = <A, B, E, R>(
  context: RunContext.Service,
  items: ReadonlyArray<A>,
  segment: (item: A, index: number) => string,
  run: (item: A, index: number) => Effect.Effect<B, E, R>
): Effect.Effect<Array<B>, E | DepthExceeded, Exclude<R, RunContext>> =>
  Effect.forEach(
    items,
    (item, index) =>
      Effect.flatMap(context.child(segment(item, index)), (child) =>
        Effect.provideService(run(item, index), RunContext, child)),
    { concurrency: Math.max(1, context.budget.maxConcurrency) }
  ) as Effect.Effect<Array<B>, E | DepthExceeded, Exclude<R, RunContext>>

/** The failures that end a whole run tree whatever the caller asked: budgets, cancellation, a lost or broken store. */
export const endsTree = (error: unknown): boolean => {
  if (endsRun(error)) return true
  const tag = typeof error === "object" && error !== null && "_tag" in error
    ? (error as { readonly _tag: unknown })._tag
    : undefined
  return tag === "StaleLease" || tag === "CorruptEntry"
}

/** How a sub-run came back: with its result, or waiting on pending entries (listed with their paths). */
export type Outcome<A> =
  | { readonly _tag: "Done"; readonly value: A }
  | { readonly _tag: "Waiting"; readonly pending: ReadonlyArray<PendingEntry> }

/**
 * A sub-run's outcome: a suspension is not a failure here, whether it comes back as a suspended
 * result or as a `RunSuspended` failure (how a sub-run reports it when its parent suspends on it).
 */
export const outcome = <A, E, R>(run: Effect.Effect<A, E, R>): Effect.Effect<Outcome<A>, Exclude<E, RunSuspended>, R> =>
  Effect.matchEffect(run, {
    onSuccess: (value): Effect.Effect<Outcome<A>> => {
      const suspended =
        (value as { readonly suspended?: { readonly pending: ReadonlyArray<PendingEntry> } | undefined }).suspended
      return Effect.succeed(
        suspended === undefined ? { _tag: "Done", value } : { _tag: "Waiting", pending: suspended.pending }
      )
    },
    onFailure: (error) =>
      error instanceof RunSuspended
        ? Effect.succeed({ _tag: "Waiting", pending: error.pending })
        : Effect.fail(error as Exclude<E, RunSuspended>)
  })
