/**
 * The checkpoint store port: where suspended and in-flight runs are saved so they can be resumed,
 * in this process or another, later. An in-memory store is here; durable stores are layers of the
 * same service.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

/**
 * A run's state: `running` (after a tool round), `suspended` (awaiting approval), `done` or
 * `failed` (terminal).
 *
 * @example
 * ```ts
 * import type { CheckpointStatus } from "@agentkit/core"
 *
 * const isTerminal = (status: CheckpointStatus) => status === "done" || status === "failed"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type CheckpointStatus = "running" | "suspended" | "done" | "failed"

/**
 * One saved version of a run. `state` is plain JSON data, deep-copied on save and on load.
 *
 * @example
 * ```ts
 * import type { Checkpoint } from "@agentkit/core"
 *
 * const describe = (checkpoint: Checkpoint) =>
 *   `${checkpoint.runId} v${checkpoint.version}: ${checkpoint.status} at ${new Date(checkpoint.createdAt).toISOString()}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Checkpoint {
  readonly runId: string
  readonly version: number
  readonly status: CheckpointStatus
  readonly state: unknown
  /** Unix milliseconds, from Effect's `Clock`. */
  readonly createdAt: number
}

/**
 * The store operations. Versions are assigned by the store (1, 2, 3, ... per run), so concurrent
 * saves of one run get distinct, contiguous versions.
 *
 * @example
 * ```ts
 * import { CheckpointStore } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const store: CheckpointStore.Service = CheckpointStore.makeMemory()
 * const program = Effect.zipRight(store.save("run-1", "suspended", { iteration: 2 }), store.versions("run-1")) // [1]
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Saves a new version of the run and returns it. */
  readonly save: (runId: string, status: CheckpointStatus, state: unknown) => Effect.Effect<Checkpoint>
  /** The newest version of the run, if any. */
  readonly latest: (runId: string) => Effect.Effect<Option.Option<Checkpoint>>
  /** One version of the run, if it exists. */
  readonly atVersion: (runId: string, version: number) => Effect.Effect<Option.Option<Checkpoint>>
  /** The run's versions, ascending. */
  readonly versions: (runId: string) => Effect.Effect<ReadonlyArray<number>>
  /** Forgets every version of the run (idempotent). */
  readonly delete: (runId: string) => Effect.Effect<void>
}

const copy = <A>(value: A): A => structuredClone(value)

/**
 * Makes an in-memory store (one per process; tests and single-process apps).
 *
 * @example
 * ```ts
 * import { CheckpointStore } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const store = CheckpointStore.makeMemory()
 * // one store shared by the process that suspends and the one that resumes:
 * const StoreLive = CheckpointStore.layer(store)
 * const program = Effect.gen(function* () {
 *   yield* store.save("run-1", "running", { iteration: 1 })
 *   return yield* store.latest("run-1")
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory = (): Service => {
  const runs = new Map<string, Array<Checkpoint>>()
  return {
    save: (runId, status, state) =>
      Effect.map(Clock.currentTimeMillis, (createdAt) => {
        const versions = runs.get(runId) ?? []
        const checkpoint: Checkpoint = {
          runId,
          version: (versions.at(-1)?.version ?? 0) + 1,
          status,
          state: copy(state),
          createdAt
        }
        versions.push(checkpoint)
        runs.set(runId, versions)
        return { ...checkpoint, state: copy(checkpoint.state) }
      }),
    latest: (runId) =>
      Effect.sync(() => {
        const last = runs.get(runId)?.at(-1)
        return last === undefined ? Option.none() : Option.some({ ...last, state: copy(last.state) })
      }),
    atVersion: (runId, version) =>
      Effect.sync(() => {
        const found = runs.get(runId)?.find((checkpoint) => checkpoint.version === version)
        return found === undefined ? Option.none() : Option.some({ ...found, state: copy(found.state) })
      }),
    versions: (runId) => Effect.sync(() => (runs.get(runId) ?? []).map((checkpoint) => checkpoint.version)),
    delete: (runId) =>
      Effect.sync(() => {
        runs.delete(runId)
      })
  }
}

/**
 * The checkpoint store service. It is optional: the agent loop reads it with
 * `Effect.serviceOption`, so it never appears in `agent.run`'s requirements.
 *
 * @example
 * ```ts
 * import { CheckpointStore } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const StoreLive = CheckpointStore.memory()
 * const program = agent.run(task).pipe(Effect.provide(StoreLive))
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class CheckpointStore extends Context.Tag("@agentkit/core/CheckpointStore")<CheckpointStore, Service>() {
  /** A layer of a fresh in-memory store. */
  static memory(): Layer.Layer<CheckpointStore> {
    return Layer.sync(CheckpointStore, makeMemory)
  }
  /** A layer of a given store value (share one in-memory store between several runs or agents). */
  static layer(store: Service): Layer.Layer<CheckpointStore> {
    return Layer.succeed(CheckpointStore, store)
  }
  /** Makes an in-memory store value. */
  static readonly makeMemory = makeMemory
}

/**
 * The checkpoint store's types: `CheckpointStore.Service` (the store operations).
 *
 * @example
 * ```ts
 * import { CheckpointStore } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const logged = (store: CheckpointStore.Service): CheckpointStore.Service => ({
 *   ...store,
 *   save: (runId, status, state) => Effect.tap(store.save(runId, status, state), (saved) => Effect.log(`${runId} v${saved.version} ${status}`))
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace CheckpointStore {
  /** @since 0.1.0 */
  export type Service = import("./CheckpointStore.js").Service
}
