/**
 * `Effect.locally` in one frame: sets a fiber ref for the duration of an effect and restores the
 * value it had when the effect ends, however it ends (success, failure, defect or interruption).
 *
 * Effect's own `locally` (and so `provideService`, `withTracer`, `withSpan`'s parent) is an
 * acquire/use/release: about 20 steps of the run loop and their frames. This is one guarded
 * match (`guarded.ts`), in the caller's step on the fiber: the same meaning in a fraction of the
 * steps and of the frames a waiting run keeps, which matters on the per-run path
 * (`RunContext.provide`, `Tracing.contain`). Its write, `set`, is also the one a span makes
 * (`span.ts`).
 *
 * @internal
 */
import type * as Arr from "effect/Array"
import type * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Core from "effect/Effect"
import * as Equal from "effect/Equal"
import type * as Fiber from "effect/Fiber"
import type * as FiberId from "effect/FiberId"
import type * as FiberRef from "effect/FiberRef"
import * as FiberRefs from "effect/FiberRefs"
import { guarded, type Settle } from "./guarded.js"

/**
 * Runs `self` with `ref` set to `value` and sets it back to the value it has now (`outer`) when
 * `self` ends. Called in a step already running on `fiber` (a `withFiberRuntime`, a
 * continuation), which returns this effect as its result: no step of its own to reach the fiber.
 */
export const locally = <A, E, R, X>(
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  self: Effect.Effect<A, E, R>,
  ref: FiberRef.FiberRef<X>,
  value: X
): Effect.Effect<A, E, R> => {
  // Set in place (no steps of its own: `FiberRef.set` is the same write in a step of its own) and
  // restored uninterruptibly; only `self` is interruptible. While `self` runs, the fiber keeps the
  // guarded match's frames.
  const outer = fiber.getFiberRef(ref)
  set(fiber, ref, value)
  return guarded(fiber, self, new Restore(fiber, ref, outer))
}

/** Sets the fiber ref back: the settlement of a `locally`. */
class Restore<A, E, X> implements Settle<A, E, never, E, never, A, never, never> {
  constructor(
    readonly fiber: Fiber.RuntimeFiber<unknown, unknown>,
    readonly ref: FiberRef.FiberRef<X>,
    readonly outer: X
  ) {}

  onFailure(cause: Cause.Cause<E>): Effect.Effect<never, E> {
    set(this.fiber, this.ref, this.outer)
    return Core.failCause(cause)
  }

  onSuccess(a: A): Effect.Effect<A> {
    set(this.fiber, this.ref, this.outer)
    return Core.succeed(a)
  }
}

/** A fiber ref's stack of values, newest first, each with the fiber that set it. */
type Stack = ReadonlyArray<readonly [FiberId.Single, unknown]>

/**
 * Effect 3's `FiberRuntime` members that its public interface lacks: its fiber refs (a map from
 * each ref to its stack) and the setter that replaces them and refreshes the runtime's cached
 * copies (`setFiberRefs`); `setFiberRef`, what `FiberRef.set` runs, as the fallback.
 */
interface Writable {
  readonly _fiberRefs: { readonly locals: ReadonlyMap<FiberRef.FiberRef<unknown>, Stack> }
  setFiberRefs(refs: FiberRefs.FiberRefs): void
  setFiberRef<X>(ref: FiberRef.FiberRef<X>, value: X): void
}

/**
 * A copy of `map` with `key` set to `value`. `new Map(map)` goes through the map's iterator, an
 * entry array per key (about twice the bytes of copying with `forEach`); the callback is a module
 * function reading a scratch record (set, used and cleared within one synchronous call), so a
 * copy makes no closure.
 */
const copyWith = <K, V>(map: ReadonlyMap<K, V>, key: K, value: V): Map<K, V> => {
  const copy = new Map<K, V>()
  copying.into = copy as Map<unknown, unknown>
  copying.key = key
  copying.value = value
  map.forEach(copyInto as (value: V, key: K) => void, copying)
  copying.into = copying.key = copying.value = undefined
  if (!copy.has(key)) copy.set(key, value)
  return copy
}

