/** The recording tracer behind `Tracing.recording()`. @internal */
import type * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import type { RecordedEvent, RecordingTracer } from "../Tracing.js"

/** The recorded span class (`Tracing.RecordedSpan`). */

/** A span kept in memory. */
export class RecordedSpan implements Tracer.Span {
  readonly _tag = "Span"
  readonly attributes = new Map<string, unknown>()
  readonly events: Array<RecordedEvent> = []
  readonly links: Array<Tracer.SpanLink>
  readonly sampled = true
  status: Tracer.SpanStatus
  exit: Exit.Exit<unknown, unknown> | undefined = undefined

  constructor(
    readonly name: string,
    readonly spanId: string,
    readonly traceId: string,
    readonly parent: Option.Option<Tracer.AnySpan>,
    readonly context: Tracer.Span["context"],
    links: ReadonlyArray<Tracer.SpanLink>,
    startTime: bigint,
    readonly kind: Tracer.SpanKind
  ) {
    this.links = [...links]
    this.status = { _tag: "Started", startTime }
  }

  /** The parent span's id, when the parent is a span of this tracer or an external span. */
  get parentSpanId(): string | undefined {
    return Option.isSome(this.parent) ? this.parent.value.spanId : undefined
  }
  /** Whether the span has ended. */
  get ended(): boolean {
    return this.status._tag === "Ended"
  }
  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
    this.status = { _tag: "Ended", startTime: this.status.startTime, endTime, exit }
    this.exit = exit
  }
  attribute(key: string, value: unknown): void {
    this.attributes.set(key, value)
  }
  event(name: string, _startTime: bigint, attributes?: Record<string, unknown>): void {
    this.events.push({ name, attributes: attributes ?? {} })
  }
  addLinks(links: ReadonlyArray<Tracer.SpanLink>): void {
    for (const link of links) this.links.push(link)
  }
}

/** Makes a recording tracer. */
export const recording = (): RecordingTracer => {
  const spans: Array<RecordedSpan> = []
  let next = 0
  const hex = (n: number, width: number) => n.toString(16).padStart(width, "0")
  const tracer = Tracer.make({
    span(name, parent, context, links, startTime, kind) {
      next += 1
      const traceId = Option.isSome(parent) ? parent.value.traceId : hex(next, 32)
      const span = new RecordedSpan(name, hex(next, 16), traceId, parent, context, links, startTime, kind)
      spans.push(span)
      return span
    },
    context: (f) => f()
  })
  return {
    layer: Layer.setTracer(tracer),
    spans,
    named: (name) => spans.filter((span) => span.name === name),
    one(name) {
      const found = spans.filter((span) => span.name === name)
      if (found.length !== 1) {
        throw new Error(`expected one span '${name}', found ${found.length}: [${spans.map((s) => s.name).join(", ")}]`)
      }
      return found[0]!
    },
    childrenOf: (span) => spans.filter((s) => s.parentSpanId === span.spanId),
    clear: () => {
      spans.length = 0
    }
  }
}
