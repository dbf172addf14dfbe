/**
 * When the database fails: transient failures retried on the schedule (a write whose commit
 * answer was lost recognises its own result; a run that gives up says it stays recoverable, and
 * its committed steps are there), a database that is gone or broken (a typed StoreError, never a
 * defect), corrupt rows (typed errors naming them), and schema versions this release cannot use.
 */
import { AuditStore, CheckpointStore, ExecutionLedger, IdempotencyStore, MemoStore, StoreError } from "@agentkit/core"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { createClient } from "@libsql/client"
import { Cause, Context, Effect, Exit, Layer, Option, Schedule } from "effect"
import { mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { SchemaVersionUnsupported, SqlMigrations, SqlStores } from "../src/index.js"
import { pgClient } from "../src/internal/stores.js"
import { postgresUrl, targets } from "./databases.js"
import type { Place } from "./databases.js"
import { lossy } from "./lossy.js"

const owner = (name: string) => ({ owner: name, ttlMs: 30_000 })
const root = (runId: string) => ({
  runId,
  rootRunId: runId,
  agent: "support",
  tenant: "tenant-a",
  state: `{"run":"${runId}"}`
})

const table = (
  place: Place,
  name: string
) => (place.name === "postgres" ? `${place.options.schema}.agentkit_${name}` : `agentkit_${name}`)

/** The stores of a place, and the place's own client (to plant rows, to look underneath). */
const open = (place: Place, options: SqlStores.Options = {}) =>
  Effect.map(Layer.build(place.stores(options)), (context) => ({
    checkpoints: Context.get(context, CheckpointStore),
    ledger: Context.get(context, ExecutionLedger),
    audit: Context.get(context, AuditStore),
    memo: Context.get(context, MemoStore),
    idempotency: Context.get(context, IdempotencyStore),
    sql: Context.get(context, SqlClient.SqlClient)
  }))

/** Stores over a client that loses answers (the place is migrated first through a plain one). */
const openLossy = (place: Place) =>
  Effect.gen(function*() {
    const plain = yield* open(place)
    const client = lossy(plain.sql)
    const context = yield* Layer.build(
      SqlStores.layer({ ...place.options, retry: Schedule.recurs(3) }).pipe(
        Layer.provide(Layer.succeed(SqlClient.SqlClient, client.client))
      )
    )
    return {
      ...plain,
      lossy: client,
      checkpoints: Context.get(context, CheckpointStore),
      ledger: Context.get(context, ExecutionLedger)
    }
  })

/** The typed failure of an effect that must fail without a defect. */
const failure = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.exit(self), (exit) => {
    if (Exit.isSuccess(exit)) throw new Error(`expected a failure; got ${JSON.stringify(exit.value)}`)
    const defects = Cause.defects(exit.cause)
    if (defects.length > 0) {
      throw new Error(`expected a typed failure; got a defect: ${String(defects.pipe((d) => [...d])[0])}`)
    }
    return Option.getOrThrow(Cause.failureOption(exit.cause))
  })

