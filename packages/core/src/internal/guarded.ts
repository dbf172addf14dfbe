/**
 * A guarded match: `self` runs interruptibly, and a settlement runs uninterruptibly however it
 * ends (success, failure, defect or interruption). It means exactly
 * `Effect.uninterruptibleMask((restore) => Effect.matchCauseEffect(restore(self), settle))`,
 * which is how Effect 3 runs code on every exit; it is built from the running fiber's step instead
 * of from the mask.
 *
 * Why: the mask is a `Commit` step, a flag update and a revert frame of its own around the match,
 * and a second flag update and revert frame for `restore`, each with closures. Every region a run
 * needs for its guarantees (the provided context, the cancellation boundary, each model call's and
 * each tool call's budget reservation) paid 7 run-loop steps and kept two revert frames, the
 * mask's effect and about 650 bytes of closures alive while the run waited. Here, in a step
 * already on the fiber, the interruption flag is turned off in place (the runtime's own
 * `patchRuntimeFlags`, what a flag update runs); `self` runs under one flag update that turns it
 * back on (its revert frame turns it off again however `self` ends, so the settlement then runs);
 * and the settlement's end turns it back on in place, then fails at once with the fiber's
 * interruption if one arrived meanwhile, as the mask's revert frame does: 4 steps, one revert
 * frame, and no closure made per region (the region's record rides on the flag update's spare
 * operand, where the match's shared handlers find it).
 *
 * A region whose work is itself a region, opened in the region's own step (behind the
 * `Effect.withFiberRuntime` steps the work begins with, which run there), is fused into it: one region, whose settlement is the inner one's then the outer one's. A run's provided
 * context, its span and its cancellation boundary are one region, and so are a call's span and
 * its budget reservation.
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
import * as FiberStatus from "effect/FiberStatus"
import * as RuntimeFlags from "effect/RuntimeFlags"
import * as RuntimeFlagsPatch from "effect/RuntimeFlagsPatch"

/**
 * What runs, uninterruptibly, when the guarded work ends: `onFailure` with its cause (a failure,
 * a defect or an interruption), or `onSuccess` with its value. An object (a class instance holding
 * what it needs), so that a region makes no closures.
 */
export interface Settle<in A, in E, out B1, out E1, out R1, out B2, out E2, out R2> {
  onFailure(cause: Cause.Cause<E>): Effect.Effect<B1, E1, R1>
  onSuccess(a: A): Effect.Effect<B2, E2, R2>
}

/**
 * Effect 3's `FiberRuntime` members that its public interface lacks: the current runtime flags,
 * the fiber's message queue and the setter a flag update runs (`patchRuntimeFlags`, to be called
 * by the fiber itself).
 */
interface Flagged {
  readonly currentRuntimeFlags: RuntimeFlags.RuntimeFlags
  /** The messages waiting for the fiber (read by its run loop between steps). */
  readonly _queue: ReadonlyArray<unknown>
  patchRuntimeFlags(
    oldFlags: RuntimeFlags.RuntimeFlags,
    patch: RuntimeFlagsPatch.RuntimeFlagsPatch
  ): RuntimeFlags.RuntimeFlags
}

type Runtime = Fiber.RuntimeFiber<unknown, unknown> & Flagged

/**
 * Effect 3's primitive encoding: an op and up to three operands. A flag update runs its operand
 * `i1` as a method (`op.effect_instruction_i1(flags)`) for the effect to run under the new flags
 * (a plain flag update leaves `i1` and `i2` unset); a match calls its handlers `i1` / `i2` as
 * methods of the match itself, whose `i0` is the effect it matched.
 */
interface Primitive {
  readonly _op: string
  effect_instruction_i0: unknown
  effect_instruction_i1: unknown
  effect_instruction_i2: unknown
}

/**
 * One guarded region: what its shared handlers need. The work is let go of once it has started
 * (the effect a waiting region would otherwise keep alive is most of a model call's request).
 */
type AnySettle = Settle<unknown, unknown, unknown, unknown, unknown, unknown, unknown, unknown>

class Region {
  constructor(
    readonly fiber: Runtime,
    public self: Effect.Effect<unknown, unknown, unknown> | undefined,
    /** Replaced by a stack of settlements when a region built in this one's step is fused in. */
    public settle: AnySettle
  ) {}
}

const closeInterruption = RuntimeFlagsPatch.disable(RuntimeFlags.Interruption)
const openInterruption = RuntimeFlagsPatch.enable(RuntimeFlags.Interruption)

/** The flag update's operand: the guarded work, read from the region on its spare operand. */
function work(this: Primitive): Effect.Effect<unknown, unknown, unknown> {
  const region = this.effect_instruction_i2 as Region
  const self = region.self!
  region.self = undefined // a flag update runs once: this one is made per region
  return fused(region, inStep(region.fiber, self))
}

