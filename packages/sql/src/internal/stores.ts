/**
 * Putting the stores together over one `SqlClient`, and the two convenience clients (libsql for
 * an embedded SQLite file, pg for Postgres), loaded only when asked for. @internal
 */
import {
  AuditStore,
  CheckpointStore,
  ConfigurationError,
  ExecutionLedger,
  IdempotencyStore,
  MemoStore,
  SessionStore,
  StoreError
} from "@agentkit/core"
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Schedule from "effect/Schedule"
import { resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { DriverNotInstalled } from "../Errors.js"
import type { SchemaVersionUnsupported } from "../Errors.js"
import type * as SqlStores from "../SqlStores.js"
import * as Audit from "./auditStore.js"
import * as Checkpoints from "./checkpointStore.js"
import { defaultSchedule, fromSqlError, inWords, makeRunner } from "./errors.js"
import * as Ledger from "./executionLedger.js"
import * as Gate from "./gate.js"
import * as Idempotency from "./idempotencyStore.js"
import * as Libsql from "./libsql.js"
import * as Memo from "./memoStore.js"
import * as Migrations from "./migrations.js"
import * as Quota from "./quotaStore.js"
import * as Sessions from "./sessionStore.js"
import { makeDialect, makeTables } from "./tables.js"
import type { Env } from "./tables.js"

export const millis = (
  field: string,
  input: Duration.DurationInput | undefined,
  fallback: Duration.DurationInput,
  zero: "zero allowed" | "positive" = "positive"
): Effect.Effect<number, ConfigurationError> => {
  const decoded = Duration.decodeUnknown(input ?? fallback)
  const ms = Option.isSome(decoded) && Duration.isFinite(decoded.value) ? Duration.toMillis(decoded.value) : Number.NaN
  return ms > 0 || (ms === 0 && zero === "zero allowed")
    ? Effect.succeed(Math.ceil(ms))
    : Effect.fail(
      new ConfigurationError({
        field,
        message: `${field} must be a ${
          zero === "positive" ? "positive" : "non-negative"
        }, finite duration (e.g. "${fallback}"); got ${String(input)}`
      })
    )
}

/** Where a connection URL points, without its credentials: `host:port/database`. */
const server = (url: string): string => {
  try {
    const parsed = new URL(url)
    return `${parsed.hostname}:${parsed.port === "" ? "5432" : parsed.port}${parsed.pathname}`
  } catch {
    return "(an unparsable URL)"
  }
}

/** Where the clients this package opened point (`the SQLite database <path>`, `the Postgres server <host:port/db>`). */
const places = new WeakMap<object, string>()

/**
 * Where a client points, for error messages: as this package opened it, else from the client's
 * own configuration (a pg client's host, port and database; a libsql client's file), never a
 * password; `undefined` when it does not say.
 */
export const placeOf = (client: SqlClient.SqlClient): string | undefined => {
  const known = places.get(client)
  if (known !== undefined) return known
  const config = (client as { readonly config?: unknown }).config
  if (typeof config !== "object" || config === null) return undefined
  const { database, host, port, url } = config as {
    readonly url?: unknown
    readonly host?: unknown
    readonly port?: unknown
    readonly database?: unknown
  }
  if (typeof host === "string" || typeof database === "string") {
    return `the Postgres server ${typeof host === "string" ? host : "localhost"}:${
      typeof port === "number" ? port : 5432
    }/${typeof database === "string" ? database : ""}`
  }
  const text = Redacted.isRedacted(url) ? Redacted.value(url as Redacted.Redacted<string>) : url
  if (typeof text === "string" || text instanceof URL) {
    const href = String(text)
    if (href.startsWith("file:")) return `the SQLite database ${href.slice("file:".length)}`
    if (/^postgres(ql)?:\/\//.test(href)) return `the Postgres server ${server(href)}`
  }
  return undefined
}

/** The client (without the app's name transforms), the tables, the dialect and the runner. */
export const makeEnv = (options: {
  readonly prefix?: string | undefined
  readonly schema?: string | undefined
  readonly retry?: Schedule.Schedule<unknown, StoreError> | undefined
  readonly busyTimeout?: Duration.DurationInput | undefined
}): Effect.Effect<Env, ConfigurationError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const client = yield* SqlClient.SqlClient
    const sql = client.withoutTransforms()
    const tables = yield* makeTables(options)
    const busyTimeoutMs = yield* millis("sqlStores.busyTimeout", options.busyTimeout, "5 seconds", "zero allowed")
    const dialect = yield* makeDialect(sql, busyTimeoutMs)
    if (dialect.name === "sqlite" && tables.schema !== undefined) {
      return yield* new ConfigurationError({
        field: "sqlStores.schema",
        message: "sqlStores.schema names a Postgres schema; on SQLite keep the stores apart with sqlStores.prefix"
      })
    }
    // SQLite: the stores' operations queue in one gate, in order (see gate.ts)
    return {
      sql,
      tables,
      dialect,
      runner: makeRunner(
        options.retry ?? defaultSchedule,
        dialect.name === "sqlite" ? Gate.make() : undefined,
        placeOf(client)
      )
    }
  })

