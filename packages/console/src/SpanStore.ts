/**
 * The span store port: finished spans kept for the console's trace view, grouped by trace and
 * found by the key of the run tree they belong to (its correlation id, which defaults to the root
 * run's id; agentkit sets it on every run span as `gen_ai.conversation.id`). `SpanRecorder` feeds
 * it; the in-memory store is here, a SQL one with retention comes with `@agentkit/sql`.
 *
 * `offer` is synchronous and must never block or throw: it is called from a tracer's `end`. A
 * durable store buffers and writes in batches.
 *
 * @since 0.1.0
 */
import { Tracing } from "@agentkit/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

/**
 * An attribute or event-attribute value as stored: JSON-safe.
 *
 * @example
 * ```ts
 * import { SpanStore } from "@agentkit/console"
 * import { Schema } from "effect"
 *
 * Schema.is(SpanStore.AttributeValue)(["a", "b"]) // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const AttributeValue = Schema.Union(
  Schema.String,
  Schema.Number,
  Schema.Boolean,
  Schema.Array(Schema.Union(Schema.String, Schema.Number, Schema.Boolean))
)

/**
 * One finished span: ids, name, times (Unix ms), status, attributes and events.
 *
 * @example
 * ```ts
 * import { SpanStore } from "@agentkit/console"
 * import { Schema } from "effect"
 *
 * const decode = Schema.decodeUnknownSync(SpanStore.SpanRecord)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SpanRecord = Schema.Struct({
  traceId: Schema.String,
  spanId: Schema.String,
  parentSpanId: Schema.optional(Schema.String),
  name: Schema.String,
  startMs: Schema.Number,
  durationMs: Schema.Number,
  status: Schema.Literal("ok", "error", "interrupted"),
  /** For an `error` span: what failed (short). */
  error: Schema.optional(Schema.String),
  attributes: Schema.Record({ key: Schema.String, value: AttributeValue }),
  events: Schema.Array(
    Schema.Struct({ name: Schema.String, atMs: Schema.Number, attributes: Schema.Record({ key: Schema.String, value: AttributeValue }) })
  )
})

/**
 * One finished span.
 *
 * @example
 * ```ts
 * import type { SpanStore } from "@agentkit/console"
 *
 * const line = (span: SpanStore.SpanRecord) => `${span.name} ${span.durationMs.toFixed(1)} ms ${span.status}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface SpanRecord extends Schema.Schema.Type<typeof SpanRecord> {}

/**
 * The store's operations.
 *
 * @example
 * ```ts
 * import { SpanStore } from "@agentkit/console"
 * import { Effect } from "effect"
 *
 * const spans = Effect.flatMap(SpanStore.SpanStore, (store) => store.trace("run-1"))
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export interface Service {
  /** Keeps a finished span. Synchronous, never blocks, never throws. */
  readonly offer: (span: SpanRecord) => void
  /** Every kept span of the traces of a run tree (by its correlation id), in start order. */
  readonly trace: (key: string) => Effect.Effect<ReadonlyArray<SpanRecord>>
}

/**
 * The in-memory store's limits. A trace past `maxSpansPerTrace` keeps its first spans; past
 * `maxTraces` the oldest trace is forgotten. String values are cut at `maxValueLength`.
 *
 * @example
 * ```ts
 * import type { SpanStore } from "@agentkit/console"
 *
 * const small: SpanStore.MemoryOptions = { maxTraces: 100 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryOptions {
  /** Default 1000. */
  readonly maxTraces?: number | undefined
  /** Default 2000. */
  readonly maxSpansPerTrace?: number | undefined
  /** Default 4096 characters. */
  readonly maxValueLength?: number | undefined
}

/**
 * The in-memory store, plus what tests read.
 *
 * @example
 * ```ts
 * import { SpanStore } from "@agentkit/console"
 *
 * const store: SpanStore.MemoryStore = SpanStore.makeMemory()
 * store.size // 0 traces
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryStore extends Service {
  /** How many traces it holds. */
  readonly size: number
}

/**
 * Makes an in-memory span store (one process; bounded by `MemoryOptions`).
 *
 * @example
 * ```ts
 * import { SpanStore } from "@agentkit/console"
 *
 * const store = SpanStore.makeMemory({ maxTraces: 500 })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory = (options: MemoryOptions = {}): MemoryStore => {
  const maxTraces = options.maxTraces ?? 1000
  const maxSpans = options.maxSpansPerTrace ?? 2000
  const maxValue = options.maxValueLength ?? 4096
  const traces = new Map<string, Array<SpanRecord>>()
  const keys = new Map<string, Set<string>>()
  const keyOf = new Map<string, string>()
  const cut = (value: SpanRecord["attributes"][string]): SpanRecord["attributes"][string] =>
    typeof value === "string" && value.length > maxValue ? `${value.slice(0, maxValue)}…` : value
  const forget = (traceId: string) => {
    traces.delete(traceId)
    const key = keyOf.get(traceId)
    if (key !== undefined) {
      keys.get(key)?.delete(traceId)
      if (keys.get(key)?.size === 0) keys.delete(key)
      keyOf.delete(traceId)
    }
  }
  return {
    offer: (span) => {
      try {
        let spans = traces.get(span.traceId)
        if (spans === undefined) {
          if (traces.size >= maxTraces) {
            const oldest = traces.keys().next()
            if (oldest.done !== true) forget(oldest.value)
          }
          spans = []
          traces.set(span.traceId, spans)
        }
        if (spans.length >= maxSpans) return
        const attributes: Record<string, SpanRecord["attributes"][string]> = {}
        for (const [key, value] of Object.entries(span.attributes)) attributes[key] = cut(value)
        spans.push({ ...span, attributes })
        const key = span.attributes[Tracing.Attribute.conversationId]
        if (typeof key === "string" && !keyOf.has(span.traceId)) {
          keyOf.set(span.traceId, key)
          let set = keys.get(key)
          if (set === undefined) keys.set(key, (set = new Set()))
          set.add(span.traceId)
        }
      } catch {
        // a store that fails never breaks the run
      }
    },
    trace: (key) =>
      Effect.sync(() =>
        [...(keys.get(key) ?? [])].flatMap((traceId) => traces.get(traceId) ?? []).sort((a, b) => a.startMs - b.startMs)
      ),
    get size() {
      return traces.size
    }
  }
}

/**
 * The span store service.
 *
 * @example
 * ```ts
 * import { SpanStore } from "@agentkit/console"
 *
 * const StoreLive = SpanStore.SpanStore.memory({ maxTraces: 500 })
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class SpanStore extends Context.Tag("@agentkit/console/SpanStore")<SpanStore, Service>() {
  /** A layer of a fresh in-memory store. */
  static memory(options?: MemoryOptions): Layer.Layer<SpanStore> {
    return Layer.sync(SpanStore, () => makeMemory(options))
  }
  /** A layer of a given store value. */
  static layer(store: Service): Layer.Layer<SpanStore> {
    return Layer.succeed(SpanStore, store)
  }
}
