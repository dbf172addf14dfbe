/**
 * The checkpoint store port and its in-memory store: spec-runtime §6.5 and the §9
 * `test_checkpointer` items, adapted to the port (versions 1, 2, 3 per run, isolated per run id,
 * deep copies, latest / atVersion / versions / delete).
 */
import { CheckpointStore } from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"

describe("CheckpointStore.makeMemory: round trips", () => {
  it.effect("save returns the checkpoint; latest reads it back", () =>
    Effect.gen(function* () {
      const store = CheckpointStore.makeMemory()
      const saved = yield* store.save("run-1", "running", { iteration: 1, messages: ["hi"] })
      expect(saved).toEqual({ runId: "run-1", version: 1, status: "running", state: { iteration: 1, messages: ["hi"] }, createdAt: 0 })
      const latest = yield* store.latest("run-1")
      expect(Option.getOrThrow(latest)).toEqual(saved)
    })
  )

  it.effect("an unknown run: latest and atVersion are None, versions is [], delete is fine", () =>
    Effect.gen(function* () {
      const store = CheckpointStore.makeMemory()
      expect(Option.isNone(yield* store.latest("nope"))).toBe(true)
      expect(Option.isNone(yield* store.atVersion("nope", 1))).toBe(true)
      expect(yield* store.versions("nope")).toEqual([])
      yield* store.delete("nope")
      expect(yield* store.versions("nope")).toEqual([])
    })
  )

  it.effect("the status is recorded, for every status", () =>
    Effect.gen(function* () {
      const store = CheckpointStore.makeMemory()
      for (const status of ["running", "suspended", "done", "failed"] as const) yield* store.save("run-1", status, { status })
      const statuses: Array<string> = []
      for (const version of yield* store.versions("run-1")) {
        statuses.push(Option.getOrThrow(yield* store.atVersion("run-1", version)).status)
      }
      expect(statuses).toEqual(["running", "suspended", "done", "failed"])
      expect(Option.getOrThrow(yield* store.latest("run-1")).status).toBe("failed")
    })
  )
})

