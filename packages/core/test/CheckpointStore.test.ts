/**
 * The store ports' in-memory implementations: the store contract suite (`StoreContract` from
 * `@agentkit/testing`, the same suite the SQL stores run), then what only the in-memory stores
 * promise: bounded memory where it is safe (memo entries, ended runs' idempotency outcomes) and
 * no eviction by count where it is not (checkpoints, leases, ledger claims, terminal markers).
 */
import {
  AuditStore,
  CheckpointStore,
  ConfigurationError,
  ExecutionLedger,
  IdempotencyStore,
  MemoStore
} from "@agentkit/core"
import { Fixture, StoreContract } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Option, TestClock } from "effect"

describe("in-memory stores: the store contract", () => {
  StoreContract.register(it, {
    name: "memory",
    make: Effect.sync(() => {
      const checkpoints = CheckpointStore.makeMemory()
      return {
        checkpoints,
        ledger: ExecutionLedger.makeMemory(),
        plantCorrupt: (runId: string) =>
          Effect.sync(() => checkpoints.unsafePlant(runId, "{\"runId\":\"" + runId + "\",\"status\":\"banana\"}"))
      }
    })
  })

  it.effect("other kinds of corrupt entries are typed too: not text, not JSON, another run's row", () =>
    Effect.gen(function*() {
      const store = CheckpointStore.makeMemory()
      const { lease } = yield* store.create({ runId: "a", rootRunId: "a", agent: "x", tenant: "t", state: "{}" }, {
        owner: "o",
        ttlMs: 1000
      })
      store.unsafePlant("n", 42)
      store.unsafePlant("j", "{")
      const row = Option.getOrThrow(yield* store.load("a"))
      store.unsafePlant(
        "b",
        JSON.stringify({
          ...row,
          lease: undefined,
          cancelRequested: undefined,
          parentRunId: undefined,
          threadId: undefined,
          result: undefined
        })
      )
      for (const key of ["n", "j", "b"]) {
        const error = yield* Effect.flip(store.load(key))
        expect(error).toMatchObject({ _tag: "CorruptEntry", store: "checkpoints", key })
      }
      expect((yield* Effect.flip(store.load("b"))).message).toBe("checkpoints entry 'b' is corrupt: it holds run 'a'")
      // nothing was half-applied to the sound record
      expect(Option.getOrThrow(yield* store.load("a")).version).toBe(1)
      yield* store.release(lease)
    }))

  it.effect("create rejects a lease request of the wrong kind, and a non-positive ttl, with a StoreError naming what is accepted", () =>
    Effect.gen(function*() {
      const store = CheckpointStore.makeMemory()
      const bad = yield* Effect.flip(
        store.create({ runId: "a", rootRunId: "a", agent: "x", tenant: "t", state: "{}" }, { owner: "o", ttlMs: 0 })
      )
      expect(bad).toMatchObject({
        _tag: "StoreError",
        message: "ttlMs must be a positive number of milliseconds; got 0",
        retryable: false
      })
      const child = yield* Effect.flip(
        store.create({ runId: "a/c", rootRunId: "a", agent: "x", tenant: "t", state: "{}" }, { owner: "o", ttlMs: 10 })
      )
      expect(child.message).toBe("a sub-run's record is created under its root's lease")
      expect(store.size).toBe(0)
    }))
})

describe("in-memory stores: nothing that guards safety is evicted by count", () => {
  it.effect(
    "100,000 runs (running and finished) and 100,000 ledger claims all stay until an explicit prune",
    () =>
      Effect.gen(function*() {
        const store = CheckpointStore.makeMemory()
        const ledger = ExecutionLedger.makeMemory()
        for (let i = 0; i < 100_000; i++) {
          const runId = `run-${i}`
          const { lease } = yield* store.create({ runId, rootRunId: runId, agent: "a", tenant: "t", state: "{}" }, {
            owner: "o",
            ttlMs: 60_000
          })
          if (i % 3 === 2) yield* store.finish(lease, { runId, expectedVersion: 1, status: "done", result: "{}" })
          yield* ledger.claim(`${runId}/t0/c0`, "d")
          if (i % 2 === 0) yield* ledger.complete(`${runId}/t0/c0`, { text: "ok", isError: false })
        }
        yield* TestClock.adjust(Duration.days(365))
        expect(store.size).toBe(100_000)
        expect(ledger.size).toBe(100_000)
        expect(Option.getOrThrow(yield* store.load("run-2")).status).toBe("done")
        expect((yield* ledger.claim("run-1/t0/c0", "d"))._tag).toBe("InDoubt")
        const now = yield* TestClock.currentTimeMillis
        expect(yield* store.prune({ finishedBefore: now })).toBe(33_333)
        expect(yield* ledger.prune({ before: now })).toBe(50_000)
        expect([store.size, ledger.size]).toEqual([66_667, 50_000])
      }),
    60_000
  )
})

