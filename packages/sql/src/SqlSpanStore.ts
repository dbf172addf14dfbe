/**
 * Core's `SpanStore` port on SQL (the same database as the other stores, SQLite or Postgres), so
 * the console's trace view reads spans any process wrote: a runner process records its runs'
 * spans (`SpanRecorder` of `@agentkit/console`), a console process reads them.
 *
 * - `offer` never blocks: it appends the span, cut as `SpanStore.bound` cuts it, to a bounded
 *   buffer; a fiber writes the buffer every `flushEvery` in one transaction, and once more when
 *   the layer's scope closes. `trace` writes what this process holds first.
 * - Retention deletes whole traces: those whose newest span started more than `ttl` ago; those no
 *   span of which carries a run tree's key (the trace view can never show them: spans of the
 *   app's own work outside any run) after `keylessTtl`; and beyond `maxTraces` the keyless ones
 *   first, then the oldest. On a schedule (`pruneEvery`) and by `prune`. A trace keeps its first
 *   `maxSpansPerTrace` spans.
 * - The table (`<prefix>spans`) comes with the stores' migrations (schema versions 3 and 4): building the
 *   layer runs them unless `migrate: false`, and refuses a database of a newer schema.
 *
 * @since 0.1.0
 */
import { ConfigurationError, SpanStore } from "@agentkit/core"
import type { StoreError } from "@agentkit/core"
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type { SchemaVersionUnsupported } from "./Errors.js"
import * as Migrations from "./internal/migrations.js"
import * as internal from "./internal/spanStore.js"
import { makeEnv, millis } from "./internal/stores.js"
import type * as SqlStores from "./SqlStores.js"

