/**
 * The stores' schema, as `@effect/sql` migrations run by the dialect-neutral `Migrator` (it needs
 * only the `SqlClient`), and the version check that refuses a database written by a newer
 * release before anything runs. Column types are the ones both databases share (TEXT, BIGINT);
 * JSON is canonical text, never JSONB. @internal
 */
import { StoreError } from "@agentkit/core"
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { SchemaVersionUnsupported } from "../Errors.js"
import { decodeWith, NullableInt } from "./codec.js"
import type { Runner } from "./errors.js"
import type { Dialect, Tables } from "./tables.js"

/** The schema version this release works with: the id of its newest migration. */
export const latest = 6

type Statements = ReadonlyArray<string>

const statements = (
  t: Tables,
  d: Dialect
): Record<number, { readonly name: string; readonly statements: Statements }> => {
  const key = d.keyType
  const q = (
    name: string
  ) => (t.schema === undefined ? `"${name}"` : `"${t.schema}"."${name.slice(t.schema.length + 1)}"`)
  return {
    1: {
      name: "runs_decisions_ledger_audit",
      statements: [
        `CREATE TABLE ${q(t.runs)} (
          run_id ${key} PRIMARY KEY,
          root_run_id ${key} NOT NULL,
          parent_run_id ${key},
          agent ${key} NOT NULL,
          tenant ${key} NOT NULL,
          thread_id TEXT,
          status TEXT NOT NULL,
          version BIGINT NOT NULL,
          state TEXT NOT NULL,
          result TEXT,
          created_at BIGINT NOT NULL,
          updated_at BIGINT NOT NULL,
          lease_owner TEXT,
          lease_token BIGINT,
          lease_expires_at BIGINT,
          cancel_by TEXT,
          cancel_at BIGINT
        )`,
        `CREATE INDEX ${t.index("runs_updated")} ON ${q(t.runs)} (updated_at, run_id)`,
        `CREATE INDEX ${t.index("runs_status")} ON ${q(t.runs)} (status, updated_at, run_id)`,
        `CREATE INDEX ${t.index("runs_tenant")} ON ${q(t.runs)} (tenant, updated_at, run_id)`,
        `CREATE INDEX ${t.index("runs_agent")} ON ${q(t.runs)} (agent, updated_at, run_id)`,
        `CREATE INDEX ${t.index("runs_root")} ON ${q(t.runs)} (root_run_id)`,
        `CREATE TABLE ${q(t.decisions)} (
          seq ${d.serial},
          root_run_id ${key} NOT NULL,
          pending_id ${key} NOT NULL,
          decision TEXT NOT NULL,
          decided_by TEXT,
          decided_at BIGINT NOT NULL,
          UNIQUE (root_run_id, pending_id)
        )`,
        `CREATE TABLE ${q(t.ledger)} (
          entry_key ${key} PRIMARY KEY,
          digest TEXT NOT NULL,
          claim_id TEXT NOT NULL,
          claimed_at BIGINT NOT NULL,
          outcome TEXT,
          completed_at BIGINT
        )`,
        `CREATE INDEX ${t.index("ledger_completed")} ON ${q(t.ledger)} (completed_at)`,
        `CREATE TABLE ${q(t.audit)} (
          seq ${d.serial},
          run_id ${key} NOT NULL,
          tenant ${key} NOT NULL,
          tool TEXT NOT NULL,
          call_id TEXT NOT NULL,
          decision TEXT NOT NULL,
          at BIGINT NOT NULL,
          record TEXT NOT NULL
        )`,
        `CREATE INDEX ${t.index("audit_run")} ON ${q(t.audit)} (run_id, seq)`,
        `CREATE INDEX ${t.index("audit_tenant")} ON ${q(t.audit)} (tenant, seq)`,
        `CREATE INDEX ${t.index("audit_at")} ON ${q(t.audit)} (at)`
      ]
    },
    2: {
      name: "idempotency_memo_quota",
      statements: [
        `CREATE TABLE ${q(t.idempotency)} (
          entry_key ${key} PRIMARY KEY,
          run_id ${key} NOT NULL,
          outcome TEXT NOT NULL,
          written_at BIGINT NOT NULL,
          expires_at BIGINT
        )`,
        `CREATE INDEX ${t.index("idempotency_run")} ON ${q(t.idempotency)} (run_id)`,
        `CREATE INDEX ${t.index("idempotency_expires")} ON ${q(t.idempotency)} (expires_at)`,
        `CREATE TABLE ${q(t.memo)} (
          entry_key ${key} PRIMARY KEY,
          response TEXT NOT NULL,
          expires_at BIGINT NOT NULL,
          used_seq BIGINT NOT NULL
        )`,
        `CREATE INDEX ${t.index("memo_used")} ON ${q(t.memo)} (used_seq)`,
        `CREATE INDEX ${t.index("memo_expires")} ON ${q(t.memo)} (expires_at)`,
        `CREATE TABLE ${q(t.quotaPartitions)} (
          bucket ${key} PRIMARY KEY,
          touched_at BIGINT NOT NULL
        )`,
        `CREATE TABLE ${q(t.quotaEvents)} (
          seq ${d.serial},
          bucket ${key} NOT NULL,
          at BIGINT NOT NULL,
          requests BIGINT NOT NULL,
          tokens BIGINT NOT NULL,
          cost_nanos BIGINT NOT NULL
        )`,
        `CREATE INDEX ${t.index("quota_events_bucket")} ON ${q(t.quotaEvents)} (bucket, at)`
      ]
    },
    3: {
      name: "spans",
      statements: [
        // one row per finished span, its record as JSON text; trace_key (the run tree's
        // correlation id) is set on the spans that carry it, the rest are found by trace_id
        `CREATE TABLE ${q(t.spans)} (
          seq ${d.serial},
          trace_id ${key} NOT NULL,
          span_id ${key} NOT NULL,
          trace_key ${key},
          started_at BIGINT NOT NULL,
          record TEXT NOT NULL,
          UNIQUE (trace_id, span_id)
        )`,
        `CREATE INDEX ${t.index("spans_key")} ON ${q(t.spans)} (trace_key)`,
        `CREATE INDEX ${t.index("spans_started")} ON ${q(t.spans)} (started_at)`
      ]
    },
    4: {
      name: "span_tenants",
      statements: [
        // the run's tenant, on the spans that name it: a read by tenant shows a trace only when
        // its spans name that tenant and no other (a correlation id is the caller's choice)
        `ALTER TABLE ${q(t.spans)} ADD COLUMN tenant ${key}`,
        `CREATE INDEX ${t.index("spans_tenant")} ON ${q(t.spans)} (tenant)`
      ]
    },
    5: {
      name: "runs_console",
      statements: [
        // the console's queries: a conversation's runs, and a tenant's runs of one status (its inbox)
        `CREATE INDEX ${t.index("runs_thread")} ON ${q(t.runs)} (thread_id, updated_at, run_id)`,
        `CREATE INDEX ${t.index("runs_tenant_status")} ON ${q(t.runs)} (tenant, status, updated_at, run_id)`
      ]
    },
    6: {
      name: "threads",
      statements: [
        // one row per conversation (tenant, thread id): its stored messages as canonical JSON
        // text, and the claim a run holds on it; `tokens` only grows, so no token is given twice
        `CREATE TABLE ${q(t.threads)} (
          tenant ${key} NOT NULL,
          thread_id ${key} NOT NULL,
          messages TEXT NOT NULL,
          version BIGINT NOT NULL,
          last_run_id TEXT,
          updated_at BIGINT NOT NULL,
          tokens BIGINT NOT NULL,
          claim_run_id TEXT,
          claim_owner TEXT,
          claim_token BIGINT,
          claim_expires_at BIGINT,
          PRIMARY KEY (tenant, thread_id)
        )`,
        `CREATE INDEX ${t.index("threads_updated")} ON ${q(t.threads)} (updated_at)`
      ]
    }
  }
}

