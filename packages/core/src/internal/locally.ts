/**
 * `Effect.locally` in one frame: sets a fiber ref for the duration of an effect and restores the
 * value it had when the effect ends, however it ends (success, failure, defect or interruption).
 *
 * Effect's own `locally` (and so `provideService`, `withTracer`, `withSpan`'s parent) is an
 * acquire/use/release: about 20 steps of the run loop and their frames. This is one
 * `withFiberRuntime` and one uninterruptible `matchCauseEffect`: the same meaning in about half the
 * steps and a third of the frames a waiting run keeps, which matters on the per-run and per-call
 * paths (`RunContext.provide`, a traced run's spans).
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import * as Core from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"

/**
 * Runs `self` with `ref` set to `value(outer)` (`outer`: its value now) and sets it back to
 * `outer` when `self` ends; `onEnd`, if given, runs (synchronously, before the restore) with the
 * exit.
 */
export const locally = <A, E, R, X>(
  self: Effect.Effect<A, E, R>,
  ref: FiberRef.FiberRef<X>,
  value: (outer: X) => X,
  onEnd?: (exit: Exit.Exit<A, E>) => void
): Effect.Effect<A, E, R> =>
  Core.withFiberRuntime((fiber) => {
    const outer = fiber.getFiberRef(ref)
    // set and restored uninterruptibly; only `self` is interruptible. While `self` runs, the fiber
    // keeps one frame of this (and the two of the mask), not the set or a cleanup effect.
    return Core.uninterruptibleMask((restore) =>
      Core.zipRight(
        FiberRef.set(ref, value(outer)),
        Core.matchCauseEffect(restore(self), {
          onFailure: (cause) => {
            onEnd?.(Exit.failCause(cause))
            return Core.zipRight(FiberRef.set(ref, outer), Core.failCause(cause))
          },
          onSuccess: (a) => {
            onEnd?.(Exit.succeed(a))
            return Core.as(FiberRef.set(ref, outer), a)
          }
        })
      )
    )
  })
