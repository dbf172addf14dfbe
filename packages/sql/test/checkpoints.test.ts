/**
 * The SQL checkpoint store beyond the contract suite, on every database here: a large listing by
 * cursor, leases handed to concurrent recovery workers, two processes' worth of clients on one
 * database, the app's own transaction and name transforms, prefixes and schemas keeping stores apart.
 */
import { CheckpointStore } from "@agentkit/core"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Either, Layer, Option, TestClock } from "effect"
import { SqlStores } from "../src/index.js"
import { targets } from "./databases.js"
import type { Place } from "./databases.js"

const owner = (name: string) => ({ owner: name, ttlMs: 30_000 })
const root = (runId: string, agent = "support") => ({
  runId,
  rootRunId: runId,
  agent,
  tenant: "tenant-a",
  state: `{"run":"${runId}"}`
})

const open = (place: Place, options?: SqlStores.Options) =>
  Effect.map(Layer.build(place.stores(options)), (context) => ({
    checkpoints: Context.get(context, CheckpointStore),
    maintenance: Context.get(context, SqlStores.Maintenance),
    sql: Context.get(context, SqlClient.SqlClient),
    context
  }))

/** Every record of a listing, page by page. */
const listAll = (
  checkpoints: CheckpointStore.Service,
  query: { readonly status?: "running" | "done"; readonly limit: number }
) =>
  Effect.gen(function*() {
    const seen: Array<{ readonly runId: string; readonly updatedAt: number }> = []
    let cursor: string | undefined
    let pages = 0
    do {
      const page = yield* checkpoints.list({ ...query, cursor })
      expect(page.records.length).toBeLessThanOrEqual(query.limit)
      for (const record of page.records) seen.push({ runId: record.runId, updatedAt: record.updatedAt })
      cursor = page.cursor
      pages++
    } while (cursor !== undefined)
    return { seen, pages }
  })