for (const target of targets) {
  describe(`failures on ${target.name}`, () => {
    it.scoped("a save, a finish, a decision and a claim whose commit answer was lost are retried and recognise their own result", () =>
      Effect.gen(function*() {
        const stores = yield* openLossy(yield* target.fresh)
        const { checkpoints, ledger } = stores
        const { lease } = yield* checkpoints.create(root("r"), owner("a"))
        stores.lossy.loseTransactions(1)
        expect(
          yield* checkpoints.save(lease, { runId: "r", expectedVersion: 1, status: "running", state: "{\"step\":2}" })
        ).toBe(2)
        stores.lossy.loseTransactions(1)
        const decided = yield* checkpoints.decide("r", "p-1", { decision: "{\"verdict\":\"approve\"}", by: "alice" })
        expect([decided.by, decided.decision]).toEqual(["alice", "{\"verdict\":\"approve\"}"])
        stores.lossy.loseTransactions(1)
        yield* checkpoints.finish(lease, {
          runId: "r",
          expectedVersion: 2,
          status: "done",
          result: "{\"output\":\"ok\"}"
        })
        const record = Option.getOrThrow(yield* checkpoints.load("r"))
        expect([record.status, record.version, record.result]).toEqual(["done", 3, "{\"output\":\"ok\"}"])
        // a claim of a released run, and a ledger claim (a single statement)
        const other = yield* checkpoints.create(root("s"), owner("a"))
        yield* checkpoints.release(other.lease)
        stores.lossy.loseTransactions(1)
        const taken = yield* checkpoints.claim("s", owner("b"))
        expect([taken.lease.owner, taken.lease.token]).toEqual(["b", 2])
        stores.lossy.loseStatement(/INSERT INTO .* \(entry_key, digest, claim_id, claimed_at\)/s)
        expect((yield* ledger.claim("s/t0/c0", "d"))._tag).toBe("Claimed")
        stores.lossy.loseStatement(
          /INSERT INTO .* \(run_id, root_run_id, parent_run_id, agent, tenant, thread_id, status, version, state,/s
        )
        expect((yield* checkpoints.create(root("t"), owner("c"))).lease).toMatchObject({ owner: "c", token: 1 })
        expect(stores.lossy.lost()).toBe(6)
        // and a second claim of the same call, by anyone, is in doubt: the first one stands
        expect((yield* ledger.claim("s/t0/c0", "d"))._tag).toBe("InDoubt")
      }))

    it.scoped("a store that keeps failing gives up with a StoreError that says so; the committed steps are kept and the run recovers", () =>
      Effect.gen(function*() {
        const stores = yield* openLossy(yield* target.fresh)
        const { checkpoints } = stores
        const { lease } = yield* checkpoints.create(root("r"), owner("a"))
        yield* checkpoints.save(lease, { runId: "r", expectedVersion: 1, status: "running", state: "{\"step\":2}" })
        // every answer lost: the writes commit, but the caller cannot know; four attempts, then it gives up
        stores.lossy.loseTransactions(4)
        const error = yield* failure(
          checkpoints.save(lease, { runId: "r", expectedVersion: 2, status: "running", state: "{\"step\":3}" })
        )
        // the first attempt committed; the retries saw their own write: they recognise it on the next try
        expect(error).toBeInstanceOf(StoreError)
        expect((error as StoreError).retryable).toBe(true)
        expect((error as StoreError).message).toMatch(
          /^checkpoints\.save: .*ECONNRESET.*; gave up after 4 attempts: nothing was half-written: what was committed is kept, and the run stays recoverable/
        )
        const record = Option.getOrThrow(yield* checkpoints.load("r"))
        expect([record.version, record.state]).toEqual([3, "{\"step\":3}"])
        // the store answers again: the run goes on from what was committed
        yield* checkpoints.save(lease, { runId: "r", expectedVersion: 3, status: "running", state: "{\"step\":4}" })
        expect(Option.getOrThrow(yield* checkpoints.load("r")).version).toBe(4)
      }))

    it.scoped("corrupt rows: typed errors naming the entry; the sound rows next to them read fine", () =>
      Effect.gen(function*() {
        const place = yield* target.fresh
        const { audit, checkpoints, idempotency, ledger, memo, sql } = yield* open(place)
        yield* checkpoints.create(root("good"), owner("a"))
        // a lease with an owner but no token or expiry
        yield* sql`INSERT INTO ${
          sql(table(place, "runs"))
        } (run_id, root_run_id, agent, tenant, status, version, state, created_at, updated_at, lease_owner)
          VALUES ('half-lease', 'half-lease', 'support', 't', 'running', 1, '{}', 0, 0, 'someone')`
        const halfLease = yield* failure(checkpoints.load("half-lease"))
        expect(halfLease).toMatchObject({ _tag: "CorruptEntry", store: "checkpoints", key: "half-lease" })
        expect((halfLease as { message: string }).message).toContain(
          "a lease has an owner, a token and an expiry, or none of them"
        )
        // a version below 1
        yield* sql`INSERT INTO ${
          sql(table(place, "runs"))
        } (run_id, root_run_id, agent, tenant, status, version, state, created_at, updated_at)
          VALUES ('v0', 'v0', 'support', 't', 'running', 0, '{}', 0, 0)`
        expect(yield* failure(checkpoints.claim("v0", owner("b")))).toMatchObject({ _tag: "CorruptEntry", key: "v0" })
        expect(Option.getOrThrow(yield* checkpoints.load("good")).state).toBe("{\"run\":\"good\"}")
        // a ledger outcome that is not the JSON of an outcome
        yield* sql`INSERT INTO ${
          sql(table(place, "ledger"))
        } (entry_key, digest, claim_id, claimed_at, outcome, completed_at) VALUES ('k', 'd', 'c', 0, '{"text":1}', 0)`
        const ledgerError = yield* failure(ledger.claim("k", "d"))
        expect(ledgerError).toMatchObject({ _tag: "StoreError", retryable: false })
        expect((ledgerError as StoreError).message).toMatch(/^ledger\.claim: ledger entry 'k' is corrupt: /)
        // an audit record, a memo response and an idempotent outcome that do not decode
        yield* audit.append({
          runId: "r",
          tenant: "t",
          tool: "x",
          callId: "c1",
          decision: "executed",
          argHash: "h",
          at: 1
        })
        yield* sql`INSERT INTO ${
          sql(table(place, "audit"))
        } (run_id, tenant, tool, call_id, decision, at, record) VALUES ('r', 't', 'x', 'c2', 'executed', 2, 'not json')`
        expect((yield* failure(audit.list({ runId: "r" }))) as StoreError).toMatchObject({
          message: expect.stringMatching(/^audit\.list: audit record \d+ is corrupt: /)
        })
        yield* sql`INSERT INTO ${
          sql(table(place, "memo"))
        } (entry_key, response, expires_at, used_seq) VALUES ('m', '{"content":"x"}', 9007199254740991, 1)`
        expect((yield* failure(memo.get("m"))) as StoreError).toMatchObject({
          message: expect.stringMatching(/^memo\.get: entry 'm' is corrupt: /)
        })
        yield* sql`INSERT INTO ${
          sql(table(place, "idempotency"))
        } (entry_key, run_id, outcome, written_at) VALUES ('i', 'r', '[]', 0)`
        expect((yield* failure(idempotency.get("i"))) as StoreError).toMatchObject({
          message: expect.stringMatching(/^idempotency\.get: entry 'i' is corrupt: /)
        })
      }))

    it.scoped("a database of a newer schema version: SchemaVersionUnsupported naming both versions; nothing runs, nothing changes", () =>
      Effect.gen(function*() {
        const place = yield* target.fresh
        const { checkpoints, sql } = yield* open(place)
        yield* checkpoints.create(root("r"), owner("a"))
        yield* sql`INSERT INTO ${sql(table(place, "migrations"))} (migration_id, name) VALUES (${
          SqlMigrations.latest + 1
        }, 'from_a_later_release')`
        const refused = yield* failure(Layer.build(place.stores()))
        expect(refused).toBeInstanceOf(SchemaVersionUnsupported)
        expect(refused).toMatchObject({ found: SqlMigrations.latest + 1, supported: SqlMigrations.latest })
        expect((refused as SchemaVersionUnsupported).message).toContain(
          `newer than this @agentkit/sql supports (${SqlMigrations.latest}): upgrade @agentkit/sql; nothing was run or changed`
        )
        expect(yield* failure(SqlMigrations.run(place.options).pipe(Effect.provideService(SqlClient.SqlClient, sql))))
          .toMatchObject({ found: SqlMigrations.latest + 1 })
        const rows = yield* sql<{ readonly migration_id: unknown }>`SELECT migration_id FROM ${
          sql(table(place, "migrations"))
        } ORDER BY migration_id`
        // the migrations of this release, then the later one: nothing was added
        const ids = rows.map((row) => Number(row.migration_id))
        expect(ids.slice(-2)).toEqual([SqlMigrations.latest, SqlMigrations.latest + 1])
        expect(Option.getOrThrow(yield* checkpoints.load("r")).version).toBe(1)
      }))

    it.scoped("migrations run out of band: an older database is refused by a layer that may not migrate, until SqlMigrations.run brings it up", () =>
      Effect.gen(function*() {
        const place = yield* target.fresh
        const run = (options: SqlMigrations.Options) =>
          SqlMigrations.run({ ...place.options, ...options }).pipe(Effect.provide(place.client))
        expect(yield* run({ upTo: 1 })).toEqual([[1, "runs_decisions_ledger_audit"]])
        expect(yield* SqlMigrations.version(place.options).pipe(Effect.provide(place.client))).toBe(1)
        const refused = yield* failure(Layer.build(place.stores({ migrate: false })))
        expect(refused).toMatchObject({ _tag: "SchemaVersionUnsupported", found: 1, supported: SqlMigrations.latest })
        expect((refused as SchemaVersionUnsupported).message).toContain(
          `needs version ${SqlMigrations.latest}: run the migrations first`
        )
        // two deploy steps at once: the database serializes them, each migration is applied once
        const [a, b] = yield* Effect.all([run({}), run({})], { concurrency: 2 })
        const applied = [...a, ...b].sort(([x], [y]) => x - y)
        expect(applied.slice(0, 3)).toEqual([[2, "idempotency_memo_quota"], [3, "spans"], [4, "span_tenants"]])
        expect(applied).toContainEqual([6, "threads"])
        expect(new Set(applied.map(([id]) => id)).size).toBe(applied.length)
        expect(applied.at(-1)?.[0]).toBe(SqlMigrations.latest)
        expect(yield* run({})).toEqual([])
        const { checkpoints } = yield* open(place, { migrate: false })
        yield* checkpoints.create(root("r"), owner("a"))
      }))
  })
}

describe("a database that is gone", () => {
  it.scoped("SQLite: the file's directory replaced by a file: every operation fails with a typed StoreError, never a defect", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "agentkit-gone-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const context = yield* Layer.build(
        SqlStores.layerSqlite({ filename: join(dir, "stores.db"), retry: Schedule.recurs(1) })
      )
      const checkpoints = Context.get(context, CheckpointStore)
      const { lease } = yield* checkpoints.create(root("r"), owner("a"))
      rmSync(dir, { recursive: true, force: true })
      writeFileSync(dir, "not a directory")
      // the connection open at the time may still reach the deleted file once; the next ones cannot
      const outcomes = yield* Effect.forEach(
        [
          checkpoints.save(lease, { runId: "r", expectedVersion: 1, status: "running", state: "{}" }),
          checkpoints.load("r"),
          checkpoints.save(lease, { runId: "r", expectedVersion: 2, status: "running", state: "{}" }),
          checkpoints.list({})
        ] as ReadonlyArray<Effect.Effect<unknown, unknown>>,
        (operation) => Effect.exit(operation)
      )
      for (const exit of outcomes) if (Exit.isFailure(exit)) expect(Cause.defects(exit.cause).length).toBe(0)
      const failures = outcomes.flatMap((
        exit
      ) => (Exit.isFailure(exit) ? [Option.getOrThrow(Cause.failureOption(exit.cause))] : []))
      expect(failures.length).toBeGreaterThanOrEqual(2)
      for (const error of failures) {
        expect(error).toBeInstanceOf(StoreError)
        expect((error as StoreError).message).toMatch(
          /^checkpoints\.(load|save|list): .*(unable to open|SQLITE_CANTOPEN)/i
        )
        // the database named by its path, the cause in words
        expect((error as StoreError).message).toContain(join(dir, "stores.db"))
        expect((error as StoreError).message).toContain("could not be opened")
        expect((error as StoreError).message).toContain("the run stays recoverable")
      }
      // and opening it anew is refused the same way, when the layer is built
      expect(yield* failure(Layer.build(SqlStores.layerSqlite({ filename: join(dir, "stores.db") })))).toBeInstanceOf(
        StoreError
      )
    }))

  it.scoped("SQLite: a file that is not a database: the layer is refused with a typed error", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "agentkit-notdb-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      writeFileSync(
        join(dir, "stores.db"),
        "this is not a SQLite database, it is a text file that is long enough to have a header".repeat(20)
      )
      const refused = yield* failure(Layer.build(SqlStores.layerSqlite({ filename: join(dir, "stores.db") })))
      expect(refused).toBeInstanceOf(StoreError)
      expect((refused as StoreError).message).toMatch(/not a database|SQLITE_NOTADB/i)
    }))

  it.scoped(
    "SQLite: transactions run on the client's one connection: 300 writes leave no connection (file descriptor) behind",
    () =>
      Effect.gen(function*() {
        const dir = mkdtempSync(join(tmpdir(), "agentkit-fds-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
        const filename = join(dir, "stores.db")
        // the descriptors this process holds on the database's files (the file, its -wal and -shm)
        const open = () =>
          readdirSync("/proc/self/fd").filter((fd) => {
            try {
              return readlinkSync(`/proc/self/fd/${fd}`).startsWith(filename)
            } catch {
              return false // closed while listed
            }
          }).length
        const context = yield* Layer.build(SqlStores.layerSqlite({ filename }))
        const checkpoints = Context.get(context, CheckpointStore)
        const { lease } = yield* checkpoints.create(root("r"), owner("a"))
        const before = open()
        expect(before).toBeGreaterThan(0)
        for (let version = 1; version <= 300; version++) {
          expect(
            yield* checkpoints.save(lease, {
              runId: "r",
              expectedVersion: version,
              status: "running",
              state: `{"step":${version}}`
            })
          ).toBe(version + 1)
        }
        expect(open()).toBe(before)
        expect(Option.getOrThrow(yield* checkpoints.load("r")).version).toBe(301)
      }),
    120_000
  )

  it.scoped("SQLite: another process holds the write lock: the write waits, retried on the schedule, and goes through once it is released", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "agentkit-busy-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const filename = join(dir, "stores.db")
      let retries = 0
      const blocker: { release?: () => Promise<void> } = {}
      // the retry schedule releases the other writer's lock at the second retry: deterministic, no timing
      const schedule = Schedule.recurs(5).pipe(
        Schedule.tapInput(() =>
          Effect.promise(async () => {
            retries++
            if (retries === 2) await blocker.release?.()
          })
        )
      )
      const context = yield* Layer.build(SqlStores.layerSqlite({ filename, busyTimeout: "0 millis", retry: schedule }))
      const checkpoints = Context.get(context, CheckpointStore)
      const { lease } = yield* checkpoints.create(root("r"), owner("a"))
      const other = createClient({ url: pathToFileURL(filename).href })
      yield* Effect.addFinalizer(() => Effect.sync(() => other.close()))
      const transaction = yield* Effect.promise(() => other.transaction("write"))
      blocker.release = async () => transaction.rollback()
      expect(
        yield* checkpoints.save(lease, { runId: "r", expectedVersion: 1, status: "running", state: "{\"step\":2}" })
      ).toBe(2)
      expect(retries).toBe(2)
      // held for good: the schedule gives up, typed, and nothing was written
      const again = yield* Effect.promise(() => other.transaction("write"))
      retries = 10
      const error = yield* failure(
        checkpoints.save(lease, { runId: "r", expectedVersion: 2, status: "running", state: "{\"step\":3}" })
      )
      expect((error as StoreError).message).toMatch(/SQLITE_BUSY.*gave up after 6 attempts/s)
      // a single-statement write (the heartbeat) meets the lock too
      expect(yield* failure(checkpoints.heartbeat(lease, 30_000))).toMatchObject({
        _tag: "StoreError",
        retryable: true
      })
      yield* Effect.promise(() => again.rollback())
      expect(Option.getOrThrow(yield* checkpoints.load("r")).state).toBe("{\"step\":2}")
      // nothing is wedged by the busy failures: the run goes on from what was committed
      yield* checkpoints.heartbeat(lease, 30_000)
      expect(
        yield* checkpoints.save(lease, { runId: "r", expectedVersion: 2, status: "running", state: "{\"step\":3}" })
      ).toBe(3)
      expect(Option.getOrThrow(yield* checkpoints.load("r")).state).toBe("{\"step\":3}")
    }))

  if (postgresUrl !== undefined) {
    it.scoped("Postgres: the database dropped under the running stores: a typed StoreError after the retries, never a defect; unreachable at start: refused typed", () =>
      Effect.gen(function*() {
        const admin = yield* Layer.build(pgClient({ url: postgresUrl!, maxConnections: 1 }))
        const sql = Context.get(admin, SqlClient.SqlClient)
        const name = `gone_${process.pid}_${Date.now().toString(36)}`
        yield* sql.unsafe(`CREATE DATABASE "${name}"`)
        yield* Effect.addFinalizer(() => Effect.ignore(sql.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)))
        const url = postgresUrl!.replace(/\/[^/?]*(\?|$)/, `/${name}$1`)
        const context = yield* Layer.build(SqlStores.layerPg({ url, retry: Schedule.recurs(2) }))
        const checkpoints = Context.get(context, CheckpointStore)
        const { lease } = yield* checkpoints.create(root("r"), owner("a"))
        yield* sql.unsafe(`DROP DATABASE "${name}" WITH (FORCE)`)
        for (
          const operation of [
            checkpoints.save(lease, { runId: "r", expectedVersion: 1, status: "running", state: "{}" }),
            checkpoints.load("r")
          ] as ReadonlyArray<Effect.Effect<unknown, unknown>>
        ) {
          const error = yield* failure(operation)
          expect(error).toBeInstanceOf(StoreError)
          // the server named (host, port, database), never a password; the cause in words
          expect((error as StoreError).message).toMatch(/^checkpoints\.(save|load): the Postgres server /)
          expect((error as StoreError).message).toContain(`${new URL(url).hostname}:${new URL(url).port}/${name}`)
          expect((error as StoreError).message).toContain(`database "${name}" does not exist`)
          expect((error as StoreError).message).not.toContain(new URL(url).password || "\u0000")
          expect((error as StoreError).message).toContain("the run stays recoverable")
        }
        const unreachable = yield* failure(
          Layer.build(SqlStores.layerPg({ url: "postgres://nobody@127.0.0.1:1/none" }))
        )
        expect(unreachable).toMatchObject({ _tag: "StoreError", operation: "open", retryable: true })
        expect((unreachable as StoreError).message).toMatch(
          /^open: the Postgres server 127\.0\.0\.1:1\/none: .*ECONNREFUSED/
        )
      }))
  }
})
