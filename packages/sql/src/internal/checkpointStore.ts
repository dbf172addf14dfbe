/**
 * The checkpoint store on SQL: one row per run (only the newest state: a save updates it in
 * place, the version counting on), decisions in their own table. Every write that carries a lease
 * runs in a transaction that first reads the root's row `FOR UPDATE` (Postgres; on SQLite the
 * write transaction holds the database), then checks what the in-memory store checks, in the same
 * order, and writes. Concurrent writers of one run tree are therefore serialized by the database
 * itself, across processes. @internal
 */
import {
  AlreadyDecided,
  CorruptEntry,
  LeaseHeld,
  RunExists,
  RunFinished,
  RunNotFound,
  StaleLease,
  VersionConflict
} from "@agentkit/core"
import type { CheckpointStatus, CheckpointStore, StoreError } from "@agentkit/core"
import type { SqlError } from "@effect/sql/SqlError"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { decodeCursor, decodeWith, encodeCursor, IntColumn, NullableInt, NullableText } from "./codec.js"
import { invalid } from "./errors.js"
import { transaction } from "./tables.js"
import type { Env } from "./tables.js"

const statuses = ["running", "suspended", "done", "failed", "cancelled"] as const
const terminal = ["done", "failed", "cancelled"] as const
const isTerminal = (status: CheckpointStatus): status is "done" | "failed" | "cancelled" =>
  status === "done" || status === "failed" || status === "cancelled"

const RunRow = Schema.Struct({
  run_id: Schema.String,
  root_run_id: Schema.String,
  parent_run_id: NullableText,
  agent: Schema.String,
  tenant: Schema.String,
  thread_id: NullableText,
  status: Schema.Literal(...statuses),
  version: IntColumn.pipe(Schema.compose(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)))),
  state: Schema.String,
  result: NullableText,
  created_at: IntColumn,
  updated_at: IntColumn,
  lease_owner: NullableText,
  lease_token: NullableInt,
  lease_expires_at: NullableInt,
  cancel_by: NullableText,
  cancel_at: NullableInt
}).pipe(
  Schema.filter((row) =>
    (row.lease_owner === null) !== (row.lease_token === null) ||
      (row.lease_owner === null) !== (row.lease_expires_at === null)
      ? "a lease has an owner, a token and an expiry, or none of them"
      : (row.cancel_by === null) !== (row.cancel_at === null)
      ? "a cancellation request has who and when, or neither"
      : undefined
  )
)
type RunRow = Schema.Schema.Type<typeof RunRow>
const decodeRunRow = decodeWith(RunRow)

const DecisionRow = Schema.Struct({
  root_run_id: Schema.String,
  pending_id: Schema.String,
  decision: Schema.String,
  decided_by: NullableText,
  decided_at: IntColumn
})
const decodeDecisionRow = decodeWith(DecisionRow)

const columns =
  "run_id, root_run_id, parent_run_id, agent, tenant, thread_id, status, version, state, result, created_at, updated_at, lease_owner, lease_token, lease_expires_at, cancel_by, cancel_at"

const toRecord = (row: RunRow): CheckpointStore.RunRecord => ({
  runId: row.run_id,
  rootRunId: row.root_run_id,
  parentRunId: row.parent_run_id ?? undefined,
  agent: row.agent,
  tenant: row.tenant,
  threadId: row.thread_id ?? undefined,
  status: row.status,
  version: row.version,
  state: row.state,
  result: row.result ?? undefined,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  lease: row.lease_owner === null
    ? undefined
    : { owner: row.lease_owner, token: row.lease_token!, expiresAt: row.lease_expires_at! },
  cancelRequested: row.cancel_by === null ? undefined : { by: row.cancel_by, at: row.cancel_at! }
})

const live = (row: RunRow, now: number): boolean => row.lease_owner !== null && row.lease_expires_at! > now

const leaseOf = (row: RunRow): CheckpointStore.Lease => ({
  rootRunId: row.run_id,
  owner: row.lease_owner!,
  token: row.lease_token!,
  expiresAt: row.lease_expires_at!
})

