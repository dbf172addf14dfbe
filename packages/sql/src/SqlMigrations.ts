/**
 * The SQL stores' migrations, to run out of band: a deploy step runs `SqlMigrations.run` once,
 * and the app's instances build their stores with `migrate: false` (they then only check the
 * version). The migrations run on `@effect/sql`'s dialect-neutral `Migrator`, in one transaction,
 * recorded in `<prefix>migrations`; running them again is a no-op, and two processes running them
 * at once are serialized by the database. A database of a newer schema is refused.
 *
 * @since 0.1.0
 */
import type { ConfigurationError, StoreError } from "@agentkit/core"
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import type * as Schedule from "effect/Schedule"
import type { SchemaVersionUnsupported } from "./Errors.js"
import * as migrations from "./internal/migrations.js"
import { makeEnv } from "./internal/stores.js"

/**
 * The schema version this release works with (the id of its newest migration).
 *
 * @example
 * ```ts
 * import { SqlMigrations } from "@agentkit/sql"
 *
 * SqlMigrations.latest // 4
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const latest: number = migrations.latest

/**
 * Where the migrations run: the table prefix and the Postgres schema (as the stores' layer is
 * given them), how transient failures are retried, and, for upgrade tests and staged rollouts,
 * the version to stop at (default `latest`).
 *
 * @example
 * ```ts
 * import type { SqlMigrations } from "@agentkit/sql"
 *
 * const options: SqlMigrations.Options = { prefix: "support_", schema: "agentkit" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly prefix?: string | undefined
  readonly schema?: string | undefined
  readonly retry?: Schedule.Schedule<unknown, StoreError> | undefined
  readonly upTo?: number | undefined
}

/**
 * Brings the database in the context's `SqlClient` to the schema version (creating the Postgres
 * schema when it is missing); returns the migrations it applied, `[id, name]` in order.
 *
 * @example
 * ```ts
 * import { SqlMigrations } from "@agentkit/sql"
 * import { PgClient } from "@effect/sql-pg"
 * import { Effect, Redacted } from "effect"
 *
 * const deploy = SqlMigrations.run({ schema: "agentkit" }).pipe(
 *   Effect.tap((applied) => Effect.log(`applied ${applied.length} migrations`)),
 *   Effect.provide(PgClient.layer({ url: Redacted.make("postgres://app@db.internal/agents") }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const run = (
  options: Options = {}
): Effect.Effect<
  ReadonlyArray<readonly [id: number, name: string]>,
  StoreError | SchemaVersionUnsupported | ConfigurationError,
  SqlClient.SqlClient
> =>
  Effect.flatMap(
    makeEnv(options),
    (env) => migrations.run(env.sql, env.tables, env.dialect, env.runner, { migrate: true, upTo: options.upTo })
  )

/**
 * The schema version the database is at (0: the stores were never migrated there).
 *
 * @example
 * ```ts
 * import { SqlMigrations } from "@agentkit/sql"
 * import { Effect } from "effect"
 *
 * const upToDate = Effect.map(SqlMigrations.version(), (version) => version === SqlMigrations.latest)
 * ```
 *
 * @since 0.1.0
 * @category getters
 */
export const version = (
  options: Omit<Options, "upTo"> = {}
): Effect.Effect<number, StoreError | ConfigurationError, SqlClient.SqlClient> =>
  Effect.flatMap(
    makeEnv(options),
    (env) => env.runner.run("migrations.version", () => migrations.currentVersion(env.sql, env.tables, env.dialect))
  )
