/**
 * The span store contract suite: what every implementation of core's `SpanStore` port must do,
 * as one set of tests each package registers against its own store (the in-memory one in core,
 * the SQL one of `@agentkit/sql` on SQLite and Postgres). Like `StoreContract`, it needs only the
 * test function, so importing `@agentkit/testing` never loads vitest; every test runs in its own
 * scope under `TestClock`, with a fresh store from the factory.
 *
 * @since 0.1.0
 */
import type { SpanStore } from "@agentkit/core"
import { Tracing } from "@agentkit/core"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as TestServices from "effect/TestServices"

/**
 * A store under test: the port, `settle` (runs what the store does later on its own: a SQL store's
 * retention; nothing for the in-memory one, which forgets as it goes) and `reopen` (another view of
 * the same data: a second SQL store over the same database, as another process would open it; the
 * same store in memory).
 *
 * @example
 * ```ts
 * import { SpanStore } from "@agentkit/core"
 * import type { SpanStoreContract } from "@agentkit/testing"
 * import { Effect } from "effect"
 *
 * const store = SpanStore.makeMemory()
 * const subject: SpanStoreContract.Subject = { store, settle: Effect.void, reopen: Effect.succeed(store) }
 * ```
 *
 * @since 0.1.0
 * @category testing
 */
export interface Subject {
  readonly store: SpanStore.Service
  readonly settle: Effect.Effect<void, unknown>
  readonly reopen: Effect.Effect<SpanStore.Service, unknown, Scope.Scope>
}

/**
 * The limits a test makes its store with.
 *
 * @example
 * ```ts
 * import type { SpanStoreContract } from "@agentkit/testing"
 *
 * const limits: SpanStoreContract.Limits = { maxTraces: 3, maxSpansPerTrace: 5, maxValueLength: 64, maxEvents: 4 }
 * ```
 *
 * @since 0.1.0
 * @category testing
 */
export interface Limits {
  readonly maxTraces: number
  readonly maxSpansPerTrace: number
  readonly maxValueLength: number
  readonly maxEvents: number
}

/**
 * What the suite is registered with: a name and a factory of fresh stores with the given limits
 * (scoped: a SQL factory opens a database and closes it when the test ends).
 *
 * @example
 * ```ts
 * import { SpanStore } from "@agentkit/core"
 * import type { SpanStoreContract } from "@agentkit/testing"
 * import { Effect } from "effect"
 *
 * const options: SpanStoreContract.Options = {
 *   name: "memory",
 *   make: (limits) =>
 *     Effect.sync(() => {
 *       const store = SpanStore.makeMemory(limits)
 *       return { store, settle: Effect.void, reopen: Effect.succeed(store) }
 *     })
 * }
 * ```
 *
 * @since 0.1.0
 * @category testing
 */
export interface Options {
  readonly name: string
  readonly make: (limits: Limits) => Effect.Effect<Subject, unknown, Scope.Scope>
}

/**
 * The test function the suite registers its tests with: `it` from `@effect/vitest` fits.
 *
 * @example
 * ```ts
 * import type { SpanStoreContract } from "@agentkit/testing"
 * import { it } from "@effect/vitest"
 *
 * const register: SpanStoreContract.TestFunction = it
 * ```
 *
 * @since 0.1.0
 * @category testing
 */
export interface TestFunction {
  readonly effect: (name: string, self: () => Effect.Effect<void, unknown, TestServices.TestServices>) => void
}

const limits: Limits = { maxTraces: 50, maxSpansPerTrace: 100, maxValueLength: 256, maxEvents: 8 }

const fail = (message: string): never => {
  throw new Error(`span store contract: ${message}`)
}

/** JSON with object keys sorted: equal values print equal, whatever order a store keeps keys in. */
const canonical = (value: unknown): string =>
  JSON.stringify(
    value,
    (_, v: unknown) =>
      typeof v === "object" && v !== null && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
        : v
  )

const expectEqual = <A>(actual: A, expected: A, what: string): void => {
  const a = canonical(actual)
  const e = canonical(expected)
  if (a !== e) fail(`${what}: expected ${e}, got ${a}`)
}

/** A finished span; `key` sets the run tree's correlation id on it (agentkit sets it on run spans). */
const span = (
  traceId: string,
  spanId: string,
  fields: {
    readonly parent?: string
    readonly key?: string
    readonly startMs?: number
    readonly name?: string
    readonly attributes?: SpanStore.SpanRecord["attributes"]
    readonly events?: SpanStore.SpanRecord["events"]
  } = {}
): SpanStore.SpanRecord => ({
  traceId,
  spanId,
  ...(fields.parent === undefined ? {} : { parentSpanId: fields.parent }),
  name: fields.name ?? `span ${spanId}`,
  startMs: fields.startMs ?? 1_000,
  durationMs: 2.5,
  status: "ok",
  attributes: {
    ...(fields.key === undefined ? {} : { [Tracing.Attribute.conversationId]: fields.key }),
    ...fields.attributes
  },
  events: fields.events ?? []
})

