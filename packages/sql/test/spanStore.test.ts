/**
 * The SQL span store: the span store contract (the suite the in-memory store passes) on every
 * database here, then what only the SQL store does: retention by TTL (on the schedule and by
 * `prune`, under TestClock), the buffer written when the scope closes, bad options refused, and
 * an unreadable row failing with a typed error.
 */
import { ConfigurationError, SpanStore, StoreError, Tracing } from "@agentkit/core"
import { SpanStoreContract } from "@agentkit/testing"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope, TestClock } from "effect"
import { SqlSpanStore } from "../src/index.js"
import type { Place } from "./databases.js"
import { postgresSkipReason, postgresUrl, targets } from "./databases.js"

if (postgresUrl === undefined) console.log(`span store on postgres skipped: ${postgresSkipReason}`)

const open = (place: Place, options: SqlSpanStore.Options = {}) =>
  Effect.map(
    Layer.build(SqlSpanStore.layer({ ...place.options, ...options }).pipe(Layer.provideMerge(place.client))),
    (context) => ({
      store: Context.get(context, SqlSpanStore.SqlSpanStore),
      port: Context.get(context, SpanStore.SpanStore),
      sql: Context.get(context, SqlClient.SqlClient)
    })
  )

const DAY = 86_400_000

const rootSpan = (
  traceId: string,
  key: string,
  startMs: number,
  attributes: SpanStore.SpanRecord["attributes"] = {}
): SpanStore.SpanRecord => ({
  traceId,
  spanId: `${traceId}-root`,
  name: "invoke_agent support",
  startMs,
  durationMs: 1,
  status: "ok",
  attributes: { [Tracing.Attribute.conversationId]: key, ...attributes },
  events: []
})

/** Polls (real database round trips) until `done` holds; the scheduled fibers run meanwhile. */
const eventually = <A, E>(read: Effect.Effect<A, E>, done: (a: A) => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 200; i++) {
      const value = yield* read
      if (done(value)) return value
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
    }
    return yield* read
  })

