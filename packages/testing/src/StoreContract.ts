/**
 * The store contract suite: what every implementation of the store ports (`CheckpointStore`,
 * `ExecutionLedger`) must do, as one set of tests any package registers against its own stores:
 * the in-memory ones in core, the SQL ones on SQLite and Postgres. It needs nothing but the
 * test function (`it` of `@effect/vitest`), so importing `@agentkit/testing` never loads vitest.
 *
 * Every test runs under `TestClock` (leases expire when the test moves the clock), in its own
 * scope, with fresh stores from the factory.
 *
 * @since 0.1.0
 */
import type { CheckpointStore, ExecutionLedger, LedgerConflict } from "@agentkit/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import type * as TestServices from "effect/TestServices"

/**
 * The stores under test, and the hook that plants a corrupt entry under a run id (a row whose
 * columns cannot be read back, however the implementation stores them).
 *
 * @example
 * ```ts
 * import { CheckpointStore, ExecutionLedger } from "@agentkit/core"
 * import type { StoreContract } from "@agentkit/testing"
 * import { Effect } from "effect"
 *
 * const memory: StoreContract.Stores = (() => {
 *   const checkpoints = CheckpointStore.makeMemory()
 *   return { checkpoints, ledger: ExecutionLedger.makeMemory(), plantCorrupt: (runId) => Effect.sync(() => checkpoints.unsafePlant(runId, "{")) }
 * })()
 * ```
 *
 * @since 0.1.0
 * @category testing
 */
export interface Stores {
  readonly checkpoints: CheckpointStore.Service
  readonly ledger: ExecutionLedger.Service
  readonly plantCorrupt: (runId: string) => Effect.Effect<void, unknown>
}

/**
 * What the suite is registered with: a name for its tests and a factory of fresh stores (scoped:
 * a SQL factory opens a database and closes it when the test ends).
 *
 * @example
 * ```ts
 * import { CheckpointStore, ExecutionLedger } from "@agentkit/core"
 * import type { StoreContract } from "@agentkit/testing"
 * import { Effect } from "effect"
 *
 * const options: StoreContract.Options = {
 *   name: "memory",
 *   make: Effect.sync(() => {
 *     const checkpoints = CheckpointStore.makeMemory()
 *     return { checkpoints, ledger: ExecutionLedger.makeMemory(), plantCorrupt: (runId: string) => Effect.sync(() => checkpoints.unsafePlant(runId, 42)) }
 *   })
 * }
 * ```
 *
 * @since 0.1.0
 * @category testing
 */
export interface Options {
  readonly name: string
  readonly make: Effect.Effect<Stores, unknown, Scope.Scope>
}

/**
 * The test function the suite registers its tests with: `it` from `@effect/vitest` fits.
 *
 * @example
 * ```ts
 * import type { StoreContract } from "@agentkit/testing"
 * import { it } from "@effect/vitest"
 *
 * const register: StoreContract.TestFunction = it
 * ```
 *
 * @since 0.1.0
 * @category testing
 */
export interface TestFunction {
  readonly effect: (name: string, self: () => Effect.Effect<void, unknown, TestServices.TestServices>) => void
}

const TTL = 30_000
const owner = (name: string) => ({ owner: name, ttlMs: TTL })

const root = (
  runId: string,
  fields: { readonly agent?: string; readonly tenant?: string; readonly state?: string; readonly threadId?: string } =
    {}
) => ({
  runId,
  rootRunId: runId,
  agent: fields.agent ?? "support",
  tenant: fields.tenant ?? "tenant-a",
  ...(fields.threadId === undefined ? {} : { threadId: fields.threadId }),
  state: fields.state ?? `{"run":"${runId}"}`
})

const fail = (message: string): never => {
  throw new Error(`store contract: ${message}`)
}

const expectEqual = <A>(actual: A, expected: A, what: string): void => {
  const a = JSON.stringify(actual)
  const e = JSON.stringify(expected)
  if (a !== e) fail(`${what}: expected ${e}, got ${a}`)
}

const expectTag = <E extends { readonly _tag: string }>(error: E | unknown, tag: string, what: string): E => {
  const got = typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : String(error)
  if (got !== tag) fail(`${what}: expected ${tag}, got ${got}`)
  return error as E
}