/** A run tree: a root span carrying `key`, a model call and a tool call under it. */
const tree = (traceId: string, key: string, startMs: number): ReadonlyArray<SpanStore.SpanRecord> => [
  span(traceId, `${traceId}-model`, { parent: `${traceId}-root`, startMs: startMs + 1, name: "chat fake-model" }),
  span(traceId, `${traceId}-tool`, {
    parent: `${traceId}-root`,
    startMs: startMs + 2.25,
    name: "execute_tool lookup_order"
  }),
  // the root ends last, so it is offered last (as a tracer offers it)
  span(traceId, `${traceId}-root`, { key, startMs, name: "invoke_agent support" })
]

const offerAll = (store: SpanStore.Service, spans: ReadonlyArray<SpanStore.SpanRecord>) =>
  Effect.sync(() => spans.forEach(store.offer))

const names = (spans: ReadonlyArray<SpanStore.SpanRecord>) => spans.map((s) => s.name)

/**
 * Registers the contract's tests with `it` (call it inside a `describe`).
 *
 * @example
 * ```ts
 * import { SpanStore } from "@agentkit/core"
 * import { SpanStoreContract } from "@agentkit/testing"
 * import { describe, it } from "@effect/vitest"
 * import { Effect } from "effect"
 *
 * describe("in-memory span store", () => {
 *   SpanStoreContract.register(it, {
 *     name: "memory",
 *     make: (limits) =>
 *       Effect.sync(() => {
 *         const store = SpanStore.makeMemory(limits)
 *         return { store, settle: Effect.void, reopen: Effect.succeed(store) }
 *       })
 *   })
 * })
 * ```
 *
 * @since 0.1.0
 * @category testing
 */