/** The maintenance service's tag (documented and exported by SqlStores.ts). */
export const Maintenance = Context.GenericTag<SqlStores.Maintenance, SqlStores.MaintenanceService>(
  "@agentkit/sql/SqlStores/Maintenance"
)

export type Stores =
  | CheckpointStore
  | ExecutionLedger
  | AuditStore
  | IdempotencyStore
  | MemoStore
  | Quota.QuotaStore
  | SessionStore.SessionStore
  | SqlStores.Maintenance

export const make = (
  options: SqlStores.Options
): Effect.Effect<
  Context.Context<Stores>,
  StoreError | SchemaVersionUnsupported | ConfigurationError,
  SqlClient.SqlClient
> =>
  Effect.gen(function*() {
    const env = yield* makeEnv(options)
    const retentionMs = yield* millis("sqlStores.idempotencyRetention", options.idempotencyRetention, "1 hour")
    const maxEntries = options.memo?.maxEntries ?? 10_000
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
      return yield* new ConfigurationError({
        field: "sqlStores.memo.maxEntries",
        message: `sqlStores.memo.maxEntries must be a positive integer; got ${String(options.memo?.maxEntries)}`
      })
    }
    const memoTtlMs = yield* millis("sqlStores.memo.ttl", options.memo?.ttl, "1 hour")
    yield* Migrations.run(env.sql, env.tables, env.dialect, env.runner, { migrate: options.migrate ?? true })

    const checkpoints = Checkpoints.make(env)
    const ledger = Ledger.make(env)
    const audit = Audit.make(env)
    const idempotency = Idempotency.make(env, retentionMs)
    const memo = Memo.make(env, { maxEntries, ttlMs: memoTtlMs })
    const quota = Quota.make(env)
    const sessions = Sessions.make(env)
    const maintenance: SqlStores.MaintenanceService = {
      tables: { prefix: env.tables.prefix, schema: env.tables.schema, migrations: env.tables.migrations },
      schemaVersion: Migrations.latest,
      claimExpired: (request) => Checkpoints.claimExpired(env, request),
      prune: ({ before }) =>
        Effect.gen(function*() {
          const runs = yield* checkpoints.prune({ finishedBefore: before })
          const claims = yield* ledger.prune({ before })
          const idempotencyOutcomes = yield* idempotency.prune()
          const memoEntries = yield* memo.prune()
          const quotaEvents = yield* quota.prune({ before })
          const threads = yield* sessions.prune({ before })
          return { runs, claims, idempotencyOutcomes, memoEntries, quotaEvents, threads }
        }),
      pruneAudit: audit.prune
    }
    return Context.make(CheckpointStore, checkpoints).pipe(
      Context.add(ExecutionLedger, ledger),
      Context.add(AuditStore, audit),
      Context.add(IdempotencyStore, idempotency),
      Context.add(MemoStore, memo),
      Context.add(Quota.QuotaStore, quota),
      Context.add(SessionStore.SessionStore, sessions),
      Context.add(Maintenance, maintenance)
    )
  })

/** The driver packages each database needs, with the ranges `@agentkit/sql` declares as its optional peers. */
export const drivers = {
  SQLite: ["@libsql/client@^0.12.0", "@effect/sql-libsql@^0.42.0"],
  Postgres: ["@effect/sql-pg@^0.53.0"]
} as const

/**
 * Whether an import failed because the package itself is not installed (Node: "Cannot find
 * package '<name>' imported from ..."), not because something it imports is missing or broken.
 */
