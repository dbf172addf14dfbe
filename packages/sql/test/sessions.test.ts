/**
 * The session store on SQL passes the session store contract (the same suite the in-memory store
 * passes) on an embedded SQLite file, and on Postgres when DATABASE_URL is set; a second store over
 * the same database (another process) sees the thread and its claim; retention runs in `prune`.
 */
import { SessionStore } from "@agentkit/core"
import { SessionStoreContract } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { SqlStores } from "../src/index.js"
import { targets } from "./databases.js"

for (const target of targets) {
  describe(`session store contract on ${target.name}`, () => {
    SessionStoreContract.register(it, {
      name: target.name,
      make: Effect.gen(function*() {
        const place = yield* target.fresh
        const context = yield* Layer.build(place.stores())
        return Context.get(context, SessionStore.SessionStore)
      })
    })
  })

  describe(`SQL session store on ${target.name}`, () => {
    it.scoped("another process's store sees the thread and its claim; Maintenance.prune forgets old threads", () =>
      Effect.gen(function*() {
        const place = yield* target.fresh
        const a = yield* Layer.build(place.stores())
        const b = yield* Layer.build(place.stores())
        const one = Context.get(a, SessionStore.SessionStore)
        const two = Context.get(b, SessionStore.SessionStore)
        const key = { tenant: "[\"acme\",null,null,null]", threadId: "t-1" }
        const claimed = yield* one.claim(key, { runId: "r1", owner: "a", ttlMs: 60_000 })
        const busy = yield* Effect.flip(two.claim(key, { runId: "r2", owner: "b", ttlMs: 60_000 }))
        expect(busy).toMatchObject({ _tag: "ThreadBusy", runId: "r1" })
        yield* one.append(claimed.claim, { runId: "r1", messages: "[{\"role\":\"user\",\"content\":\"hi\"}]" })
        const seen = yield* two.load(key)
        expect(Option.map(seen, (t) => [t.version, t.lastRunId])).toEqual(Option.some([1, "r1"]))
        const report = yield* Context.get(b, SqlStores.Maintenance).prune({ before: Date.now() + 60_000 })
        expect(report.threads).toBe(1)
        expect(Option.isNone(yield* one.load(key))).toBe(true)
      }))
  })
}
