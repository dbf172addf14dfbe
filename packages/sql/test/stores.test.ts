/**
 * The other SQL stores on every database here: the execution ledger across instances, audit with
 * its own retention, idempotent outcomes expiring by age after their run ends, the memo cache's
 * bound and TTL, and quotas that hold across instances.
 */
import { AuditStore, BudgetExceeded, ExecutionLedger, IdempotencyStore, MemoStore, Usage } from "@agentkit/core"
import type { Chat } from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Either, Layer, Option, TestClock } from "effect"
import { SqlStores } from "../src/index.js"
import { QuotaStore } from "../src/internal/quotaStore.js"
import { targets } from "./databases.js"
import type { Place } from "./databases.js"

const open = (place: Place, options?: SqlStores.Options) =>
  Effect.map(Layer.build(place.stores(options)), (context) => ({
    ledger: Context.get(context, ExecutionLedger),
    audit: Context.get(context, AuditStore),
    idempotency: Context.get(context, IdempotencyStore),
    memo: Context.get(context, MemoStore),
    quota: Context.get(context, QuotaStore),
    maintenance: Context.get(context, SqlStores.Maintenance)
  }))

/** A second instance on the same database: its own pool on Postgres; on SQLite the process shares one client per file. */
const second = (place: Place, options?: SqlStores.Options) => open(place, options)

const response = (content: string): Chat.ChatResponse => ({
  content,
  toolCalls: [{
    id: "toolu_1",
    name: "lookup_order",
    arguments: { order_id: "A-771", nested: { b: 1, a: [true, null] } }
  }],
  usage: Usage.make({ inputTokens: 12, outputTokens: 3, costUsd: 0.0000125 }),
  finishReason: "tool_use",
  model: "claude-sonnet-4-6",
  provider: "fake"
})

