/**
 * The execution ledger on SQL: one row per claimed call. A claim is an `INSERT ... ON CONFLICT DO
 * NOTHING` (of any number of concurrent claimers, in any number of processes, exactly one
 * inserts); the row carries a fresh claim id, so a claim retried after a lost answer recognises
 * its own row instead of reporting it in doubt. @internal
 */
import { CanonicalJson, LedgerConflict, markedFailedText, StoreError } from "@agentkit/core"
import type { ExecutionLedger } from "@agentkit/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import { decodeWith, IntColumn, NullableInt, NullableText } from "./codec.js"
import { invalid } from "./errors.js"
import { deleteInBatches, transaction } from "./tables.js"
import type { Env } from "./tables.js"

const LedgerRow = Schema.Struct({
  digest: Schema.String,
  claim_id: Schema.String,
  claimed_at: IntColumn,
  outcome: NullableText,
  completed_at: NullableInt
})
const decodeLedgerRow = decodeWith(LedgerRow)
const decodeOutcome = decodeWith(Schema.parseJson(Schema.Struct({ text: Schema.String, isError: Schema.Boolean })))

export const make = (env: Env): ExecutionLedger.Service => {
  const { dialect, runner, sql, tables } = env
  const ledger = sql(tables.ledger)

  const corrupt = (operation: string, key: string, detail: string) =>
    new StoreError({
      operation,
      message: `${operation}: ledger entry '${key}' is corrupt: ${detail}`,
      retryable: false
    })

  const read = (operation: string, key: string, lock: boolean) =>
    Effect.gen(function*() {
      const rows =
        yield* sql`SELECT digest, claim_id, claimed_at, outcome, completed_at FROM ${ledger} WHERE entry_key = ${key}${
          lock ? dialect.forUpdate : sql.literal("")
        }`
      if (rows.length === 0) return undefined
      const row = decodeLedgerRow(rows[0])
      if (Either.isLeft(row)) return yield* corrupt(operation, key, row.left)
      if (row.right.outcome === null) return { ...row.right, outcome: undefined }
      const outcome = decodeOutcome(row.right.outcome)
      if (Either.isLeft(outcome)) return yield* corrupt(operation, key, outcome.left)
      return {
        ...row.right,
        outcome: { text: outcome.right.text, isError: outcome.right.isError } as ExecutionLedger.Outcome
      }
    })

  const encode = (outcome: ExecutionLedger.Outcome): string =>
    CanonicalJson.stringify({ text: outcome.text, isError: outcome.isError })
  const checkOutcome = (operation: string, outcome: ExecutionLedger.Outcome): Effect.Effect<void, StoreError> =>
    typeof outcome === "object" && outcome !== null && typeof outcome.text === "string" &&
      typeof outcome.isError === "boolean"
      ? Effect.void
      : Effect.fail(invalid(operation, "an outcome is { text: string, isError: boolean }"))

  return {
    claim: (key, digest) =>
      Effect.suspend(() => {
        const claimId = randomUUID()
        return runner.run("ledger.claim", () =>
          Effect.gen(function*() {
            for (let attempt = 0;; attempt++) {
              const now = yield* Clock.currentTimeMillis
              const inserted = yield* dialect.beforeWrite.pipe(
                Effect.zipRight(
                  sql`INSERT INTO ${ledger} (entry_key, digest, claim_id, claimed_at) VALUES (${key}, ${digest}, ${claimId}, ${now})
                  ON CONFLICT (entry_key) DO NOTHING RETURNING entry_key`
                )
              )
              if (inserted.length === 1) return { _tag: "Claimed" } as ExecutionLedger.Claim
              const row = yield* read("ledger.claim", key, false)
              // removed by a `retry` resolution between the insert and the read: claim again
              if (row === undefined) {
                if (attempt < 3) continue
                return yield* new StoreError({
                  operation: "ledger.claim",
                  message: `ledger.claim: entry '${key}' keeps changing under the claim`,
                  retryable: true
                })
              }
              // our own claim, committed before its answer was lost
              if (row.claim_id === claimId) return { _tag: "Claimed" } as ExecutionLedger.Claim
              // the same key with other arguments: not the call that was claimed, so not known to be done
              if (row.digest !== digest || row.outcome === undefined) {
                return { _tag: "InDoubt", claimedAt: row.claimed_at, digest: row.digest } as ExecutionLedger.Claim
              }
              return { _tag: "Completed", outcome: row.outcome } as ExecutionLedger.Claim
            }
          }))
      }),

    complete: (key, outcome) =>
      runner.run("ledger.complete", () =>
        Effect.gen(function*() {
          yield* checkOutcome("ledger.complete", outcome)
          const now = yield* Clock.currentTimeMillis
          // the first completion wins
          yield* dialect.beforeWrite.pipe(
            Effect.zipRight(
              sql`INSERT INTO ${ledger} AS cur (entry_key, digest, claim_id, claimed_at, outcome, completed_at)
              VALUES (${key}, '', '', ${now}, ${encode(outcome)}, ${now})
              ON CONFLICT (entry_key) DO UPDATE SET outcome = excluded.outcome, completed_at = excluded.completed_at WHERE cur.outcome IS NULL`
            )
          )
        })),

    resolve: (key, resolution, options) =>
      runner.run("ledger.resolve", (retried) =>
        Effect.gen(function*() {
          if (resolution._tag === "Done") yield* checkOutcome("ledger.resolve", resolution.outcome)
          const now = yield* Clock.currentTimeMillis
          const outcome: ExecutionLedger.Outcome | undefined = resolution._tag === "Done"
            ? resolution.outcome
            : resolution._tag === "Failed"
            ? { text: markedFailedText(resolution.reason), isError: true }
            : undefined
          yield* transaction(
            env,
            Effect.gen(function*() {
              const row = yield* read("ledger.resolve", key, true)
              if (row === undefined) {
                // a retry of a `retry` resolution that committed before its answer was lost
                if (retried && resolution._tag === "Retry") return
                return yield* new LedgerConflict({ key, state: "none" })
              }
              if (row.outcome !== undefined) {
                if (
                  retried && outcome !== undefined && row.outcome.text === outcome.text &&
                  row.outcome.isError === outcome.isError
                ) return
                return yield* new LedgerConflict({ key, state: "completed" })
              }
              if (options?.claimedAt !== undefined && options.claimedAt !== row.claimed_at) {
                return yield* new LedgerConflict({ key, state: "reclaimed" })
              }
              if (outcome === undefined) yield* sql`DELETE FROM ${ledger} WHERE entry_key = ${key}`
              else {yield* sql`UPDATE ${ledger} SET outcome = ${
                  encode(outcome)
                }, completed_at = ${now} WHERE entry_key = ${key}`}
            })
          )
        })),

    prune: ({ before }) =>
      runner.run("ledger.prune", () =>
        Effect.gen(function*() {
          if (!Number.isFinite(before)) {
            return yield* invalid("ledger.prune", `before must be a time in Unix ms; got ${String(before)}`)
          }
          return yield* deleteInBatches(
            env,
            tables.ledger,
            "entry_key",
            sql`completed_at IS NOT NULL AND completed_at < ${before}`
          )
        }))
  }
}
