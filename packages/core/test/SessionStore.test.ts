/**
 * The in-memory session store passes the session store contract (the SQL one passes the same
 * suite on SQLite and Postgres, in @agentkit/sql); its thread bound holds.
 */
import { ConfigurationError, SessionStore } from "@agentkit/core"
import { SessionStoreContract } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"

describe("in-memory session store", () => {
  SessionStoreContract.register(it, { name: "memory", make: Effect.sync(() => SessionStore.makeMemory()) })

  it.effect("keeps at most maxThreads, forgetting the least recently appended", () =>
    Effect.gen(function*() {
      const store = SessionStore.makeMemory({ maxThreads: 2 })
      for (const threadId of ["a", "b", "c"]) {
        const { claim } = yield* store.claim({ tenant: "t", threadId }, { runId: threadId, owner: "w", ttlMs: 1000 })
        yield* store.append(claim, { runId: threadId, messages: "[]" })
      }
      expect(Option.isNone(yield* store.load({ tenant: "t", threadId: "a" }))).toBe(true)
      expect(Option.isSome(yield* store.load({ tenant: "t", threadId: "c" }))).toBe(true)
    }))

  it("refuses a bad bound with a ConfigurationError naming it", () => {
    expect(() => SessionStore.makeMemory({ maxThreads: 0 })).toThrow(ConfigurationError)
  })
})
