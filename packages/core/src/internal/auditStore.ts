/** The in-memory audit store: records in append order, listed by position. @internal */
import * as Effect from "effect/Effect"
import type { AuditRecord, ListQuery, MemoryStore } from "../AuditStore.js"
import { StoreError } from "../StoreError.js"

export const makeMemory = (): MemoryStore => {
  const records: Array<AuditRecord> = []
  return {
    records,
    append: (record) =>
      Effect.sync(() => {
        records.push({ ...record })
      }),
    list: (query: ListQuery = {}) =>
      Effect.suspend(() => {
        const limit = query.limit ?? 100
        const from = query.cursor === undefined ? 0 : Number(query.cursor)
        if (!Number.isInteger(limit) || limit < 1 || !Number.isInteger(from) || from < 0) {
          return Effect.fail(
            new StoreError({
              operation: "list",
              message: "limit must be a positive integer and cursor one this store returned",
              retryable: false
            })
          )
        }
        const page: Array<AuditRecord> = []
        let index = from
        for (; index < records.length && page.length < limit; index++) {
          const record = records[index]!
          if (query.runId !== undefined && record.runId !== query.runId) continue
          if (query.tenant !== undefined && record.tenant !== query.tenant) continue
          page.push(record)
        }
        return Effect.succeed({ records: page, cursor: index < records.length ? String(index) : undefined })
      })
  }
}
