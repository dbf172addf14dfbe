/**
 * Every agentkit store port on one SQL database: checkpoints with leases and fencing tokens, the
 * execution ledger, audit, idempotency, memo, quotas and sessions (conversation threads). The stores are written against
 * `@effect/sql`'s `SqlClient` only, one code path for Postgres and SQLite:
 *
 * - `layer(options)` uses the app's own `SqlClient` (its pool; a store call inside the app's
 *   `sql.withTransaction` joins that transaction);
 * - `layerSqlite({ filename })` is the embedded default: a SQLite file on libsql (prebuilt, so a
 *   fresh install compiles nothing), in WAL mode;
 * - `layerPg({ url })` is a Postgres pool on pg.
 *
 * Building a layer runs the migrations (`migrate: false` only checks the version, for a deploy
 * that runs `SqlMigrations.run` out of band) and refuses a database of a newer schema with
 * `SchemaVersionUnsupported` before anything runs. Transient database failures (busy, restarting,
 * unreachable) are retried on the `retry` schedule; when it gives up the `StoreError` says so, and
 * nothing is half-written: a run's committed steps stay, and the run stays recoverable.
 *
 * Retention: a run keeps only its newest state (a save replaces it; the version counts on), and a
 * finished run keeps its terminal marker until `Maintenance.prune`, which also forgets completed
 * ledger claims, expired idempotency outcomes and memo entries, old quota events and threads
 * last appended to before the cutoff. Audit records
 * have their own retention (`Maintenance.pruneAudit`).
 *
 * @since 0.1.0
 */
import type { CheckpointStore, ConfigurationError, CorruptEntry, StoreError } from "@agentkit/core"
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import type * as Schedule from "effect/Schedule"
import type { DriverNotInstalled, SchemaVersionUnsupported } from "./Errors.js"
import { defaultSchedule, retryFor as internalRetryFor } from "./internal/errors.js"
import * as internal from "./internal/stores.js"

/**
 * The options of every SQL stores layer.
 *
 * - `prefix`: of every table and index name (default `agentkit_`); a-z, 0-9 and `_`.
 * - `schema`: the Postgres schema the tables live in (created when missing); Postgres only.
 * - `migrate`: run the migrations when the layer is built (default true); with false the layer
 *   only checks that the database is at this release's version.
 * - `retry`: how transient database failures are retried (default `defaultRetry`).
 * - `busyTimeout`: how long a SQLite write waits for another process's write lock (default 5 s).
 * - `idempotencyRetention`: how long an ended run's idempotent outcomes are kept (default 1 hour).
 * - `memo`: the cache's bound and default TTL (default 10,000 entries, 1 hour).
 *
 * @example
 * ```ts
 * import type { SqlStores } from "@agentkit/sql"
 * import { Schedule } from "effect"
 *
 * const options: SqlStores.Options = { prefix: "support_", retry: Schedule.spaced("100 millis").pipe(Schedule.compose(Schedule.recurs(10))) }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly prefix?: string | undefined
  readonly schema?: string | undefined
  readonly migrate?: boolean | undefined
  readonly retry?: Schedule.Schedule<unknown, StoreError> | undefined
  readonly busyTimeout?: Duration.DurationInput | undefined
  readonly idempotencyRetention?: Duration.DurationInput | undefined
  readonly memo?:
    | { readonly maxEntries?: number | undefined; readonly ttl?: Duration.DurationInput | undefined }
    | undefined
}

/**
 * The options of `layerSqlite`: the database file (created when missing) and the common options.
 *
 * @example
 * ```ts
 * import type { SqlStores } from "@agentkit/sql"
 *
 * const options: SqlStores.SqliteOptions = { filename: "agentkit.db", busyTimeout: "10 seconds" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface SqliteOptions extends Options {
  readonly filename: string
}

/**
 * The options of `layerPg`: the connection URL, the pool's size, and the common options.
 *
 * @example
 * ```ts
 * import type { SqlStores } from "@agentkit/sql"
 * import { Redacted } from "effect"
 *
 * const options: SqlStores.PgOptions = { url: Redacted.make("postgres://app@db.internal/agents"), maxConnections: 10, schema: "agentkit" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface PgOptions extends Options {
  readonly url: string | Redacted.Redacted<string>
  readonly maxConnections?: number | undefined
}

/**
 * How many entries a `prune` forgot, per store.
 *
 * @example
 * ```ts
 * import type { SqlStores } from "@agentkit/sql"
 *
 * const line = (report: SqlStores.PruneReport) => `pruned ${report.runs} runs and ${report.claims} claims`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface PruneReport {
  /** Finished runs (their terminal markers and, for top-level runs, their decisions). */
  readonly runs: number
  /** Completed execution-ledger claims (in-doubt claims always stay). */
  readonly claims: number
  /** Idempotent outcomes past their retention. */
  readonly idempotencyOutcomes: number
  /** Expired memo entries. */
  readonly memoEntries: number
  /** Quota events older than the cutoff. */
  readonly quotaEvents: number
  /** Conversation threads last appended to before the cutoff (a thread a run holds stays). */
  readonly threads: number
}