describe("in-memory stores: bounded where it is safe", () => {
  it.effect("MemoStore: 100,000 distinct keys leave maxEntries entries (least recently used dropped)", () =>
    Effect.gen(function*() {
      const store = MemoStore.makeMemory({ maxEntries: 1000 })
      const response = Fixture.response()
      yield* store.set("keep", response)
      for (let i = 0; i < 100_000; i++) {
        yield* store.set(`k${i}`, response)
        if (i % 100 === 0) yield* store.get("keep") // used often: never the least recently used
      }
      expect(store.size).toBe(1000)
      expect(Option.isSome(yield* store.get("keep"))).toBe(true)
      expect(Option.isSome(yield* store.get("k99999"))).toBe(true)
      expect(Option.isNone(yield* store.get("k0"))).toBe(true)
    }))

  it.effect("MemoStore: entries expire after their TTL (default 1 hour), and expired ones leave on the next write", () =>
    Effect.gen(function*() {
      const store = MemoStore.makeMemory({ maxEntries: 10 })
      const response = Fixture.response()
      yield* store.set("a", response)
      yield* store.set("b", response, Duration.minutes(1))
      yield* TestClock.adjust(Duration.minutes(2))
      expect(Option.isNone(yield* store.get("b"))).toBe(true)
      expect(Option.isSome(yield* store.get("a"))).toBe(true)
      yield* TestClock.adjust(Duration.hours(1))
      yield* store.set("c", response)
      expect(store.size).toBe(1)
      expect(() => MemoStore.makeMemory({ ttl: "soon" as never })).toThrow(ConfigurationError)
    }))

  it.effect("IdempotencyStore: 100,000 outcomes of live runs all stay; after their runs end they expire by age, never by count", () =>
    Effect.gen(function*() {
      const store = IdempotencyStore.makeMemory({ retention: "10 minutes" })
      const outcome = { value: "ok", text: "ok" }
      for (let i = 0; i < 100_000; i++) yield* store.set(`idem:${i}`, outcome, `run-${i % 100}`)
      yield* TestClock.adjust(Duration.days(30))
      yield* store.get("idem:0")
      expect(store.size).toBe(100_000) // no run ended: nothing expires, however old
      for (let run = 0; run < 50; run++) yield* store.endRun(`run-${run}`)
      yield* TestClock.adjust(Duration.minutes(9))
      expect(Option.isSome(yield* store.get("idem:0"))).toBe(true)
      yield* TestClock.adjust(Duration.minutes(2))
      expect(Option.isNone(yield* store.get("idem:0"))).toBe(true)
      expect(store.size).toBe(50_000)
      expect(Option.isSome(yield* store.get("idem:99"))).toBe(true)
    }))

  it.effect("IdempotencyStore: a run written to after it ended is live again (its outcomes stay)", () =>
    Effect.gen(function*() {
      const store = IdempotencyStore.makeMemory({ retention: "1 minute" })
      yield* store.set("a", { value: 1, text: "1" }, "run")
      yield* store.endRun("run")
      yield* store.set("b", { value: 2, text: "2" }, "run")
      yield* TestClock.adjust(Duration.minutes(5))
      expect(Option.isSome(yield* store.get("a"))).toBe(true)
      expect(store.size).toBe(2)
    }))

  it.effect("AuditStore: records in append order, listed by run with a cursor", () =>
    Effect.gen(function*() {
      const store = AuditStore.makeMemory()
      for (let i = 0; i < 7; i++) {
        yield* store.append({
          runId: i % 2 === 0 ? "even" : "odd",
          tenant: "t",
          tool: "x",
          callId: `c${i}`,
          decision: "executed",
          argHash: "h",
          at: i
        })
      }
      const first = yield* store.list({ runId: "even", limit: 2 })
      expect(first.records.map((r) => r.callId)).toEqual(["c0", "c2"])
      const second = yield* store.list({ runId: "even", limit: 2, cursor: first.cursor })
      expect(second.records.map((r) => r.callId)).toEqual(["c4", "c6"])
      expect(store.records).toHaveLength(7)
    }))
})

describe("layers", () => {
  it.effect("each port's memory() builds a fresh store; layer(store) shares one", () =>
    Effect.gen(function*() {
      const shared = CheckpointStore.makeMemory()
      const create = Effect.flatMap(CheckpointStore, (store) =>
        store.create({ runId: "r", rootRunId: "r", agent: "a", tenant: "t", state: "{}" }, { owner: "o", ttlMs: 100 }))
      yield* create.pipe(Effect.provide(CheckpointStore.layer(shared)))
      expect(shared.size).toBe(1)
      const again = yield* Effect.flip(create.pipe(Effect.provide(CheckpointStore.layer(shared))))
      expect(again._tag).toBe("RunExists")
      const fresh = Layer.mergeAll(
        CheckpointStore.memory(),
        ExecutionLedger.memory(),
        AuditStore.memory(),
        IdempotencyStore.memory(),
        MemoStore.memory()
      )
      yield* create.pipe(Effect.provide(fresh))
      yield* create.pipe(Effect.provide(fresh))
    }))
})