for (const target of targets) {
  describe(`stores on ${target.name}`, () => {
    it.scoped("ledger: concurrent claimers on two instances, exactly one Claimed; the first completion wins; prune keeps what is in doubt", () =>
      Effect.gen(function*() {
        const place = yield* target.fresh
        const a = yield* open(place)
        const b = yield* second(place)
        const claims = yield* Effect.all(
          Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? a : b).ledger.claim("run-1/t0/c0", "digest")),
          { concurrency: "unbounded" }
        )
        expect(claims.filter((claim) => claim._tag === "Claimed").length).toBe(1)
        expect(claims.filter((claim) => claim._tag === "InDoubt").length).toBe(11)
        yield* a.ledger.complete("run-1/t0/c0", { text: "charged $12", isError: false })
        yield* b.ledger.complete("run-1/t0/c0", { text: "charged twice?", isError: false })
        expect(yield* b.ledger.claim("run-1/t0/c0", "digest")).toEqual({
          _tag: "Completed",
          outcome: { text: "charged $12", isError: false }
        })
        yield* a.ledger.claim("run-1/t0/c1", "digest") // in doubt forever, until a person decides
        yield* TestClock.adjust(10)
        expect(yield* a.ledger.prune({ before: 10 })).toBe(1)
        expect((yield* a.ledger.claim("run-1/t0/c1", "digest"))._tag).toBe("InDoubt")
        expect((yield* a.ledger.claim("run-1/t0/c0", "digest"))._tag).toBe("Claimed")
      }))

    it.scoped("audit: records read back as written (hostile text included), by run and by tenant, a page at a time", () =>
      Effect.gen(function*() {
        const { audit } = yield* open(yield* target.fresh)
        const records: Array<AuditStore.AuditRecord> = Array.from({ length: 23 }, (_, i) => ({
          runId: i % 2 === 0 ? "run-even" : "run-odd",
          tenant: i % 3 === 0 ? "[\"7\",null,null,null]" : "[7,null,null,null]",
          tool: "cancel_order",
          callId: `toolu_${i}`,
          decision: (["executed", "deduplicated", "failed", "denied", "in_doubt", "rewritten"] as const)[i % 6]!,
          argHash: `hash-${i}`,
          ...(i % 4 === 0
            ? { resultHash: `result-${i}`, by: "alice <alice@example.com>", reason: "it's '; DROP TABLE x; -- fine" }
            : {}),
          ...(i % 5 === 3 ? { denial: { reason: "egress", message: "ERROR: tool 'x' denied: é ∂ 😀" } } : {}),
          ...(i % 5 === 2 ? { error: { type: "Interrupted", message: "the run was interrupted" } } : {}),
          at: i * 10
        }))
        for (const record of records) yield* audit.append(record)
        const all = (query: { readonly runId?: string; readonly tenant?: string }) =>
          Effect.gen(function*() {
            const seen: Array<AuditStore.AuditRecord> = []
            let cursor: string | undefined
            do {
              const page = yield* audit.list({ ...query, cursor, limit: 4 })
              expect(page.records.length).toBeLessThanOrEqual(4)
              for (const record of page.records) seen.push(record)
              cursor = page.cursor
            } while (cursor !== undefined)
            return seen
          })
        expect(yield* all({})).toEqual(records)
        expect(yield* all({ runId: "run-odd" })).toEqual(records.filter((r) => r.runId === "run-odd"))
        expect(yield* all({ tenant: "[\"7\",null,null,null]" })).toEqual(
          records.filter((r) => r.tenant === "[\"7\",null,null,null]")
        )
        expect(Either.isLeft(yield* Effect.either(audit.list({ cursor: "garbage" })))).toBe(true)
      }))

    it.scoped("audit retention is its own: pruneAudit forgets old records, prune leaves audit alone", () =>
      Effect.gen(function*() {
        const { audit, maintenance } = yield* open(yield* target.fresh)
        for (let i = 0; i < 5; i++) {
          yield* audit.append({
            runId: "r",
            tenant: "t",
            tool: "x",
            callId: `c${i}`,
            decision: "executed",
            argHash: "h",
            at: i * 100
          })
        }
        yield* maintenance.prune({ before: 1_000_000 })
        expect((yield* audit.list({})).records.length).toBe(5)
        expect(yield* maintenance.pruneAudit({ before: 250 })).toBe(3)
        expect((yield* audit.list({})).records.map((r) => r.callId)).toEqual(["c3", "c4"])
      }))

    it.scoped("idempotency: outcomes live while their run does, then expire by age after it ends; writing to the run again revives them", () =>
      Effect.gen(function*() {
        const place = yield* target.fresh
        const { idempotency, maintenance } = yield* open(place, { idempotencyRetention: "10 minutes" })
        const value = { charged: 12, currency: "USD", at: [1, 2], note: null }
        yield* idempotency.set("k1", { value, text: "charged $12" }, "run-1")
        yield* idempotency.set("k2", { value: "plain", text: "ok" }, "run-1")
        yield* idempotency.set("other", { value: 1, text: "other run" }, "run-2")
        expect(yield* idempotency.get("k1")).toEqual(Option.some({ value, text: "charged $12" }))
        yield* TestClock.adjust(Duration.days(30)) // a run that goes on (or waits for a person) keeps everything
        expect(Option.isSome(yield* idempotency.get("k1"))).toBe(true)
        yield* idempotency.endRun("run-1")
        yield* TestClock.adjust(Duration.minutes(9))
        expect(Option.isSome(yield* idempotency.get("k2"))).toBe(true)
        yield* idempotency.set("k3", { value: 3, text: "again" }, "run-1") // live again
        yield* TestClock.adjust(Duration.minutes(2))
        expect(Option.isSome(yield* idempotency.get("k1"))).toBe(true)
        yield* idempotency.endRun("run-1")
        yield* TestClock.adjust(Duration.minutes(10))
        expect(yield* idempotency.get("k1")).toEqual(Option.none())
        expect(Option.isSome(yield* idempotency.get("other"))).toBe(true)
        const report = yield* maintenance.prune({ before: 0 })
        expect(report.idempotencyOutcomes).toBe(3)
        expect(
          Either.isLeft(yield* Effect.either(idempotency.set("bad", { value: 1n, text: 5 as unknown as string }, "r")))
        ).toBe(true)
      }))

    it.scoped("memo: responses read back whole; at most maxEntries, the least recently used go first; entries expire", () =>
      Effect.gen(function*() {
        const { maintenance, memo } = yield* open(yield* target.fresh, { memo: { maxEntries: 3, ttl: "1 hour" } })
        for (const key of ["a", "b", "c"]) yield* memo.set(key, response(key))
        expect(yield* memo.get("a")).toEqual(Option.some(response("a"))) // a is now the most recently used
        yield* memo.set("d", response("d"))
        expect(Option.isNone(yield* memo.get("b"))).toBe(true)
        for (const key of ["a", "c", "d"]) expect(Option.isSome(yield* memo.get(key)), key).toBe(true)
        yield* memo.set("short", response("short"), Duration.seconds(5))
        yield* TestClock.adjust(Duration.seconds(6))
        expect(Option.isNone(yield* memo.get("short"))).toBe(true)
        expect(Option.isSome(yield* memo.get("d"))).toBe(true)
        yield* TestClock.adjust(Duration.hours(2))
        expect(Option.isNone(yield* memo.get("d"))).toBe(true)
        expect((yield* maintenance.prune({ before: 0 })).memoEntries).toBeGreaterThanOrEqual(1)
        expect(Either.isLeft(yield* Effect.either(memo.set("bad", { content: "x" } as unknown as Chat.ChatResponse))))
          .toBe(true)
      }))

    it.scoped("quota: concurrent callers on two instances are admitted one at a time: exactly the limit goes through; the window slides", () =>
      Effect.gen(function*() {
        const place = yield* target.fresh
        const a = yield* open(place)
        const b = yield* second(place)
        const refuse = (totals: { readonly requests: number }) =>
          totals.requests >= 5
            ? new BudgetExceeded({ limit: "quota", message: `t: ${totals.requests} req ≥ 5 rpm` })
            : undefined
        const results = yield* Effect.all(
          Array.from(
            { length: 20 },
            (_, i) => Effect.either((i % 2 === 0 ? a : b).quota.admit("quota:t", 60_000, refuse))
          ),
          { concurrency: "unbounded" }
        )
        expect(results.filter(Either.isRight).length).toBe(5)
        for (const result of results.filter(Either.isLeft)) expect(result.left.message).toBe("t: 5 req ≥ 5 rpm")
        yield* a.quota.charge("quota:t", { tokens: 120, costNanos: 12_500 })
        yield* b.quota.charge("quota:t", { tokens: 30, costNanos: 7_500 })
        expect(yield* a.quota.totals("quota:t", 60_000)).toEqual({ requests: 5, tokens: 150, costNanos: 20_000 })
        expect(yield* a.quota.totals("quota:other", 60_000)).toEqual({ requests: 0, tokens: 0, costNanos: 0 })
        yield* TestClock.adjust(60_000)
        expect(yield* b.quota.totals("quota:t", 60_000)).toEqual({ requests: 0, tokens: 0, costNanos: 0 })
        expect((yield* a.maintenance.prune({ before: 60_000 })).quotaEvents).toBe(7)
        yield* b.quota.admit("quota:t", 60_000, refuse)
        expect((yield* a.quota.totals("quota:t", 60_000)).requests).toBe(1)
        expect(Either.isLeft(yield* Effect.either(a.quota.charge("quota:t", { tokens: -1, costNanos: 0 })))).toBe(true)
      }))
  })
}
