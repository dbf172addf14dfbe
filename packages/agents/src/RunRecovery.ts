/**
 * The recovery worker: a scheduled fiber that finds runs no live process drives and finishes
 * them, with the agents it is given (by name):
 *
 * - a `running` top-level run whose lease expired (its process died) or was released (its fiber
 *   stopped) is taken over and driven on, with a run context rebuilt from its state (scope,
 *   autonomy, limits, correlation and thread ids);
 * - a `suspended` run every pending entry of which has a decision recorded in the store
 *   (`CheckpointStore.decide`, first writer wins) is resumed with those decisions;
 * - a run whose cancellation was requested and that no live process holds is finished
 *   `cancelled`.
 *
 * A run of an agent it was not given is left alone. Each drive goes through the same lifecycle as
 * `agent.run`, so two workers (or a worker and a process) never drive one run at once.
 *
 * @since 0.1.0
 */
import { CheckpointStore, RunContext } from "@agentkit/core"
import type { CorruptEntry, Invoker, StoreError } from "@agentkit/core"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type { Agent } from "./Agent.js"
import type { AgentResult } from "./AgentResult.js"
import * as Approval from "./Approval.js"
import * as Recorded from "./internal/runRecord.js"
import { RunLease } from "./RunLease.js"
import * as RunState from "./RunState.js"

/**
 * The options of the worker: the agents it may drive, and how often it looks (default every 10
 * seconds).
 *
 * @example
 * ```ts
 * import { RunRecovery } from "@agentkit/agents"
 *
 * const options: RunRecovery.Options<never> = { agents: [agent], every: "30 seconds" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<R> {
  readonly agents: ReadonlyArray<Agent<R>>
  readonly every?: Duration.DurationInput | undefined
}

/**
 * What one pass did, by run id.
 *
 * @example
 * ```ts
 * import type { RunRecovery } from "@agentkit/agents"
 *
 * const summary = (report: RunRecovery.Report) => `${report.recovered.length} recovered, ${report.failed.length} failed`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Report {
  /** Taken over and driven to their end (or to their next suspension). */
  readonly recovered: ReadonlyArray<string>
  /** Suspended runs resumed with their recorded decisions. */
  readonly resumed: ReadonlyArray<string>
  /** Finished `cancelled`, as requested. */
  readonly cancelled: ReadonlyArray<string>
  /** Drives that ended with an error (the run is as the lifecycle left it). */
  readonly failed: ReadonlyArray<{ readonly runId: string; readonly error: string }>
  /** Runs of agents this worker was not given. */
  readonly skipped: ReadonlyArray<string>
}

/** Every record a query lists, all pages first (so records a drive changes are not met twice). */
const listAll = (store: CheckpointStore.Service, query: CheckpointStore.ListQuery) =>
  Effect.gen(function*() {
    const records: Array<CheckpointStore.RunRecord> = []
    let cursor: string | undefined
    do {
      const page = yield* store.list({ ...query, cursor, limit: 100 })
      for (const record of page.records) records.push(record)
      cursor = page.cursor
    } while (cursor !== undefined)
    return records
  })

/** The run context a run had, rebuilt from its state. */
const contextOf = (record: CheckpointStore.RunRecord, state: RunState.RunState): RunContext.Options => ({
  runId: record.runId,
  threadId: record.threadId,
  correlationId: state.context.correlationId,
  scope: state.context.scope,
  autonomy: state.context.autonomy,
  budget: state.context.limits
})

const message = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? `${"_tag" in error ? String(error._tag) : "Error"}: ${error.message}`
    : String(error)

