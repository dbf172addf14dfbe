/**
 * The session store contract suite: what every implementation of core's `SessionStore` port must
 * do (the in-memory one in core, the SQL one of `@agentkit/sql` on SQLite and Postgres): one claim
 * at a time per thread, an expired claim taken over, the same run claiming its own claim again,
 * an atomic append that ends the claim and refuses a stale one, threads kept apart by tenant, and
 * retention. It needs only the test function, so importing `@agentkit/testing` never loads vitest;
 * every test runs under `TestClock` with a fresh store from the factory.
 *
 * @since 0.2.0
 */
import type { SessionStore } from "@agentkit/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import type * as TestServices from "effect/TestServices"

/**
 * What the suite is registered with: a name and a factory of fresh, empty stores (scoped: a SQL
 * factory opens a database and closes it when the test ends).
 *
 * @example
 * ```ts
 * import { SessionStore } from "@agentkit/core"
 * import type { SessionStoreContract } from "@agentkit/testing"
 * import { Effect } from "effect"
 *
 * const options: SessionStoreContract.Options = { name: "memory", make: Effect.sync(() => SessionStore.makeMemory()) }
 * ```
 *
 * @since 0.2.0
 * @category testing
 */
export interface Options {
  readonly name: string
  readonly make: Effect.Effect<SessionStore.Service, unknown, Scope.Scope>
}

/**
 * The test function the suite registers its tests with: `it` from `@effect/vitest` fits.
 *
 * @example
 * ```ts
 * import type { SessionStoreContract } from "@agentkit/testing"
 * import { it } from "@effect/vitest"
 *
 * const register: SessionStoreContract.TestFunction = it
 * ```
 *
 * @since 0.2.0
 * @category testing
 */
export interface TestFunction {
  readonly scoped: (
    name: string,
    self: () => Effect.Effect<void, unknown, TestServices.TestServices | Scope.Scope>
  ) => void
}

const fail = (message: string): never => {
  throw new Error(`session store contract: ${message}`)
}

const expectEqual = <A>(actual: A, expected: A, what: string): void => {
  const a = JSON.stringify(actual)
  const e = JSON.stringify(expected)
  if (a !== e) fail(`${what}: expected ${e}, got ${a}`)
}

const key: SessionStore.ThreadKey = { tenant: "[\"acme\",null,null,null]", threadId: "t-1" }
const request = (runId: string, ttlMs = 60_000): SessionStore.ClaimRequest => ({ runId, owner: `w-${runId}`, ttlMs })

/** The tag of a failed effect, or "ok". */
const outcome = <A, E extends { readonly _tag: string }, R>(self: Effect.Effect<A, E, R>) =>
  Effect.match(self, { onFailure: (error) => error._tag, onSuccess: () => "ok" })

/**
 * Registers the suite's tests with `it`, each with a fresh store from `options.make`.
 *
 * @example
 * ```ts
 * import { SessionStore } from "@agentkit/core"
 * import { SessionStoreContract } from "@agentkit/testing"
 * import { describe, it } from "@effect/vitest"
 * import { Effect } from "effect"
 *
 * describe("in-memory session store", () => {
 *   SessionStoreContract.register(it, { name: "memory", make: Effect.sync(() => SessionStore.makeMemory()) })
 * })
 * ```
 *
 * @since 0.2.0
 * @category testing
 */