for (const target of targets) {
  describe(`span store contract on ${target.name}`, () => {
    SpanStoreContract.register(it, {
      name: target.name,
      make: (limits) =>
        Effect.gen(function*() {
          const place = yield* target.fresh
          const { store } = yield* open(place, limits)
          return {
            store,
            settle: Effect.asVoid(store.prune),
            reopen: Effect.map(open(place, limits), ({ store: other }) => other)
          }
        })
    })
  })

  describe(`SQL span store on ${target.name}`, () => {
    it.scoped("retention: prune deletes the traces whose newest span is older than the TTL, keeps the rest (TestClock)", () =>
      Effect.gen(function*() {
        const place = yield* target.fresh
        yield* TestClock.setTime(30 * DAY) // before the store's fibers start: they then wake only as the test moves the clock
        const { store } = yield* open(place, { ttl: "7 days", flushEvery: "1 hour", pruneEvery: "30 days" })
        store.offer(rootSpan("old", "run-old", 20 * DAY))
        store.offer(rootSpan("mixed", "run-mixed", 21 * DAY))
        store.offer({ ...rootSpan("mixed", "run-mixed", 24 * DAY), spanId: "late-child" })
        store.offer(rootSpan("new", "run-new", 29 * DAY))
        expect(yield* store.flush).toBe(4)
        expect(yield* store.prune).toEqual({ expired: 1, keyless: 0, overCap: 0 })
        expect(yield* store.trace("run-old")).toEqual([])
        expect((yield* store.trace("run-mixed")).length).toBe(2) // its newest span is 6 days old: the whole trace stays
        expect((yield* store.trace("run-new")).length).toBe(1)
        yield* TestClock.adjust(`${2 * DAY} millis`)
        expect(yield* store.prune).toEqual({ expired: 2, keyless: 0, overCap: 0 })
        expect(yield* store.trace("run-mixed")).toEqual([])
        expect((yield* store.trace("run-new")).length).toBe(1)
      }))

    it.scoped("keyless traces (no run tree's: the app's own spans) go after keylessTtl, and first when over the cap; keyed ones stay", () =>
      Effect.gen(function*() {
        const place = yield* target.fresh
        yield* TestClock.setTime(10 * DAY)
        const { store } = yield* open(place, {
          ttl: "7 days",
          keylessTtl: "1 hour",
          maxTraces: 3,
          flushEvery: "1 day",
          pruneEvery: "30 days"
        })
        const keyless = (traceId: string, startMs: number): SpanStore.SpanRecord => ({
          ...rootSpan(traceId, "", startMs),
          name: "sql.execute",
          attributes: {}
        })
        store.offer(rootSpan("run-1", "run-1", 10 * DAY - 3 * 3_600_000)) // keyed, 3 h old: stays
        store.offer(keyless("poll-old", 10 * DAY - 2 * 3_600_000)) // keyless, 2 h old: past keylessTtl
        for (let i = 0; i < 4; i++) store.offer(keyless(`poll-${i}`, 10 * DAY - 60_000 + i)) // keyless, newer than run-1
        store.offer(rootSpan("run-2", "run-2", 10 * DAY - 3_600_000 * 5))
        yield* store.flush
        // 1 keyless trace past its TTL; then 6 left for a cap of 3: keyless ones go first (3 of the
        // 4, though all are newer than the run trees), both run trees stay
        expect(yield* store.prune).toEqual({ expired: 0, keyless: 1, overCap: 3 })
        expect((yield* store.trace("run-1")).length).toBe(1)
        expect((yield* store.trace("run-2")).length).toBe(1)
      }))

    it.scoped("retention runs on its schedule: moving the clock past pruneEvery deletes what the TTL no longer covers; the writer flushes on its own", () =>
      Effect.gen(function*() {
        const place = yield* target.fresh
        yield* TestClock.setTime(10 * DAY)
        const { store } = yield* open(place, { ttl: "1 day", pruneEvery: "1 hour", flushEvery: "10 minutes" })
        const reader = yield* open(place, { flushEvery: "1 day", pruneEvery: "30 days" })
        store.offer(rootSpan("a", "run-a", 10 * DAY - 23.5 * 3_600_000)) // 23.5 h old: past the TTL when retention runs at +1 h
        yield* TestClock.adjust("10 minutes") // the writer's turn
        const written = yield* eventually(reader.store.trace("run-a"), (spans) => spans.length === 1)
        expect(written.length).toBe(1)
        yield* TestClock.adjust("1 hour") // retention runs (at +1 h): the span is then 24.5 h old
        const left = yield* eventually(reader.store.trace("run-a"), (spans) => spans.length === 0)
        expect(left).toEqual([])
      }))

    it.scoped("closing the layer's scope writes what is buffered: another store over the database reads it", () =>
      Effect.gen(function*() {
        const place = yield* target.fresh
        const scope = yield* Scope.make()
        const { store } = yield* Scope.extend(open(place, { flushEvery: "1 hour" }), scope)
        store.offer(rootSpan("s", "run-s", 1_000))
        yield* Scope.close(scope, Exit.void)
        const { store: other } = yield* open(place)
        expect((yield* other.trace("run-s")).map((span) => span.spanId)).toEqual(["s-root"])
      }))

    it.scoped("a span offered twice (a retried batch) is stored once; a full buffer drops spans and counts them; offer never throws", () =>
      Effect.gen(function*() {
        const place = yield* target.fresh
        const { store } = yield* open(place, { maxBuffered: 3 })
        const span = rootSpan("d", "run-d", 1_000)
        store.offer(span)
        yield* store.flush
        store.offer(span)
        for (let i = 0; i < 5; i++) store.offer({ ...span, spanId: `extra-${i}` })
        expect(store.dropped()).toBe(3)
        store.offer(null as unknown as SpanStore.SpanRecord) // a broken tracer: counted, not thrown
        expect(store.dropped()).toBe(4)
        yield* store.flush
        expect((yield* store.trace("run-d")).map((s) => s.spanId)).toEqual(["d-root", "extra-0", "extra-1"])
      }))

    it.scoped("an unreadable row fails trace with a StoreError naming it", () =>
      Effect.gen(function*() {
        const place = yield* target.fresh
        const { sql, store } = yield* open(place)
        const table = place.options.schema === undefined ? "agentkit_spans" : `${place.options.schema}.agentkit_spans`
        yield* sql`INSERT INTO ${
          sql(table)
        } (trace_id, span_id, trace_key, started_at, record) VALUES ('x', 'x1', 'run-x', 0, '{"not":"a span"}')`
        const error = yield* Effect.flip(store.trace("run-x"))
        expect(error).toBeInstanceOf(StoreError)
        expect(error.message).toMatch(/^spans\.trace: a stored span of trace 'run-x' is unreadable: /)
      }))

    it.scoped("bad options are refused with a ConfigurationError naming the field, before anything runs", () =>
      Effect.gen(function*() {
        const place = yield* target.fresh
        const refused = (options: SqlSpanStore.Options) => Effect.flip(open(place, options))
        expect(yield* refused({ maxTraces: 0 })).toMatchObject({
          _tag: "ConfigurationError",
          field: "sqlSpanStore.maxTraces"
        })
        expect(yield* refused({ ttl: "forever" as never })).toMatchObject({
          _tag: "ConfigurationError",
          field: "sqlSpanStore.ttl"
        })
        expect(yield* refused({ maxValueLength: 1.5 })).toBeInstanceOf(ConfigurationError)
      }))
  })
}
