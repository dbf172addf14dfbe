/**
 * Where durable runs execute (experimental): the workflow engine (`ClusterWorkflowEngine`) on one
 * runner over the database the agentkit stores use, or on several Node runners over Postgres; a
 * sweeper fiber; and the process entry point that drains on SIGTERM.
 *
 * - `layerSingle`: one machine, `SingleRunner` with its message and runner storage in the stores'
 *   database (SQLite file or Postgres). On SQLite exactly one runner process per database file:
 *   two live processes with the same runner address would both process the same shards.
 * - `layerCluster`: several machines, `NodeClusterSocket` runners over Postgres (runners talk over
 *   TCP; shard locks in the database). The lock expiry bounds how long a dead runner's runs wait
 *   before another runner takes them over (default 35 s; shorter is faster failover but more lock
 *   traffic, and a paused runner may lose its shards).
 *
 * Both need a `SqlClient` (`SqlStores.layerSqlite` / `layerPg` from `@agentkit/sql` provide one,
 * with `intMode: "bigint"` on SQLite, which the cluster's ids need).
 *
 * @since 0.2.0
 * @experimental
 */
import * as ClusterWorkflowEngine from "@effect/cluster/ClusterWorkflowEngine"
import type * as MessageStorage from "@effect/cluster/MessageStorage"
import * as RunnerAddress from "@effect/cluster/RunnerAddress"
import type * as Runners from "@effect/cluster/Runners"
import type * as Sharding from "@effect/cluster/Sharding"
import type * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as SingleRunner from "@effect/cluster/SingleRunner"
import * as Snowflake from "@effect/cluster/Snowflake"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import type { SocketServerError } from "@effect/platform/SocketServer"
import { SqlClient as SqlClientTag } from "@effect/sql/SqlClient"
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import * as Clock from "effect/Clock"
import type { ConfigError } from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import { DurableRuns } from "./DurableRuns.js"

/**
 * What a runner layer provides: the workflow engine and the cluster under it.
 *
 * @example
 * ```ts
 * import type { DurableRunner } from "@agentkit/durable"
 * import type { Layer } from "effect"
 *
 * type Runner = Layer.Layer<DurableRunner.Engine>
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export type Engine = WorkflowEngine | Sharding.Sharding | Runners.Runners | MessageStorage.MessageStorage

/**
 * One runner over the stores' database: `SingleRunner` with SQL message and runner storage.
 * `shardingConfig` passes through (e.g. `runnerAddress`, which on SQLite keys the shard locks: a
 * restarted runner with the same address takes its shards back at once).
 *
 * @example
 * ```ts
 * import { DurableRunner } from "@agentkit/durable"
 * import { SqlStores } from "@agentkit/sql"
 * import { Layer } from "effect"
 *
 * const Runner = DurableRunner.layerSingle().pipe(Layer.provideMerge(SqlStores.layerSqlite({ filename: "agentkit.db" })))
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const layerSingle = (
  options: { readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Type"]> | undefined } = {}
): Layer.Layer<Engine, ConfigError, SqlClient> =>
  ClusterWorkflowEngine.layer.pipe(
    Layer.provideMerge(SingleRunner.layer({ runnerStorage: "sql", shardingConfig: options.shardingConfig }))
  )

/**
 * The options of `layerCluster`.
 *
 * @example
 * ```ts
 * import type { DurableRunner } from "@agentkit/durable"
 *
 * const options: DurableRunner.ClusterOptions = { host: "10.0.0.5", port: 34431, lockExpiration: "10 seconds", lockRefresh: "3 seconds" }
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface ClusterOptions {
  /** This runner's address as other runners reach it. */
  readonly host: string
  readonly port: number
  /** How long a runner's shard locks outlive its last refresh (default 35 seconds). */
  readonly lockExpiration?: Duration.DurationInput | undefined
  /** How often a runner refreshes its locks (default 10 seconds; keep it well under the expiry). */
  readonly lockRefresh?: Duration.DurationInput | undefined
  /** Shards per group (default 300); every runner of a cluster must use the same number. */
  readonly shardsPerGroup?: number | undefined
  /** Further sharding settings, passed through. */
  readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Type"]> | undefined
}

