/**
 * The span store port: finished spans kept for the console's trace view, grouped by trace and
 * found by the key of the run tree they belong to (its correlation id, which defaults to the root
 * run's id; agentkit sets it on every run span as `gen_ai.conversation.id`) and by its tenant
 * (the run's `scope.storeKey`, set on every run span as `agentkit.tenant`): a correlation id is
 * the caller's choice, so a read by tenant shows only the traces of that tenant's runs. `SpanRecorder` feeds
 * it (`@agentkit/console`); the in-memory store is here, a SQL one with retention is
 * `SqlSpanStore` of `@agentkit/sql`.
 *
 * `offer` is synchronous and must never block or throw: it is called from a tracer's `end`. A
 * durable store buffers and writes in batches. Every store keeps a span as `bound` cuts it, so
 * hostile or huge attribute values are stored bounded (and the console renders them as text).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { StoreError } from "./StoreError.js"
import * as Tracing from "./Tracing.js"

/**
 * An attribute or event-attribute value as stored: JSON-safe.
 *
 * @example
 * ```ts
 * import { SpanStore } from "@agentkit/core"
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
 * import { SpanStore } from "@agentkit/core"
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
    Schema.Struct({
      name: Schema.String,
      atMs: Schema.Number,
      attributes: Schema.Record({ key: Schema.String, value: AttributeValue })
    })
  )
})

/**
 * One finished span.
 *
 * @example
 * ```ts
 * import type { SpanStore } from "@agentkit/core"
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
 * import { SpanStore } from "@agentkit/core"
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
  /**
   * Every kept span of the traces of a run tree (by its correlation id), in start order. With a
   * `tenant`, only the traces whose spans name that tenant and no other (`tenantAttribute`): a
   * trace of another tenant's run under the same correlation id, or of no tenant's, is left out.
   * Only a durable store fails (its database is unreachable).
   */
  readonly trace: (key: string, tenant?: string | undefined) => Effect.Effect<ReadonlyArray<SpanRecord>, StoreError>
}

/**
 * The span attribute that names a run's tenant (its `scope.storeKey`), set on every run span
 * beside the correlation id: what a read by tenant filters on.
 *
 * @example
 * ```ts
 * import { SpanStore } from "@agentkit/core"
 *
 * SpanStore.tenantAttribute // "agentkit.tenant"
 * ```
 *
 * @since 0.2.0
 * @category names
 */
export const tenantAttribute = "agentkit.tenant"

/**
 * Whether a trace whose spans name `tenants` may be shown to a read by `tenant`: no tenant
 * asked, or the trace names that tenant and no other (fail closed: a trace naming none is left
 * out of a read by tenant).
 *
 * @example
 * ```ts
 * import { SpanStore } from "@agentkit/core"
 *
 * SpanStore.visibleTo(new Set(["acme"]), "acme") // true
 * SpanStore.visibleTo(new Set(["acme", "globex"]), "acme") // false
 * ```
 *
 * @since 0.2.0
 * @category predicates
 */
export const visibleTo = (tenants: ReadonlySet<string> | undefined, tenant: string | undefined): boolean =>
  tenant === undefined || (tenants !== undefined && tenants.size === 1 && tenants.has(tenant))

/**
 * How much of a span a store keeps: string values (attribute and event-attribute values, array
 * items, the name, the error) are cut at `maxValueLength` characters (an ellipsis marks the
 * cut), a span keeps its first `maxAttributes` attributes and `maxEvents` events.
 *
 * @example
 * ```ts
 * import type { SpanStore } from "@agentkit/core"
 *
 * const tight: SpanStore.Limits = { maxValueLength: 1024, maxEvents: 32 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Limits {
  /** Default 4096 characters. */
  readonly maxValueLength?: number | undefined
  /** Default 128. */
  readonly maxAttributes?: number | undefined
  /** Default 128. */
  readonly maxEvents?: number | undefined
}

type Value = SpanRecord["attributes"][string]

