/**
 * A tracer that tees: it wraps the app's current tracer, so every span still reaches it (an
 * OpenTelemetry exporter, Effect's native tracer), and hands a copy of each finished span to the
 * `SpanStore` for the console's trace view. The app's span objects are kept (a transparent proxy
 * records their attributes and events), so the app's tracer sees its own spans as parents and
 * `instanceof` checks still hold.
 *
 * With tracing off (a run with `tracing: false`, `Effect.withTracerEnabled(false)`) Effect never
 * calls a tracer, so the tee costs nothing. Unsampled spans are passed through untouched.
 *
 * @since 0.1.0
 */
import { SpanStore } from "@agentkit/core"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"

type SpanRecord = SpanStore.SpanRecord
type SpanStoreService = SpanStore.Service

type Value = SpanRecord["attributes"][string]

const toValue = (value: unknown): Value | undefined => {
  if (typeof value === "string" || typeof value === "boolean") return value
  if (typeof value === "number") return Number.isFinite(value) ? value : String(value)
  if (typeof value === "bigint") return value.toString()
  if (Array.isArray(value)) {
    return value.map((
      item
    ) => (typeof item === "string" || typeof item === "number" || typeof item === "boolean" ? item : String(item)))
  }
  if (value === undefined || value === null) return undefined
  try {
    return JSON.stringify(value)
  } catch {
    return String(value)
  }
}

const toAttributes = (input: Record<string, unknown> | undefined): Record<string, Value> => {
  const out: Record<string, Value> = {}
  if (input === undefined) return out
  for (const [key, value] of Object.entries(input)) {
    const converted = toValue(value)
    if (converted !== undefined) out[key] = converted
  }
  return out
}

const ms = (nanos: bigint): number => Number(nanos / 1000n) / 1000

const errorOf = (exit: Exit.Exit<unknown, unknown>): Pick<SpanRecord, "status" | "error"> => {
  if (Exit.isSuccess(exit)) return { status: "ok" }
  if (Cause.isInterruptedOnly(exit.cause)) return { status: "interrupted" }
  const failure = Cause.squash(exit.cause)
  const text = typeof failure === "object" && failure !== null && "_tag" in failure
    ? `${String((failure as { _tag: unknown })._tag)}: ${failure instanceof Error ? failure.message : ""}`
    : failure instanceof Error
    ? failure.message
    : String(failure)
  return { status: "error", error: text.slice(0, 500) }
}

/** Our proxies, to the app's spans they wrap: the app's tracer is always handed its own spans. */
const wrapped = new WeakMap<object, Tracer.Span>()

const unwrap = (span: Tracer.AnySpan): Tracer.AnySpan => wrapped.get(span) ?? span

const recording = (inner: Tracer.Span, store: SpanStoreService, startTime: bigint): Tracer.Span => {
  const attributes: Record<string, Value> = {}
  const events: Array<SpanRecord["events"][number]> = []
  const parentSpanId = Option.isSome(inner.parent) ? inner.parent.value.spanId : undefined
  const overrides: Partial<Tracer.Span> = {
    attribute(key: string, value: unknown) {
      inner.attribute(key, value)
      const converted = toValue(value)
      if (converted !== undefined) attributes[key] = converted
    },
    event(name: string, at: bigint, eventAttributes?: Record<string, unknown>) {
      inner.event(name, at, eventAttributes)
      events.push({ name, atMs: ms(at), attributes: toAttributes(eventAttributes) })
    },
    end(endTime: bigint, exit: Exit.Exit<unknown, unknown>) {
      inner.end(endTime, exit)
      try {
        store.offer({
          traceId: inner.traceId,
          spanId: inner.spanId,
          ...(parentSpanId === undefined ? {} : { parentSpanId }),
          name: inner.name,
          startMs: ms(startTime),
          durationMs: ms(endTime - startTime),
          ...errorOf(exit),
          attributes: { ...attributes },
          events: [...events]
        })
      } catch {
        // recording never breaks the run
      }
    }
  }
  const proxy = new Proxy(inner, {
    get(target, property) {
      if (property in overrides) return overrides[property as keyof typeof overrides]
      const value: unknown = Reflect.get(target, property, target)
      return typeof value === "function" ? (value as (...args: Array<unknown>) => unknown).bind(target) : value
    }
  })
  wrapped.set(proxy, inner)
  return proxy
}

/**
 * A tracer that forwards every span to `tracer` and records a copy of each finished one in
 * `store`.
 *
 * @example
 * ```ts
 * import { SpanRecorder, SpanStore } from "@agentkit/console"
 * import { Effect, Layer } from "effect"
 *
 * const store = SpanStore.makeMemory()
 * const TeeLive = Layer.unwrapEffect(Effect.map(Effect.tracer, (app) => Layer.setTracer(SpanRecorder.tee(app, store))))
 * ```
 *
 * @since 0.1.0
 * @category tracing
 */
export const tee = (tracer: Tracer.Tracer, store: SpanStoreService): Tracer.Tracer =>
  Tracer.make({
    span(name, parent, context, links, startTime, kind, options) {
      const inner = tracer.span(
        name,
        Option.map(parent, unwrap),
        context,
        links.map((link) => (wrapped.has(link.span) ? { ...link, span: unwrap(link.span) } : link)),
        startTime,
        kind,
        options
      )
      return inner.sampled ? recording(inner, store, startTime) : inner
    },
    context: (f, fiber) => tracer.context(f, fiber)
  })

/**
 * Installs the tee over the tracer that is current where the layer is built: provide the app's
 * tracer layer to it (`Layer.provide(SpanRecorder.layer, OtelLive)`), or build it under the
 * program's tracer. Needs a `SpanStore`.
 *
 * @example
 * ```ts
 * import { SpanRecorder, SpanStore } from "@agentkit/console"
 * import { Effect, Layer } from "effect"
 *
 * const TracingLive = SpanRecorder.layer.pipe(Layer.provide(SpanStore.SpanStore.memory()))
 * const program = agent.run("cancel order A-771").pipe(Effect.provide(TracingLive))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<never, never, SpanStore.SpanStore> = Layer.unwrapEffect(
  Effect.gen(function*() {
    const store = yield* SpanStore.SpanStore
    const app = yield* Effect.tracer
    return Layer.setTracer(tee(app, store))
  })
)
