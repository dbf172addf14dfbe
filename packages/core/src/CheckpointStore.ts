/**
 * The checkpoint store port: one record per run (top-level runs and their sub-runs), written by
 * compare-and-set under a lease, so exactly one process drives a run at a time and a crashed
 * process's run can be taken over. The in-memory store is here; durable stores (`@agentkit/sql`)
 * are layers of the same service and pass the same contract suite (`StoreContract` in
 * `@agentkit/testing`).
 *
 * The rules every implementation keeps:
 *
 * - **Leases.** A top-level run's record carries a lease `{ owner, token, expiresAt }`. `create`
 *   makes the record holding a new lease (token 1); `claim` takes a run whose lease is not live
 *   (none, released or expired) and increments the token (fencing). A lease is live while its
 *   token is the record's and `expiresAt` is in the future (Effect's `Clock`, so `TestClock`
 *   drives it). A sub-run's record has no lease of its own: it is written under its root's.
 * - **Compare-and-set.** Every `save` and `finish` carries the lease and the version it read; it
 *   fails with `StaleLease` once the lease is lost, `VersionConflict` when the version moved, and
 *   `RunFinished` on a finished run. Versions are assigned as `expectedVersion + 1`, never at
 *   commit time.
 * - **Only the newest state is kept**; the version number keeps counting. The state is opaque
 *   text (canonical JSON) and comes back byte for byte.
 * - **Terminal markers.** `finish` records `done`, `failed` or `cancelled` with a result; the
 *   record stays (an idempotent start reads it) until an explicit `prune`. Nothing is evicted
 *   by count.
 * - **Decisions** on pending entries are recorded first-writer-wins.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type {
  AlreadyDecided,
  LeaseHeld,
  RunExists,
  RunFinished,
  RunNotFound,
  StaleLease,
  VersionConflict
} from "./CheckpointStoreError.js"
import { makeMemory as makeMemoryStore } from "./internal/checkpointStore.js"
import type { CorruptEntry, StoreError } from "./StoreError.js"

/**
 * A run's status: `running` (a process drives it, or did until it stopped), `suspended` (waiting
 * for decisions), and the terminal `done`, `failed` and `cancelled`.
 *
 * @example
 * ```ts
 * import type { CheckpointStatus } from "@agentkit/core"
 *
 * const isTerminal = (status: CheckpointStatus) => status === "done" || status === "failed" || status === "cancelled"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type CheckpointStatus = "running" | "suspended" | "done" | "failed" | "cancelled"

/**
 * The statuses, in order.
 *
 * @example
 * ```ts
 * import { CheckpointStore } from "@agentkit/core"
 *
 * CheckpointStore.statuses.includes("cancelled") // true
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const statuses: ReadonlyArray<CheckpointStatus> = ["running", "suspended", "done", "failed", "cancelled"]

/**
 * A lease on a top-level run: who holds it, its fencing token and when it expires (Unix ms).
 *
 * @example
 * ```ts
 * import type { CheckpointStore } from "@agentkit/core"
 *
 * const describe = (lease: CheckpointStore.Lease) => `${lease.rootRunId} #${lease.token} by ${lease.owner}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Lease {
  readonly rootRunId: string
  readonly owner: string
  readonly token: number
  readonly expiresAt: number
}

/**
 * One run's record. `state` is the newest checkpointed state (canonical JSON text, opaque to the
 * store); `result` is set when the run finished (canonical JSON: the run's result for `done`,
 * `{ reason }` for `failed` and `cancelled`).
 *
 * @example
 * ```ts
 * import type { CheckpointStore } from "@agentkit/core"
 *
 * const describe = (record: CheckpointStore.RunRecord) => `${record.runId} v${record.version}: ${record.status}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface RunRecord {
  readonly runId: string
  readonly rootRunId: string
  readonly parentRunId: string | undefined
  readonly agent: string
  /** The tenant key of the run's scope. */
  readonly tenant: string
  readonly threadId: string | undefined
  readonly status: CheckpointStatus
  readonly version: number
  readonly state: string
  readonly result: string | undefined
  readonly createdAt: number
  readonly updatedAt: number
  /** Top-level records only. */
  readonly lease: { readonly owner: string; readonly token: number; readonly expiresAt: number } | undefined
  /** Set by `requestCancel`: the owner's heartbeat (or the recovery worker) applies it. */
  readonly cancelRequested: { readonly by: string; readonly at: number } | undefined
}