const cutText = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max)}…` : text)

const cutValue = (value: Value, max: number): Value =>
  typeof value === "string"
    ? cutText(value, max)
    : Array.isArray(value)
    ? value.slice(0, 128).map((item) => (typeof item === "string" ? cutText(item, max) : item))
    : value

const cutAttributes = (attributes: SpanRecord["attributes"], max: number, count: number): Record<string, Value> => {
  const out: Record<string, Value> = {}
  let kept = 0
  for (const [key, value] of Object.entries(attributes)) {
    if (kept++ >= count) break
    out[cutText(key, 256)] = cutValue(value, max)
  }
  return out
}

/**
 * A span as a store keeps it, cut to `limits` (what every store applies in `offer`).
 *
 * @example
 * ```ts
 * import { SpanStore } from "@agentkit/core"
 *
 * const span: SpanStore.SpanRecord = {
 *   traceId: "t1", spanId: "s1", name: "execute_tool cancel_order", startMs: 0, durationMs: 1, status: "ok",
 *   attributes: { "gen_ai.tool.call.arguments": "<script>".repeat(10_000) }, events: []
 * }
 * SpanStore.bound(span, { maxValueLength: 100 }).attributes["gen_ai.tool.call.arguments"] // 100 characters and "…"
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const bound = (span: SpanRecord, limits: Limits = {}): SpanRecord => {
  const max = limits.maxValueLength ?? 4096
  const attributes = limits.maxAttributes ?? 128
  const { error, parentSpanId, ...rest } = span
  return {
    ...rest,
    ...(parentSpanId === undefined ? {} : { parentSpanId }),
    name: cutText(span.name, Math.min(max, 1024)),
    ...(error === undefined ? {} : { error: cutText(error, max) }),
    attributes: cutAttributes(span.attributes, max, attributes),
    events: span.events
      .slice(0, limits.maxEvents ?? 128)
      .map((event) => ({
        name: cutText(event.name, Math.min(max, 1024)),
        atMs: event.atMs,
        attributes: cutAttributes(event.attributes, max, attributes)
      }))
  }
}

/**
 * The in-memory store's limits. A trace past `maxSpansPerTrace` keeps its first spans; past
 * `maxTraces` the oldest trace none of whose spans carries a key (no run tree's) is forgotten,
 * else the oldest trace. Each span is cut as `bound` does (`Limits`).
 *
 * @example
 * ```ts
 * import type { SpanStore } from "@agentkit/core"
 *
 * const small: SpanStore.MemoryOptions = { maxTraces: 100 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryOptions extends Limits {
  /** Default 1000. */
  readonly maxTraces?: number | undefined
  /** Default 2000. */
  readonly maxSpansPerTrace?: number | undefined
}

/**
 * The in-memory store, plus what tests read.
 *
 * @example
 * ```ts
 * import { SpanStore } from "@agentkit/core"
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
 * import { SpanStore } from "@agentkit/core"
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
  const traces = new Map<string, Array<SpanRecord>>()
  const keys = new Map<string, Set<string>>()
  const keyOf = new Map<string, string>()
  const tenantsOf = new Map<string, Set<string>>()
  const forget = (traceId: string) => {
    traces.delete(traceId)
    tenantsOf.delete(traceId)
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
            // a trace of no run tree (no span carries a key: the trace view never shows it) goes first
            let victim: string | undefined
            for (const traceId of traces.keys()) {
              if (!keyOf.has(traceId)) {
                victim = traceId
                break
              }
            }
            victim ??= traces.keys().next().value
            if (victim !== undefined) forget(victim)
          }
          spans = []
          traces.set(span.traceId, spans)
        }
        if (spans.length >= maxSpans) return
        spans.push(bound(span, options))
        const tenant = span.attributes[tenantAttribute]
        if (typeof tenant === "string") {
          let named = tenantsOf.get(span.traceId)
          if (named === undefined) tenantsOf.set(span.traceId, named = new Set())
          named.add(tenant)
        }
        const key = span.attributes[Tracing.Attribute.conversationId]
        if (typeof key === "string" && !keyOf.has(span.traceId)) {
          keyOf.set(span.traceId, key)
          let set = keys.get(key)
          if (set === undefined) keys.set(key, set = new Set())
          set.add(span.traceId)
        }
      } catch {
        // a store that fails never breaks the run
      }
    },
    trace: (key, tenant) =>
      Effect.sync(() =>
        [...(keys.get(key) ?? [])]
          .filter((traceId) => visibleTo(tenantsOf.get(traceId), tenant))
          .flatMap((traceId) => traces.get(traceId) ?? [])
          .sort((a, b) => a.startMs - b.startMs)
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
 * import { SpanStore } from "@agentkit/core"
 *
 * const StoreLive = SpanStore.SpanStore.memory({ maxTraces: 500 })
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class SpanStore extends Context.Tag("@agentkit/core/SpanStore")<SpanStore, Service>() {
  /** A layer of a fresh in-memory store. */
  static memory(options?: MemoryOptions): Layer.Layer<SpanStore> {
    return Layer.sync(SpanStore, () => makeMemory(options))
  }
  /** A layer of a given store value. */
  static layer(store: Service): Layer.Layer<SpanStore> {
    return Layer.succeed(SpanStore, store)
  }
}
