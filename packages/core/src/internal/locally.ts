/**
 * `Effect.locally` in one frame: sets a fiber ref for the duration of an effect and restores the
 * value it had when the effect ends, however it ends (success, failure, defect or interruption).
 *
 * Effect's own `locally` (and so `provideService`, `withTracer`, `withSpan`'s parent) is an
 * acquire/use/release: about 20 steps of the run loop and their frames. This is one
 * `withFiberRuntime` and one `onExit`: the same meaning in about half the steps, which matters on
 * the per-run and per-call paths (`RunContext.provide`, a traced run's spans).
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import * as Core from "effect/Effect"
import type * as Exit from "effect/Exit"
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
    // the set is inside the protected region: an interruption before it still restores `outer`
    return Core.onExit(Core.zipRight(FiberRef.set(ref, value(outer)), self), (exit) => {
      onEnd?.(exit)
      return FiberRef.set(ref, outer)
    })
  })
