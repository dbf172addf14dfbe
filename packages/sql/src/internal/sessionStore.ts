/**
 * The session store on SQL: one row per thread (its messages as canonical JSON text, its version,
 * its last run, and the claim on it). A claim is a transaction that reads the row `FOR UPDATE`
 * (Postgres; on SQLite the write transaction holds the database) and checks what the in-memory
 * store checks; an append is one conditional `UPDATE` (the claim's token, not expired), so a
 * thread is either as it was or has the whole append, never part of it. A row made by a claim
 * and never appended to (version 0) is no thread yet: `load` does not see it. @internal
 */
import { SessionStore } from "@agentkit/core"
import type { StoreError } from "@agentkit/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { decodeWith, IntColumn, NullableInt, NullableText } from "./codec.js"
import { invalid } from "./errors.js"
import { transaction } from "./tables.js"
import type { Env } from "./tables.js"

const ThreadRow = Schema.Struct({
  tenant: Schema.String,
  thread_id: Schema.String,
  messages: Schema.String,
  version: IntColumn,
  last_run_id: NullableText,
  updated_at: IntColumn,
  tokens: IntColumn,
  claim_run_id: NullableText,
  claim_owner: NullableText,
  claim_token: NullableInt,
  claim_expires_at: NullableInt
})
type ThreadRow = Schema.Schema.Type<typeof ThreadRow>
const decodeRow = decodeWith(ThreadRow)

const columns =
  "tenant, thread_id, messages, version, last_run_id, updated_at, tokens, claim_run_id, claim_owner, claim_token, claim_expires_at"

const threadOf = (row: ThreadRow): SessionStore.Thread => ({
  tenant: row.tenant,
  threadId: row.thread_id,
  messages: row.messages,
  version: row.version,
  lastRunId: row.last_run_id ?? undefined,
  updatedAt: row.updated_at
})

const checkKey = (operation: string, key: SessionStore.ThreadKey) =>
  typeof key?.tenant === "string" && typeof key.threadId === "string" && key.threadId.length > 0
    ? Effect.void
    : Effect.fail(invalid(operation, "a thread key is { tenant: string, threadId: non-empty string }"))

const checkTtl = (operation: string, ttlMs: number) =>
  Number.isSafeInteger(ttlMs) && ttlMs > 0
    ? Effect.void
    : Effect.fail(invalid(operation, `ttlMs must be a positive integer; got ${String(ttlMs)}`))