for (const target of targets) {
  describe(`checkpoints on ${target.name}`, () => {
    it.scopedLive(
      "10,000 runs listed by cursor: every one exactly once, in (updatedAt, runId) order, while new runs arrive",
      () =>
        Effect.gen(function*() {
          const { checkpoints, sql } = yield* open(yield* target.fresh)
          const ids = Array.from({ length: 10_000 }, (_, i) => `run-${String(i).padStart(5, "0")}`)
          // made through the store, 500 to a transaction of the app's (one commit each, not 13,000)
          const chunks = Array.from({ length: 20 }, (_, c) => ids.slice(c * 500, c * 500 + 500))
          yield* Effect.forEach(
            chunks,
            (chunk) =>
              sql.withTransaction(
                Effect.forEach(
                  chunk,
                  (runId) =>
                    Effect.flatMap(checkpoints.create(root(runId), owner("a")), ({ lease }) =>
                      Number(runId.slice(4)) % 3 === 0
                        ? checkpoints.finish(lease, { runId, expectedVersion: 1, status: "done", result: "{}" })
                        : Effect.void),
                  { discard: true }
                )
              ),
            { concurrency: target.name === "postgres" ? 4 : 1, discard: true }
          )
          // runs created while the listing goes on come after every existing one (a later updatedAt)
          const arriving = Effect.forEach(Array.from({ length: 50 }, (_, i) => `late-${i}`), (runId) =>
            checkpoints.create(root(runId), owner("a")), {
            discard: true
          })
          const [{ pages, seen }] = yield* Effect.all([listAll(checkpoints, { limit: 500 }), arriving], {
            concurrency: 2
          })
          const existing = seen.filter((entry) =>
            entry.runId.startsWith("run-")
          )
          expect(existing.length).toBe(10_000)
          expect(new Set(existing.map((entry) => entry.runId)).size).toBe(10_000)
          expect(pages).toBeGreaterThanOrEqual(20)
          for (let i = 1; i < seen.length; i++) {
            const [a, b] = [seen[i - 1]!, seen[i]!]
            expect(
              a.updatedAt < b.updatedAt || (a.updatedAt === b.updatedAt && a.runId < b.runId),
              `${a.runId} before ${b.runId}`
            ).toBe(true)
          }
          // many runs share a millisecond here: the run id breaks the ties
          expect(new Set(existing.map((entry) => entry.updatedAt)).size).toBeLessThan(10_000)
          const done = yield* listAll(checkpoints, { status: "done", limit: 777 })
          expect(done.seen.map((entry) => entry.runId).sort()).toEqual(ids.filter((_, i) => i % 3 === 0))
        }),
      120_000
    )

    it.scoped("claimExpired hands concurrent recovery workers disjoint batches of expired runs, each with a new lease", () =>
      Effect.gen(function*() {
        const place = yield* target.fresh
        const { checkpoints, maintenance } = yield* open(place)
        const ids = Array.from({ length: 30 }, (_, i) => `run-${String(i).padStart(2, "0")}`)
        for (const runId of ids) yield* checkpoints.create(root(runId), { owner: "dead", ttlMs: 1_000 })
        yield* checkpoints.create(root("live"), { owner: "alive", ttlMs: 60_000 })
        const finished = yield* checkpoints.create(root("finished"), { owner: "dead", ttlMs: 1_000 })
        yield* checkpoints.finish(finished.lease, {
          runId: "finished",
          expectedVersion: 1,
          status: "done",
          result: "{}"
        })
        yield* TestClock.adjust(2_000) // past the dead leases

        // on Postgres a second, independent pool on the same database; on SQLite one client per
        // file and process (libsql waits for another connection's write lock synchronously: two
        // clients in one process would wait on each other; other processes are the crash suite's)
        const other = target.name === "postgres" ? yield* open(place) : { maintenance }
        const batches = yield* Effect.all(
          Array.from({ length: 4 }, (_, w) =>
            Effect.gen(function*() {
              const claimed: Array<string> = []
              for (;;) {
                const batch = yield* (w % 2 === 0 ? maintenance : other.maintenance).claimExpired({
                  owner: `worker-${w}`,
                  ttlMs: 30_000,
                  limit: 4
                })
                if (batch.length === 0) return claimed
                for (const { lease, record } of batch) {
                  expect(lease.owner).toBe(`worker-${w}`)
                  expect(lease.token).toBe(2)
                  claimed.push(record.runId)
                }
              }
            })),
          { concurrency: "unbounded" }
        )
        const all = batches.flat()
        expect(all.slice().sort()).toEqual(ids)
        expect(new Set(all).size).toBe(ids.length)
        // the claimed leases are real: the old owner's writes are refused, the new owner's accepted
        const old = yield* Effect.either(
          checkpoints.save({ rootRunId: "run-00", owner: "dead", token: 1, expiresAt: 1_000 }, {
            runId: "run-00",
            expectedVersion: 1,
            status: "running",
            state: "{}"
          })
        )
        expect(Either.isLeft(old) && old.left._tag).toBe("StaleLease")
        const record = Option.getOrThrow(yield* checkpoints.load("run-00"))
        yield* checkpoints.save({
          rootRunId: "run-00",
          owner: record.lease!.owner,
          token: 2,
          expiresAt: record.lease!.expiresAt
        }, {
          runId: "run-00",
          expectedVersion: 1,
          status: "running",
          state: "{\"recovered\":true}"
        })
        expect(Option.getOrThrow(yield* checkpoints.load("live")).lease?.owner).toBe("alive")
        expect(yield* maintenance.claimExpired({ owner: "late", ttlMs: 30_000 })).toEqual([])
      }))

    it.scoped("a store call inside the app's own transaction joins it: rolled back with it", () =>
      Effect.gen(function*() {
        const { checkpoints, sql } = yield* open(yield* target.fresh)
        const attempt = yield* Effect.either(
          sql.withTransaction(
            Effect.gen(function*() {
              yield* checkpoints.create(root("in-tx"), owner("a"))
              expect(Option.isSome(yield* checkpoints.load("in-tx"))).toBe(true)
              return yield* Effect.fail("the app's own failure" as const)
            })
          )
        )
        expect(attempt).toEqual(Either.left("the app's own failure"))
        expect(Option.isNone(yield* checkpoints.load("in-tx"))).toBe(true)
      }))

    it.scoped("the app's client with name transforms (camelCase rows, snake_case queries): the stores read their own columns regardless", () =>
      Effect.gen(function*() {
        const place = yield* target.fresh
        yield* open(place) // migrated by a plain client first
        const stores = yield* Layer.build(SqlStores.layer(place.options).pipe(Layer.provide(place.transformingClient)))
        const checkpoints = Context.get(stores, CheckpointStore)
        yield* checkpoints.create({ ...root("r"), parentRunId: undefined, threadId: "thread-1" }, owner("a"))
        const record = Option.getOrThrow(yield* checkpoints.load("r"))
        expect([record.state, record.threadId, record.rootRunId, record.lease?.owner]).toEqual([
          "{\"run\":\"r\"}",
          "thread-1",
          "r",
          "a"
        ])
        const page = yield* checkpoints.list({ limit: 1 })
        expect(page.records.map((r) => r.runId)).toEqual(["r"])
      }))

    it.scoped("prefixes (and on Postgres, schemas) keep stores apart in one database", () =>
      Effect.gen(function*() {
        const place = yield* target.fresh
        const a = yield* open(place)
        const b = yield* open(place, { prefix: "other_" })
        yield* a.checkpoints.create(root("shared-id"), owner("a"))
        expect(Option.isNone(yield* b.checkpoints.load("shared-id"))).toBe(true)
        yield* b.checkpoints.create({ ...root("shared-id"), state: "{\"b\":1}" }, owner("b"))
        expect(Option.getOrThrow(yield* a.checkpoints.load("shared-id")).state).toBe("{\"run\":\"shared-id\"}")
        expect(Option.getOrThrow(yield* b.checkpoints.load("shared-id")).state).toBe("{\"b\":1}")
        expect(b.maintenance.tables.prefix).toBe("other_")
      }))
  })
}
