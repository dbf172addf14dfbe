/**
 * The span of `Tracing.span`, made in a step running on the fiber: Effect's span (the same parent,
 * links, annotations, tracer and clock `Effect.withSpan` gives it), the fiber's context holding it
 * while the work runs, and one guarded region (`guarded.ts`) that puts the context back, sets the
 * attributes `onEnd` computes and ends the span, however the work ends. The Invoker opens its
 * spans here, in its own step, around work whose `withFiberRuntime` the region runs in its own
 * (a model call's or a tool call's reservation): no step of the span's own, none of the
 * reservation's, whose region is fused into the span's. Under Effect's own tracer the span is a `LazySpan` (`nativeSpan.ts`).
 *
 * @internal
 */
import type * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import type * as FiberRefs from "effect/FiberRefs"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import type * as Tracer from "effect/Tracer"
import * as EffectTracer from "effect/Tracer"
import type { Attributes, SpanOptions } from "../Tracing.js"
import * as contained from "./contained.js"
import { guarded, type Settle } from "./guarded.js"
import { addService, refsOf, restore, set } from "./locally.js"
import { LazySpan, nativeTracer } from "./nativeSpan.js"

// `@effect/opentelemetry` turns every non-primitive attribute value into its JSON text (its
// `unknownToAttributeValue`), so an array set through the Effect span would reach OpenTelemetry
// as a pretty-printed string. Its span keeps the OpenTelemetry span it wraps and the attributes
// it was given: an array is set on both as the array it is (OpenTelemetry accepts arrays of one
// primitive type), what its `attribute` does but for the text.
const OtelSpanTypeId = Symbol.for("@effect/opentelemetry/Tracer/OtelSpan")
interface OtelBacked {
  readonly span: { setAttribute(key: string, value: unknown): unknown }
  readonly attributes: Map<string, unknown>
}
const otelSpanOf = (current: Tracer.Span): OtelBacked | undefined => {
  const span = contained.unwrap(current) as unknown as Partial<OtelBacked>
  return OtelSpanTypeId in span && typeof span.span?.setAttribute === "function" && span.attributes instanceof Map
    ? (span as OtelBacked)
    : undefined
}

/** Sets attributes on a span, never throwing (an array reaches OpenTelemetry as an array). */
export const setOn = (span: Tracer.Span, attributes: Attributes): void => {
  if (span instanceof LazySpan) return span.write(attributes, true)
  try {
    let otel: OtelBacked | undefined | null = null
    for (const key in attributes) {
      const value = attributes[key]
      if (value === undefined) continue
      if (Array.isArray(value)) {
        if (otel === null) otel = otelSpanOf(span)
        if (otel !== undefined) {
          otel.span.setAttribute(key, value)
          otel.attributes.set(key, value)
          continue
        }
      }
      span.attribute(key, value)
    }
  } catch {
    // a tracer that throws never breaks the run
  }
}

/**
 * Runs `self` inside a span, from a step running on `fiber`, as that step's last act (a region
 * `self` opens behind its `Effect.withFiberRuntime` steps is fused into the span's).
 */
