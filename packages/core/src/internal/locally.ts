/**
 * `Effect.locally` as one uninterruptible region: sets a fiber ref for the duration of an effect,
 * the effect running interruptibly, and puts back the value the ref had when the effect ends,
 * however it ends (then tells `ended` the outcome). Effect's own `locally` (and so
 * `provideService`, `withTracer`, `withParentSpan`) is an acquire/use/release, about twice the
 * run-loop steps and, for a run waiting for its model, about 2 KB more kept alive per region.
 * Public Effect API only: `Effect.uninterruptibleMask`, `FiberRef.set`, `Effect.matchCauseEffect`.
 *
 * @internal
 */
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"

/** Told the outcome of the region's effect once the ref is back (never throws: it is the caller's to make sure). */
export type Ended<A, E> = (exit: Exit.Exit<A, E>) => void

/**
 * Runs `self` with `ref` set to `change(outer)`, `outer` its value now, and puts `outer` back
 * when `self` ends.
 */
export const locallyWith = <A, E, R, X>(
  self: Effect.Effect<A, E, R>,
  ref: FiberRef.FiberRef<X>,
  change: (outer: X) => X,
  ended?: Ended<A, E>
): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime((fiber) => {
    const outer = fiber.getFiberRef(ref)
    return Effect.uninterruptibleMask((restore) =>
      Effect.zipRight(
        FiberRef.set(ref, change(outer)),
        Effect.matchCauseEffect(restore(self), new PutBack(ref, outer, ended))
      )
    )
  })

/** The end of the region: the ref's value put back, then `ended` told. */
class PutBack<A, E, X> {
  constructor(
    readonly ref: FiberRef.FiberRef<X>,
    readonly outer: X,
    readonly ended: Ended<A, E> | undefined
  ) {}

  readonly onFailure = (cause: Cause.Cause<E>): Effect.Effect<A, E> => {
    const failed = Exit.failCause(cause)
    return Effect.zipRight(FiberRef.set(this.ref, this.outer), this.ended === undefined ? failed : this.end(failed))
  }

  readonly onSuccess = (a: A): Effect.Effect<A, E> => {
    const succeeded = Exit.succeed(a)
    return Effect.zipRight(
      FiberRef.set(this.ref, this.outer),
      this.ended === undefined ? succeeded : this.end(succeeded)
    )
  }

  end(exit: Exit.Exit<A, E>): Effect.Effect<A, E> {
    return Effect.suspend(() => {
      this.ended!(exit)
      return exit
    })
  }
}
