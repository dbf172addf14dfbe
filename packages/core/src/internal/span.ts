/**
 * The span of `Tracing.span` (Effect's own, opened with `Effect.useSpan`, with the attributes
 * `onEnd` computes set as it ends) and the one way agentkit sets attributes on a span.
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import type * as Tracer from "effect/Tracer"
import * as EffectTracer from "effect/Tracer"
import type { Attributes, SpanOptions } from "../Tracing.js"
import * as contained from "./contained.js"
import { locallyWith } from "./locally.js"

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
 * Runs `self` inside a span: `Effect.withSpan`'s (`Effect.useSpan`, the span the parent of every
 * span `self` opens), with the attributes `onEnd` computes from the outcome set just before it ends.
 */
export const span = <A, E, R>(
  name: string,
  options: SpanOptions<A, E>,
  self: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> => {
  const { onEnd } = options
  return Effect.useSpan(name, noStackTrace(options as Tracer.SpanOptions), (span) =>
    // the span is the parent of every span `self` opens (`Effect.withParentSpan`'s meaning)
    locallyWith(
      self,
      FiberRef.currentContext,
      (outer) => Context.add(outer, EffectTracer.ParentSpan, span),
      onEnd === undefined ? undefined : (exit) => ended(span, exit, onEnd)
    ))
}

/** Sets the attributes `onEnd` computes from the outcome, never throwing. */
const ended = <A, E>(
  span: Tracer.Span,
  exit: Exit.Exit<A, E>,
  onEnd: (exit: Exit.Exit<A, E>) => Attributes | undefined
): void => {
  let attributes: Attributes | undefined
  try {
    attributes = onEnd(exit)
  } catch {
    // attributes that cannot be computed never break the run
  }
  if (attributes !== undefined) setOn(span, attributes)
}

/** The options as Effect takes them: no stack trace is captured (the options are copied only when they do not say so). */
const noStackTrace = (options: Tracer.SpanOptions): Tracer.SpanOptions =>
  options.captureStackTrace === false ? options : { ...options, captureStackTrace: false }
