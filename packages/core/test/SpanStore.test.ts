/**
 * The in-memory span store passes the span store contract (the SQL one passes the same suite on
 * SQLite and Postgres, in @agentkit/sql).
 */
import { SpanStore } from "@agentkit/core"
import { SpanStoreContract } from "@agentkit/testing"
import { describe, it } from "@effect/vitest"
import { Effect } from "effect"

describe("in-memory span store", () => {
  SpanStoreContract.register(it, {
    name: "memory",
    make: (limits) =>
      Effect.sync(() => {
        const store = SpanStore.makeMemory(limits)
        return { store, settle: Effect.void, reopen: Effect.succeed(store) }
      })
  })
})
