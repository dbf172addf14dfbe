/**
 * The embedded SQLite store leaves the event loop turns. libsql runs a statement synchronously and
 * its promise is already settled, so a stream of statements would go on in microtasks alone and
 * starve the loop's timers: a run's lease heartbeat (a timer) never fired, and under load every
 * lease expired unrenewed. All three tests fail when statements settle in the same turn; the
 * second also fails when a statement inside a transaction gives the loop a turn.
 */
import { Agent, ReActCognition, RunLease } from "@agentkit/agents"
import { CheckpointStore } from "@agentkit/core"
import { FakeLLM, makeTestCtx, Seed, Turn } from "@agentkit/testing"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer, Option } from "effect"
import { sqlite } from "./databases.js"

/** Runs statements on `sql` one after another until `done()` or `limit` of them; how many ran. */
const statementsUntil = (sql: SqlClient.SqlClient, done: () => boolean, limit: number) =>
  Effect.gen(function*() {
    let count = 0
    while (!done() && count < limit) {
      yield* sql`SELECT 1 AS one`
      count++
    }
    return count
  })

describe("SQLite and the event loop", () => {
  it.scopedLive("a timer set before a stream of statements fires while the stream goes on", () =>
    Effect.gen(function*() {
      const place = yield* sqlite.fresh
      const sql = Context.get(yield* Layer.build(place.client), SqlClient.SqlClient)
      let fired = false
      setTimeout(() => (fired = true), 0)
      const limit = 20_000
      const ran = yield* statementsUntil(sql, () => fired, limit)
      // settled in one turn, all 20,000 statements would run before the timer
      expect(fired).toBe(true)
      expect(ran).toBeLessThan(limit)
    }))

  it.scopedLive("a transaction does not give the loop a turn before it ends (the write lock is never held across one)", () =>
    Effect.gen(function*() {
      const place = yield* sqlite.fresh
      const sql = Context.get(yield* Layer.build(place.client), SqlClient.SqlClient)
      yield* sql`CREATE TABLE t (n INTEGER)`
      let fired = false
      setTimeout(() => (fired = true), 0)
      const firedInside = yield* sql.withTransaction(
        Effect.gen(function*() {
          for (let n = 0; n < 3_000; n++) yield* sql`INSERT INTO t (n) VALUES (${n})`
          return fired
        })
      )
      expect(firedInside).toBe(false)
      // after the commit, the loop turns again
      yield* statementsUntil(sql, () => fired, 20_000)
      expect(fired).toBe(true)
      expect(Number((yield* sql<{ count: number | bigint }>`SELECT count(*) AS count FROM t`)[0]!.count)).toBe(3_000)
    }))

  it.scopedLive("a run's lease is renewed while other work keeps the database busy past its time to live", () =>
    Effect.gen(function*() {
      const place = yield* sqlite.fresh
      const context = yield* Layer.build(place.stores())
      const sql = Context.get(context, SqlClient.SqlClient)
      const checkpoints = Context.get(context, CheckpointStore)
      const ttlMs = 800
      // the model answers once another fiber has kept the database busy for twice the lease's ttl
      const busyDone = yield* Deferred.make<void>()
      const llm = FakeLLM.respond(() => Effect.as(Deferred.await(busyDone), Turn({ content: "done" })))
      const agent = Agent.make({
        name: "support",
        model: Seed.MODEL,
        prompt: Seed.PROMPT,
        cognition: ReActCognition.make({ tools: [] })
      })
      const run = yield* agent.run("hello").pipe(
        Effect.provide(
          Layer.mergeAll(
            Layer.succeedContext(context),
            RunLease.layer({ ttl: ttlMs, heartbeat: ttlMs / 4 }),
            makeTestCtx({ llm, runId: "busy" })
          )
        ),
        Effect.fork
      )
      const started = Date.now()
      yield* statementsUntil(sql, () => Date.now() - started > 2 * ttlMs, Number.MAX_SAFE_INTEGER)
      yield* Deferred.succeed(busyDone, undefined)
      const result = yield* Fiber.join(run)
      expect(result.output).toBe("done")
      const record = Option.getOrThrow(yield* checkpoints.load("busy"))
      expect(record.status).toBe("done")
    }))
})