const checkTtl = (operation: string, ttlMs: unknown): Effect.Effect<void, StoreError> =>
  typeof ttlMs === "number" && Number.isSafeInteger(Math.ceil(ttlMs)) && ttlMs > 0
    ? Effect.void
    : Effect.fail(invalid(operation, `ttlMs must be a positive number of milliseconds; got ${String(ttlMs)}`))

const readCursor = (order: "asc" | "desc") => (parsed: unknown): readonly [number, string] | undefined =>
  Array.isArray(parsed) &&
    parsed.length === (order === "asc" ? 2 : 3) &&
    (order === "asc" || parsed[2] === "desc") &&
    Number.isSafeInteger(parsed[0]) &&
    typeof parsed[1] === "string"
    ? [parsed[0] as number, parsed[1]]
    : undefined

/**
 * How many run rows the SQL checkpoint stores of this module instance have decoded: a test hook
 * (not public API) that lets a test show a read decodes the rows it needs, not every row.
 */
export const decodes = { rows: 0 }

/** The batch size of `prune`: each batch is its own short transaction. */
const pruneBatch = 500

export const make = (env: Env): CheckpointStore.Service => {
  const { dialect, runner, sql, tables } = env
  const runs = sql(tables.runs)
  const decisionsTable = sql(tables.decisions)
  const cols = sql.literal(columns)

  /** A list query's filters as conditions (each answered by an index on its column and `updated_at`). */
  const filters = (query: CheckpointStore.ListQuery) => [
    ...(query.status === undefined ? [] : [sql`status = ${query.status}`]),
    ...(query.agent === undefined ? [] : [sql`agent = ${query.agent}`]),
    ...(query.tenant === undefined ? [] : [sql`tenant = ${query.tenant}`]),
    ...(query.threadId === undefined ? [] : [sql`thread_id = ${query.threadId}`]),
    ...(query.rootOnly === true || query.leaseExpiredAt !== undefined ? [sql`run_id = root_run_id`] : []),
    ...(query.leaseExpiredAt === undefined
      ? []
      : [sql`(lease_expires_at IS NULL OR lease_expires_at <= ${query.leaseExpiredAt})`]),
    ...(query.updatedBefore === undefined ? [] : [sql`updated_at < ${query.updatedBefore}`]),
    ...(query.updatedAfter === undefined ? [] : [sql`updated_at > ${query.updatedAfter}`]),
    ...(query.rootRunId === undefined ? [] : [sql`root_run_id = ${query.rootRunId}`])
  ]

  const decodeRow = (runId: string, raw: unknown): Effect.Effect<RunRow, CorruptEntry> => {
    decodes.rows++
    const decoded = decodeRunRow(raw)
    return Either.isLeft(decoded)
      ? Effect.fail(new CorruptEntry({ store: "checkpoints", key: runId, detail: decoded.left }))
      : Effect.succeed(decoded.right)
  }

  /** The row of `runId`, read under a row lock inside a transaction when `lock`. */
  const select = (runId: string, lock: boolean): Effect.Effect<RunRow | undefined, SqlError | CorruptEntry> =>
    Effect.flatMap(
      sql`SELECT ${cols} FROM ${runs} WHERE run_id = ${runId}${lock ? dialect.forUpdate : sql.literal("")}`,
      (rows) => (rows.length === 0 ? Effect.succeed(undefined) : decodeRow(runId, rows[0]))
    )
  const found = (runId: string, lock: boolean) =>
    Effect.flatMap(
      select(runId, lock),
      (row) => (row === undefined ? Effect.fail(new RunNotFound({ runId })) : Effect.succeed(row))
    )
  const notFinished = (row: RunRow): Effect.Effect<RunRow, RunFinished> =>
    isTerminal(row.status)
      ? Effect.fail(new RunFinished({ runId: row.run_id, status: row.status }))
      : Effect.succeed(row)

  /** Locks the root of `lease` and reads the record a lease-carrying write targets (RunNotFound when there is none). */
  const leased = (lease: CheckpointStore.Lease, runId: string) =>
    Effect.gen(function*() {
      const root = yield* select(lease.rootRunId, true)
      const row = runId === lease.rootRunId ? root : yield* select(runId, true)
      if (row === undefined) return yield* new RunNotFound({ runId })
      return { row, root }
    })
  /** What the in-memory store checks before a lease-carrying write, in its order: RunFinished, RunNotFound (the root), StaleLease. */
  const writable = (lease: CheckpointStore.Lease, runId: string, row: RunRow, root: RunRow | undefined, now: number) =>
    Effect.gen(function*() {
      yield* notFinished(row)
      if (row.root_run_id !== lease.rootRunId) return yield* new StaleLease({ runId, token: lease.token })
      if (root === undefined) return yield* new RunNotFound({ runId: lease.rootRunId })
      yield* checkLease(lease, runId, root, now)
    })
  const checkLease = (
    lease: CheckpointStore.Lease,
    runId: string,
    root: RunRow,
    now: number
  ): Effect.Effect<void, StaleLease> =>
    live(root, now) && root.lease_token === lease.token && !isTerminal(root.status)
      ? Effect.void
      : Effect.fail(new StaleLease({ runId, token: lease.token }))

  const store: CheckpointStore.Service = {
    create: (run, request) =>
      runner.run("checkpoints.create", (retried) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const isRoot = run.runId === run.rootRunId
          if (isRoot) {
            if (!("ttlMs" in request)) {
              return yield* invalid(
                "checkpoints.create",
                "a top-level run is created with { owner, ttlMs }, not an existing lease"
              )
            }
            yield* checkTtl("checkpoints.create", request.ttlMs)
            const lease: CheckpointStore.Lease = {
              rootRunId: run.runId,
              owner: request.owner,
              token: 1,
              expiresAt: now + request.ttlMs
            }
            const inserted = yield* dialect.beforeWrite.pipe(
              Effect.zipRight(
                sql`INSERT INTO ${runs} (run_id, root_run_id, parent_run_id, agent, tenant, thread_id, status, version, state,
                  created_at, updated_at, lease_owner, lease_token, lease_expires_at)
                VALUES (${run.runId}, ${run.rootRunId}, ${run.parentRunId ?? null}, ${run.agent}, ${run.tenant}, ${
                  run.threadId ?? null
                },
                  'running', 1, ${run.state}, ${now}, ${now}, ${lease.owner}, 1, ${lease.expiresAt})
                ON CONFLICT (run_id) DO NOTHING RETURNING run_id`
              )
            )
            if (inserted.length === 1) return { lease, version: 1 }
            const existing = yield* select(run.runId, false)
            // a retry of an insert that committed before its answer was lost: the record is ours
            if (
              retried && existing !== undefined && existing.version === 1 && existing.lease_owner === request.owner &&
              existing.lease_token === 1 && existing.state === run.state
            ) {
              return { lease: leaseOf(existing), version: 1 }
            }
            return yield* new RunExists({ runId: run.runId })
          }
          if (!("token" in request)) {
            return yield* invalid("checkpoints.create", "a sub-run's record is created under its root's lease")
          }
          return yield* transaction(
            env,
            Effect.gen(function*() {
              const root = yield* select(run.rootRunId, true)
              const existing = yield* select(run.runId, false)
              if (existing !== undefined) {
                if (
                  retried && existing.version === 1 && existing.root_run_id === run.rootRunId &&
                  existing.state === run.state
                ) {
                  return { lease: request, version: 1 }
                }
                return yield* new RunExists({ runId: run.runId })
              }
              if (root === undefined) return yield* new RunNotFound({ runId: run.rootRunId })
              // a finished root's lease ended with it (checkLease refuses a terminal root)
              if (request.rootRunId !== run.rootRunId) {
                return yield* new StaleLease({ runId: run.runId, token: request.token })
              }
              yield* checkLease(request, run.runId, root, now)
              yield* sql`INSERT INTO ${runs} (run_id, root_run_id, parent_run_id, agent, tenant, thread_id, status, version, state, created_at, updated_at)
                VALUES (${run.runId}, ${run.rootRunId}, ${run.parentRunId ?? null}, ${run.agent}, ${run.tenant}, ${
                run.threadId ?? null
              },
                  'running', 1, ${run.state}, ${now}, ${now})`
              return { lease: request, version: 1 }
            })
          )
        })),

    claim: (rootRunId, request: CheckpointStore.LeaseRequest) =>
      runner.run("checkpoints.claim", (retried) =>
        Effect.gen(function*() {
          yield* checkTtl("checkpoints.claim", request.ttlMs)
          const now = yield* Clock.currentTimeMillis
          return yield* transaction(
            env,
            Effect.gen(function*() {
              const row = yield* found(rootRunId, true)
              if (row.run_id !== row.root_run_id) return yield* new RunNotFound({ runId: rootRunId })
              yield* notFinished(row)
              if (live(row, now)) {
                // a retry of a claim that committed before its answer was lost: the lease is ours
                if (retried && row.lease_owner === request.owner) return { lease: leaseOf(row), record: toRecord(row) }
                return yield* new LeaseHeld({
                  runId: rootRunId,
                  owner: row.lease_owner!,
                  expiresAt: row.lease_expires_at!
                })
              }
              const token = (row.lease_token ?? 0) + 1
              const expiresAt = now + request.ttlMs
              yield* sql`UPDATE ${runs} SET lease_owner = ${request.owner}, lease_token = ${token}, lease_expires_at = ${expiresAt}
                WHERE run_id = ${rootRunId}`
              const next: RunRow = {
                ...row,
                lease_owner: request.owner,
                lease_token: token,
                lease_expires_at: expiresAt
              }
              return { lease: leaseOf(next), record: toRecord(next) }
            })
          )
        })),

    save: (lease, request) =>
      runner.run("checkpoints.save", (retried) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          transaction(
            env,
            Effect.gen(function*() {
              const { row, root } = yield* leased(lease, request.runId)
              const version = request.expectedVersion + 1
              // a retry of a save that committed before its answer was lost: the record is that save
              if (retried && row.version === version && row.state === request.state && row.status === request.status) {
                return version
              }
              yield* writable(lease, request.runId, row, root, now)
              if (row.version !== request.expectedVersion) {
                return yield* new VersionConflict({
                  runId: request.runId,
                  expected: request.expectedVersion,
                  actual: row.version
                })
              }
              yield* sql`UPDATE ${runs} SET status = ${request.status}, state = ${request.state}, version = ${version}, updated_at = ${now}
                WHERE run_id = ${request.runId} AND version = ${request.expectedVersion}`
              return version
            })
          ))),

    heartbeat: (lease, ttlMs) =>
      runner.run("checkpoints.heartbeat", () =>
        Effect.gen(function*() {
          yield* checkTtl("checkpoints.heartbeat", ttlMs)
          const now = yield* Clock.currentTimeMillis
          const rows = yield* dialect.beforeWrite.pipe(
            Effect.zipRight(sql`UPDATE ${runs} SET lease_expires_at = ${now + ttlMs}
              WHERE run_id = ${lease.rootRunId} AND status IN ('running', 'suspended') AND lease_token = ${lease.token} AND lease_expires_at > ${now}
              RETURNING ${cols}`)
          )
          if (rows.length === 0) return yield* new StaleLease({ runId: lease.rootRunId, token: lease.token })
          const row = yield* decodeRow(lease.rootRunId, rows[0])
          return { lease: leaseOf(row), cancelRequested: toRecord(row).cancelRequested }
        })),

    release: (lease) =>
      runner.run("checkpoints.release", () =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          dialect.beforeWrite.pipe(
            Effect.zipRight(sql`UPDATE ${runs} SET lease_expires_at = ${now}
              WHERE run_id = ${lease.rootRunId} AND lease_token = ${lease.token} AND lease_expires_at > ${now}`),
            Effect.asVoid
          ))),

    finish: (lease, request) =>
      runner.run("checkpoints.finish", (retried) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          transaction(
            env,
            Effect.gen(function*() {
              const { row, root } = yield* leased(lease, request.runId)
              const version = request.expectedVersion + 1
              // a retry of a finish that committed before its answer was lost
              if (
                retried && row.version === version && row.status === request.status && row.result === request.result
              ) return
              yield* writable(lease, request.runId, row, root, now)
              if (row.version !== request.expectedVersion) {
                return yield* new VersionConflict({
                  runId: request.runId,
                  expected: request.expectedVersion,
                  actual: row.version
                })
              }
              // the lease of a top-level run ends with it
              const leaseEnds = row.lease_expires_at === null ? null : Math.min(row.lease_expires_at, now)
              yield* sql`UPDATE ${runs} SET status = ${request.status}, result = ${request.result}, version = ${version}, updated_at = ${now},
                  lease_expires_at = ${leaseEnds}
                WHERE run_id = ${request.runId} AND version = ${request.expectedVersion}`
            })
          ))),

    load: (runId) =>
      runner.run(
        "checkpoints.load",
        () =>
          Effect.map(select(runId, false), (row) => (row === undefined ? Option.none() : Option.some(toRecord(row))))
      ),

    list: (query: CheckpointStore.ListQuery = {}) =>
      runner.run("checkpoints.list", () =>
        Effect.gen(function*() {
          const limit = query.limit ?? 100
          if (!Number.isSafeInteger(limit) || limit < 1) {
            return yield* invalid("checkpoints.list", `limit must be a positive integer; got ${String(limit)}`)
          }
          const order = query.order ?? "asc"
          if (order !== "asc" && order !== "desc") {
            return yield* invalid("checkpoints.list", `order must be asc or desc; got ${JSON.stringify(order)}`)
          }
          const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, readCursor(order))
          if (query.cursor !== undefined && after === undefined) {
            return yield* invalid(
              "checkpoints.list",
              `cursor ${JSON.stringify(query.cursor)} is not one this store returned`
            )
          }
          if (query.status !== undefined && !statuses.includes(query.status)) {
            return yield* invalid(
              "checkpoints.list",
              `status must be one of ${statuses.join(", ")}; got ${JSON.stringify(query.status)}`
            )
          }
          const where = [
            ...filters(query),
            ...(after === undefined
              ? []
              : order === "asc"
              ? [sql`(updated_at > ${after[0]} OR (updated_at = ${after[0]} AND run_id > ${after[1]}))`]
              : [sql`(updated_at < ${after[0]} OR (updated_at = ${after[0]} AND run_id < ${after[1]}))`])
          ]
          const rows = order === "asc"
            ? yield* sql`SELECT ${cols} FROM ${runs} WHERE ${sql.and(where)} ORDER BY updated_at, run_id LIMIT ${
              limit + 1
            }`
            : yield* sql`SELECT ${cols} FROM ${runs} WHERE ${
              sql.and(where)
            } ORDER BY updated_at DESC, run_id DESC LIMIT ${limit + 1}`
          const page = yield* Effect.forEach(rows.slice(0, limit), (raw) =>
            decodeRow(
              typeof (raw as { run_id?: unknown }).run_id === "string"
                ? (raw as { run_id: string }).run_id
                : "(unreadable id)",
              raw
            ))
          const last = page[page.length - 1]
          return {
            records: page.map(toRecord),
            cursor: rows.length > limit && last !== undefined
              ? encodeCursor(order === "asc" ? [last.updated_at, last.run_id] : [last.updated_at, last.run_id, "desc"])
              : undefined
          }
        })),

    count: (query: CheckpointStore.ListQuery = {}) =>
      runner.run("checkpoints.count", () =>
        Effect.gen(function*() {
          if (query.status !== undefined && !statuses.includes(query.status)) {
            return yield* invalid(
              "checkpoints.count",
              `status must be one of ${statuses.join(", ")}; got ${JSON.stringify(query.status)}`
            )
          }
          const where = filters(query)
          const rows = where.length === 0
            ? yield* sql`SELECT COUNT(*) AS n FROM ${runs}`
            : yield* sql`SELECT COUNT(*) AS n FROM ${runs} WHERE ${sql.and(where)}`
          const n = Number((rows[0] as { n?: unknown } | undefined)?.n)
          if (!Number.isSafeInteger(n) || n < 0) {
            return yield* Effect.fail(
              new CorruptEntry({ store: "checkpoints", key: "(count)", detail: `the count is ${String(n)}` })
            )
          }
          return n
        })),

    decide: (rootRunId, pendingId, decision) =>
      runner.run("checkpoints.decide", (retried) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          transaction(
            env,
            Effect.gen(function*() {
              yield* Effect.flatMap(found(rootRunId, true), notFinished)
              const by = decision.by ?? null
              const inserted =
                yield* sql`INSERT INTO ${decisionsTable} (root_run_id, pending_id, decision, decided_by, decided_at)
                VALUES (${rootRunId}, ${pendingId}, ${decision.decision}, ${by}, ${now})
                ON CONFLICT (root_run_id, pending_id) DO NOTHING RETURNING seq`
              const recorded: CheckpointStore.RecordedDecision = {
                rootRunId,
                pendingId,
                decision: decision.decision,
                by: decision.by,
                at: now
              }
              if (inserted.length === 1) return recorded
              const rows =
                yield* sql`SELECT root_run_id, pending_id, decision, decided_by, decided_at FROM ${decisionsTable}
                WHERE root_run_id = ${rootRunId} AND pending_id = ${pendingId}`
              const first = decodeDecisionRow(rows[0])
              if (Either.isLeft(first)) {
                return yield* new CorruptEntry({
                  store: "decisions",
                  key: `${rootRunId}/${pendingId}`,
                  detail: first.left
                })
              }
              const winner = first.right
              if (retried && winner.decision === decision.decision && winner.decided_by === by) {
                return { ...recorded, at: winner.decided_at }
              }
              return yield* new AlreadyDecided({
                rootRunId,
                pendingId,
                decision: winner.decision,
                by: winner.decided_by ?? undefined
              })
            })
          ))),

    decisions: (rootRunId) =>
      runner.run("checkpoints.decisions", () =>
        Effect.flatMap(
          sql`SELECT root_run_id, pending_id, decision, decided_by, decided_at FROM ${decisionsTable} WHERE root_run_id = ${rootRunId} ORDER BY seq`,
          (rows) =>
            Effect.forEach(rows, (raw) => {
              const decoded = decodeDecisionRow(raw)
              return Either.isLeft(decoded)
                ? Effect.fail(new CorruptEntry({ store: "decisions", key: rootRunId, detail: decoded.left }))
                : Effect.succeed<CheckpointStore.RecordedDecision>({
                  rootRunId: decoded.right.root_run_id,
                  pendingId: decoded.right.pending_id,
                  decision: decoded.right.decision,
                  by: decoded.right.decided_by ?? undefined,
                  at: decoded.right.decided_at
                })
            })
        )),

    requestCancel: (rootRunId, by) =>
      runner.run("checkpoints.requestCancel", () =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const updated = yield* dialect.beforeWrite.pipe(
            Effect.zipRight(sql`UPDATE ${runs} SET cancel_by = ${by}, cancel_at = ${now}
              WHERE run_id = ${rootRunId} AND status IN ('running', 'suspended') AND cancel_by IS NULL RETURNING run_id`)
          )
          if (updated.length === 1) return
          // not updated: unknown, finished, or asked already (the first request stands)
          yield* Effect.flatMap(found(rootRunId, false), notFinished)
        })),

    prune: ({ finishedBefore }) =>
      runner.run("checkpoints.prune", () =>
        Effect.gen(function*() {
          if (!Number.isFinite(finishedBefore)) {
            return yield* invalid(
              "checkpoints.prune",
              `finishedBefore must be a time in Unix ms; got ${String(finishedBefore)}`
            )
          }
          let pruned = 0
          for (;;) {
            const batch = yield* transaction(
              env,
              Effect.gen(function*() {
                const rows = yield* sql<
                  { readonly run_id: string; readonly root_run_id: string }
                >`SELECT run_id, root_run_id FROM ${runs}
                  WHERE status IN ${
                  sql.in(terminal)
                } AND updated_at < ${finishedBefore} ORDER BY updated_at, run_id LIMIT ${pruneBatch}`
                if (rows.length === 0) return 0
                const ids = rows.map((row) => row.run_id)
                const roots = rows.filter((row) => row.run_id === row.root_run_id).map((row) => row.run_id)
                if (roots.length > 0) yield* sql`DELETE FROM ${decisionsTable} WHERE root_run_id IN ${sql.in(roots)}`
                yield* sql`DELETE FROM ${runs} WHERE run_id IN ${sql.in(ids)}`
                return rows.length
              })
            )
            pruned += batch
            if (batch < pruneBatch) return pruned
          }
        }))
  }
  return store
}

