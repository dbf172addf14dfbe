/**
 * A tracer wrapped so that nothing it does can break a run: `Tracing.contain` installs it. Every
 * call into the wrapped tracer and its spans (`span`, `end`, `attribute`, `event`, `addLinks`, and
 * reading a span's fields) is caught; a span the tracer failed to make is replaced by a stand-in
 * that keeps the trace's shape (ids, parent, status) and records nothing. `context` (the tracer's
 * hook around every step of a fiber) is not caught: it is the run loop itself. It sees the
 * tracer's own span as the fiber's current one, not the wrapper (so `@effect/opentelemetry` makes
 * the recording span OpenTelemetry's active one while the step runs, not a copy of its ids).
 *
 * @internal
 */
import type * as Context from "effect/Context"
import type * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import { randomHex } from "./randomId.js"

const ContainedTypeId: unique symbol = Symbol.for("@agentkit/core/Tracing/Contained")

const EMPTY: ReadonlyMap<string, unknown> = new Map()
const NO_LINKS: ReadonlyArray<Tracer.SpanLink> = Object.freeze([])

/** Reads a field of the wrapped span, or falls back when reading it throws. */
const read = <A>(span: Tracer.Span | undefined, get: (span: Tracer.Span) => A, fallback: A): A => {
  if (span === undefined) return fallback
  try {
    return get(span)
  } catch {
    return fallback
  }
}

/** A span of a contained tracer: the wrapped tracer's span (`inner`), every call into it caught. */
export class ContainedSpan implements Tracer.Span {
  readonly _tag = "Span"
  readonly spanId: string
  readonly traceId: string
  readonly sampled: boolean
  status: Tracer.SpanStatus

  constructor(
    /** The wrapped tracer's span; `undefined` when the tracer failed to make one. */
    readonly inner: Tracer.Span | undefined,
    readonly name: string,
    readonly parent: Option.Option<Tracer.AnySpan>,
    readonly context: Context.Context<never>,
    startTime: bigint,
    readonly kind: Tracer.SpanKind
  ) {
    let spanId: unknown
    let traceId: unknown
    let sampled: unknown = true
    if (inner !== undefined) {
      try {
        spanId = inner.spanId
        traceId = inner.traceId
        sampled = inner.sampled
      } catch {
        // a span whose fields throw: the stand-in's own ids below
      }
    }
    this.spanId = typeof spanId === "string" ? spanId : randomHex(16)
    this.traceId = typeof traceId === "string" ? traceId : Option.isSome(parent) ? parent.value.traceId : randomHex(32)
    this.sampled = sampled !== false
    this.status = { _tag: "Started", startTime }
  }

  get attributes(): ReadonlyMap<string, unknown> {
    return read(this.inner, (span) => span.attributes, EMPTY)
  }

  get links(): ReadonlyArray<Tracer.SpanLink> {
    return read(this.inner, (span) => span.links, NO_LINKS)
  }

  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
    // the status is kept here, so Effect never ends a span twice whatever the wrapped span says
    this.status = { _tag: "Ended", startTime: this.status.startTime, endTime, exit }
    try {
      this.inner?.end(endTime, exit)
    } catch {
      // a tracer that throws never breaks the run
    }
  }

  attribute(key: string, value: unknown): void {
    try {
      this.inner?.attribute(key, value)
    } catch {
      // a tracer that throws never breaks the run
    }
  }

  event(name: string, startTime: bigint, attributes?: Record<string, unknown>): void {
    try {
      this.inner?.event(name, startTime, attributes)
    } catch {
      // a tracer that throws never breaks the run
    }
  }

  addLinks(links: ReadonlyArray<Tracer.SpanLink>): void {
    try {
      this.inner?.addLinks(links)
    } catch {
      // a tracer that throws never breaks the run
    }
  }
}

/** The span a tracer of its own made: the wrapped one for a contained span, else the span itself. */
export const unwrap = (span: Tracer.AnySpan): Tracer.AnySpan =>
  span instanceof ContainedSpan && span.inner !== undefined ? span.inner : span

const wrappers = new WeakMap<Tracer.Tracer, Tracer.Tracer>()

/**
 * Effect 3's `FiberRuntime` keeps the span of its context in a field, `currentSpan`, which a
 * tracer's `context` hook reads (`@effect/opentelemetry` makes that span OpenTelemetry's active
 * one while the step runs). Read-only in the fiber's public interface; the runtime sets it anew
 * whenever the fiber's context changes.
 */
interface Stepping {
  currentSpan: Tracer.AnySpan | undefined
}

/** Whether a tracer is already contained. */
export const isContained = (tracer: Tracer.Tracer): boolean => ContainedTypeId in tracer

/** The contained form of a tracer, made once per tracer. */
export const contained = (tracer: Tracer.Tracer): Tracer.Tracer => {
  if (isContained(tracer)) return tracer
  let wrapper = wrappers.get(tracer)
  if (wrapper === undefined) {
    wrapper = Object.assign(
      Tracer.make({
        span(name, parent, context, links, startTime, kind, options) {
          // the wrapped tracer sees its own spans as parents, never the wrappers
          const own = Option.isSome(parent) && parent.value instanceof ContainedSpan
            ? Option.some(unwrap(parent.value))
            : parent
          let inner: Tracer.Span | undefined
          try {
            inner = tracer.span(name, own, context, links, startTime, kind, options)
          } catch {
            inner = undefined
          }
          return new ContainedSpan(inner, name, parent, context, startTime, kind)
        },
        // the wrapped tracer's own hook, around every step of a fiber, seeing the wrapped tracer's
        // own span as the fiber's current one (as it sees its own spans as parents)
        context: (execution, fiber) => {
          const stepping = fiber as unknown as Stepping
          const current = stepping.currentSpan
          if (!(current instanceof ContainedSpan) || current.inner === undefined) {
            return tracer.context(execution, fiber)
          }
          const own = current.inner
          stepping.currentSpan = own
          try {
            return tracer.context(execution, fiber)
          } finally {
            // unless the step itself changed the fiber's span (the runtime then set it anew)
            if (stepping.currentSpan === own) stepping.currentSpan = current
          }
        }
      }),
      { [ContainedTypeId]: ContainedTypeId }
    )
    wrappers.set(tracer, wrapper)
  }
  return wrapper
}