/**
 * The span store's options: where its table is (as for the stores), its retention, and how it
 * writes.
 *
 * - `ttl`: a trace whose newest span started longer ago is deleted (default 7 days).
 * - `keylessTtl`: the same for a trace none of whose spans carries a run tree's key (default 1
 *   hour; a run's key is on its root span, which ends last, so keep it above your longest run).
 * - `maxTraces`: the newest traces kept (default 10,000); `maxSpansPerTrace` (default 2,000).
 * - `maxValueLength`, `maxAttributes`, `maxEvents`: how a span is cut (`SpanStore.Limits`).
 * - `flushEvery`: how often buffered spans are written (default 500 ms); `maxBuffered`: spans
 *   held between writes (default 10,000; beyond it spans are dropped, and counted).
 * - `pruneEvery`: how often retention runs (default 10 minutes).
 *
 * @example
 * ```ts
 * import type { SqlSpanStore } from "@agentkit/sql"
 *
 * const options: SqlSpanStore.Options = { ttl: "3 days", maxTraces: 5_000, pruneEvery: "1 hour" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options
  extends Pick<SqlStores.Options, "prefix" | "schema" | "migrate" | "retry" | "busyTimeout">, SpanStore.Limits
{
  readonly ttl?: Duration.DurationInput | undefined
  readonly keylessTtl?: Duration.DurationInput | undefined
  readonly maxTraces?: number | undefined
  readonly maxSpansPerTrace?: number | undefined
  readonly flushEvery?: Duration.DurationInput | undefined
  readonly maxBuffered?: number | undefined
  readonly pruneEvery?: Duration.DurationInput | undefined
}

/**
 * How many spans a `prune` deleted: of traces past the TTL, of keyless traces past theirs, and of
 * traces beyond the cap.
 *
 * @example
 * ```ts
 * import type { SqlSpanStore } from "@agentkit/sql"
 *
 * const line = (report: SqlSpanStore.PruneReport) => `${report.expired + report.keyless + report.overCap} spans deleted`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface PruneReport {
  readonly expired: number
  readonly keyless: number
  readonly overCap: number
}

/**
 * The SQL span store: the port, plus `flush` (write what is buffered now; answers how many spans
 * were written), `prune` (run retention now) and `dropped` (spans not kept: the buffer was full,
 * an id was too long, or the database refused a batch after the retries).
 *
 * @example
 * ```ts
 * import { SqlSpanStore } from "@agentkit/sql"
 * import { Effect } from "effect"
 *
 * const nightly = Effect.flatMap(SqlSpanStore.SqlSpanStore, (store) => store.prune)
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export interface Service extends SpanStore.Service {
  readonly flush: Effect.Effect<number, StoreError>
  readonly prune: Effect.Effect<PruneReport, StoreError>
  readonly dropped: () => number
}

/**
 * The SQL span store's tag (its layer provides it and core's `SpanStore`).
 *
 * @example
 * ```ts
 * import { SqlSpanStore } from "@agentkit/sql"
 * import { Effect } from "effect"
 *
 * const written = Effect.flatMap(SqlSpanStore.SqlSpanStore, (store) => store.flush)
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class SqlSpanStore extends Context.Tag("@agentkit/sql/SqlSpanStore")<SqlSpanStore, Service>() {}

const positive = (
  field: string,
  value: number | undefined,
  fallback: number
): Effect.Effect<number, ConfigurationError> => {
  const n = value ?? fallback
  return Number.isSafeInteger(n) && n >= 1
    ? Effect.succeed(n)
    : Effect.fail(
      new ConfigurationError({
        field,
        message: `${field} must be a positive integer (e.g. ${fallback}); got ${String(value)}`
      })
    )
}

/**
 * Makes the store over the `SqlClient` in the context (running the migrations unless told not
 * to), with its writer and retention fibers in the scope; closing the scope writes what is left.
 *
 * @example
 * ```ts
 * import { SqlSpanStore } from "@agentkit/sql"
 * import { Effect } from "effect"
 *
 * const store = SqlSpanStore.make({ ttl: "1 day" }) // Effect<Service, ..., SqlClient | Scope>
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options = {}
): Effect.Effect<
  Service,
  StoreError | SchemaVersionUnsupported | ConfigurationError,
  SqlClient.SqlClient | Scope.Scope
> =>
  Effect.gen(function*() {
    const env = yield* makeEnv(options)
    const ttlMs = yield* millis("sqlSpanStore.ttl", options.ttl, "7 days")
    const keylessTtlMs = yield* millis("sqlSpanStore.keylessTtl", options.keylessTtl, "1 hour")
    const flushMs = yield* millis("sqlSpanStore.flushEvery", options.flushEvery, "500 millis")
    const pruneMs = yield* millis("sqlSpanStore.pruneEvery", options.pruneEvery, "10 minutes")
    const maxTraces = yield* positive("sqlSpanStore.maxTraces", options.maxTraces, 10_000)
    const maxSpansPerTrace = yield* positive("sqlSpanStore.maxSpansPerTrace", options.maxSpansPerTrace, 2000)
    const maxBuffered = yield* positive("sqlSpanStore.maxBuffered", options.maxBuffered, 10_000)
    const maxValueLength = yield* positive("sqlSpanStore.maxValueLength", options.maxValueLength, 4096)
    const maxAttributes = yield* positive("sqlSpanStore.maxAttributes", options.maxAttributes, 128)
    const maxEvents = yield* positive("sqlSpanStore.maxEvents", options.maxEvents, 128)
    yield* Migrations.run(env.sql, env.tables, env.dialect, env.runner, { migrate: options.migrate ?? true })
    const store = internal.make(env, {
      ttlMs,
      keylessTtlMs,
      maxTraces,
      maxSpansPerTrace,
      maxBuffered,
      maxValueLength,
      maxAttributes,
      maxEvents
    })
    // the writer and retention: a failure is counted (flush) or tried again next time (prune), never fatal
    yield* Effect.forkScoped(Effect.repeat(Effect.ignore(store.flush), Schedule.spaced(flushMs)))
    yield* Effect.forkScoped(Effect.repeat(Effect.ignore(Effect.delay(store.prune, pruneMs)), Schedule.forever))
    yield* Effect.addFinalizer(() => Effect.ignore(store.flush))
    return store
  })

/**
 * The SQL span store as core's `SpanStore` (and as `SqlSpanStore`), over the app's `SqlClient`:
 * with `SqlStores.layerSqlite` it shares the stores' SQLite file and client.
 *
 * @example
 * ```ts
 * import { SpanStore } from "@agentkit/core"
 * import { SqlSpanStore, SqlStores } from "@agentkit/sql"
 * import { Layer } from "effect"
 *
 * const StoresLive = SqlStores.layerSqlite({ filename: "agentkit.db" })
 * const SpansLive = SqlSpanStore.layer({ ttl: "7 days" }).pipe(Layer.provide(StoresLive))
 * const needsSpans: Layer.Layer<SpanStore.SpanStore | SqlSpanStore.SqlSpanStore, unknown> = SpansLive
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options = {}
): Layer.Layer<
  SpanStore.SpanStore | SqlSpanStore,
  StoreError | SchemaVersionUnsupported | ConfigurationError,
  SqlClient.SqlClient
> =>
  Layer.scopedContext(
    Effect.map(
      make(options),
      (store) => Context.make(SpanStore.SpanStore, store).pipe(Context.add(SqlSpanStore, store))
    )
  )