/** Runs `self` and gives its typed failure, failing the test if it succeeds. */
const refused = <A, E, R>(self: Effect.Effect<A, E, R>, what: string): Effect.Effect<E, never, R> =>
  Effect.flatMap(
    Effect.either(self),
    (result) => (Either.isLeft(result) ? Effect.succeed(result.left) : Effect.sync(() => fail(`${what} succeeded`)))
  )

const byteTexts = [
  "{}",
  "{\"a\":1,\"b\":[true,null,\"x\"]}",
  "{\"unicode\":\"é ∂ 😀 \\u0000 \\n\",\"nested\":{\"z\":1,\"a\":2}}",
  `{"big":"${"x".repeat(200_000)}"}`
]

/**
 * Registers the contract's tests with `it` (call it inside a `describe`).
 *
 * @example
 * ```ts
 * import { CheckpointStore, ExecutionLedger } from "@agentkit/core"
 * import { StoreContract } from "@agentkit/testing"
 * import { describe, it } from "@effect/vitest"
 * import { Effect } from "effect"
 *
 * describe("in-memory stores", () => {
 *   StoreContract.register(it, {
 *     name: "memory",
 *     make: Effect.sync(() => {
 *       const checkpoints = CheckpointStore.makeMemory()
 *       return { checkpoints, ledger: ExecutionLedger.makeMemory(), plantCorrupt: (runId: string) => Effect.sync(() => checkpoints.unsafePlant(runId, "{")) }
 *     })
 *   })
 * })
 * ```
 *
 * @since 0.1.0
 * @category testing
 */