describe("CheckpointStore.makeMemory: versions", () => {
  it.effect("versions 1, 2, 3 per run, isolated per run id", () =>
    Effect.gen(function* () {
      const store = CheckpointStore.makeMemory()
      const a1 = yield* store.save("a", "running", { n: 1 })
      const b1 = yield* store.save("b", "running", { n: 1 })
      const a2 = yield* store.save("a", "running", { n: 2 })
      const a3 = yield* store.save("a", "suspended", { n: 3 })
      const b2 = yield* store.save("b", "running", { n: 2 })
      expect([a1.version, a2.version, a3.version]).toEqual([1, 2, 3])
      expect([b1.version, b2.version]).toEqual([1, 2])
      expect(yield* store.versions("a")).toEqual([1, 2, 3])
      expect(yield* store.versions("b")).toEqual([1, 2])
      expect(Option.getOrThrow(yield* store.latest("a"))).toMatchObject({ runId: "a", version: 3, state: { n: 3 } })
      expect(Option.getOrThrow(yield* store.latest("b"))).toMatchObject({ runId: "b", version: 2, state: { n: 2 } })
    })
  )

  it.effect("atVersion finds the exact version, or None", () =>
    Effect.gen(function* () {
      const store = CheckpointStore.makeMemory()
      yield* store.save("run-1", "running", { n: 1 })
      yield* store.save("run-1", "running", { n: 2 })
      expect(Option.getOrThrow(yield* store.atVersion("run-1", 1)).state).toEqual({ n: 1 })
      expect(Option.getOrThrow(yield* store.atVersion("run-1", 2)).state).toEqual({ n: 2 })
      expect(Option.isNone(yield* store.atVersion("run-1", 3))).toBe(true)
      expect(Option.isNone(yield* store.atVersion("run-1", 0))).toBe(true)
    })
  )

  it.effect("10 concurrent saves of one run get the distinct, contiguous versions 1..10", () =>
    Effect.gen(function* () {
      const store = CheckpointStore.makeMemory()
      const saved = yield* Effect.forEach(
        Array.from({ length: 10 }, (_, i) => i),
        (i) => store.save("run-1", "running", { i }),
        { concurrency: "unbounded" }
      )
      expect(saved.map((checkpoint) => checkpoint.version).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
      expect(yield* store.versions("run-1")).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    })
  )

  it.effect("delete forgets every version of the run (and only that run); it is idempotent", () =>
    Effect.gen(function* () {
      const store = CheckpointStore.makeMemory()
      yield* store.save("a", "running", {})
      yield* store.save("a", "suspended", {})
      yield* store.save("b", "running", {})
      yield* store.delete("a")
      expect(yield* store.versions("a")).toEqual([])
      expect(Option.isNone(yield* store.latest("a"))).toBe(true)
      expect(Option.isNone(yield* store.atVersion("a", 1))).toBe(true)
      expect(yield* store.versions("b")).toEqual([1])
      yield* store.delete("a")
      expect(yield* store.versions("a")).toEqual([])
    })
  )

  it.effect("after a delete, a run starts again at version 1", () =>
    Effect.gen(function* () {
      const store = CheckpointStore.makeMemory()
      yield* store.save("a", "running", {})
      yield* store.save("a", "running", {})
      yield* store.delete("a")
      expect((yield* store.save("a", "running", {})).version).toBe(1)
    })
  )
})

describe("CheckpointStore.makeMemory: createdAt comes from Effect's Clock", () => {
  it.effect("the test clock at 0, then 42 ms later", () =>
    Effect.gen(function* () {
      const store = CheckpointStore.makeMemory()
      expect((yield* store.save("run-1", "running", {})).createdAt).toBe(0)
      yield* TestClock.adjust("42 millis")
      expect((yield* store.save("run-1", "running", {})).createdAt).toBe(42)
      expect(Option.getOrThrow(yield* store.atVersion("run-1", 1)).createdAt).toBe(0)
    })
  )
})

describe("CheckpointStore.makeMemory: state is deep-copied", () => {
  it.effect("mutating the caller's object after save never leaks into the store (nested arrays, maps, sets)", () =>
    Effect.gen(function* () {
      const store = CheckpointStore.makeMemory()
      const state = {
        messages: [{ role: "user", content: "hi", toolCalls: [{ id: "c1", arguments: { order_id: "A-771" } }] }],
        seen: new Set(["a"]),
        byId: new Map([["k", { v: 1 }]])
      }
      yield* store.save("run-1", "running", state)
      state.messages[0]!.content = "changed"
      state.messages[0]!.toolCalls[0]!.arguments.order_id = "ZZZ"
      state.messages.push({ role: "user", content: "more", toolCalls: [] })
      state.seen.add("b")
      state.byId.get("k")!.v = 2
      const loaded = Option.getOrThrow(yield* store.latest("run-1")).state as typeof state
      expect(loaded.messages).toEqual([{ role: "user", content: "hi", toolCalls: [{ id: "c1", arguments: { order_id: "A-771" } }] }])
      expect([...loaded.seen]).toEqual(["a"])
      expect(loaded.byId.get("k")).toEqual({ v: 1 })
    })
  )

  it.effect("mutating a loaded (or returned) state never changes what the store holds", () =>
    Effect.gen(function* () {
      const store = CheckpointStore.makeMemory()
      const returned = yield* store.save("run-1", "running", { list: [1, 2], nested: { deep: { x: 1 } } })
      ;(returned.state as { list: Array<number> }).list.push(99)
      const first = Option.getOrThrow(yield* store.latest("run-1")).state as { list: Array<number>; nested: { deep: { x: number } } }
      first.list.push(3)
      first.nested.deep.x = 42
      const atOne = Option.getOrThrow(yield* store.atVersion("run-1", 1)).state as typeof first
      atOne.list.length = 0
      expect(Option.getOrThrow(yield* store.latest("run-1")).state).toEqual({ list: [1, 2], nested: { deep: { x: 1 } } })
    })
  )

  it.effect("two loads are distinct copies", () =>
    Effect.gen(function* () {
      const store = CheckpointStore.makeMemory()
      yield* store.save("run-1", "running", { a: [1] })
      const one = Option.getOrThrow(yield* store.latest("run-1")).state
      const two = Option.getOrThrow(yield* store.latest("run-1")).state
      expect(one).toEqual(two)
      expect(one).not.toBe(two)
    })
  )

  it.effect("state that cannot be copied (a function) is a defect, not a silent loss", () =>
    Effect.gen(function* () {
      const store = CheckpointStore.makeMemory()
      const exit = yield* Effect.exit(store.save("run-1", "running", { f: () => 1 }))
      expect(exit._tag).toBe("Failure")
      expect(yield* store.versions("run-1")).toEqual([])
    })
  )
})

describe("CheckpointStore layers", () => {
  it.effect("CheckpointStore.layer(store) shares one store value between programs", () =>
    Effect.gen(function* () {
      const store = CheckpointStore.makeMemory()
      const layer = CheckpointStore.layer(store)
      yield* Effect.flatMap(CheckpointStore, (s) => s.save("run-1", "running", { n: 1 })).pipe(Effect.provide(layer))
      const versions = yield* Effect.flatMap(CheckpointStore, (s) => s.versions("run-1")).pipe(Effect.provide(layer))
      expect(versions).toEqual([1])
      expect(yield* store.versions("run-1")).toEqual([1])
    })
  )

  it.effect("CheckpointStore.memory() builds a fresh store each time the layer is built", () =>
    Effect.gen(function* () {
      const layer = CheckpointStore.memory()
      yield* Effect.flatMap(CheckpointStore, (s) => s.save("run-1", "running", {})).pipe(Effect.provide(layer))
      const fresh = yield* Effect.flatMap(CheckpointStore, (s) => s.versions("run-1")).pipe(Effect.provide(layer))
      expect(fresh).toEqual([])
      // within one build, the store is shared
      const shared = yield* Effect.gen(function* () {
        const s = yield* CheckpointStore
        yield* s.save("run-1", "running", {})
        return yield* Effect.flatMap(CheckpointStore, (again) => again.versions("run-1"))
      }).pipe(Effect.provide(Layer.fresh(layer)))
      expect(shared).toEqual([1])
    })
  )

  it("CheckpointStore.makeMemory is the same constructor as the static one", () => {
    expect(CheckpointStore.makeMemory).toBeTypeOf("function")
    const store = CheckpointStore.makeMemory()
    expect(Object.keys(store).sort()).toEqual(["atVersion", "delete", "latest", "save", "versions"])
  })
})
