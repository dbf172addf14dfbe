/**
 * The span store on SQL: `offer` only appends to a bounded buffer (it runs inside a tracer's
 * `end`), `flush` writes the buffer in one transaction (`INSERT ... ON CONFLICT DO NOTHING`, so a
 * retried batch never doubles a span), and `trace` flushes first, then reads every span of the
 * traces whose spans carry the key. Retention deletes whole traces, in batches: those whose
 * newest span started before the TTL; those no span of which carries a key (no run tree's: the
 * trace view can never show them) after the shorter keyless TTL; and beyond `maxTraces` the
 * keyless ones first, then the oldest. @internal
 */
import { SpanStore, StoreError, Tracing } from "@agentkit/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { PruneReport, Service } from "../SqlSpanStore.js"
import { decodeWith } from "./codec.js"
import { deleteInBatches, transaction } from "./tables.js"
import type { Env } from "./tables.js"

/** The settled options (validated by the public module). */
export interface Settings extends SpanStore.Limits {
  readonly ttlMs: number
  readonly keylessTtlMs: number
  readonly maxTraces: number
  readonly maxSpansPerTrace: number
  readonly maxBuffered: number
}

/** A key or id longer than this is not indexed (a Postgres btree entry has a size limit). */
const maxKeyLength = 512
/** Rows per INSERT statement (well under both databases' bound-parameter limits). */
const insertBatch = 200

const decodeRecord = decodeWith(Schema.parseJson(SpanStore.SpanRecord))

type Row = {
  readonly trace_id: string
  readonly span_id: string
  readonly trace_key: string | null
  readonly tenant: string | null
  readonly started_at: number
  readonly record: string
}

const toRow = (span: SpanStore.SpanRecord): Row | undefined => {
  if (span.traceId.length > maxKeyLength || span.spanId.length > maxKeyLength) return undefined
  const key = span.attributes[Tracing.Attribute.conversationId]
  const tenant = span.attributes[SpanStore.tenantAttribute]
  return {
    trace_id: span.traceId,
    span_id: span.spanId,
    trace_key: typeof key === "string" && key.length <= maxKeyLength ? key : null,
    // a tenant too long to index is stored as one no read names: the trace is never shown by tenant
    tenant: typeof tenant === "string" ? (tenant.length <= maxKeyLength ? tenant : "") : null,
    started_at: Number.isFinite(span.startMs) ? Math.floor(span.startMs) : 0,
    record: JSON.stringify(span)
  }
}

export const make = (env: Env, settings: Settings): Service => {
  const { sql, tables, runner } = env
  const table = sql(tables.spans)
  let buffer: Array<Row> = []
  let dropped = 0
  const lock = Effect.unsafeMakeSemaphore(1)

  const offer = (span: SpanStore.SpanRecord): void => {
    try {
      if (buffer.length >= settings.maxBuffered) {
        dropped++
        return
      }
      const row = toRow(SpanStore.bound(span, settings))
      if (row === undefined) dropped++
      else buffer.push(row)
    } catch {
      dropped++ // a store that fails never breaks the run
    }
  }

  const write = (rows: ReadonlyArray<Row>) =>
    runner.run("spans.flush", () =>
      transaction(
        env,
        Effect.gen(function*() {
          // a trace keeps its first maxSpansPerTrace spans
          const ids = [...new Set(rows.map((row) => row.trace_id))]
          const counts = new Map<string, number>()
          for (let i = 0; i < ids.length; i += insertBatch) {
            const found = yield* sql<{ readonly trace_id: string; readonly n: unknown }>`
              SELECT trace_id, COUNT(*) AS n FROM ${table} WHERE trace_id IN ${
              sql.in(ids.slice(i, i + insertBatch))
            } GROUP BY trace_id`
            for (const row of found) counts.set(row.trace_id, Number(row.n))
          }
          const kept = rows.filter((row) => {
            const n = counts.get(row.trace_id) ?? 0
            if (n >= settings.maxSpansPerTrace) return false
            counts.set(row.trace_id, n + 1)
            return true
          })
          for (let i = 0; i < kept.length; i += insertBatch) {
            yield* sql`INSERT INTO ${table} ${
              sql.insert(kept.slice(i, i + insertBatch))
            } ON CONFLICT (trace_id, span_id) DO NOTHING`
          }
          return kept.length
        })
      ))

  const flush: Effect.Effect<number, StoreError> = lock.withPermits(1)(
    Effect.suspend(() => {
      if (buffer.length === 0) return Effect.succeed(0)
      const rows = buffer
      buffer = []
      // a batch the database refused (after the retries) is lost, and counted
      return Effect.tapError(write(rows), () => Effect.sync(() => (dropped += rows.length)))
    })
  )

  const trace = (key: string, tenant?: string): Effect.Effect<ReadonlyArray<SpanStore.SpanRecord>, StoreError> =>
    typeof key !== "string" || key.length === 0 || key.length > maxKeyLength ||
      (tenant !== undefined && (typeof tenant !== "string" || tenant.length === 0 || tenant.length > maxKeyLength))
      ? Effect.succeed([])
      : Effect.zipRight(
        flush,
        runner.run("spans.trace", () =>
          Effect.gen(function*() {
            const rows = yield* sql<{ readonly record: string }>`
              SELECT record FROM ${table}
              WHERE trace_id IN (SELECT trace_id FROM ${table} WHERE trace_key = ${key})${
              tenant === undefined
                ? sql``
                : sql`
                AND trace_id IN (SELECT trace_id FROM ${table} WHERE tenant = ${tenant})
                AND trace_id NOT IN (SELECT trace_id FROM ${table} WHERE tenant IS NOT NULL AND tenant <> ${tenant})`
            }
              ORDER BY started_at, seq`
            const spans: Array<SpanStore.SpanRecord> = []
            for (const row of rows) {
              const decoded = decodeRecord(row.record)
              if (decoded._tag === "Left") {
                return yield* new StoreError({
                  operation: "spans.trace",
                  message: `spans.trace: a stored span of trace '${key}' is unreadable: ${decoded.left}`,
                  retryable: false
                })
              }
              spans.push(decoded.right)
            }
            return spans.sort((a, b) => a.startMs - b.startMs)
          }))
      )

  const prune: Effect.Effect<PruneReport, StoreError> = Effect.gen(function*() {
    yield* flush
    const now = yield* Clock.currentTimeMillis
    const cutoff = Math.floor(now - settings.ttlMs)
    const keylessCutoff = Math.floor(now - settings.keylessTtlMs)
    return yield* runner.run("spans.prune", () =>
      Effect.gen(function*() {
        const expired = yield* deleteInBatches(
          env,
          tables.spans,
          "seq",
          sql`trace_id IN (SELECT trace_id FROM ${table} GROUP BY trace_id HAVING MAX(started_at) < ${cutoff})`
        )
        const keyless = yield* deleteInBatches(
          env,
          tables.spans,
          "seq",
          sql`trace_id IN (SELECT trace_id FROM ${table} GROUP BY trace_id HAVING MAX(trace_key) IS NULL AND MAX(started_at) < ${keylessCutoff})`
        )
        const overCap = yield* deleteInBatches(
          env,
          tables.spans,
          "seq",
          sql`trace_id IN (SELECT trace_id FROM ${table} GROUP BY trace_id
            ORDER BY CASE WHEN MAX(trace_key) IS NULL THEN 1 ELSE 0 END, MAX(started_at) DESC, MAX(seq) DESC${
            env.dialect.offset(settings.maxTraces)
          })`
        )
        return { expired, keyless, overCap }
      }))
  })

  return { offer, trace, flush, prune, dropped: () => dropped }
}
