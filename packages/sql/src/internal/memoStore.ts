/**
 * The memo store on SQL: cached model responses with an expiry and a last-use sequence. A hit moves
 * the entry's last use to now; every write drops the expired entries and, past `maxEntries`, the
 * least recently used ones, so the table stays bounded. Responses are stored in their encoded
 * Schema form as canonical JSON. Recency is a sequence number (the table's highest plus one), not a
 * time, so entries written in the same millisecond keep their order. @internal
 */
import { CanonicalJson, Chat, StoreError } from "@agentkit/core"
import type { MemoStore } from "@agentkit/core"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { decodeWith, IntColumn } from "./codec.js"
import { invalid } from "./errors.js"
import { deleteInBatches, transaction } from "./tables.js"
import type { Env } from "./tables.js"

const decodeRow = decodeWith(Schema.Struct({ response: Schema.String, expires_at: IntColumn }))
const decodeResponse = decodeWith(Schema.parseJson(Chat.ChatResponse))
const encodeResponse = Schema.encodeEither(Chat.ChatResponse)

export interface SqlMemoStore extends MemoStore.Service {
  /** Forgets every expired entry; returns how many. */
  readonly prune: () => Effect.Effect<number, StoreError>
}

export const make = (env: Env, options: { readonly maxEntries: number; readonly ttlMs: number }): SqlMemoStore => {
  const { dialect, runner, sql, tables } = env
  const memo = sql(tables.memo)
  return {
    get: (key) =>
      runner.run("memo.get", () =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const rows = yield* sql`SELECT response, expires_at FROM ${memo} WHERE entry_key = ${key}`
          if (rows.length === 0) return Option.none<Chat.ChatResponse>()
          const row = decodeRow(rows[0])
          if (Either.isRight(row) && row.right.expires_at <= now) return Option.none<Chat.ChatResponse>()
          const response = Either.flatMap(row, (r) => decodeResponse(r.response))
          if (Either.isLeft(response)) {
            return yield* new StoreError({
              operation: "memo.get",
              message: `memo.get: entry '${key}' is corrupt: ${response.left}`,
              retryable: false
            })
          }
          yield* dialect.beforeWrite
          yield* sql`UPDATE ${memo} SET used_seq = (SELECT COALESCE(MAX(used_seq), 0) + 1 FROM ${memo}) WHERE entry_key = ${key}`
          return Option.some(response.right)
        })),

    set: (key, response, ttl) =>
      runner.run("memo.set", () =>
        Effect.gen(function*() {
          const encoded = encodeResponse(response)
          if (Either.isLeft(encoded)) return yield* invalid("memo.set", `not a chat response: ${encoded.left.message}`)
          const ttlMs = ttl === undefined ? options.ttlMs : Duration.toMillis(ttl)
          if (!(ttlMs > 0)) return yield* invalid("memo.set", `ttl must be a positive duration; got ${String(ttl)}`)
          const now = yield* Clock.currentTimeMillis
          const expiresAt = Number.isFinite(ttlMs) ? now + ttlMs : Number.MAX_SAFE_INTEGER
          yield* transaction(
            env,
            Effect.gen(function*() {
              yield* sql`INSERT INTO ${memo} (entry_key, response, expires_at, used_seq)
                VALUES (${key}, ${
                CanonicalJson.stringify(encoded.right)
              }, ${expiresAt}, (SELECT COALESCE(MAX(used_seq), 0) + 1 FROM ${memo}))
                ON CONFLICT (entry_key) DO UPDATE SET response = excluded.response, expires_at = excluded.expires_at, used_seq = excluded.used_seq`
              yield* sql`DELETE FROM ${memo} WHERE expires_at <= ${now}`
              // past the bound, the least recently used go first
              yield* sql`DELETE FROM ${memo} WHERE entry_key IN (
                SELECT entry_key FROM ${memo} ORDER BY used_seq DESC${dialect.offset(options.maxEntries)}
              )`
            })
          )
        })),

    prune: () =>
      runner.run(
        "memo.prune",
        () =>
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            deleteInBatches(env, tables.memo, "entry_key", sql`expires_at <= ${now}`))
      )
  }
}