export const register = (it: TestFunction, options: Options): void => {
  const test = (
    name: string,
    body: (subject: Subject) => Effect.Effect<void, unknown, Scope.Scope>,
    custom: Partial<Limits> = {}
  ) =>
    it.effect(`${options.name}: ${name}`, () =>
      Effect.scoped(Effect.flatMap(options.make({ ...limits, ...custom }), body)))

  test("a run tree's spans are found by its correlation id, every span of its traces, in start order; an unknown key finds none", ({ store }) =>
    Effect.gen(function*() {
      yield* offerAll(store, tree("t1", "run-1", 1_000))
      // a second trace of the same run tree (the run resumed later, in another process)
      yield* offerAll(store, tree("t2", "run-1", 5_000))
      const found = yield* store.trace("run-1")
      expectEqual(names(found), [
        "invoke_agent support",
        "chat fake-model",
        "execute_tool lookup_order",
        "invoke_agent support",
        "chat fake-model",
        "execute_tool lookup_order"
      ], "the spans of run-1")
      expectEqual(
        found[1],
        span("t1", "t1-model", { parent: "t1-root", startMs: 1_001, name: "chat fake-model" }),
        "a span read back"
      )
      expectEqual(yield* store.trace("run-2"), [], "an unknown key")
      expectEqual(yield* store.trace(""), [], "the empty key")
    }))

  test("run trees never mix: another tree's key, a prefix of it, or a pattern never returns this tree's spans", ({ store }) =>
    Effect.gen(function*() {
      yield* offerAll(store, tree("ta", "run-acme-1", 1_000))
      yield* offerAll(store, tree("tb", "run-globex-1", 2_000))
      const acme = yield* store.trace("run-acme-1")
      expectEqual([...new Set(acme.map((s) => s.traceId))], ["ta"], "run-acme-1's traces")
      const globex = yield* store.trace("run-globex-1")
      expectEqual([...new Set(globex.map((s) => s.traceId))], ["tb"], "run-globex-1's traces")
      for (const probe of ["run-acme", "run-%", "%", "run-acme-1' OR '1'='1", "RUN-ACME-1"]) {
        expectEqual(yield* store.trace(probe), [], `the key ${JSON.stringify(probe)}`)
      }
    }))

  test("hostile values are kept as the text they are, and bounded: markup verbatim, huge strings cut with an ellipsis, events capped", ({ store }) =>
    Effect.gen(function*() {
      const script = `<script>alert("x")</script><img src=x onerror=alert(1)> é 😀 \u0000 '; DROP TABLE spans; --`
      const huge = "A".repeat(1_000_000)
      const events = Array.from(
        { length: 1_000 },
        (_, i) => ({ name: `retry.attempt ${i}`, atMs: 1_000 + i, attributes: { big: huge } })
      )
      yield* offerAll(store, [
        span("th", "root", {
          key: "run-h",
          name: `<b>${huge}</b>`,
          attributes: { [Tracing.Attribute.toolCallArguments]: script, huge, list: [script, huge, 7, true] },
          events
        })
      ])
      const [kept] = yield* store.trace("run-h")
      if (kept === undefined) return fail("the hostile span was not kept")
      expectEqual(kept.attributes[Tracing.Attribute.toolCallArguments], script, "the markup argument")
      expectEqual(kept.attributes["huge"], `${"A".repeat(limits.maxValueLength)}…`, "the huge value")
      expectEqual(kept.attributes["list"], [script, `${"A".repeat(limits.maxValueLength)}…`, 7, true], "the list")
      expectEqual(
        kept.name.length <= limits.maxValueLength + 1 && kept.name.startsWith("<b>AAA"),
        true,
        "the name is cut"
      )
      expectEqual(kept.events.length, limits.maxEvents, "the events kept")
      expectEqual(kept.events[0]?.attributes["big"], `${"A".repeat(limits.maxValueLength)}…`, "an event's value")
      expectEqual(JSON.stringify(kept).length < 20_000, true, "the stored span is small")
    }))

  test("concurrent callers: 40 fibers offering and reading at once lose no span", ({ store }) =>
    Effect.gen(function*() {
      yield* Effect.forEach(
        Array.from({ length: 40 }, (_, i) => i),
        (i) =>
          Effect.zipRight(
            offerAll(store, tree(`c${i}`, `run-c${i % 4}`, 1_000 + i * 10)),
            store.trace(`run-c${i % 4}`)
          ),
        { concurrency: "unbounded", discard: true }
      )
      for (let k = 0; k < 4; k++) {
        const found = yield* store.trace(`run-c${k}`)
        expectEqual(found.length, 30, `the spans of run-c${k}`)
        expectEqual(new Set(found.map((s) => `${s.traceId}/${s.spanId}`)).size, 30, `distinct spans of run-c${k}`)
      }
    }))

  test("a trace keeps its first maxSpansPerTrace spans", ({ store }) =>
    Effect.gen(function*() {
      const spans = Array.from({ length: 12 }, (_, i) => span("tm", `s${i}`, { key: "run-m", startMs: 1_000 + i }))
      yield* offerAll(store, spans.slice(0, 7))
      yield* store.trace("run-m") // a durable store writes what it holds in between
      yield* offerAll(store, spans.slice(7))
      expectEqual((yield* store.trace("run-m")).map((s) => s.spanId), ["s0", "s1", "s2", "s3", "s4"], "the spans kept")
    }), { maxSpansPerTrace: 5 })

  test("beyond maxTraces the oldest traces are forgotten", ({ settle, store }) =>
    Effect.gen(function*() {
      for (let i = 0; i < 6; i++) yield* offerAll(store, tree(`o${i}`, `run-o${i}`, 1_000 + i * 1_000))
      yield* store.trace("run-o5")
      yield* settle
      const kept: Array<number> = []
      for (let i = 0; i < 6; i++) if ((yield* store.trace(`run-o${i}`)).length > 0) kept.push(i)
      expectEqual(kept, [3, 4, 5], "the traces kept")
    }), { maxTraces: 3 })

  test(
    "beyond maxTraces, traces of no run tree (no span carries a key) are forgotten before any run tree's",
    ({ settle, store }) =>
      Effect.gen(function*() {
        yield* offerAll(store, tree("k0", "run-k0", 1_000))
        yield* offerAll(store, tree("k1", "run-k1", 2_000))
        // the app's own spans outside any run, newer than both run trees
        for (let i = 0; i < 4; i++) {
          yield* offerAll(store, [span(`free${i}`, `free${i}-sql`, { startMs: 3_000 + i, name: "sql.execute" })])
        }
        yield* offerAll(store, tree("k2", "run-k2", 9_000))
        yield* store.trace("run-k2")
        yield* settle
        for (const key of ["run-k0", "run-k1", "run-k2"]) {
          expectEqual((yield* store.trace(key)).length, 3, `the spans of ${key}`)
        }
      }),
    { maxTraces: 4 }
  )

  test("what one store wrote, another view of it reads (another process, for a durable store)", ({ reopen, store }) =>
    Effect.gen(function*() {
      yield* offerAll(store, tree("tr", "run-r", 1_000))
      yield* store.trace("run-r")
      const other = yield* reopen
      expectEqual(names(yield* other.trace("run-r")), [
        "invoke_agent support",
        "chat fake-model",
        "execute_tool lookup_order"
      ], "read by the other view")
    }))
}