/** The migrations as `Migrator.fromRecord` takes them (`"<id>_<name>"`), up to `upTo`. */
export const record = (
  sql: SqlClient.SqlClient,
  tables: Tables,
  dialect: Dialect,
  upTo: number = latest
): Record<string, Effect.Effect<void, SqlError>> => {
  const all = statements(tables, dialect)
  const out: Record<string, Effect.Effect<void, SqlError>> = {}
  for (const [id, migration] of Object.entries(all)) {
    if (Number(id) > upTo) continue
    out[`${id}_${migration.name}`] = Effect.forEach(migration.statements, (text) => sql.unsafe(text), { discard: true })
  }
  return out
}

const VersionRow = decodeWith(NullableInt)

/** The newest migration recorded in the database (0 when it has none, or no migrations table). */
export const currentVersion = (
  sql: SqlClient.SqlClient,
  tables: Tables,
  dialect: Dialect
): Effect.Effect<number, SqlError | StoreError> =>
  Effect.gen(function*() {
    const present = dialect.name === "pg"
      ? yield* sql<{ readonly present: boolean }>`SELECT to_regclass(${tables.migrations}) IS NOT NULL AS present`.pipe(
        Effect.map((rows) => rows[0]?.present === true)
      )
      : yield* sql<
        { readonly n: unknown }
      >`SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = ${tables.migrations}`.pipe(
        Effect.map((rows) => Number(rows[0]?.n) > 0)
      )
    if (!present) return 0
    const rows = yield* sql<{ readonly id: unknown }>`SELECT MAX(migration_id) AS id FROM ${sql(tables.migrations)}`
    const decoded = VersionRow(rows[0]?.id ?? null)
    if (decoded._tag === "Left") {
      return yield* new StoreError({
        operation: "migrations",
        message:
          `migrations: the migrations table ${tables.migrations} holds an unreadable migration id: ${decoded.left}`,
        retryable: false
      })
    }
    return decoded.right ?? 0
  })