/**
 * One pass of the worker: recovers, resumes and cancels what it can, and reports what it did.
 *
 * @example
 * ```ts
 * import { RunRecovery } from "@agentkit/agents"
 * import { Effect } from "effect"
 *
 * const program = Effect.tap(RunRecovery.runOnce({ agents: [agent] }), (report) => Effect.log(report.recovered))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const runOnce = <R>(
  options: Options<R>
): Effect.Effect<Report, StoreError | CorruptEntry, CheckpointStore | Invoker | R> =>
  Effect.gen(function*() {
    const store = yield* CheckpointStore
    const lease = Option.getOrElse(yield* Effect.serviceOption(RunLease), () => RunLease.defaults)
    const ttlMs = Duration.toMillis(lease.ttl)
    const agents = new Map(options.agents.map((agent) => [agent.name, agent] as const))
    const report = {
      recovered: [] as Array<string>,
      resumed: [] as Array<string>,
      cancelled: [] as Array<string>,
      failed: [] as Array<{ runId: string; error: string }>,
      skipped: [] as Array<string>
    }
    const now = yield* Clock.currentTimeMillis

    const cancel = (record: CheckpointStore.RunRecord) =>
      Effect.gen(function*() {
        const claimed = yield* store.claim(record.runId, { owner: lease.owner, ttlMs })
        const by = record.cancelRequested?.by ?? "an operator"
        yield* store.finish(claimed.lease, {
          runId: record.runId,
          expectedVersion: claimed.record.version,
          status: "cancelled",
          result: Recorded.encodeReasonText(`Cancelled: cancelled by ${by}`)
        })
        report.cancelled.push(record.runId)
      })

    const drive = (
      record: CheckpointStore.RunRecord,
      into: Array<string>,
      go: (agent: Agent<R>, state: RunState.RunState) => Effect.Effect<AgentResult | undefined, unknown, Invoker | R>
    ) =>
      Effect.gen(function*() {
        const agent = agents.get(record.agent)
        if (agent === undefined) return report.skipped.push(record.runId)
        if (record.cancelRequested !== undefined) return yield* cancel(record)
        const state = yield* RunState.decode(record.runId, record.state)
        const done = yield* go(agent, state)
        if (done !== undefined) into.push(record.runId)
      }).pipe(
        Effect.catchAll((error) =>
          Effect.sync(() => report.failed.push({ runId: record.runId, error: message(error) }))
        )
      )

    for (const record of yield* listAll(store, { status: "running", rootOnly: true, leaseExpiredAt: now })) {
      yield* drive(
        record,
        report.recovered,
        (agent, state) => agent.run([]).pipe(RunContext.provide(contextOf(record, state)))
      )
    }
    for (const record of yield* listAll(store, { status: "suspended", rootOnly: true })) {
      if (!agents.has(record.agent)) {
        report.skipped.push(record.runId)
        continue
      }
      yield* drive(record, report.resumed, (agent, state) =>
        Effect.gen(function*() {
          const recorded = yield* store.decisions(record.runId)
          const decided = new Map(recorded.map((r) => [r.pendingId, r.decision] as const))
          if (!state.pending.every((entry) => decided.has(entry.id))) return undefined // still waiting for a person
          // recorded as JSON by the operator service; `agent.resume` checks each one against its entry
          const decisions = Approval.decideEach(
            state.pending,
            (entry) => JSON.parse(decided.get(entry.id)!) as Approval.Decision
          )
          return yield* agent.resume(record.runId, decisions).pipe(RunContext.provide(contextOf(record, state)))
        }))
    }
    return report
  })

/**
 * Starts the worker in the current scope: a pass now, then one every `every`; a pass that fails
 * (the store is down) is logged and the next one tries again. The fiber ends with the scope.
 *
 * @example
 * ```ts
 * import { RunRecovery } from "@agentkit/agents"
 * import { Effect } from "effect"
 *
 * const program = Effect.scoped(Effect.zipRight(RunRecovery.start({ agents: [agent] }), Effect.never))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const start = <R>(
  options: Options<R>
): Effect.Effect<void, never, Scope.Scope | CheckpointStore | Invoker | R> =>
  Effect.asVoid(
    Effect.forkScoped(
      Effect.repeat(
        Effect.catchAllCause(runOnce(options), (cause) => Effect.logWarning("run recovery: a pass failed", cause)),
        Schedule.spaced(options.every ?? "10 seconds")
      )
    )
  )

/**
 * The worker as a layer: it runs while the layer is alive.
 *
 * @example
 * ```ts
 * import { RunRecovery } from "@agentkit/agents"
 *
 * const RecoveryLive = RunRecovery.layer({ agents: [agent], every: "30 seconds" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <R>(options: Options<R>): Layer.Layer<never, never, CheckpointStore | Invoker | R> =>
  Layer.scopedDiscard(start(options))
