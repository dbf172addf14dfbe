/**
 * A tracer wrapped so that nothing it does can break a run: `Tracing.contain` installs it. Every
 * call into the wrapped tracer and its spans (`span`, `end`, `attribute`, `event`, `addLinks`, and
 * reading a span's fields) is caught; a span the tracer failed to make is replaced by a stand-in
 * that keeps the trace's shape (ids, parent, status) and records nothing. `context` (the tracer's
 * hook around every step of a fiber) is not caught: it is the run loop itself. It is given a view
 * of the fiber whose `currentSpan` is the tracer's own span, not the wrapper (so
 * `@effect/opentelemetry` makes the recording span OpenTelemetry's active one while the step runs,
 * not a copy of its ids); the fiber itself is left as it is.
 *
 * @internal
 */
import type * as Context from "effect/Context"
import type * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
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

  // the last view made (a span is current on one fiber, or on a few: its children's)
  private viewed: Fiber.RuntimeFiber<unknown, unknown> | undefined = undefined
  private view: Fiber.RuntimeFiber<unknown, unknown> | undefined = undefined

  /**
   * `fiber` as the wrapped tracer's `context` hook sees it while this span is current: every
   * member the fiber's own (its prototype), but `currentSpan`, the wrapped tracer's own span.
   */
  viewOf(fiber: Fiber.RuntimeFiber<unknown, unknown>): Fiber.RuntimeFiber<unknown, unknown> {
    if (this.viewed !== fiber || this.view === undefined) {
      this.view = Object.create(fiber, { currentSpan: { value: this.inner } }) as Fiber.RuntimeFiber<unknown, unknown>
      this.viewed = fiber
    }
    return this.view
  }
}

/** The span a tracer of its own made: the wrapped one for a contained span, else the span itself. */
export const unwrap = (span: Tracer.AnySpan): Tracer.AnySpan =>
  span instanceof ContainedSpan && span.inner !== undefined ? span.inner : span

const wrappers = new WeakMap<Tracer.Tracer, Tracer.Tracer>()

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
        // the wrapped tracer's own hook, around every step of a fiber, given a view of the fiber
        // whose current span is the wrapped tracer's own (as it sees its own spans as parents)
        context: (execution, fiber) => {
          const current = fiber.currentSpan
          return current instanceof ContainedSpan && current.inner !== undefined
            ? tracer.context(execution, current.viewOf(fiber))
            : tracer.context(execution, fiber)
        }
      }),
      { [ContainedTypeId]: ContainedTypeId }
    )
    wrappers.set(tracer, wrapper)
  }
  return wrapper
}