const ensureSchema = (sql: SqlClient.SqlClient, tables: Tables, dialect: Dialect): Effect.Effect<void, SqlError> =>
  dialect.name !== "pg" || tables.schema === undefined
    ? Effect.void
    : Effect.flatMap(
      sql<
        { readonly n: unknown }
      >`SELECT COUNT(*) AS n FROM information_schema.schemata WHERE schema_name = ${tables.schema}`,
      (
        rows
      ) => (Number(rows[0]?.n) > 0
        ? Effect.void
        : Effect.asVoid(sql.unsafe(`CREATE SCHEMA IF NOT EXISTS "${tables.schema}"`)))
    )

/** A migration that failed inside `Migrator` (it dies with a `MigrationError`) as a typed error. */
const migrationFailure = (cause: Cause.Cause<unknown>): Option.Option<StoreError> =>
  Option.map(
    Option.filter(Cause.dieOption(cause), (defect): defect is Migrator.MigrationError =>
      defect instanceof Migrator.MigrationError),
    (error) =>
      new StoreError({
        operation: "migrations",
        message: `migrations: ${error.message}${
          error.cause === undefined ? "" : `: ${String((error.cause as { message?: unknown }).message ?? error.cause)}`
        }`,
        retryable: false,
        cause: error.cause
      })
  )

/**
 * Brings the database to `upTo` (default: the latest) when `migrate`, else only checks that it is
 * there. A database newer than this release, before or after migrating (another process may have
 * migrated it meanwhile), is refused with `SchemaVersionUnsupported`.
 */
export const run = (
  sql: SqlClient.SqlClient,
  tables: Tables,
  dialect: Dialect,
  runner: Runner,
  options: { readonly migrate: boolean; readonly upTo?: number | undefined }
): Effect.Effect<ReadonlyArray<readonly [id: number, name: string]>, StoreError | SchemaVersionUnsupported> => {
  const upTo = options.upTo ?? latest
  const refuse = (found: number) => new SchemaVersionUnsupported({ table: tables.migrations, found, supported: upTo })
  return runner.run("migrations", () =>
    Effect.gen(function*() {
      const before = yield* currentVersion(sql, tables, dialect)
      if (before > latest || before > upTo) return yield* refuse(before)
      if (!options.migrate) {
        if (before < upTo) return yield* refuse(before)
        return []
      }
      yield* ensureSchema(sql, tables, dialect)
      const applied = yield* Migrator.make({})({
        loader: Migrator.fromRecord(record(sql, tables, dialect, upTo)),
        table: tables.migrations
      }).pipe(
        Effect.provideService(SqlClient.SqlClient, sql),
        Effect.catchTag("MigrationError", (error) =>
          Effect.fail(
            new StoreError({
              operation: "migrations",
              message: `migrations: ${error.message}`,
              retryable: false,
              cause: error.cause
            })
          )),
        Effect.catchAllCause((cause) =>
          Option.match(migrationFailure(cause), {
            onNone: () => Effect.failCause(cause),
            onSome: Effect.fail
          })
        )
      )
      const after = yield* currentVersion(sql, tables, dialect)
      if (after !== upTo) return yield* refuse(after)
      return applied
    }))
}
