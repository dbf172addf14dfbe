/**
 * The idempotency store on SQL: one row per key with the run it belongs to. A live run's outcomes
 * have no expiry; `endRun` gives them one (now + retention) and sweeps what has expired, so they
 * go by age after their run ends, never by count. The outcome's value is stored as canonical JSON
 * and comes back as that JSON. @internal
 */
import { CanonicalJson, StoreError } from "@agentkit/core"
import type { IdempotencyStore, ToolOutcome } from "@agentkit/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { decodeWith, NullableInt } from "./codec.js"
import { invalid } from "./errors.js"
import { deleteInBatches, transaction } from "./tables.js"
import type { Env } from "./tables.js"

const decodeRow = decodeWith(Schema.Struct({ outcome: Schema.String, expires_at: NullableInt }))
const decodeOutcome = decodeWith(Schema.parseJson(Schema.Struct({ text: Schema.String, value: Schema.Unknown })))

export interface SqlIdempotencyStore extends IdempotencyStore.Service {
  /** Forgets every expired outcome; returns how many. */
  readonly prune: () => Effect.Effect<number, StoreError>
}

export const make = (env: Env, retentionMs: number): SqlIdempotencyStore => {
  const { dialect, runner, sql, tables } = env
  const table = sql(tables.idempotency)
  const sweep = (now: number) =>
    deleteInBatches(env, tables.idempotency, "entry_key", sql`expires_at IS NOT NULL AND expires_at <= ${now}`)

  return {
    get: (key) =>
      runner.run("idempotency.get", () =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const rows = yield* sql`SELECT outcome, expires_at FROM ${table} WHERE entry_key = ${key}`
          if (rows.length === 0) return Option.none<ToolOutcome>()
          const row = decodeRow(rows[0])
          const outcome = Either.flatMap(row, (r) => decodeOutcome(r.outcome))
          if (Either.isLeft(outcome)) {
            return yield* new StoreError({
              operation: "idempotency.get",
              message: `idempotency.get: entry '${key}' is corrupt: ${outcome.left}`,
              retryable: false
            })
          }
          const expiresAt = Either.getOrThrow(row).expires_at
          if (expiresAt !== null && expiresAt <= now) return Option.none<ToolOutcome>()
          return Option.some<ToolOutcome>({ value: outcome.right.value, text: outcome.right.text })
        })),

    set: (key, outcome, runId) =>
      runner.run("idempotency.set", () =>
        Effect.gen(function*() {
          if (typeof outcome !== "object" || outcome === null || typeof outcome.text !== "string") {
            return yield* invalid("idempotency.set", "an outcome is { value, text: string }")
          }
          const encoded = yield* Effect.try({
            try: () => CanonicalJson.stringify({ text: outcome.text, value: outcome.value }),
            catch: (cause) =>
              invalid(
                "idempotency.set",
                `the outcome's value cannot be stored as JSON: ${String((cause as Error).message ?? cause)}`
              )
          })
          const now = yield* Clock.currentTimeMillis
          yield* transaction(
            env,
            Effect.gen(function*() {
              yield* sql`INSERT INTO ${table} (entry_key, run_id, outcome, written_at, expires_at) VALUES (${key}, ${runId}, ${encoded}, ${now}, NULL)
                ON CONFLICT (entry_key) DO UPDATE SET run_id = excluded.run_id, outcome = excluded.outcome, written_at = excluded.written_at, expires_at = NULL`
              // a run written to again is live again: its outcomes no longer expire
              yield* sql`UPDATE ${table} SET expires_at = NULL WHERE run_id = ${runId} AND expires_at IS NOT NULL`
            })
          )
        })),

    endRun: (runId) =>
      runner.run("idempotency.endRun", () =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          yield* dialect.beforeWrite
          yield* sql`UPDATE ${table} SET expires_at = ${now + retentionMs} WHERE run_id = ${runId}`
          yield* sweep(now)
        })),

    prune: () => runner.run("idempotency.prune", () => Effect.flatMap(Clock.currentTimeMillis, sweep))
  }
}