/**
 * One of several runners over Postgres: `NodeClusterSocket` with SQL storage, at `host:port`.
 *
 * @example
 * ```ts
 * import { DurableRunner } from "@agentkit/durable"
 * import { SqlStores } from "@agentkit/sql"
 * import { Layer, Redacted } from "effect"
 *
 * const Runner = DurableRunner.layerCluster({ host: "127.0.0.1", port: 34601, lockExpiration: "6 seconds", lockRefresh: "2 seconds" }).pipe(
 *   Layer.provideMerge(SqlStores.layerPg({ url: Redacted.make(process.env.DATABASE_URL!) }))
 * )
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const layerCluster = (
  options: ClusterOptions
): Layer.Layer<Engine, ConfigError | SocketServerError, SqlClient> =>
  ClusterWorkflowEngine.layer.pipe(
    Layer.provideMerge(
      NodeClusterSocket.layer({
        storage: "sql",
        shardingConfig: {
          ...options.shardingConfig,
          runnerAddress: Option.some(RunnerAddress.make(options.host, options.port)),
          ...(options.lockExpiration === undefined ? {} : { shardLockExpiration: options.lockExpiration }),
          ...(options.lockRefresh === undefined ? {} : { shardLockRefreshInterval: options.lockRefresh }),
          ...(options.shardsPerGroup === undefined ? {} : { shardsPerGroup: options.shardsPerGroup })
        }
      })
    )
  )

/**
 * A process that starts runs and records decisions but runs none (an HTTP front, a console): a
 * client of the Postgres cluster (`NodeClusterSocket` client only, SQL storage). Register no
 * workflow layer in it; `DurableRuns.layer` works over it.
 *
 * @example
 * ```ts
 * import { DurableRunner } from "@agentkit/durable"
 * import { SqlStores } from "@agentkit/sql"
 * import { Layer, Redacted } from "effect"
 *
 * const Front = DurableRunner.layerClient().pipe(Layer.provideMerge(SqlStores.layerPg({ url: Redacted.make(process.env.DATABASE_URL!) })))
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const layerClient = (
  options: {
    readonly shardsPerGroup?: number | undefined
    readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Type"]> | undefined
  } = {}
): Layer.Layer<Engine, ConfigError, SqlClient> =>
  ClusterWorkflowEngine.layer.pipe(
    Layer.provideMerge(
      NodeClusterSocket.layer({
        clientOnly: true,
        storage: "sql",
        shardingConfig: {
          ...options.shardingConfig,
          ...(options.shardsPerGroup === undefined ? {} : { shardsPerGroup: options.shardsPerGroup })
        }
      })
    )
  )

/**
 * The gauge `unconsumedMessages` sets: cluster messages not processed, due, and older than the
 * threshold (monitor this, not only process health: Effect-TS/effect#6248 saw runners look
 * healthy while messages went unconsumed).
 *
 * @example
 * ```ts
 * import { DurableRunner } from "@agentkit/durable"
 * import { Metric } from "effect"
 *
 * const value = Metric.value(DurableRunner.unconsumedGauge)
 * ```
 *
 * @since 0.2.0
 * @category metrics
 */
export const unconsumedGauge = Metric.gauge("agentkit_durable_unconsumed_messages", {
  description: "cluster messages due, unprocessed, older than the threshold"
})

/**
 * Counts the cluster messages that are due (no `deliver_at` in the future), not processed, not
 * of a request already answered (the cluster never reads those again: an interrupt sent after its
 * request ended stays unprocessed for good), and older than `olderThan` (by their snowflake id's
 * timestamp; the oldest 10,000 are looked at), and sets `unconsumedGauge`. `prefix` is the cluster tables' prefix (default `cluster`).
 *
 * @example
 * ```ts
 * import { DurableRunner } from "@agentkit/durable"
 *
 * const stale = DurableRunner.unconsumedMessages({ olderThan: "5 minutes" })
 * ```
 *
 * @since 0.2.0
 * @category metrics
 */
export const unconsumedMessages = (
  options: { readonly olderThan?: Duration.DurationInput | undefined; readonly prefix?: string | undefined } = {}
): Effect.Effect<number, SqlError, SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClientTag
    const now = yield* Clock.currentTimeMillis
    const before = now - Duration.toMillis(Duration.decode(options.olderThan ?? "5 minutes"))
    const table = sql(`${options.prefix ?? "cluster"}_messages`)
    const replies = sql(`${options.prefix ?? "cluster"}_replies`)
    // a message whose request has its final reply is never read again (an interrupt sent after the
    // request ended stays unprocessed for good): not counted
    const rows = yield* sql<
      { readonly id: string | bigint | number; readonly deliver_at: string | bigint | number | null }
    >`
      SELECT m.id, m.deliver_at FROM ${table} m
      WHERE NOT m.processed
      AND NOT EXISTS (SELECT 1 FROM ${replies} r WHERE r.request_id = m.request_id AND r.kind = 0)
      ORDER BY m.id LIMIT 10000`
    let count = 0
    for (const row of rows) {
      const due = row.deliver_at === null || Number(row.deliver_at) <= now
      if (due && Snowflake.timestamp(Snowflake.Snowflake(BigInt(row.id))) < before) count += 1
    }
    yield* Metric.set(unconsumedGauge, count)
    return count
  })

/**
 * A fiber that sweeps every `every` (default 5 seconds) while the layer lives: wakes suspended
 * runs whose entries are all decided and resumes running ones whose lease expired and whose
 * execution is suspended (see `DurableRuns.sweep`). A failed sweep is logged and the next one
 * runs on schedule.
 *
 * @example
 * ```ts
 * import { DurableRunner } from "@agentkit/durable"
 *
 * const Sweeper = DurableRunner.sweeper("2 seconds")
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const sweeper = (every: Duration.DurationInput = "5 seconds"): Layer.Layer<never, never, DurableRuns> =>
  Layer.scopedDiscard(
    Effect.flatMap(DurableRuns, (runs) =>
      runs.sweep.pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("durable sweep failed", cause)),
        Effect.repeat(Schedule.spaced(every)),
        Effect.forkScoped
      ))
  )

/**
 * Runs a runner's layer as the process's main program, until SIGTERM or SIGINT: the signal
 * interrupts it, its scope closes, and the runner releases its shards (graceful drain) before the
 * process exits. Run it with `node` on compiled JavaScript: a signal sent to the `tsx` CLI does
 * not reach the process doing the work.
 *
 * @example
 * ```ts
 * import { DurableRunner } from "@agentkit/durable"
 * import { Layer } from "effect"
 *
 * declare const Runner: Layer.Layer<never>
 * // DurableRunner.launch(Runner)
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const launch = <E>(layer: Layer.Layer<never, E>): void => NodeRuntime.runMain(Layer.launch(layer))