export const register = (it: TestFunction, options: Options): void => {
  const test = (name: string, body: (store: SessionStore.Service) => Effect.Effect<void, unknown, Scope.Scope>) =>
    it.scoped(`${options.name}: ${name}`, () => Effect.flatMap(options.make, body))

  test("a new thread: claimed empty, appended, read back", (store) =>
    Effect.gen(function*() {
      expectEqual(Option.isNone(yield* store.load(key)), true, "a thread before its first append")
      const claimed = yield* store.claim(key, request("r1"))
      expectEqual(Option.isNone(claimed.thread), true, "the claimed thread")
      expectEqual(claimed.own, false, "own")
      expectEqual(claimed.claim.runId, "r1", "the claim's run")
      const thread = yield* store.append(claimed.claim, { runId: "r1", messages: "[{\"a\":1}]" })
      expectEqual([thread.version, thread.lastRunId, thread.messages], [1, "r1", "[{\"a\":1}]"], "the append")
      const loaded = yield* store.load(key)
      expectEqual(
        Option.map(loaded, (t) => [t.version, t.lastRunId, t.messages]),
        Option.some([1, "r1", "[{\"a\":1}]"]),
        "the thread read back"
      )
      const next = yield* store.claim(key, request("r2"))
      expectEqual(Option.map(next.thread, (t) => t.version), Option.some(1), "the next claim sees the thread")
    }))

  test("one claim at a time: another run is refused while it lives, takes it over when it expired", (store) =>
    Effect.gen(function*() {
      const first = yield* store.claim(key, request("r1", 1000))
      const busy = yield* Effect.flip(store.claim(key, request("r2")))
      expectEqual([busy._tag, busy._tag === "ThreadBusy" ? busy.runId : ""], ["ThreadBusy", "r1"], "a second claim")
      yield* TestClock.adjust(1001)
      const second = yield* store.claim(key, request("r2"))
      expectEqual(second.own, false, "a takeover is not the run's own")
      expectEqual(second.claim.token > first.claim.token, true, "a takeover's token is newer")
      expectEqual(
        yield* outcome(store.append(first.claim, { runId: "r1", messages: "[]" })),
        "StaleThreadClaim",
        "the old claim's append"
      )
      expectEqual(Option.isNone(yield* store.load(key)), true, "nothing appended by a stale claim")
    }))

  test("the same run claims its own claim again (live or expired); the old token is stale", (store) =>
    Effect.gen(function*() {
      const first = yield* store.claim(key, request("r1", 1000))
      const again = yield* store.claim(key, request("r1", 1000))
      expectEqual(again.own, true, "a live claim of the same run")
      yield* TestClock.adjust(5000)
      const later = yield* store.claim(key, request("r1", 1000))
      expectEqual(later.own, true, "an expired claim of the same run")
      expectEqual(
        yield* outcome(store.append(first.claim, { runId: "r1", messages: "[]" })),
        "StaleThreadClaim",
        "the first token"
      )
      yield* store.append(later.claim, { runId: "r1", messages: "[1]" })
      const after = yield* store.claim(key, request("r1"))
      expectEqual(after.own, false, "an appended claim is over")
    }))

  test("an append ends the claim; a second append with it is stale; an expired claim cannot append", (store) =>
    Effect.gen(function*() {
      const claimed = yield* store.claim(key, request("r1", 1000))
      yield* store.append(claimed.claim, { runId: "r1", messages: "[1]" })
      expectEqual(
        yield* outcome(store.append(claimed.claim, { runId: "r1", messages: "[2]" })),
        "StaleThreadClaim",
        "a second append"
      )
      const next = yield* store.claim(key, request("r2", 1000))
      yield* TestClock.adjust(1001)
      expectEqual(
        yield* outcome(store.append(next.claim, { runId: "r2", messages: "[3]" })),
        "StaleThreadClaim",
        "an expired claim's append"
      )
      expectEqual(
        Option.map(yield* store.load(key), (t) => [t.version, t.messages]),
        Option.some([1, "[1]"]),
        "the thread"
      )
    }))

  test("renew extends a live claim; release frees the thread and appends nothing", (store) =>
    Effect.gen(function*() {
      const claimed = yield* store.claim(key, request("r1", 1000))
      yield* TestClock.adjust(900)
      const renewed = yield* store.renew(claimed.claim, 10_000)
      yield* TestClock.adjust(900)
      expectEqual(yield* outcome(store.claim(key, request("r2"))), "ThreadBusy", "a renewed claim holds")
      yield* store.release(renewed)
      yield* store.release(renewed) // a stale release is ignored
      const other = yield* store.claim(key, request("r2"))
      expectEqual(other.own, false, "a released thread is free")
      expectEqual(yield* outcome(store.renew(renewed, 1000)), "StaleThreadClaim", "renewing a released claim")
      expectEqual(Option.isNone(yield* store.load(key)), true, "nothing appended")
    }))

  test("threads are kept apart by tenant and by id", (store) =>
    Effect.gen(function*() {
      const other = { tenant: "[\"globex\",null,null,null]", threadId: "t-1" }
      const a = yield* store.claim(key, request("r1"))
      const b = yield* store.claim(other, request("r2"))
      const c = yield* store.claim({ ...key, threadId: "t-2" }, request("r3"))
      yield* store.append(a.claim, { runId: "r1", messages: "[\"a\"]" })
      yield* store.append(b.claim, { runId: "r2", messages: "[\"b\"]" })
      yield* store.append(c.claim, { runId: "r3", messages: "[\"c\"]" })
      expectEqual(Option.map(yield* store.load(key), (t) => t.messages), Option.some("[\"a\"]"), "acme t-1")
      expectEqual(Option.map(yield* store.load(other), (t) => t.messages), Option.some("[\"b\"]"), "globex t-1")
    }))

  test("retention forgets unclaimed threads last appended before a time, never a claimed one", (store) =>
    Effect.gen(function*() {
      const old = yield* store.claim(key, request("r1"))
      yield* store.append(old.claim, { runId: "r1", messages: "[]" })
      const busyKey = { ...key, threadId: "t-busy" }
      const busy = yield* store.claim(busyKey, request("r2", 1_000_000))
      yield* store.append(busy.claim, { runId: "r2", messages: "[]" })
      yield* store.claim(busyKey, request("r3", 1_000_000))
      yield* TestClock.adjust(10_000)
      const fresh = yield* store.claim({ ...key, threadId: "t-new" }, request("r4"))
      yield* store.append(fresh.claim, { runId: "r4", messages: "[]" })
      const pruned = yield* store.prune({ before: 5000 })
      expectEqual(pruned, 1, "pruned")
      expectEqual(Option.isNone(yield* store.load(key)), true, "the old thread")
      expectEqual(Option.isSome(yield* store.load(busyKey)), true, "the claimed thread")
      expectEqual(Option.isSome(yield* store.load({ ...key, threadId: "t-new" })), true, "the new thread")
    }))

  test("messages are kept byte for byte (unicode included)", (store) =>
    Effect.gen(function*() {
      const text = JSON.stringify([{ role: "user", content: "naïve 🚀 \u2028 \"q\"" }])
      const claimed = yield* store.claim(key, request("r1"))
      yield* store.append(claimed.claim, { runId: "r1", messages: text })
      expectEqual(Option.map(yield* store.load(key), (t) => t.messages), Option.some(text), "the messages")
    }))
}