/**
 * What `create` takes: the new record's identity and first state (its status is `running`).
 *
 * @example
 * ```ts
 * import type { CheckpointStore } from "@agentkit/core"
 *
 * const run: CheckpointStore.NewRun = { runId: "run-1", rootRunId: "run-1", agent: "support", tenant: "t", state: "{}" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface NewRun {
  readonly runId: string
  readonly rootRunId: string
  readonly parentRunId?: string | undefined
  readonly agent: string
  readonly tenant: string
  readonly threadId?: string | undefined
  readonly state: string
}

/**
 * Who asks for a lease and for how long.
 *
 * @example
 * ```ts
 * import type { CheckpointStore } from "@agentkit/core"
 *
 * const request: CheckpointStore.LeaseRequest = { owner: "worker-a", ttlMs: 30_000 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface LeaseRequest {
  readonly owner: string
  readonly ttlMs: number
}

/**
 * The filters of `list`. `leaseExpiredAt: now` keeps top-level records whose lease is not live at
 * that time; `cursor` is the one the previous page returned.
 *
 * @example
 * ```ts
 * import type { CheckpointStore } from "@agentkit/core"
 *
 * const stale: CheckpointStore.ListQuery = { status: "running", rootOnly: true, leaseExpiredAt: Date.now(), limit: 50 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ListQuery {
  readonly status?: CheckpointStatus | undefined
  readonly agent?: string | undefined
  readonly tenant?: string | undefined
  readonly rootOnly?: boolean | undefined
  readonly leaseExpiredAt?: number | undefined
  readonly updatedBefore?: number | undefined
  /** Only records last written after this time (Unix ms, exclusive). */
  readonly updatedAfter?: number | undefined
  /** Only the records of this run tree. */
  readonly rootRunId?: string | undefined
  /** Only the records of this conversation (`threadId`). */
  readonly threadId?: string | undefined
  /**
   * `asc` (the default: oldest change first) or `desc` (newest first). The order is (`updatedAt`,
   * `runId`) either way; a cursor is only good for the order it was made in.
   */
  readonly order?: "asc" | "desc" | undefined
  readonly cursor?: string | undefined
  /** Default 100. */
  readonly limit?: number | undefined
}

/**
 * A decision recorded on a pending entry. `decision` is opaque canonical JSON text.
 *
 * @example
 * ```ts
 * import type { CheckpointStore } from "@agentkit/core"
 *
 * const who = (recorded: CheckpointStore.RecordedDecision) => `${recorded.pendingId}: ${recorded.by ?? "unknown"}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface RecordedDecision {
  readonly rootRunId: string
  readonly pendingId: string
  readonly decision: string
  readonly by: string | undefined
  readonly at: number
}

/**
 * The store operations. Every method can fail with `StoreError` (the backend is unreachable) and
 * `CorruptEntry` (a record cannot be read back); the other errors are compare-and-set outcomes.
 *
 * @example
 * ```ts
 * import { CheckpointStore } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const store = yield* CheckpointStore
 *   const { lease } = yield* store.create({ runId: "run-1", rootRunId: "run-1", agent: "support", tenant: "t", state: "{}" }, { owner: "me", ttlMs: 30_000 })
 *   const version = yield* store.save(lease, { runId: "run-1", expectedVersion: 1, status: "running", state: '{"step":1}' })
 *   yield* store.finish(lease, { runId: "run-1", expectedVersion: version, status: "done", result: '{"output":"ok"}' })
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * Makes a record (status `running`, version 1). A top-level record (`runId === rootRunId`) is
   * created holding a new lease (token 1) for `{ owner, ttlMs }`; a sub-run's is written under
   * its root's live lease.
   */
  readonly create: (
    run: NewRun,
    lease: LeaseRequest | Lease
  ) => Effect.Effect<
    { readonly lease: Lease; readonly version: number },
    RunExists | RunNotFound | StaleLease | StoreError | CorruptEntry
  >
  /** Takes a top-level run whose lease is not live; the token goes up by one. */
  readonly claim: (
    rootRunId: string,
    request: LeaseRequest
  ) => Effect.Effect<
    { readonly lease: Lease; readonly record: RunRecord },
    RunNotFound | LeaseHeld | RunFinished | StoreError | CorruptEntry
  >
  /** Replaces the state of a record (`running` or `suspended`) and returns the new version. */
  readonly save: (
    lease: Lease,
    request: {
      readonly runId: string
      readonly expectedVersion: number
      readonly status: "running" | "suspended"
      readonly state: string
    }
  ) => Effect.Effect<number, RunNotFound | StaleLease | VersionConflict | RunFinished | StoreError | CorruptEntry>
  /** Extends a live lease by `ttlMs` from now; tells whether a cancellation was requested. */
  readonly heartbeat: (
    lease: Lease,
    ttlMs: number
  ) => Effect.Effect<
    { readonly lease: Lease; readonly cancelRequested: { readonly by: string; readonly at: number } | undefined },
    StaleLease | StoreError | CorruptEntry
  >
  /** Ends a lease now (the status is unchanged, so the next drive can take the run at once). A lease that is not live is left alone. */
  readonly release: (lease: Lease) => Effect.Effect<void, StoreError | CorruptEntry>
  /** Writes the terminal marker (and ends the lease of a top-level run). */
  readonly finish: (
    lease: Lease,
    request: {
      readonly runId: string
      readonly expectedVersion: number
      readonly status: "done" | "failed" | "cancelled"
      readonly result: string
    }
  ) => Effect.Effect<void, RunNotFound | StaleLease | VersionConflict | RunFinished | StoreError | CorruptEntry>
  /** The record, if any. */
  readonly load: (runId: string) => Effect.Effect<Option.Option<RunRecord>, StoreError | CorruptEntry>
  /** Records in a stable order (`updatedAt`, then `runId`, ascending or descending), a page at a time. */
  readonly list: (
    query?: ListQuery
  ) => Effect.Effect<
    { readonly records: ReadonlyArray<RunRecord>; readonly cursor: string | undefined },
    StoreError | CorruptEntry
  >
  /**
   * How many records match the query's filters (its cursor, limit and order are ignored), counted
   * without reading the records. Optional: a reader falls back to paging through `list`.
   */
  readonly count?: ((query?: ListQuery) => Effect.Effect<number, StoreError | CorruptEntry>) | undefined
  /** Records a decision on a pending entry of a run tree: the first decision wins. */
  readonly decide: (
    rootRunId: string,
    pendingId: string,
    decision: { readonly decision: string; readonly by?: string | undefined }
  ) => Effect.Effect<RecordedDecision, AlreadyDecided | RunNotFound | RunFinished | StoreError | CorruptEntry>
  /** The decisions recorded for a run tree, in the order they were made. */
  readonly decisions: (rootRunId: string) => Effect.Effect<ReadonlyArray<RecordedDecision>, StoreError | CorruptEntry>
  /** Asks the run's owner to cancel it. */
  readonly requestCancel: (
    rootRunId: string,
    by: string
  ) => Effect.Effect<void, RunNotFound | RunFinished | StoreError | CorruptEntry>
  /** Forgets finished records last written before `finishedBefore` (and their decisions); returns how many. */
  readonly prune: (options: { readonly finishedBefore: number }) => Effect.Effect<number, StoreError | CorruptEntry>
}

