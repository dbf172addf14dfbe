/**
 * The store's table names (a prefix, and on Postgres a schema) and the few real differences
 * between the two databases, decided once per client. Everything else is one code path. @internal
 */
import { ConfigurationError } from "@agentkit/core"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { Fragment } from "@effect/sql/Statement"
import * as Effect from "effect/Effect"
import type { Runner } from "./errors.js"

/** The tables, each qualified for `sql(name)` (`schema.prefix_name` on Postgres with a schema). */
export interface Tables {
  readonly prefix: string
  readonly schema: string | undefined
  readonly runs: string
  readonly decisions: string
  readonly ledger: string
  readonly audit: string
  readonly idempotency: string
  readonly memo: string
  readonly quotaPartitions: string
  readonly quotaEvents: string
  readonly spans: string
  readonly threads: string
  readonly migrations: string
  /** An index name: unqualified (Postgres puts an index in its table's schema). */
  readonly index: (name: string) => string
}

/** Lower-case SQL identifiers only: they need no quoting rules and read the same on both databases. */
const identifier = /^[a-z_][a-z0-9_]*$/

export const defaultPrefix = "agentkit_"

export const makeTables = (options: {
  readonly prefix?: string | undefined
  readonly schema?: string | undefined
}): Effect.Effect<Tables, ConfigurationError> =>
  Effect.suspend(() => {
    const prefix = options.prefix ?? defaultPrefix
    if (typeof prefix !== "string" || prefix.length > 24 || (prefix !== "" && !identifier.test(prefix))) {
      return Effect.fail(
        new ConfigurationError({
          field: "sqlStores.prefix",
          message:
            `sqlStores.prefix must be at most 24 characters of a-z, 0-9 and _, not starting with a digit (e.g. "agentkit_"); got ${
              JSON.stringify(prefix)
            }`
        })
      )
    }
    const schema = options.schema
    if (schema !== undefined && (typeof schema !== "string" || schema.length > 63 || !identifier.test(schema))) {
      return Effect.fail(
        new ConfigurationError({
          field: "sqlStores.schema",
          message:
            `sqlStores.schema must be a Postgres schema name of a-z, 0-9 and _, not starting with a digit (e.g. "agentkit"); got ${
              JSON.stringify(schema)
            }`
        })
      )
    }
    const name = (table: string) => (schema === undefined ? `${prefix}${table}` : `${schema}.${prefix}${table}`)
    return Effect.succeed({
      prefix,
      schema,
      runs: name("runs"),
      decisions: name("decisions"),
      ledger: name("ledger"),
      audit: name("audit"),
      idempotency: name("idempotency"),
      memo: name("memo"),
      quotaPartitions: name("quota_partitions"),
      quotaEvents: name("quota_events"),
      spans: name("spans"),
      threads: name("threads"),
      migrations: name("migrations"),
      index: (index: string) => `${prefix}${index}`
    })
  })

/** What differs between Postgres and SQLite, and nothing else. */
export interface Dialect {
  readonly name: "pg" | "sqlite"
  /** Row locks inside a transaction (Postgres); SQLite's write transaction locks the database. */
  readonly forUpdate: Fragment
  /** Rows another transaction holds are skipped (Postgres); SQLite has no concurrent writers. */
  readonly forUpdateSkipLocked: Fragment
  /** A text key column compared by code point on both (`COLLATE "C"` on Postgres). */
  readonly keyType: string
  /** An auto-increment primary key. */
  readonly serial: string
  /** "every row after the first n" in a sub-select (`OFFSET n` on Postgres, `LIMIT -1 OFFSET n` on SQLite). */
  readonly offset: (n: number) => Fragment
  /**
   * Run before each write on SQLite: another process holding the write lock makes the write wait
   * up to `busyTimeoutMs` instead of failing at once (a setting of the connection, set again in
   * case a busy failure replaced it). Nothing on Postgres.
   */
  readonly beforeWrite: Effect.Effect<void, SqlError>
}

export const makeDialect = (
  sql: SqlClient.SqlClient,
  busyTimeoutMs: number
): Effect.Effect<Dialect, ConfigurationError> => {
  const name = sql.onDialect({
    pg: () => "pg" as const,
    sqlite: () => "sqlite" as const,
    mysql: () => "mysql" as const,
    mssql: () => "mssql" as const,
    clickhouse: () => "clickhouse" as const
  })
  if (name === "pg") {
    return Effect.succeed({
      name,
      forUpdate: sql.literal(" FOR UPDATE"),
      forUpdateSkipLocked: sql.literal(" FOR UPDATE SKIP LOCKED"),
      keyType: "TEXT COLLATE \"C\"",
      serial: "BIGSERIAL PRIMARY KEY",
      offset: (n) => sql.literal(` OFFSET ${n}`),
      beforeWrite: Effect.void
    })
  }
  if (name === "sqlite") {
    const pragma = sql.unsafe(`PRAGMA busy_timeout = ${busyTimeoutMs}`)
    return Effect.succeed({
      name,
      forUpdate: sql.literal(""),
      forUpdateSkipLocked: sql.literal(""),
      keyType: "TEXT",
      serial: "INTEGER PRIMARY KEY AUTOINCREMENT",
      offset: (n) => sql.literal(` LIMIT -1 OFFSET ${n}`),
      beforeWrite: Effect.asVoid(pragma)
    })
  }
  return Effect.fail(
    new ConfigurationError({
      field: "sqlStores.client",
      message: `the SQL stores run on Postgres or SQLite; the SqlClient given is ${name}`
    })
  )
}

/** What every store is made of: the client (without the app's name transforms), its tables and dialect, the runner. */
export interface Env {
  readonly sql: SqlClient.SqlClient
  readonly tables: Tables
  readonly dialect: Dialect
  readonly runner: Runner
}

/** A write transaction: on SQLite, the busy timeout is set on the connection it will take. */
export const transaction = <A, E, R>(env: Env, body: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> =>
  Effect.zipRight(env.dialect.beforeWrite, env.sql.withTransaction(body))

/**
 * Deletes the rows of `table` matching `where`, a batch of `batch` rows per statement (so a large
 * prune never holds a lock for long); returns how many.
 */
export const deleteInBatches = (
  env: Env,
  table: string,
  keyColumn: string,
  where: Fragment,
  batch = 1000
): Effect.Effect<number, SqlError> => {
  const { sql } = env
  const key = sql(keyColumn)
  const once = Effect.zipRight(
    env.dialect.beforeWrite,
    sql`DELETE FROM ${sql(table)} WHERE ${key} IN (SELECT ${key} FROM ${
      sql(table)
    } WHERE ${where} LIMIT ${batch}) RETURNING ${key}`
  )
  const loop = (total: number): Effect.Effect<number, SqlError> =>
    Effect.flatMap(
      once,
      (rows) => (rows.length < batch ? Effect.succeed(total + rows.length) : loop(total + rows.length))
    )
  return loop(0)
}