/**
 * The maintenance operations of the SQL stores:
 *
 * - `prune({ before })`: forgets runs finished before `before` (Unix ms), ledger claims completed
 *   before it, quota events older than it, and every expired idempotency outcome and memo entry.
 *   Running and suspended runs, in-doubt claims and audit records are never touched.
 * - `pruneAudit({ before })`: forgets audit records written before `before` (audit retention is
 *   its own policy).
 * - `claimExpired({ owner, ttlMs, limit })`: takes a batch of top-level runs whose lease is not
 *   live, each with a new lease (token + 1), for a recovery worker that drives them itself. On
 *   Postgres the rows are read `FOR UPDATE SKIP LOCKED`, so concurrent workers get disjoint
 *   batches without waiting on each other.
 * - `tables` and `schemaVersion`: where the stores live and the schema version they run on.
 *
 * @example
 * ```ts
 * import { SqlStores } from "@agentkit/sql"
 * import { Effect } from "effect"
 *
 * const nightly = Effect.gen(function* () {
 *   const maintenance = yield* SqlStores.Maintenance
 *   const now = Date.now()
 *   yield* maintenance.prune({ before: now - 30 * 86_400_000 })
 *   yield* maintenance.pruneAudit({ before: now - 365 * 86_400_000 })
 * })
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export interface MaintenanceService {
  readonly tables: { readonly prefix: string; readonly schema: string | undefined; readonly migrations: string }
  readonly schemaVersion: number
  readonly prune: (options: { readonly before: number }) => Effect.Effect<PruneReport, StoreError | CorruptEntry>
  readonly pruneAudit: (options: { readonly before: number }) => Effect.Effect<number, StoreError>
  readonly claimExpired: (options: {
    readonly owner: string
    readonly ttlMs: number
    readonly limit?: number | undefined
    readonly status?: "running" | "suspended" | undefined
    readonly agent?: string | undefined
    readonly tenant?: string | undefined
  }) => Effect.Effect<
    ReadonlyArray<{ readonly lease: CheckpointStore.Lease; readonly record: CheckpointStore.RunRecord }>,
    StoreError | CorruptEntry
  >
}

/**
 * The maintenance service's identifier in the context.
 *
 * @example
 * ```ts
 * import type { SqlStores } from "@agentkit/sql"
 * import type { Effect } from "effect"
 *
 * type NeedsMaintenance = Effect.Effect<void, never, SqlStores.Maintenance>
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export interface Maintenance {
  readonly _: unique symbol
}

/**
 * The maintenance service (provided by every SQL stores layer).
 *
 * @example
 * ```ts
 * import { SqlStores } from "@agentkit/sql"
 * import { Effect } from "effect"
 *
 * const version = Effect.map(SqlStores.Maintenance, (maintenance) => maintenance.schemaVersion)
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export const Maintenance: Context.Tag<Maintenance, MaintenanceService> = internal.Maintenance

/**
 * Everything a SQL stores layer provides: core's store ports (`CheckpointStore`,
 * `ExecutionLedger`, `AuditStore`, `IdempotencyStore`, `MemoStore`), the quota store, and
 * `Maintenance`.
 *
 * @example
 * ```ts
 * import type { SqlStores } from "@agentkit/sql"
 * import type { Layer } from "effect"
 *
 * type StoresLive = Layer.Layer<SqlStores.Stores>
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Stores = internal.Stores

/**
 * The default retry of transient database failures: exponential from 20 ms, doubling, each wait
 * at most 2 s, jittered, for at most 45 s in all (`retryFor("45 seconds")`): a Postgres restart
 * of 30 s is ridden out before an outcome a process knows is lost (and its call found in doubt).
 *
 * @example
 * ```ts
 * import { SqlStores } from "@agentkit/sql"
 *
 * const layer = SqlStores.layerSqlite({ filename: "agentkit.db", retry: SqlStores.defaultRetry })
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultRetry: Schedule.Schedule<unknown, StoreError> = defaultSchedule

/**
 * A retry of transient database failures bounded by `budget` in all (exponential from 20 ms,
 * doubling, each wait at most 2 s, jittered): how long the stores wait out a database that is
 * restarting or unreachable before an operation fails with a `StoreError`.
 *
 * @example
 * ```ts
 * import { SqlStores } from "@agentkit/sql"
 *
 * const layer = SqlStores.layerSqlite({ filename: "agentkit.db", retry: SqlStores.retryFor("2 minutes") })
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const retryFor: (budget: Duration.DurationInput) => Schedule.Schedule<unknown, StoreError> = internalRetryFor

/**
 * Makes the stores over the `SqlClient` in the context (running the migrations unless told not
 * to), as a context to provide.
 *
 * @example
 * ```ts
 * import { SqlStores } from "@agentkit/sql"
 * import { Effect, Layer } from "effect"
 *
 * const StoresLive = Layer.effectContext(SqlStores.make({ prefix: "support_" }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options = {}
): Effect.Effect<
  Context.Context<Stores>,
  StoreError | SchemaVersionUnsupported | ConfigurationError,
  SqlClient.SqlClient
> => internal.make(options)

/**
 * The stores over the app's own `SqlClient` (Postgres or SQLite): its pool and its transactions.
 *
 * @example
 * ```ts
 * import { SqlStores } from "@agentkit/sql"
 * import { PgClient } from "@effect/sql-pg"
 * import { Layer, Redacted } from "effect"
 *
 * const SqlLive = PgClient.layer({ url: Redacted.make("postgres://app@db.internal/agents") })
 * const StoresLive = SqlStores.layer({ schema: "agentkit" }).pipe(Layer.provide(SqlLive))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options = {}
): Layer.Layer<Stores, StoreError | SchemaVersionUnsupported | ConfigurationError, SqlClient.SqlClient> =>
  Layer.effectContext(internal.make(options))

/**
 * The stores on an embedded SQLite file (libsql; created when missing; WAL mode), and its
 * `SqlClient` for the app's own use. Needs the optional peers `@libsql/client` and
 * `@effect/sql-libsql` installed (else `DriverNotInstalled`, naming them).
 *
 * @example
 * ```ts
 * import { SqlStores } from "@agentkit/sql"
 * import { Effect } from "effect"
 *
 * const StoresLive = SqlStores.layerSqlite({ filename: "agentkit.db" })
 * const program = Effect.provide(agent.run(task), StoresLive)
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSqlite = (
  options: SqliteOptions
): Layer.Layer<
  Stores | SqlClient.SqlClient,
  StoreError | SchemaVersionUnsupported | ConfigurationError | DriverNotInstalled
> => Layer.provideMerge(layer(options), internal.sqliteClient(options))

/**
 * The stores on Postgres (a pg pool of `maxConnections`, default 10), and its `SqlClient` for the
 * app's own use. Needs the optional peer `@effect/sql-pg` installed (else `DriverNotInstalled`,
 * naming it).
 *
 * @example
 * ```ts
 * import { SqlStores } from "@agentkit/sql"
 * import { Effect, Redacted } from "effect"
 *
 * const StoresLive = SqlStores.layerPg({ url: Redacted.make("postgres://app@db.internal/agents"), schema: "agentkit" })
 * const program = Effect.provide(agent.run(task), StoresLive)
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerPg = (
  options: PgOptions
): Layer.Layer<
  Stores | SqlClient.SqlClient,
  StoreError | SchemaVersionUnsupported | ConfigurationError | DriverNotInstalled
> => Layer.provideMerge(layer(options), internal.pgClient(options))