/**
 * `effect`, with the fiber-runtime steps it begins with (`Effect.withFiberRuntime`, what
 * `RunContext.cancellable` or a span opens with) run here, in the region's step, as the run loop
 * would run them in the next ones, so that a region they open is fused into this one. Only while
 * no message waits for the fiber (the run loop reads them between steps: one a step sent to its
 * own fiber, an interruption say, stops the steps after it there, and so it does here).
 */
const inStep = (
  fiber: Runtime,
  effect: Effect.Effect<unknown, unknown, unknown>
): Effect.Effect<unknown, unknown, unknown> => {
  let at = effect as unknown as Primitive
  for (let depth = 0; depth < maxInStep && at._op === "WithRuntime" && fiber._queue.length === 0; depth++) {
    at = (at.effect_instruction_i0 as WithRuntime)(
      fiber,
      FiberStatus.running(fiber.currentRuntimeFlags)
    ) as unknown as Primitive
  }
  return at as unknown as Effect.Effect<unknown, unknown, unknown>
}

/** How many fiber-runtime steps in a row `inStep` runs at most (a bound, not a depth ever reached). */
const maxInStep = 8

type WithRuntime = (fiber: Runtime, status: FiberStatus.FiberStatus) => Effect.Effect<unknown, unknown, unknown>

/**
 * The region's work as its first steps made it, with a region they returned as it is (nothing
 * around it) fused into the enclosing one: the inner region's settlement then runs first, in the enclosing
 * region's end, its outcome (with an interruption that arrived meanwhile, as the inner region's
 * end would add it) going to the enclosing settlement. The same meaning as the two regions nested
 * (the Invoker's span around a call's reservation), without the inner one's 4 steps and frames,
 * but for an interruption the inner settlement sends its own fiber: the two settlements are one
 * step, so the enclosing one sees the work's outcome and the caller is interrupted after both.
 */
const fused = (
  region: Region,
  work: Effect.Effect<unknown, unknown, unknown>
): Effect.Effect<unknown, unknown, unknown> => {
  const inner = innerRegion(region.fiber, work)
  if (inner === undefined) return work
  // the inner region closed interruption in place, for a flag update that now never runs
  region.fiber.patchRuntimeFlags(region.fiber.currentRuntimeFlags, openInterruption)
  region.settle = new Stacked(region.fiber, inner.settle, region.settle)
  const self = inner.self!
  inner.self = undefined
  return fused(region, inStep(region.fiber, self))
}

/** The region `built` is, when it is one just made in place on `fiber` (its work not started). */
const innerRegion = (fiber: Runtime, built: Effect.Effect<unknown, unknown, unknown>): Region | undefined => {
  const match = built as unknown as Primitive
  if (match._op !== "OnSuccessAndFailure" || match.effect_instruction_i1 !== handlers.onFailure) return undefined
  const region = (match.effect_instruction_i0 as Primitive).effect_instruction_i2
  return region instanceof Region && region.fiber === fiber && region.self !== undefined ? region : undefined
}

/**
 * Two fused regions' settlements: the inner one's, then the enclosing one's with its outcome. An
 * inner settlement that throws is a defect the enclosing settlement sees (as a nested region's end
 * turns it into one).
 */
class Stacked implements AnySettle {
  constructor(
    readonly fiber: Runtime,
    readonly inner: AnySettle,
    readonly outer: AnySettle
  ) {}

  onFailure(cause: Cause.Cause<unknown>) {
    return this.then(attempt(this.inner, false, cause))
  }

  onSuccess(a: unknown) {
    return this.then(attempt(this.inner, true, a))
  }

  then(result: Effect.Effect<unknown, unknown, unknown>): Effect.Effect<unknown, unknown, unknown> {
    if (Exit.isExit(result)) return this.outerOf(withInterruption(this.fiber, result))
    return Core.matchCauseEffect(result, {
      onFailure: (cause) => this.outerOf(withInterruption(this.fiber, Exit.failCause(cause))),
      onSuccess: (b) => this.outerOf(withInterruption(this.fiber, Exit.succeed(b)))
    })
  }

  outerOf(exit: Exit.Exit<unknown, unknown>): Effect.Effect<unknown, unknown, unknown> {
    return Exit.isSuccess(exit) ? this.outer.onSuccess(exit.value) : this.outer.onFailure(exit.cause)
  }
}

/** The match's handlers, shared by every region: the region is on the matched flag update. */
const regionOf = (match: Primitive): Region =>
  (match.effect_instruction_i0 as Primitive).effect_instruction_i2 as Region

const handlers = {
  onFailure(this: Primitive, cause: Cause.Cause<unknown>) {
    return settled(this, false, cause)
  },
  onSuccess(this: Primitive, a: unknown) {
    return settled(this, true, a)
  }
}

/**
 * The region's settlement, then its end. A settlement that throws is a defect of the region,
 * which still ends (interruption back on), as the mask's revert frame ends it.
 */
const settled = (match: Primitive, succeeded: boolean, outcome: unknown): Effect.Effect<unknown, unknown, unknown> => {
  const region = regionOf(match)
  return reopen(region.fiber, attempt(region.settle, succeeded, outcome))
}