/**
 * The in-memory store: the port plus a way for tests to plant a raw (corrupt) entry.
 *
 * @example
 * ```ts
 * import { CheckpointStore } from "@agentkit/core"
 *
 * const store: CheckpointStore.MemoryStore = CheckpointStore.makeMemory()
 * store.unsafePlant("run-1", "not a record") // load("run-1") now fails with CorruptEntry
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryStore extends Service {
  /** Writes a raw entry under `runId`, bypassing every check: how the contract suite plants a corrupt one. */
  readonly unsafePlant: (runId: string, raw: unknown) => void
  /** How many records it holds. */
  readonly size: number
}

/**
 * Makes an in-memory store. It keeps each record as an encoded entry and reads it back on every
 * operation, as a SQL store reads its rows, so it fails the same way on a corrupt entry. One per
 * process: tests and single-process apps.
 *
 * @example
 * ```ts
 * import { CheckpointStore } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const store = CheckpointStore.makeMemory()
 * // one store shared by the process that suspends and the one that resumes:
 * const program = agent.run(task).pipe(Effect.provide(CheckpointStore.layer(store)))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory = (): MemoryStore => makeMemoryStore()

/**
 * The checkpoint store service. It is optional: the agent loop reads it with
 * `Effect.serviceOption`, so it never appears in `agent.run`'s requirements; without one nothing
 * is encoded, leased or saved.
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
  /** The statuses. */
  static readonly statuses = statuses
}

/**
 * The checkpoint store's types, reachable through the `CheckpointStore` class.
 *
 * @example
 * ```ts
 * import { CheckpointStore } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const logged = (store: CheckpointStore.Service): CheckpointStore.Service => ({
 *   ...store,
 *   save: (lease, request) => Effect.tap(store.save(lease, request), (version) => Effect.log(`${request.runId} v${version}`))
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace CheckpointStore {
  /** @since 0.1.0 */
  export type Service = import("./CheckpointStore.js").Service
  /** @since 0.1.0 */
  export type MemoryStore = import("./CheckpointStore.js").MemoryStore
  /** @since 0.1.0 */
  export type Lease = import("./CheckpointStore.js").Lease
  /** @since 0.1.0 */
  export type RunRecord = import("./CheckpointStore.js").RunRecord
  /** @since 0.1.0 */
  export type NewRun = import("./CheckpointStore.js").NewRun
  /** @since 0.1.0 */
  export type LeaseRequest = import("./CheckpointStore.js").LeaseRequest
  /** @since 0.1.0 */
  export type ListQuery = import("./CheckpointStore.js").ListQuery
  /** @since 0.1.0 */
  export type RecordedDecision = import("./CheckpointStore.js").RecordedDecision
  /** @since 0.1.0 */
  export type Status = import("./CheckpointStore.js").CheckpointStatus
}
