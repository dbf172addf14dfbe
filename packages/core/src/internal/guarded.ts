/**
 * A guarded match: `self` runs interruptibly, and one of two handlers runs uninterruptibly
 * however it ends (success, failure, defect or interruption). It means exactly
 * `Effect.uninterruptibleMask((restore) => Effect.matchCauseEffect(restore(self), handlers))`,
 * which is how Effect 3 runs code on every exit; it is built from the running fiber's step instead
 * of from the mask.
 *
 * Why: the mask is a `Commit` step, a flag update and a revert frame of its own around the match,
 * and a second flag update and revert frame for `restore`. Every region a run needs for its
 * guarantees (the provided context, the cancellation boundary, each model call's and each tool
 * call's budget reservation) paid 7 run-loop steps and kept two revert frames, the mask's effect
 * and their closures alive while the run waited. Here, in a step already on the fiber, the
 * interruption flag is turned off in place (the runtime's own `patchRuntimeFlags`, what the flag
 * update runs), `self` runs under one `Effect.interruptible` (its revert frame turns the flag off
 * again however `self` ends, so the handler then runs), and the handler turns the flag back on
 * in place, then fails at once with the fiber's interruption if one arrived meanwhile, as the
 * mask's revert frame does: 4 steps and one revert frame.
 *
 * Call it in a step running on `fiber` (a `withFiberRuntime`, a continuation), as that step's
 * last act, and return what it returns: it changes the fiber's flags at once.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import type * as Effect from "effect/Effect"
import * as Core from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as RuntimeFlags from "effect/RuntimeFlags"
import * as RuntimeFlagsPatch from "effect/RuntimeFlagsPatch"

/**
 * Effect 3's `FiberRuntime` members that its public interface lacks: the current runtime flags
 * and the setter a flag update runs (`patchRuntimeFlags`, to be called by the fiber itself).
 */
interface Flagged {
  readonly currentRuntimeFlags: RuntimeFlags.RuntimeFlags
  patchRuntimeFlags(oldFlags: RuntimeFlags.RuntimeFlags, patch: RuntimeFlagsPatch.RuntimeFlagsPatch): RuntimeFlags.RuntimeFlags
}

const closeInterruption = RuntimeFlagsPatch.disable(RuntimeFlags.Interruption)
const openInterruption = RuntimeFlagsPatch.enable(RuntimeFlags.Interruption)

const isFlagged = (fiber: unknown): fiber is Flagged =>
  typeof (fiber as Partial<Flagged>).currentRuntimeFlags === "number" &&
  typeof (fiber as Partial<Flagged>).patchRuntimeFlags === "function"

/**
 * Runs `self` interruptibly and `onFailure` or `onSuccess` uninterruptibly however it ends, from
 * a step running on `fiber`. On a fiber that is already uninterruptible, both simply run (as under
 * the mask, whose `restore` then keeps them uninterruptible).
 */
export const guarded = <A, E, R, B1, E1, R1, B2, E2, R2>(
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  self: Effect.Effect<A, E, R>,
  onFailure: (cause: Cause.Cause<E>) => Effect.Effect<B1, E1, R1>,
  onSuccess: (a: A) => Effect.Effect<B2, E2, R2>
): Effect.Effect<B1 | B2, E1 | E2, R | R1 | R2> => {
  // a runtime without these members (another Effect 3 release): the mask, with the same meaning
  if (!isFlagged(fiber)) return Core.uninterruptibleMask((restore) => Core.matchCauseEffect(restore(self), { onFailure, onSuccess }))
  if (!RuntimeFlags.interruption(fiber.currentRuntimeFlags)) return Core.matchCauseEffect(self, { onFailure, onSuccess })
  fiber.patchRuntimeFlags(fiber.currentRuntimeFlags, closeInterruption)
  return Core.matchCauseEffect(Core.interruptible(self), {
    onFailure: (cause) => reopen(fiber, onFailure(cause)),
    onSuccess: (a) => reopen(fiber, onSuccess(a))
  })
}

/**
 * Ends the guarded region: `result` runs first, still uninterruptibly (in place when it is
 * already an exit, as a handler's `Effect.succeed` or `Effect.failCause` is), then interruption
 * is turned back on and an interruption that arrived meanwhile fails the region, as the mask's
 * revert frame does.
 */
const reopen = <B, E2, R2>(
  fiber: Fiber.RuntimeFiber<unknown, unknown> & Flagged,
  result: Effect.Effect<B, E2, R2>
): Effect.Effect<B, E2, R2> =>
  Exit.isExit(result)
    ? opened(fiber, result as Exit.Exit<B, E2>)
    : Core.matchCauseEffect(result, {
        onFailure: (cause) => opened(fiber, Exit.failCause(cause)),
        onSuccess: (b) => opened(fiber, Exit.succeed(b))
      })

const opened = <B, E2>(fiber: Fiber.RuntimeFiber<unknown, unknown> & Flagged, exit: Exit.Exit<B, E2>): Exit.Exit<B, E2> => {
  fiber.patchRuntimeFlags(fiber.currentRuntimeFlags, openInterruption)
  const interrupted = fiber.getFiberRef(FiberRef.interruptedCause)
  if (Cause.isEmpty(interrupted)) return exit
  return Exit.isSuccess(exit) ? Exit.failCause(interrupted) : Exit.failCause(Cause.sequential(exit.cause, interrupted))
}