export const spanIn = <A, E, R>(
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  name: string,
  options: SpanOptions<A, E>,
  self: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> => {
  // the clock and timing the span starts and ends with, read once
  const clock = timingClock(fiber)
  if (!propagates(fiber, options)) {
    // Effect's own no-op span (with its parent), as `Effect.withSpan` makes it
    return Effect.flatMap(
      Effect.makeSpan(name, noStackTrace(options)),
      (current) => Effect.withFiberRuntime((fiber) => within(fiber, current, clock, options, self))
    )
  }
  return within(
    fiber,
    open(fiber, name, options, clock === undefined ? noTime : clock.unsafeCurrentTimeNanos()),
    clock,
    options,
    self
  )
}

/** The fiber's clock when its tracer times spans, else `undefined`. */
const timingClock = (fiber: Fiber.RuntimeFiber<unknown, unknown>): Clock.Clock | undefined =>
  fiber.getFiberRef(FiberRef.currentTracerTimingEnabled)
    ? Context.get(fiber.currentDefaultServices, Clock.Clock)
    : undefined

/** The span's region: the context holds the span while `self` runs. */
const within = <A, E, R>(
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  current: Tracer.Span,
  clock: Clock.Clock | undefined,
  options: SpanOptions<A, E>,
  self: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> => {
  const outer = fiber.currentContext
  const before = refsOf(fiber)
  const after = set(fiber, FiberRef.currentContext, addService(outer, EffectTracer.ParentSpan, current))
  return guarded(fiber, self, new Ended<A, E>(fiber, outer, before, after, current, clock, options.onEnd))
}

/** The end of a span's region: the context back, the `onEnd` attributes set, the span ended. */
class Ended<A, E> implements Settle<A, E, never, E, never, A, never, never> {
  constructor(
    readonly fiber: Fiber.RuntimeFiber<unknown, unknown>,
    readonly outer: Context.Context<never>,
    /** The fiber's refs before and after the span's context was set (put back if still those). */
    readonly before: FiberRefs.FiberRefs | undefined,
    readonly after: FiberRefs.FiberRefs | undefined,
    readonly span: Tracer.Span,
    readonly clock: Clock.Clock | undefined,
    readonly onEnd: SpanOptions<A, E>["onEnd"]
  ) {}

  onFailure(cause: Cause.Cause<E>): Effect.Effect<never, E> {
    const exit = Exit.failCause(cause)
    this.end(exit)
    return exit
  }

  onSuccess(a: A): Effect.Effect<A> {
    const exit = Exit.succeed(a)
    this.end(exit)
    return exit
  }

  end(exit: Exit.Exit<A, E>): void {
    restore(this.fiber, FiberRef.currentContext, this.outer, this.before, this.after)
    const { onEnd, span } = this
    if (onEnd !== undefined) {
      let attributes: Attributes | undefined
      try {
        attributes = onEnd(exit)
      } catch {
        // attributes that cannot be computed never break the run
      }
      if (attributes !== undefined) {
        if (span instanceof LazySpan) span.writeEnd(attributes)
        else setOn(span, attributes)
      }
    }
    if (span.status._tag !== "Ended") {
      span.end(this.clock === undefined ? noTime : this.clock.unsafeCurrentTimeNanos(), exit)
    }
  }
}

/** Whether `Effect.makeSpan` would ask the fiber's tracer for a span (not make a no-op one). */
const propagates = (fiber: Fiber.RuntimeFiber<unknown, unknown>, options: Tracer.SpanOptions): boolean =>
  fiber.getFiberRef(FiberRef.currentTracerEnabled) &&
  (options.context === undefined || !Context.get(options.context, EffectTracer.DisablePropagation))

/**
 * The span `Effect.makeSpan` makes (`unsafeMakeSpan` in Effect 3): its parent (the innermost one
 * whose context does not disable propagation, unless `parent` or `root` says otherwise), the
 * fiber's tracer, its links and annotations, then `attributes`, started at `startTime`. It reads
 * each fiber ref on its own: `makeSpan` reads the fiber's links and annotations through
 * `getFiberRefs()`, which first writes the fiber's runtime flags back into its refs (a copy of the
 * fiber's ref map per span). Only when `propagates`: otherwise Effect makes its own no-op span.
 */
const open = (
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  name: string,
  options: Tracer.SpanOptions,
  startTime: bigint
): Tracer.Span => {
  const parent: Option.Option<Tracer.AnySpan> = options.parent !== undefined
    ? Option.some(options.parent)
    : options.root === true
    ? Option.none()
    : propagated(Context.getOption(fiber.getFiberRef(FiberRef.currentContext), EffectTracer.ParentSpan))
  const services = fiber.currentDefaultServices
  const fromFiber = Chunk.toReadonlyArray(fiber.getFiberRef(FiberRef.currentTracerSpanLinks))
  const links = fromFiber.length === 0
    ? options.links ?? noLinks
    : options.links === undefined
    ? fromFiber
    : [...fromFiber, ...options.links]
  const tracer = Context.get(services, EffectTracer.Tracer)
  const annotations = fiber.getFiberRef(FiberRef.currentTracerSpanAnnotations)
  if (tracer === nativeTracer) {
    return new LazySpan(
      name,
      parent,
      options.context ?? Context.empty(),
      links,
      startTime,
      options.kind ?? "internal",
      annotations,
      options.attributes
    )
  }
  const made = tracer.span(
    name,
    parent,
    options.context ?? Context.empty(),
    links,
    startTime,
    options.kind ?? "internal",
    options
  )
  if (HashMap.size(annotations) > 0) HashMap.forEach(annotations, (value, key) => made.attribute(key, value))
  const { attributes } = options
  // its own keys, as Effect sets them, without an array of them made per span
  if (attributes !== undefined) {
    for (const key in attributes) if (Object.hasOwn(attributes, key)) made.attribute(key, attributes[key])
  }
  return made
}

/** The innermost span from `span` up whose context does not disable propagation (Effect's rule). */
const propagated = (span: Option.Option<Tracer.AnySpan>): Option.Option<Tracer.AnySpan> => {
  let at = span
  while (Option.isSome(at) && Context.get(at.value.context, EffectTracer.DisablePropagation)) {
    at = at.value._tag === "Span" ? at.value.parent : Option.none()
  }
  return at
}

const noStackTrace = (options: Tracer.SpanOptions): Tracer.SpanOptions =>
  options.captureStackTrace === false ? options : { ...options, captureStackTrace: false }

const noTime = BigInt(0)
const noLinks: ReadonlyArray<Tracer.SpanLink> = Object.freeze([])
