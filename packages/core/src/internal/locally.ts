/**
 * `Effect.locally` in one frame: sets a fiber ref for the duration of an effect and restores the
 * value it had when the effect ends, however it ends (success, failure, defect or interruption),
 * before `onEnd` runs (so a throwing `onEnd` cannot leave it set).
 *
 * Effect's own `locally` (and so `provideService`, `withTracer`, `withSpan`'s parent) is an
 * acquire/use/release: about 20 steps of the run loop and their frames. This is one guarded
 * match (`guarded.ts`), in the caller's step on the fiber: the same meaning in a fraction of the
 * steps and of the frames a waiting run keeps, which matters on the per-run and per-call paths
 * (`RunContext.provide`, a traced run's spans).
 *
 * @internal
 */
import type * as Cause from "effect/Cause"
import type * as Effect from "effect/Effect"
import * as Core from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import type * as FiberRef from "effect/FiberRef"
import { guarded, type Settle } from "./guarded.js"

/**
 * Runs `self` with `ref` set to `value(outer)` (`outer`: its value now) and sets it back to
 * `outer` when `self` ends; `onEnd`, if given, then runs (synchronously) with the exit. Called in
 * a step already running on `fiber` (a `withFiberRuntime`, a continuation), which returns this
 * effect as its result: no step of its own to reach the fiber.
 */
export const locally = <A, E, R, X>(
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  self: Effect.Effect<A, E, R>,
  ref: FiberRef.FiberRef<X>,
  value: (outer: X) => X,
  onEnd?: (exit: Exit.Exit<A, E>) => void
): Effect.Effect<A, E, R> => {
  // The runtime's own setter, in place (no steps of its own): `FiberRef.set` is this very call in
  // a step of its own. Set and restored uninterruptibly; only `self` is interruptible. While
  // `self` runs, the fiber keeps the guarded match's frames.
  const runtime = fiber as unknown as Settable
  const outer = fiber.getFiberRef(ref)
  runtime.setFiberRef(ref, value(outer))
  return guarded(fiber, self, new Restore(runtime, ref, outer, onEnd))
}

/** Sets the fiber ref back, then tells `onEnd`: the settlement of a `locally`. */
class Restore<A, E, X> implements Settle<A, E, never, E, never, A, never, never> {
  constructor(
    readonly runtime: Settable,
    readonly ref: FiberRef.FiberRef<X>,
    readonly outer: X,
    readonly onEnd: ((exit: Exit.Exit<A, E>) => void) | undefined
  ) {}

  onFailure(cause: Cause.Cause<E>): Effect.Effect<never, E> {
    this.runtime.setFiberRef(this.ref, this.outer)
    this.onEnd?.(Exit.failCause(cause))
    return Core.failCause(cause)
  }

  onSuccess(a: A): Effect.Effect<A> {
    this.runtime.setFiberRef(this.ref, this.outer)
    this.onEnd?.(Exit.succeed(a))
    return Core.succeed(a)
  }
}

/** Effect 3's `FiberRuntime.setFiberRef` (what `FiberRef.set` runs; not in the fiber's public interface). */
interface Settable {
  setFiberRef<X>(ref: FiberRef.FiberRef<X>, value: X): void
}