/** A settlement's effect for the work's outcome; a settlement that throws gives a defect. */
const attempt = (settle: AnySettle, succeeded: boolean, outcome: unknown): Effect.Effect<unknown, unknown, unknown> => {
  try {
    return succeeded ? settle.onSuccess(outcome) : settle.onFailure(outcome as Cause.Cause<unknown>)
  } catch (defect) {
    return Exit.die(defect)
  }
}

/**
 * Whether this runtime has the members and the encoding described above (Effect 3 does); when it
 * does not, `guarded` falls back to the mask, with the same meaning.
 */
export const inPlace = (() => {
  const update = Core.patchRuntimeFlags(openInterruption) as unknown as Primitive
  const match = Core.matchCauseEffect(update as unknown as Effect.Effect<void>, handlers) as unknown as Primitive
  const step = (): Effect.Effect<void> => Core.void
  const withRuntime = Core.withFiberRuntime(step) as unknown as Primitive
  return withRuntime._op === "WithRuntime" && withRuntime.effect_instruction_i0 === step &&
    update._op === "UpdateRuntimeFlags" && "effect_instruction_i1" in update &&
    update.effect_instruction_i1 === undefined &&
    "effect_instruction_i2" in update && match._op === "OnSuccessAndFailure" &&
    match.effect_instruction_i0 === update &&
    match.effect_instruction_i1 === handlers.onFailure && match.effect_instruction_i2 === handlers.onSuccess
})()

const isFlagged = (fiber: unknown): fiber is Flagged =>
  typeof (fiber as Partial<Flagged>).currentRuntimeFlags === "number" &&
  Array.isArray((fiber as Partial<Flagged>)._queue) &&
  typeof (fiber as Partial<Flagged>).patchRuntimeFlags === "function"

/**
 * Runs `self` interruptibly and `settle`
 * uninterruptibly however it ends, from a step running on `fiber`. On a fiber that is already
 * uninterruptible, both simply run (as under the mask, whose `restore` then keeps them
 * uninterruptible).
 */
export const guarded = <A, E, R, B1, E1, R1, B2, E2, R2>(
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  self: Effect.Effect<A, E, R>,
  settle: Settle<A, E, B1, E1, R1, B2, E2, R2>
): Effect.Effect<B1 | B2, E1 | E2, R | R1 | R2> => {
  if (!inPlace || !isFlagged(fiber)) {
    return Core.uninterruptibleMask((restore) => Core.matchCauseEffect(restore(self), bound(settle)))
  }
  if (!RuntimeFlags.interruption(fiber.currentRuntimeFlags)) return Core.matchCauseEffect(self, bound(settle))
  fiber.patchRuntimeFlags(fiber.currentRuntimeFlags, closeInterruption)
  const update = Core.patchRuntimeFlags(openInterruption) as unknown as Primitive
  update.effect_instruction_i1 = work
  update.effect_instruction_i2 = new Region(fiber, self, settle as AnySettle)
  return Core.matchCauseEffect(
    update as unknown as Effect.Effect<A, E, R>,
    handlers as unknown as ReturnType<typeof bound<A, E, B1, E1, R1, B2, E2, R2>>
  )
}

/** A settlement as a match's handlers (which are called as methods of the match). */
const bound = <A, E, B1, E1, R1, B2, E2, R2>(settle: Settle<A, E, B1, E1, R1, B2, E2, R2>) => ({
  onFailure: (cause: Cause.Cause<E>) => settle.onFailure(cause),
  onSuccess: (a: A) => settle.onSuccess(a)
})

/**
 * Ends the guarded region: `result` runs first, still uninterruptibly (in place when it is
 * already an exit, as a settlement's `Effect.succeed` or `Effect.failCause` is), then interruption
 * is turned back on and an interruption that arrived meanwhile fails the region, as the mask's
 * revert frame does.
 */
const reopen = <B, E2, R2>(fiber: Runtime, result: Effect.Effect<B, E2, R2>): Effect.Effect<B, E2, R2> =>
  Exit.isExit(result)
    ? opened(fiber, result as Exit.Exit<B, E2>)
    : Core.matchCauseEffect(result, {
      onFailure: (cause) => opened(fiber, Exit.failCause(cause)),
      onSuccess: (b) => opened(fiber, Exit.succeed(b))
    })

const opened = <B, E2>(fiber: Runtime, exit: Exit.Exit<B, E2>): Exit.Exit<B, E2> => {
  fiber.patchRuntimeFlags(fiber.currentRuntimeFlags, openInterruption)
  return withInterruption(fiber, exit)
}

/** `exit`, failed with the fiber's interruption if one arrived (a region's end adds it). */
const withInterruption = <B, E2>(fiber: Runtime, exit: Exit.Exit<B, E2>): Exit.Exit<B, E2> => {
  const interrupted = fiber.getFiberRef(FiberRef.interruptedCause)
  if (Cause.isEmpty(interrupted)) return exit
  return Exit.isSuccess(exit) ? Exit.failCause(interrupted) : Exit.failCause(Cause.sequential(exit.cause, interrupted))
}