export const make = (env: Env): SessionStore.Service => {
  const { dialect, runner, sql, tables } = env
  const threads = sql(tables.threads)

  const read = (operation: string, key: SessionStore.ThreadKey, lock: boolean) =>
    Effect.flatMap(
      sql`SELECT ${sql.literal(columns)} FROM ${threads} WHERE tenant = ${key.tenant} AND thread_id = ${key.threadId}${
        lock ? dialect.forUpdate : sql.literal("")
      }`,
      (rows): Effect.Effect<Option.Option<ThreadRow>, StoreError> => {
        if (rows.length === 0) return Effect.succeed(Option.none())
        const row = decodeRow(rows[0])
        return Either.isRight(row)
          ? Effect.succeed(Option.some(row.right))
          : Effect.fail(invalid(operation, `thread '${key.threadId}' is corrupt: ${row.left}`))
      }
    )

  return {
    claim: (key, request) =>
      runner.run("sessions.claim", () =>
        Effect.gen(function*() {
          yield* checkKey("sessions.claim", key)
          yield* checkTtl("sessions.claim", request.ttlMs)
          const now = yield* Clock.currentTimeMillis
          const expiresAt = now + request.ttlMs
          return yield* transaction(
            env,
            Effect.gen(function*() {
              // a new thread's row, made if missing (tokens start at the time, so a thread pruned and
              // made again never gives a token a stale claim still carries)
              yield* sql`INSERT INTO ${threads} (${sql.literal(columns)})
                VALUES (${key.tenant}, ${key.threadId}, '[]', 0, NULL, ${now}, ${now}, NULL, NULL, NULL, NULL)
                ON CONFLICT (tenant, thread_id) DO NOTHING`
              const found = yield* read("sessions.claim", key, true)
              if (Option.isNone(found)) return yield* invalid("sessions.claim", `thread '${key.threadId}' vanished`)
              const row = found.value
              const held = row.claim_run_id
              if (held !== null && row.claim_expires_at! > now && held !== request.runId) {
                return yield* new SessionStore.ThreadBusy({
                  threadId: key.threadId,
                  runId: held,
                  expiresAt: row.claim_expires_at!
                })
              }
              const token = row.tokens + 1
              yield* sql`UPDATE ${threads} SET tokens = ${token}, claim_run_id = ${request.runId}, claim_owner = ${request.owner},
                claim_token = ${token}, claim_expires_at = ${expiresAt}
                WHERE tenant = ${key.tenant} AND thread_id = ${key.threadId}`
              const claim: SessionStore.Claim = {
                tenant: key.tenant,
                threadId: key.threadId,
                runId: request.runId,
                owner: request.owner,
                token,
                expiresAt
              }
              return {
                claim,
                thread: row.version === 0 ? Option.none() : Option.some(threadOf(row)),
                own: held === request.runId
              }
            })
          )
        })),

    append: (claim, update) =>
      runner.run("sessions.append", (retried) =>
        Effect.gen(function*() {
          if (typeof update?.messages !== "string" || typeof update.runId !== "string") {
            return yield* invalid("sessions.append", "an append is { runId: string, messages: string }")
          }
          const now = yield* Clock.currentTimeMillis
          yield* dialect.beforeWrite
          const rows = yield* sql`UPDATE ${threads} SET messages = ${update.messages}, version = version + 1,
            last_run_id = ${update.runId}, updated_at = ${now},
            claim_run_id = NULL, claim_owner = NULL, claim_token = NULL, claim_expires_at = NULL
            WHERE tenant = ${claim.tenant} AND thread_id = ${claim.threadId} AND claim_token = ${claim.token}
              AND claim_expires_at > ${now}
            RETURNING ${sql.literal(columns)}`
          if (rows.length > 0) {
            const row = decodeRow(rows[0])
            if (Either.isLeft(row)) return yield* invalid("sessions.append", `thread '${claim.threadId}': ${row.left}`)
            return threadOf(row.right)
          }
          // a retry of an append that committed before its answer was lost: the thread is that append
          if (retried) {
            const found = yield* read("sessions.append", claim, false)
            if (
              Option.isSome(found) && found.value.last_run_id === update.runId &&
              found.value.messages === update.messages && found.value.claim_token === null
            ) {
              return threadOf(found.value)
            }
          }
          return yield* new SessionStore.StaleThreadClaim({ threadId: claim.threadId, token: claim.token })
        })),

    renew: (claim, ttlMs) =>
      runner.run("sessions.renew", () =>
        Effect.gen(function*() {
          yield* checkTtl("sessions.renew", ttlMs)
          const now = yield* Clock.currentTimeMillis
          const expiresAt = now + ttlMs
          yield* dialect.beforeWrite
          const rows = yield* sql`UPDATE ${threads} SET claim_expires_at = ${expiresAt}
            WHERE tenant = ${claim.tenant} AND thread_id = ${claim.threadId} AND claim_token = ${claim.token}
              AND claim_expires_at > ${now}
            RETURNING claim_token`
          if (rows.length === 0) {
            return yield* new SessionStore.StaleThreadClaim({ threadId: claim.threadId, token: claim.token })
          }
          return { ...claim, expiresAt }
        })),

    release: (claim) =>
      runner.run("sessions.release", () =>
        Effect.zipRight(
          dialect.beforeWrite,
          Effect.asVoid(
            sql`UPDATE ${threads} SET claim_run_id = NULL, claim_owner = NULL, claim_token = NULL, claim_expires_at = NULL
              WHERE tenant = ${claim.tenant} AND thread_id = ${claim.threadId} AND claim_token = ${claim.token}`
          )
        )),

    load: (key) =>
      runner.run("sessions.load", () =>
        Effect.zipRight(
          checkKey("sessions.load", key),
          Effect.map(
            read("sessions.load", key, false),
            Option.flatMap((row) => (row.version === 0 ? Option.none() : Option.some(threadOf(row))))
          )
        )),

    prune: ({ before }) =>
      runner.run("sessions.prune", () =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          yield* dialect.beforeWrite
          const rows = yield* sql`DELETE FROM ${threads}
            WHERE updated_at < ${before} AND (claim_token IS NULL OR claim_expires_at <= ${now})
            RETURNING thread_id`
          return rows.length
        }))
  }
}