const copying: { into: Map<unknown, unknown> | undefined; key: unknown; value: unknown } = {
  into: undefined,
  key: undefined,
  value: undefined
}

function copyInto(this: typeof copying, value: unknown, key: unknown): void {
  this.into!.set(key, key === this.key ? this.value : value)
}

/**
 * `Context.add(context, tag, service)` without `new Map(map)`'s iterator: a new context with the
 * service (once per run for the run context, once per span for its parent).
 */
export const addService = <C, I, S>(
  context: Context.Context<C>,
  tag: Context.Tag<I, S>,
  service: S
): Context.Context<C | I> => Context.unsafeMake(copyWith(context.unsafeMap, tag.key, service as unknown))

/**
 * Whether two fiber ids are the same fiber's: `Equal.equals`, whose first test (the two ids'
 * hashes) builds, hashes and caches a string on each id it meets (a new fiber's, once per run),
 * compared field by field for two runtime ids, which is what their own equality compares.
 */
const sameFiber = (a: FiberId.Single, b: FiberId.Single): boolean =>
  a === b ||
  (a._tag === "Runtime" && b._tag === "Runtime"
    ? a.id === b.id && a.startTimeMillis === b.startTimeMillis
    : Equal.equals(a, b))

/**
 * Sets a fiber ref of the running fiber, as `FiberRef.set` does (a new map of refs, the ref's
 * value replaced when this fiber set it, pushed otherwise) without first comparing the old value
 * with the new one: for a `Context` that comparison hashes both contexts, and caching a hash
 * redefines a property of each new context (about a microsecond per write, twice per span).
 * Returns the fiber's refs it installed (`undefined` on a runtime without them, where it is
 * `FiberRef.set`'s own write).
 */
export const set = <X>(
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  ref: FiberRef.FiberRef<X>,
  value: X
): FiberRefs.FiberRefs | undefined => {
  const runtime = fiber as unknown as Writable
  const refs = runtime._fiberRefs
  if (refs === undefined || !(refs.locals instanceof Map) || typeof runtime.setFiberRefs !== "function") {
    runtime.setFiberRef(ref, value)
    return undefined
  }
  const id = fiber.id()
  const stack = refs.locals.get(ref as FiberRef.FiberRef<unknown>)
  // the new stack, sized exactly (a pushed-to array grows to 17 slots): the value replaces this
  // fiber's own, or goes on top of an inherited one
  const entry: readonly [FiberId.Single, unknown] = [id, value]
  let next: Array<readonly [FiberId.Single, unknown]>
  if (stack === undefined || stack.length === 0) next = [entry]
  else if (sameFiber(stack[0]![0], id)) {
    next = stack.slice()
    next[0] = entry
  } else next = [entry].concat(stack)
  const locals = copyWith<FiberRef.FiberRef<unknown>, Stack>(refs.locals, ref as FiberRef.FiberRef<unknown>, next)
  const installed = FiberRefs.unsafeMake(
    locals as Map<FiberRef.FiberRef<unknown>, Arr.NonEmptyReadonlyArray<readonly [FiberId.Single, unknown]>>
  )
  runtime.setFiberRefs(installed)
  return installed
}

/** The fiber's refs as they are now (`undefined` on a runtime without them): what `restore` may put back. */
export const refsOf = (fiber: Fiber.RuntimeFiber<unknown, unknown>): FiberRefs.FiberRefs | undefined =>
  (fiber as unknown as Partial<Writable>)._fiberRefs as FiberRefs.FiberRefs | undefined

/**
 * Sets `ref` back to `outer` after a `set` that changed the fiber's refs from `before` to
 * `after`: when nothing else changed them since, by putting `before` back (no copy), else as
 * `set` does. (Keeping `before` costs the bytes of a ref map while the work runs: spans do, a
 * run's context does not.)
 */
export const restore = <X>(
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  ref: FiberRef.FiberRef<X>,
  outer: X,
  before: FiberRefs.FiberRefs | undefined,
  after: FiberRefs.FiberRefs | undefined
): void => {
  if (before !== undefined && after !== undefined && refsOf(fiber) === after) {
    ;(fiber as unknown as Writable).setFiberRefs(before)
  } else set(fiber, ref, outer)
}