/**
 * Takes up to `limit` top-level runs of `status` whose lease is not live, each with a new lease
 * for `owner` (token + 1), in one transaction. On Postgres the rows are read `FOR UPDATE SKIP
 * LOCKED`, so workers calling it at the same time get disjoint batches and never wait on each
 * other; on SQLite the write transaction holds the database.
 */
export const claimExpired = (
  env: Env,
  options: {
    readonly owner: string
    readonly ttlMs: number
    readonly limit?: number | undefined
    readonly status?: "running" | "suspended" | undefined
    readonly agent?: string | undefined
    readonly tenant?: string | undefined
  }
): Effect.Effect<
  ReadonlyArray<{ readonly lease: CheckpointStore.Lease; readonly record: CheckpointStore.RunRecord }>,
  StoreError | CorruptEntry
> => {
  const { dialect, runner, sql, tables } = env
  const runs = sql(tables.runs)
  return runner.run("checkpoints.claimExpired", () =>
    Effect.gen(function*() {
      yield* checkTtl("checkpoints.claimExpired", options.ttlMs)
      const limit = options.limit ?? 10
      if (!Number.isSafeInteger(limit) || limit < 1) {
        return yield* invalid("checkpoints.claimExpired", `limit must be a positive integer; got ${String(limit)}`)
      }
      const now = yield* Clock.currentTimeMillis
      const where = [
        sql`run_id = root_run_id`,
        sql`status = ${options.status ?? "running"}`,
        sql`(lease_expires_at IS NULL OR lease_expires_at <= ${now})`,
        ...(options.agent === undefined ? [] : [sql`agent = ${options.agent}`]),
        ...(options.tenant === undefined ? [] : [sql`tenant = ${options.tenant}`])
      ]
      return yield* transaction(
        env,
        Effect.gen(function*() {
          const rows = yield* sql`SELECT ${sql.literal(columns)} FROM ${runs} WHERE ${sql.and(where)}
            ORDER BY updated_at, run_id LIMIT ${limit}${dialect.forUpdateSkipLocked}`
          return yield* Effect.forEach(rows, (raw) =>
            Effect.gen(function*() {
              const decoded = decodeRunRow(raw)
              if (Either.isLeft(decoded)) {
                return yield* new CorruptEntry({
                  store: "checkpoints",
                  key: String((raw as { run_id?: unknown }).run_id),
                  detail: decoded.left
                })
              }
              const row = decoded.right
              const next: RunRow = {
                ...row,
                lease_owner: options.owner,
                lease_token: (row.lease_token ?? 0) + 1,
                lease_expires_at: now + options.ttlMs
              }
              yield* sql`UPDATE ${runs} SET lease_owner = ${next.lease_owner}, lease_token = ${next.lease_token}, lease_expires_at = ${next.lease_expires_at}
                WHERE run_id = ${row.run_id}`
              return { lease: leaseOf(next), record: toRecord(next) }
            }))
        })
      )
    }))
}
