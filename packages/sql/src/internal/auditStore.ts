/**
 * The audit store on SQL: append-only rows in insertion order (an auto-increment `seq`), each the
 * record's canonical JSON with its query columns beside it. Retention is its own: `prune` by age,
 * separate from the runs. @internal
 */
import { CanonicalJson, StoreError } from "@agentkit/core"
import type { AuditStore } from "@agentkit/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { decodeWith, IntColumn } from "./codec.js"
import { invalid } from "./errors.js"
import { deleteInBatches } from "./tables.js"
import type { Env } from "./tables.js"

const decisions = ["executed", "deduplicated", "failed", "denied", "in_doubt", "operator", "rewritten"] as const
const actions = ["approve", "reject", "edit", "markDone", "markFailed", "retry", "cancel"] as const

const AuditRecordSchema = Schema.Struct({
  runId: Schema.String,
  tenant: Schema.String,
  tool: Schema.String,
  callId: Schema.String,
  decision: Schema.Literal(...decisions),
  argHash: Schema.String,
  resultHash: Schema.optional(Schema.String),
  by: Schema.optional(Schema.String),
  action: Schema.optional(Schema.Literal(...actions)),
  reason: Schema.optional(Schema.String),
  denial: Schema.optional(Schema.Struct({ reason: Schema.String, message: Schema.String })),
  error: Schema.optional(Schema.Struct({ type: Schema.String, message: Schema.String })),
  at: Schema.Number
})
const decodeRecord = decodeWith(Schema.parseJson(AuditRecordSchema))
const checkRecord = decodeWith(AuditRecordSchema)
const decodeRow = decodeWith(Schema.Struct({ seq: IntColumn, record: Schema.String }))

export interface SqlAuditStore extends AuditStore.Service {
  /** Forgets the records written before `before` (Unix ms); returns how many. */
  readonly prune: (options: { readonly before: number }) => Effect.Effect<number, StoreError>
}

export const make = (env: Env): SqlAuditStore => {
  const { dialect, runner, sql, tables } = env
  const audit = sql(tables.audit)
  return {
    append: (record) =>
      runner.run("audit.append", () =>
        Effect.gen(function*() {
          const checked = checkRecord(record)
          if (Either.isLeft(checked)) return yield* invalid("audit.append", `not an audit record: ${checked.left}`)
          yield* dialect.beforeWrite
          yield* sql`INSERT INTO ${audit} (run_id, tenant, tool, call_id, decision, at, record)
            VALUES (${record.runId}, ${record.tenant}, ${record.tool}, ${record.callId}, ${record.decision}, ${record.at}, ${
            CanonicalJson.stringify(checked.right)
          })`
        })),

    list: (query: AuditStore.ListQuery = {}) =>
      runner.run("audit.list", () =>
        Effect.gen(function*() {
          const limit = query.limit ?? 100
          const after = query.cursor === undefined ? 0 : /^\d{1,16}$/.test(query.cursor) ? Number(query.cursor) : -1
          if (!Number.isSafeInteger(limit) || limit < 1 || after < 0) {
            return yield* invalid("audit.list", "limit must be a positive integer and cursor one this store returned")
          }
          const where = [
            sql`seq > ${after}`,
            ...(query.runId === undefined ? [] : [sql`run_id = ${query.runId}`]),
            ...(query.tenant === undefined ? [] : [sql`tenant = ${query.tenant}`])
          ]
          const rows = yield* sql`SELECT seq, record FROM ${audit} WHERE ${sql.and(where)} ORDER BY seq LIMIT ${
            limit + 1
          }`
          const page: Array<AuditStore.AuditRecord> = []
          let last = after
          for (const raw of rows.slice(0, limit)) {
            const row = decodeRow(raw)
            const record = Either.flatMap(row, (r) => decodeRecord(r.record))
            if (Either.isLeft(record)) {
              const seq = Either.isRight(row) ? String(row.right.seq) : "(unreadable seq)"
              return yield* new StoreError({
                operation: "audit.list",
                message: `audit.list: audit record ${seq} is corrupt: ${record.left}`,
                retryable: false
              })
            }
            page.push(record.right)
            last = Either.getOrThrow(row).seq
          }
          return { records: page, cursor: rows.length > limit ? String(last) : undefined }
        })),

    prune: ({ before }) =>
      runner.run("audit.prune", () =>
        Effect.gen(function*() {
          if (!Number.isFinite(before)) {
            return yield* invalid("audit.prune", `before must be a time in Unix ms; got ${String(before)}`)
          }
          return yield* deleteInBatches(env, tables.audit, "seq", sql`at < ${before}`)
        }))
  }
}