const notInstalled = (name: string, cause: unknown): boolean => {
  if (typeof cause !== "object" || cause === null) return false
  const { code, message } = cause as { readonly code?: unknown; readonly message?: unknown }
  return (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") && typeof message === "string" &&
    (message.includes(`Cannot find package '${name}'`) || message.includes(`Cannot find module '${name}'`))
}

/**
 * A driver package, loaded on first use: a SQLite app never loads pg, a Postgres app never loads
 * libsql, and neither needs the other's installed. A package that is not installed fails with
 * `DriverNotInstalled`, naming it and what to install.
 */
export const load = <A>(
  database: keyof typeof drivers,
  name: string,
  load: () => Promise<A>
): Effect.Effect<A, StoreError | DriverNotInstalled> =>
  Effect.tryPromise({
    try: load,
    catch: (cause) =>
      notInstalled(name, cause)
        ? new DriverNotInstalled({ driver: name, database, install: drivers[database].join(" ") })
        : new StoreError({
          operation: "open",
          message: `open: the driver ${name} could not be loaded: ${String(cause)}`,
          retryable: false,
          cause
        })
  })

const badFilename = (filename: unknown) =>
  new ConfigurationError({
    field: "sqlStores.filename",
    message: typeof filename === "string" && (filename === ":memory:" || filename.startsWith("file:"))
      ? `sqlStores.filename is a path to a database file; got ${
        JSON.stringify(filename)
      } (for stores in memory use the in-memory stores of @agentkit/core: libsql opens a connection per transaction, and each in-memory database would be a new, empty one)`
      : `sqlStores.filename must be a path to a database file (created when missing); got ${JSON.stringify(filename)}`
  })

/**
 * An embedded SQLite database file on libsql (prebuilt: nothing compiles on install), in WAL
 * mode; one client per file in a process (the first open's busy timeout holds).
 */
export const sqliteClient = (options: {
  readonly filename: string
  readonly busyTimeout?: Duration.DurationInput | undefined
}): Layer.Layer<SqlClient.SqlClient, StoreError | ConfigurationError | DriverNotInstalled> =>
  Layer.scoped(
    SqlClient.SqlClient,
    Effect.gen(function*() {
      const filename = options.filename
      if (
        typeof filename !== "string" || filename.trim() === "" || filename === ":memory:" ||
        filename.startsWith("file:") || filename.includes("\0")
      ) {
        return yield* badFilename(filename)
      }
      const busyTimeoutMs = yield* millis("sqlStores.busyTimeout", options.busyTimeout, "5 seconds", "zero allowed")
      const path = resolve(filename)
      return yield* Libsql.shared(
        path,
        Effect.gen(function*() {
          const { createClient } = yield* load("SQLite", "@libsql/client", () => import("@libsql/client"))
          const { LibsqlClient } = yield* load("SQLite", "@effect/sql-libsql", () => import("@effect/sql-libsql"))
          const opened = (cause: unknown) =>
            new StoreError({
              operation: "open",
              message: `open: the SQLite database ${path} could not be opened: ${inWords(cause)}`,
              retryable: false,
              cause
            })
          const live = yield* Effect.acquireRelease(
            Effect.try({
              try: () =>
                Libsql.resilient(() => createClient({ url: pathToFileURL(path).href, intMode: "bigint" }), path),
              catch: opened
            }),
            // a clean close checkpoints the WAL into the database file: a copy of the file alone holds every run
            (client) =>
              Effect.zipRight(
                Effect.promise(() =>
                  client.execute("PRAGMA wal_checkpoint(TRUNCATE)").then(() => undefined, () => undefined)
                ),
                Effect.sync(() => client.close())
              )
          )
          yield* Effect.tryPromise({
            try: async () => {
              await live.execute(`PRAGMA busy_timeout = ${busyTimeoutMs}`)
              await live.execute("PRAGMA journal_mode = WAL")
            },
            catch: opened
          })
          const client = yield* LibsqlClient.make({ liveClient: live }).pipe(Effect.provide(Reactivity.layer))
          places.set(client, `the SQLite database ${path}`)
          return client
        })
      )
    })
  )

/** A Postgres pool on pg. */
export const pgClient = (options: {
  readonly url: string | Redacted.Redacted<string>
  readonly maxConnections?: number | undefined
}): Layer.Layer<SqlClient.SqlClient, StoreError | ConfigurationError | DriverNotInstalled> =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      const url = Redacted.isRedacted(options.url) ? Redacted.value(options.url) : options.url
      if (typeof url !== "string" || !/^postgres(ql)?:\/\//.test(url)) {
        return yield* new ConfigurationError({
          field: "sqlStores.url",
          message: `sqlStores.url must be a postgres:// or postgresql:// connection URL; got ${
            typeof url === "string" ? JSON.stringify(url.replace(/\/\/[^@/]*@/, "//***@")) : String(url)
          }`
        })
      }
      const max = options.maxConnections
      if (max !== undefined && (!Number.isSafeInteger(max) || max < 1)) {
        return yield* new ConfigurationError({
          field: "sqlStores.maxConnections",
          message: `sqlStores.maxConnections must be a positive integer; got ${String(max)}`
        })
      }
      const { PgClient } = yield* load("Postgres", "@effect/sql-pg", () => import("@effect/sql-pg"))
      return Layer.scoped(
        SqlClient.SqlClient,
        Effect.mapBoth(
          PgClient.make({ url: Redacted.make(url), maxConnections: max, applicationName: "@agentkit/sql" }),
          {
            onSuccess: (client) => {
              places.set(client, `the Postgres server ${server(url)}`)
              return client
            },
            onFailure: (
              error
            ) => (error instanceof SqlError ? fromSqlError("open", error, `the Postgres server ${server(url)}`) : error)
          }
        )
      ).pipe(Layer.provide(Reactivity.layer))
    })
  )