export const register = (it: TestFunction, options: Options): void => {
  const test = (name: string, body: (stores: Stores) => Effect.Effect<void, unknown>) =>
    it.effect(`${options.name}: ${name}`, () => Effect.scoped(Effect.flatMap(options.make, body)))

  test("create, then load: the record reads back with the state text byte for byte", ({ checkpoints }) =>
    Effect.gen(function*() {
      for (const [i, text] of byteTexts.entries()) {
        const runId = `run-${i}`
        const { lease, version } = yield* checkpoints.create(root(runId, { state: text }), owner("a"))
        expectEqual(
          [version, lease.token, lease.owner, lease.rootRunId, lease.expiresAt],
          [1, 1, "a", runId, TTL],
          "the new lease"
        )
        const record = Option.getOrThrow(yield* checkpoints.load(runId))
        if (record.state !== text) fail(`state of ${runId} did not round-trip byte for byte`)
        expectEqual(
          [
            record.status,
            record.version,
            record.agent,
            record.tenant,
            record.rootRunId,
            record.parentRunId,
            record.result
          ],
          ["running", 1, "support", "tenant-a", runId, undefined, undefined],
          "the new record"
        )
        const next = `${text.slice(0, -1)}${text.length > 2 ? "," : ""}"v":2}`
        const saved = yield* checkpoints.save(lease, { runId, expectedVersion: 1, status: "suspended", state: next })
        const reloaded = Option.getOrThrow(yield* checkpoints.load(runId))
        if (reloaded.state !== next) fail(`saved state of ${runId} did not round-trip byte for byte`)
        expectEqual([saved, reloaded.version, reloaded.status], [2, 2, "suspended"], "after a save")
      }
      expectEqual(Option.isNone(yield* checkpoints.load("nope")), true, "an unknown run loads as None")
    }))

  test("create twice: RunExists; the first record is untouched", ({ checkpoints }) =>
    Effect.gen(function*() {
      yield* checkpoints.create(root("r"), owner("a"))
      expectTag(
        yield* refused(checkpoints.create(root("r", { state: "{}" }), owner("b")), "second create"),
        "RunExists",
        "second create"
      )
      expectEqual(Option.getOrThrow(yield* checkpoints.load("r")).state, "{\"run\":\"r\"}", "the first state")
    }))

  test("concurrent claims of a free run: exactly one winner, the others see LeaseHeld naming it", ({ checkpoints }) =>
    Effect.gen(function*() {
      const { lease } = yield* checkpoints.create(root("r"), owner("first"))
      yield* checkpoints.release(lease)
      const results = yield* Effect.forEach(
        Array.from({ length: 10 }, (_, i) => i),
        (i) => Effect.either(checkpoints.claim("r", owner(`w${i}`))),
        { concurrency: "unbounded" }
      )
      const winners = results.filter(Either.isRight)
      expectEqual(winners.length, 1, "claims that won")
      const winner = winners[0]!.right
      expectEqual(winner.lease.token, 2, "the winner's fencing token")
      for (const result of results.filter(Either.isLeft)) {
        const held = expectTag<{ readonly _tag: string; readonly owner: string }>(
          result.left,
          "LeaseHeld",
          "a losing claim"
        )
        expectEqual(held.owner, winner.lease.owner, "LeaseHeld names the holder")
      }
    }))

  test("a save with a stale token or a stale version: typed conflicts, nothing written", ({ checkpoints }) =>
    Effect.gen(function*() {
      const { lease } = yield* checkpoints.create(root("r"), owner("a"))
      const version = yield* checkpoints.save(lease, {
        runId: "r",
        expectedVersion: 1,
        status: "running",
        state: "{\"n\":2}"
      })
      const conflict = expectTag<{ readonly _tag: string; readonly expected: number; readonly actual: number }>(
        yield* refused(
          checkpoints.save(lease, { runId: "r", expectedVersion: 1, status: "running", state: "{\"n\":\"stale\"}" }),
          "stale version"
        ),
        "VersionConflict",
        "a save with a stale version"
      )
      expectEqual([conflict.expected, conflict.actual], [1, 2], "the conflict's versions")
      const forged = { ...lease, token: lease.token + 7 }
      expectTag(
        yield* refused(
          checkpoints.save(forged, {
            runId: "r",
            expectedVersion: version,
            status: "running",
            state: "{\"n\":\"forged\"}"
          }),
          "forged token"
        ),
        "StaleLease",
        "a save with a token that is not the lease's"
      )
      const record = Option.getOrThrow(yield* checkpoints.load("r"))
      expectEqual([record.version, record.state], [2, "{\"n\":2}"], "the record after refused saves")
    }))

  test("50 concurrent saves with the same expected version: exactly one succeeds, 49 VersionConflict", ({ checkpoints }) =>
    Effect.gen(function*() {
      const { lease } = yield* checkpoints.create(root("r"), owner("a"))
      const results = yield* Effect.forEach(
        Array.from({ length: 50 }, (_, i) => i),
        (i) =>
          Effect.either(
            checkpoints.save(lease, { runId: "r", expectedVersion: 1, status: "running", state: `{"writer":${i}}` })
          ),
        { concurrency: "unbounded" }
      )
      const won = results.flatMap((result, i) => (Either.isRight(result) ? [i] : []))
      expectEqual(won.length, 1, "saves that succeeded")
      for (const result of results) {
        if (Either.isLeft(result)) expectTag(result.left, "VersionConflict", "a losing save")
      }
      const record = Option.getOrThrow(yield* checkpoints.load("r"))
      expectEqual([record.version, record.state], [2, `{"writer":${won[0]}}`], "the winner's write is the record")
    }))

  test("finish writes a terminal marker; a save after finish and a repeated finish are RunFinished", ({ checkpoints }) =>
    Effect.gen(function*() {
      const { lease } = yield* checkpoints.create(root("r"), owner("a"))
      yield* checkpoints.finish(lease, {
        runId: "r",
        expectedVersion: 1,
        status: "done",
        result: "{\"output\":\"ok\"}"
      })
      const record = Option.getOrThrow(yield* checkpoints.load("r"))
      expectEqual(
        [record.status, record.version, record.result],
        ["done", 2, "{\"output\":\"ok\"}"],
        "the terminal marker"
      )
      expectTag(
        yield* refused(
          checkpoints.save(lease, { runId: "r", expectedVersion: 2, status: "running", state: "{}" }),
          "save after finish"
        ),
        "RunFinished",
        "a save after finish"
      )
      expectTag(
        yield* refused(
          checkpoints.finish(lease, { runId: "r", expectedVersion: 2, status: "failed", result: "{\"reason\":\"x\"}" }),
          "second finish"
        ),
        "RunFinished",
        "a repeated finish"
      )
      expectTag(
        yield* refused(checkpoints.claim("r", owner("b")), "claim after finish"),
        "RunFinished",
        "a claim of a finished run"
      )
      for (const status of ["failed", "cancelled"] as const) {
        const created = yield* checkpoints.create(root(`r-${status}`), owner("a"))
        yield* checkpoints.finish(created.lease, {
          runId: `r-${status}`,
          expectedVersion: 1,
          status,
          result: "{\"reason\":\"why\"}"
        })
        expectEqual(Option.getOrThrow(yield* checkpoints.load(`r-${status}`)).status, status, `a ${status} marker`)
      }
    }))

  test("lease expiry and takeover: the old owner's writes fail, the new owner's token is higher", ({ checkpoints }) =>
    Effect.gen(function*() {
      const { lease } = yield* checkpoints.create(root("r"), owner("dead"))
      expectTag(
        yield* refused(checkpoints.claim("r", owner("b")), "claim of a live lease"),
        "LeaseHeld",
        "a claim under a live lease"
      )
      yield* TestClock.adjust(TTL - 1)
      const beat = yield* checkpoints.heartbeat(lease, TTL)
      expectEqual(beat.lease.expiresAt, TTL - 1 + TTL, "a heartbeat extends the lease from now")
      yield* TestClock.adjust(TTL)
      const taken = yield* checkpoints.claim("r", owner("b"))
      expectEqual([taken.lease.token, taken.lease.owner, taken.record.status], [2, "b", "running"], "the takeover")
      expectTag(
        yield* refused(
          checkpoints.save(beat.lease, { runId: "r", expectedVersion: 1, status: "running", state: "{}" }),
          "old owner save"
        ),
        "StaleLease",
        "a save by the old owner"
      )
      expectTag(
        yield* refused(checkpoints.heartbeat(beat.lease, TTL), "old heartbeat"),
        "StaleLease",
        "a heartbeat by the old owner"
      )
      yield* checkpoints.release(beat.lease) // a lease that is not live is left alone
      expectTag(
        yield* refused(checkpoints.claim("r", owner("c")), "claim while b holds it"),
        "LeaseHeld",
        "the new lease is live"
      )
      yield* checkpoints.save(taken.lease, {
        runId: "r",
        expectedVersion: 1,
        status: "running",
        state: "{\"by\":\"b\"}"
      })
      yield* checkpoints.release(taken.lease)
      const again = yield* checkpoints.claim("r", owner("c"))
      expectEqual(again.lease.token, 3, "a released lease is claimable at once")
      expectTag(
        yield* refused(checkpoints.claim("missing", owner("c")), "claim of nothing"),
        "RunNotFound",
        "a claim of an unknown run"
      )
    }))

  test("sub-run records are written under the root's lease and lose it with the root", ({ checkpoints }) =>
    Effect.gen(function*() {
      const { lease } = yield* checkpoints.create(root("r"), owner("a"))
      const child = {
        runId: "r/research#c1",
        rootRunId: "r",
        parentRunId: "r",
        agent: "researcher",
        tenant: "tenant-a",
        state: "{\"child\":1}"
      }
      const created = yield* checkpoints.create(child, lease)
      expectEqual(created.version, 1, "the child's first version")
      const record = Option.getOrThrow(yield* checkpoints.load(child.runId))
      expectEqual(
        [record.parentRunId, record.rootRunId, record.lease],
        ["r", "r", undefined],
        "a child record has no lease of its own"
      )
      yield* checkpoints.save(lease, {
        runId: child.runId,
        expectedVersion: 1,
        status: "running",
        state: "{\"child\":2}"
      })
      yield* TestClock.adjust(TTL + 1)
      const taken = yield* checkpoints.claim("r", owner("b"))
      expectTag(
        yield* refused(
          checkpoints.save(lease, { runId: child.runId, expectedVersion: 2, status: "running", state: "{}" }),
          "child save under old lease"
        ),
        "StaleLease",
        "a child save under the superseded lease"
      )
      yield* checkpoints.finish(taken.lease, {
        runId: child.runId,
        expectedVersion: 2,
        status: "done",
        result: "{\"output\":\"x\"}"
      })
      expectEqual(Option.getOrThrow(yield* checkpoints.load(child.runId)).status, "done", "the child's marker")
      expectTag(
        yield* refused(checkpoints.create({ ...child, runId: "r/other" }, lease), "child under a stale lease"),
        "StaleLease",
        "a child created under a superseded lease"
      )
    }))

  test("listing with a cursor: stable order either way, complete, no duplicates; filters by status, agent, tenant, thread, root, tree, lease, time; counts by the same filters", ({ checkpoints }) =>
    Effect.gen(function*() {
      const ids: Array<string> = []
      for (let i = 0; i < 23; i++) {
        const runId = `run-${String(i).padStart(2, "0")}`
        ids.push(runId)
        const { lease } = yield* checkpoints.create(
          root(runId, {
            agent: i % 2 === 0 ? "even" : "odd",
            tenant: i % 3 === 0 ? "t3" : "tx",
            ...(i % 4 === 0 ? { threadId: "thread-a" } : {})
          }),
          owner("a")
        )
        if (i % 5 === 0) yield* checkpoints.finish(lease, { runId, expectedVersion: 1, status: "done", result: "{}" })
        if (i % 4 === 1) yield* checkpoints.release(lease)
        if (i % 7 !== 6) yield* TestClock.adjust(1) // some runs share an updatedAt: the run id breaks the tie
      }
      const all = (query: CheckpointStore.ListQuery) =>
        Effect.gen(function*() {
          const seen: Array<string> = []
          let cursor: string | undefined
          for (let pages = 0; pages < 100; pages++) {
            const page = yield* checkpoints.list({ ...query, cursor, limit: 4 })
            if (page.records.length > 4) fail("a page is longer than its limit")
            for (const record of page.records) seen.push(record.runId)
            cursor = page.cursor
            if (cursor === undefined) return seen
          }
          return fail("listing never ended")
        })
      const listed = yield* all({})
      expectEqual(listed, ids, "every record once, in (updatedAt, runId) order")
      expectEqual(yield* all({}), listed, "listing again gives the same order")
      expectEqual(yield* all({ agent: "even" }), ids.filter((_, i) => i % 2 === 0), "by agent")
      expectEqual(yield* all({ tenant: "t3" }), ids.filter((_, i) => i % 3 === 0), "by tenant")
      expectEqual(yield* all({ status: "done" }), ids.filter((_, i) => i % 5 === 0), "by status")
      expectEqual(yield* all({ threadId: "thread-a" }), ids.filter((_, i) => i % 4 === 0), "by thread")
      if (checkpoints.count !== undefined) {
        expectEqual(yield* checkpoints.count(), ids.length, "count: every record")
        expectEqual(
          yield* checkpoints.count({ tenant: "t3", status: "done", limit: 1, cursor: "ignored" }),
          ids.filter((_, i) => i % 3 === 0 && i % 5 === 0).length,
          "count: by tenant and status (limit and cursor ignored)"
        )
        expectEqual(
          yield* checkpoints.count({ threadId: "thread-a", updatedAfter: 2 }),
          listed.slice(3).filter((id) => ids.indexOf(id) % 4 === 0).length,
          "count: by thread and time"
        )
      }
      const now = yield* TestClock.currentTimeMillis
      expectEqual(
        yield* all({ status: "running", leaseExpiredAt: now }),
        ids.filter((_, i) => i % 5 !== 0 && i % 4 === 1),
        "running with a lease that is not live"
      )
      expectEqual(yield* all({ updatedBefore: 3 }), ids.slice(0, 3), "updated before")
      expectEqual(yield* all({ updatedAfter: 2 }), listed.slice(3), "updated after (exclusive)")
      expectEqual(yield* all({ order: "desc" }), [...listed].reverse(), "newest first, every record once across pages")
      expectEqual(
        yield* all({ order: "desc", agent: "odd" }),
        ids.filter((_, i) => i % 2 === 1).reverse(),
        "newest first, filtered"
      )
      expectEqual(yield* all({ rootRunId: "run-07" }), ["run-07"], "by run tree")
      const descPage = yield* checkpoints.list({ order: "desc", limit: 4 })
      expectTag(
        yield* refused(checkpoints.list({ cursor: descPage.cursor }), "a newest-first cursor used oldest-first"),
        "StoreError",
        "a cursor only serves the order it was made in"
      )
      const bad = yield* refused(checkpoints.list({ cursor: "not-a-cursor" }), "a forged cursor")
      expectTag(bad, "StoreError", "a cursor the store never returned")
    }))

  test("a corrupt entry: a typed CorruptEntry naming it; the other records read fine", ({ checkpoints, plantCorrupt }) =>
    Effect.gen(function*() {
      yield* checkpoints.create(root("good"), owner("a"))
      yield* plantCorrupt("bad")
      const error = expectTag<{ readonly _tag: string; readonly key: string }>(
        yield* refused(checkpoints.load("bad"), "load of a corrupt entry"),
        "CorruptEntry",
        "loading a corrupt entry"
      )
      expectEqual(error.key, "bad", "CorruptEntry names the entry")
      expectTag(
        yield* refused(checkpoints.claim("bad", owner("a")), "claim of a corrupt entry"),
        "CorruptEntry",
        "claiming a corrupt entry"
      )
      expectEqual(
        Option.getOrThrow(yield* checkpoints.load("good")).state,
        "{\"run\":\"good\"}",
        "a sound record next to it"
      )
    }))

  test("decisions: the first writer wins; the second gets AlreadyDecided naming who; concurrent deciders, one winner", ({ checkpoints }) =>
    Effect.gen(function*() {
      yield* checkpoints.create(root("r"), owner("a"))
      const first = yield* checkpoints.decide("r", "p-1", { decision: "{\"verdict\":\"approve\"}", by: "alice" })
      expectEqual(
        [first.pendingId, first.by, first.decision],
        ["p-1", "alice", "{\"verdict\":\"approve\"}"],
        "the recorded decision"
      )
      const second = expectTag<{ readonly _tag: string; readonly by: string; readonly decision: string }>(
        yield* refused(
          checkpoints.decide("r", "p-1", { decision: "{\"verdict\":\"reject\"}", by: "bob" }),
          "second decision"
        ),
        "AlreadyDecided",
        "a second decision"
      )
      expectEqual(
        [second.by, second.decision],
        ["alice", "{\"verdict\":\"approve\"}"],
        "AlreadyDecided names the first"
      )
      const racing = yield* Effect.forEach(
        Array.from({ length: 10 }, (_, i) => i),
        (i) => Effect.either(checkpoints.decide("r", "p-2", { decision: `{"n":${i}}`, by: `op${i}` })),
        { concurrency: "unbounded" }
      )
      expectEqual(racing.filter(Either.isRight).length, 1, "concurrent decisions that won")
      expectEqual((yield* checkpoints.decisions("r")).map((d) => d.pendingId), ["p-1", "p-2"], "decisions in order")
      expectTag(
        yield* refused(checkpoints.decide("missing", "p", { decision: "{}" }), "decide on nothing"),
        "RunNotFound",
        "a decision for an unknown run"
      )
    }))

  test("requestCancel reaches the owner through its heartbeat; prune forgets only old finished records", ({ checkpoints }) =>
    Effect.gen(function*() {
      const { lease } = yield* checkpoints.create(root("r"), owner("a"))
      yield* checkpoints.requestCancel("r", "operator")
      const beat = yield* checkpoints.heartbeat(lease, TTL)
      expectEqual(beat.cancelRequested?.by, "operator", "the heartbeat tells who asked to cancel")
      yield* checkpoints.finish(beat.lease, {
        runId: "r",
        expectedVersion: 1,
        status: "cancelled",
        result: "{\"reason\":\"run cancelled\"}"
      })
      expectTag(
        yield* refused(checkpoints.requestCancel("r", "operator"), "cancel a finished run"),
        "RunFinished",
        "cancelling a finished run"
      )
      const other = yield* checkpoints.create(root("s"), owner("a"))
      yield* checkpoints.decide("s", "p", { decision: "{}" })
      yield* TestClock.adjust(10)
      const later = yield* checkpoints.create(root("t"), owner("a"))
      yield* checkpoints.finish(later.lease, { runId: "t", expectedVersion: 1, status: "done", result: "{}" })
      const now = yield* TestClock.currentTimeMillis
      expectEqual(yield* checkpoints.prune({ finishedBefore: now }), 1, "records pruned")
      expectEqual(Option.isNone(yield* checkpoints.load("r")), true, "the old finished record is gone")
      expectEqual(Option.isSome(yield* checkpoints.load("s")), true, "a running record stays")
      expectEqual(Option.isSome(yield* checkpoints.load("t")), true, "a recently finished record stays")
      expectEqual((yield* checkpoints.decisions("s")).length, 1, "a running record's decisions stay")
      yield* checkpoints.release(other.lease)
    }))

  test("ledger: claim, complete, replay; a second claim without an outcome is in doubt; another digest is in doubt", ({ ledger }) =>
    Effect.gen(function*() {
      expectEqual((yield* ledger.claim("r/t0/c0", "d1"))._tag, "Claimed", "a first claim")
      const doubt = yield* ledger.claim("r/t0/c0", "d1")
      expectEqual(doubt._tag, "InDoubt", "a claim of a claimed, uncompleted call")
      if (doubt._tag === "InDoubt") {
        expectEqual([doubt.claimedAt, doubt.digest], [0, "d1"], "InDoubt says when and what was claimed")
      }
      yield* ledger.complete("r/t0/c0", { text: "charged $12", isError: false })
      const done = yield* ledger.claim("r/t0/c0", "d1")
      expectEqual(
        done,
        { _tag: "Completed", outcome: { text: "charged $12", isError: false } },
        "a completed call replays its outcome"
      )
      expectEqual((yield* ledger.claim("r/t0/c0", "d2"))._tag, "InDoubt", "the same key with other arguments")
      const racing = yield* Effect.forEach(Array.from({ length: 10 }), () => ledger.claim("r/t0/c1", "d"), {
        concurrency: "unbounded"
      })
      expectEqual(racing.filter((claim) => claim._tag === "Claimed").length, 1, "concurrent claims that won")
    }))

  test("ledger: in-doubt decisions: done records the outcome, failed the marked-failed text, retry removes the claim", ({ ledger }) =>
    Effect.gen(function*() {
      for (const key of ["done", "failed", "retry", "stale"]) yield* ledger.claim(key, "d")
      yield* ledger.resolve("done", { _tag: "Done", outcome: { text: "it went through", isError: false } })
      expectEqual(yield* ledger.claim("done", "d"), {
        _tag: "Completed",
        outcome: { text: "it went through", isError: false }
      }, "after done")
      yield* ledger.resolve("failed", { _tag: "Failed", reason: "the bank has no record" })
      const failed = yield* ledger.claim("failed", "d")
      expectEqual(
        failed._tag === "Completed" && failed.outcome.isError && failed.outcome.text.endsWith("the bank has no record"),
        true,
        "after failed"
      )
      yield* ledger.resolve("retry", { _tag: "Retry" })
      expectEqual((yield* ledger.claim("retry", "d"))._tag, "Claimed", "after retry the call can be claimed again")
      const conflict = yield* refused(ledger.resolve("done", { _tag: "Retry" }), "resolve a completed entry")
      expectEqual((conflict as LedgerConflict).state, "completed", "resolving a completed entry")
      const none = yield* refused(ledger.resolve("never-claimed", { _tag: "Retry" }), "resolve nothing")
      expectEqual((none as LedgerConflict).state, "none", "resolving an unknown key")
      yield* TestClock.adjust(5)
      const reclaimed = yield* refused(
        ledger.resolve("stale", { _tag: "Retry" }, { claimedAt: 5 }),
        "resolve another claim"
      )
      expectEqual((reclaimed as LedgerConflict).state, "reclaimed", "a resolution for another claim of the key")
      yield* TestClock.adjust(5)
      expectEqual(yield* ledger.prune({ before: 10 }), 2, "prune forgets completed entries only")
      expectEqual((yield* ledger.claim("stale", "d"))._tag, "InDoubt", "an in-doubt claim survives prune")
    }))
}
