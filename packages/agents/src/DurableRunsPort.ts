/**
 * The operator's view of durable runs: each root run as the checkpoint store holds it, beside its
 * execution as the workflow engine holds it, and whether the two agree. A port: a console or a
 * CLI lists and inspects runs through it without depending on a workflow engine or a cluster;
 * `@agentkit/durable` implements it (`DurableRuns.portLayer`).
 *
 * @since 0.2.0
 */
import type { CheckpointStatus, CorruptEntry, StoreError } from "@agentkit/core"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"

/**
 * A run's execution as the engine holds it: `suspended` (waiting to be woken or resumed),
 * `done` or `failed` (complete, with that exit), or `none` (no result: running now, or not an
 * execution this engine knows).
 *
 * @example
 * ```ts
 * import type { DurableRunsPort } from "@agentkit/agents"
 *
 * const finished = (state: DurableRunsPort.EngineState) => state === "done" || state === "failed"
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export type EngineState = "suspended" | "done" | "failed" | "none"

/**
 * One durable run: the store's record (status, lease, entries waiting, decisions recorded) beside
 * the engine's execution, and, when they disagree, the problem in words (`undefined` when they
 * agree, or disagree only for as long as a sweep takes to reconcile them).
 *
 * @example
 * ```ts
 * import type { DurableRunsPort } from "@agentkit/agents"
 *
 * const line = (run: DurableRunsPort.RunView) => `${run.runId}: store ${run.store.status}, engine ${run.engine}`
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface RunView {
  readonly runId: string
  readonly agent: string
  readonly tenant: string
  readonly store: {
    readonly status: CheckpointStatus
    readonly updatedAt: number
    readonly lease: { readonly owner: string; readonly expiresAt: number } | undefined
    /** The ids and kinds of the entries a suspended run waits on. */
    readonly pending: ReadonlyArray<{ readonly id: string; readonly kind: string }>
    /** How many of them have a recorded decision. */
    readonly decided: number
  }
  readonly engine: EngineState
  /** The workflow version whose execution holds the run (`undefined`: none registered here knows it). */
  readonly version: number | undefined
  /** Why the store and the engine disagree for good (a sweep cannot reconcile them); `undefined` otherwise. */
  readonly problem: string | undefined
}

/**
 * Which runs to list: by store status and agent, a page at a time (`cursor` from the last page).
 *
 * @example
 * ```ts
 * import type { DurableRunsPort } from "@agentkit/agents"
 *
 * const query: DurableRunsPort.ListQuery = { status: "suspended", limit: 50 }
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface ListQuery {
  readonly status?: CheckpointStatus | undefined
  readonly agent?: string | undefined
  readonly tenant?: string | undefined
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

/**
 * The port.
 *
 * @example
 * ```ts
 * import type { DurableRunsPort } from "@agentkit/agents"
 *
 * const suspended = (port: DurableRunsPort.Service) => port.list({ status: "suspended" })
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface Service {
  /** A page of durable root runs, newest first, each with its engine state. */
  readonly list: (
    query?: ListQuery
  ) => Effect.Effect<
    { readonly runs: ReadonlyArray<RunView>; readonly cursor: string | undefined },
    StoreError | CorruptEntry
  >
  /** One root run (`None`: the store has no such run). */
  readonly inspect: (runId: string) => Effect.Effect<Option.Option<RunView>, StoreError | CorruptEntry>
  /**
   * The invariant check: every run of the registered agents whose store record and execution
   * disagree for good (finished in one and not the other, stuck past a sweep), with the problem
   * in words. Empty when the store and the engine agree.
   */
  readonly reconcile: Effect.Effect<ReadonlyArray<RunView>, StoreError | CorruptEntry>
}

/**
 * The durable runs an operator sees.
 *
 * @example
 * ```ts
 * import { DurableRunsPort } from "@agentkit/agents"
 * import { Effect } from "effect"
 *
 * const problems = Effect.flatMap(DurableRunsPort.DurableRunsPort, (port) => port.reconcile)
 * ```
 *
 * @since 0.2.0
 * @category services
 */
export class DurableRunsPort extends Context.Tag("@agentkit/agents/DurableRunsPort")<DurableRunsPort, Service>() {}
