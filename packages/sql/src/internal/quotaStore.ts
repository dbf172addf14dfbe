/**
 * The quota store on SQL: a row per partition (what `admit` locks) and an event per admitted
 * request or charged call. `admit` runs in one transaction that locks the partition's row (an
 * upsert, which takes the row lock on Postgres; SQLite's write transaction holds the database),
 * drops the events that fell out of the window, sums the rest, and records the request only when
 * the caller's `refuse` finds nothing to refuse: concurrent callers in any number of processes
 * are admitted one at a time. A partition is counted with one window (the quota's). @internal
 */
import { StoreError } from "@agentkit/core"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { decodeWith, IntColumn } from "./codec.js"
import { invalid } from "./errors.js"
import { deleteInBatches, transaction } from "./tables.js"
import type { Env } from "./tables.js"

/** What a tenant used inside the window: requests admitted, tokens and cost (nano-USD) charged. */
export interface QuotaTotals {
  readonly requests: number
  readonly tokens: number
  readonly costNanos: number
}

/**
 * The quota store port (proposed for core's `Quota.ts`, where it moves once the scope keys land:
 * a `Quota` keeps the decision and its texts, the store only counts, so one quota holds across
 * instances).
 */
export interface QuotaStoreService {
  /**
   * Atomically (across every process sharing the store): reads the partition's totals over the
   * window ending now; when `refuse(totals)` returns an error the call fails with it and nothing
   * is recorded, otherwise one request is recorded at now.
   */
  readonly admit: <E>(
    partition: string,
    windowMillis: number,
    refuse: (totals: QuotaTotals) => E | undefined
  ) => Effect.Effect<void, E | StoreError>
  /** Records a finished call's tokens and cost (nano-USD) at now. */
  readonly charge: (
    partition: string,
    charge: { readonly tokens: number; readonly costNanos: number }
  ) => Effect.Effect<void, StoreError>
  /** The partition's totals over the window ending now. */
  readonly totals: (partition: string, windowMillis: number) => Effect.Effect<QuotaTotals, StoreError>
}

export class QuotaStore extends Context.Tag("@agentkit/core/QuotaStore")<QuotaStore, QuotaStoreService>() {}

const decodeTotals = decodeWith(Schema.Struct({ requests: IntColumn, tokens: IntColumn, cost_nanos: IntColumn }))

export interface SqlQuotaStore extends QuotaStoreService {
  /** Forgets the events recorded before `before` (Unix ms) and the partitions left without any; returns how many events. */
  readonly prune: (options: { readonly before: number }) => Effect.Effect<number, StoreError>
}

const checkWindow = (operation: string, windowMillis: number): Effect.Effect<void, StoreError> =>
  Number.isSafeInteger(windowMillis) && windowMillis > 0
    ? Effect.void
    : Effect.fail(invalid(operation, `windowMillis must be a positive integer; got ${String(windowMillis)}`))

const nonNegative = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0

export const make = (env: Env): SqlQuotaStore => {
  const { dialect, runner, sql, tables } = env
  const partitions = sql(tables.quotaPartitions)
  const events = sql(tables.quotaEvents)

  const sum = (bucket: string, floor: number) =>
    Effect.flatMap(
      sql`SELECT COALESCE(SUM(requests), 0) AS requests, COALESCE(SUM(tokens), 0) AS tokens, COALESCE(SUM(cost_nanos), 0) AS cost_nanos
        FROM ${events} WHERE bucket = ${bucket} AND at > ${floor}`,
      (rows) => {
        const totals = decodeTotals(rows[0])
        return Either.isLeft(totals)
          ? Effect.fail(
            new StoreError({
              operation: "quota",
              message: `quota: the events of '${bucket}' are corrupt: ${totals.left}`,
              retryable: false
            })
          )
          : Effect.succeed<QuotaTotals>({
            requests: totals.right.requests,
            tokens: totals.right.tokens,
            costNanos: totals.right.cost_nanos
          })
      }
    )

  return {
    admit: <E>(bucket: string, windowMillis: number, refuse: (totals: QuotaTotals) => E | undefined) =>
      runner.run("quota.admit", () =>
        Effect.gen(function*() {
          yield* checkWindow("quota.admit", windowMillis)
          const now = yield* Clock.currentTimeMillis
          const floor = now - windowMillis
          return yield* transaction(
            env,
            Effect.gen(function*() {
              // upsert = insert-or-lock: from here until commit, this partition is ours
              yield* sql`INSERT INTO ${partitions} (bucket, touched_at) VALUES (${bucket}, ${now})
                ON CONFLICT (bucket) DO UPDATE SET touched_at = excluded.touched_at`
              yield* sql`DELETE FROM ${events} WHERE bucket = ${bucket} AND at <= ${floor}`
              const refused = refuse(yield* sum(bucket, floor))
              if (refused !== undefined) return yield* Effect.fail(refused)
              yield* sql`INSERT INTO ${events} (bucket, at, requests, tokens, cost_nanos) VALUES (${bucket}, ${now}, 1, 0, 0)`
            })
          )
        })),

    charge: (bucket, charge) =>
      runner.run("quota.charge", () =>
        Effect.gen(function*() {
          if (!nonNegative(charge.tokens) || !nonNegative(charge.costNanos)) {
            return yield* invalid(
              "quota.charge",
              `tokens and costNanos must be non-negative integers; got ${String(charge.tokens)} and ${
                String(charge.costNanos)
              }`
            )
          }
          const now = yield* Clock.currentTimeMillis
          yield* dialect.beforeWrite
          yield* sql`INSERT INTO ${events} (bucket, at, requests, tokens, cost_nanos) VALUES (${bucket}, ${now}, 0, ${charge.tokens}, ${charge.costNanos})`
        })),

    totals: (bucket, windowMillis) =>
      runner.run("quota.totals", () =>
        Effect.gen(function*() {
          yield* checkWindow("quota.totals", windowMillis)
          const now = yield* Clock.currentTimeMillis
          return yield* sum(bucket, now - windowMillis)
        })),

    prune: ({ before }) =>
      runner.run("quota.prune", () =>
        Effect.gen(function*() {
          if (!Number.isFinite(before)) {
            return yield* invalid("quota.prune", `before must be a time in Unix ms; got ${String(before)}`)
          }
          const pruned = yield* deleteInBatches(env, tables.quotaEvents, "seq", sql`at < ${before}`)
          yield* deleteInBatches(
            env,
            tables.quotaPartitions,
            "bucket",
            sql`touched_at < ${before} AND NOT EXISTS (SELECT 1 FROM ${events} e WHERE e.bucket = ${partitions}.bucket)`
          )
          return pruned
        }))
  }
}
