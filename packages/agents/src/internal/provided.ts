/**
 * Services added to a fiber's context for the duration of one effect, as one uninterruptible
 * region: the context set, the effect run interruptibly, the outer context put back however it
 * ends. `Effect.provideService` is an acquire/use/release, about twice the run-loop steps and, for
 * a run waiting for its model, about 2 KB more kept alive (the same reasoning as core's
 * `RunContext.provide`). Public Effect API only: `Effect.uninterruptibleMask`, `FiberRef.set`,
 * `Effect.matchCauseEffect`.
 *
 * @internal
 */
import type * as Cause from "effect/Cause"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"

/** Runs `self` with the fiber's context `inner`, then puts `outer` (the context now) back. */
export const provided = <A, E, R>(
  self: Effect.Effect<A, E, R>,
  outer: Context.Context<never>,
  inner: Context.Context<never>
): Effect.Effect<A, E, R> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.zipRight(
      FiberRef.set(FiberRef.currentContext, inner),
      Effect.matchCauseEffect(restore(self), new PutBack<A, E>(outer))
    )
  )

/** The end of the region: the outer context put back, then the outcome. */
class PutBack<A, E> {
  constructor(readonly outer: Context.Context<never>) {}

  readonly onFailure = (cause: Cause.Cause<E>): Effect.Effect<A, E> =>
    Effect.zipRight(FiberRef.set(FiberRef.currentContext, this.outer), Exit.failCause(cause))

  readonly onSuccess = (a: A): Effect.Effect<A, E> =>
    Effect.zipRight(FiberRef.set(FiberRef.currentContext, this.outer), Exit.succeed(a))
}
