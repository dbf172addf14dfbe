/**
 * The durable runs of a process (experimental): start a run on a registered workflow version,
 * record a decision (checked against the run's pending entry, then written to the checkpoint
 * store: the source of truth), and sweep: wake every suspended run whose entries are all decided
 * (its `DurableDeferred` completed, then `Workflow.resume`, the mitigation for the v3 lost-wake
 * bug Effect-TS/effect#6318), and report what is waiting, what was woken, the runs no registered
 * version knows (nothing driven; their messages made readable again on a cluster runner), the stuck ones (decided long ago, still suspended) and the running
 * ones whose lease expired (resumed when their execution is suspended: nothing else would drive
 * them again). The figures are also set on gauges (`metrics`).
 *
 * Decisions are recorded through the agents `Operator` service (the one the console and the CLI
 * use): the tenant is checked before anything is written, the kind, digest and (for `edit`) the
 * arguments against the pending entry, the first decision wins, and each one is audited.
 *
 * @since 0.2.0
 * @experimental
 */
import { DurableRunsPort, Operator, RunState } from "@agentkit/agents"
import type { Approval } from "@agentkit/agents"
import { CheckpointStore } from "@agentkit/core"
import type { CheckpointStatus, CorruptEntry, StoreError } from "@agentkit/core"
import * as ClusterSchema from "@effect/cluster/ClusterSchema"
import { EntityAddress } from "@effect/cluster/EntityAddress"
import { EntityId } from "@effect/cluster/EntityId"
import { EntityType } from "@effect/cluster/EntityType"
import { MessageStorage } from "@effect/cluster/MessageStorage"
import { Sharding } from "@effect/cluster/Sharding"
import * as DurableDeferred from "@effect/workflow/DurableDeferred"
import type { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as DurableAgent from "./DurableAgent.js"
import { UnknownWorkflowVersion } from "./DurableErrors.js"
import * as DurableMetrics from "./DurableMetrics.js"

/**
 * What a sweep found: runs woken (every entry decided), runs still waiting on a decision, and
 * suspended runs of a registered agent with no reply to their request here (never driven).
 *
 * @example
 * ```ts
 * import type { DurableRuns } from "@agentkit/durable"
 *
 * const line = (report: DurableRuns.SweepReport) => `woken ${report.woken.length}, waiting ${report.waiting.length}`
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface SweepReport {
  /** Suspended runs whose entries were all decided: their deferred completed, `Workflow.resume` called. */
  readonly woken: ReadonlyArray<string>
  /** Suspended runs with an entry not decided yet. */
  readonly waiting: ReadonlyArray<string>
  /**
   * Decided, suspended runs of a registered agent with no reply to their request here: a version
   * not registered, or a request that waits to be read again. Nothing is driven; on a cluster
   * runner their execution's messages are made readable again (`MessageStorage.resetAddress`).
   */
  readonly unknownVersion: ReadonlyArray<string>
  /** Of `woken`: runs decided longer than `stuckAfter` ago and still suspended (a lost wake, or no runner applied it). */
  readonly stuck: ReadonlyArray<string>
  /** Running records of these agents whose lease expired: their runner stopped and none took them over yet. */
  readonly expiredLeases: ReadonlyArray<string>
  /**
   * Of `expiredLeases`: runs with no live execution (it is suspended: its body stopped on a
   * defect, e.g. the engine's storage failing), resumed by this sweep (`Workflow.resume`).
   */
  readonly resumed: ReadonlyArray<string>
  /**
   * Runs whose store record and execution disagree for good (the engine ended the execution while
   * the store holds the run running or suspended): nothing drives them again; `reconcile` says why.
   */
  readonly diverged: ReadonlyArray<string>
}

/**
 * Why a decision was refused (nothing was recorded): the `Operator`'s errors. `RunNotFound` (no
 * such root run), `OtherTenant` (the run is not one of the caller's tenants), `UnknownPending`,
 * `InvalidDecision` (a verdict the entry's kind does not accept, or not a decision),
 * `DigestMismatch` (a stale digest), `ToolArgumentError` (edited arguments the tool's recorded
 * schema refuses), `AlreadyDecided` (naming the first decision and who made it).
 *
 * @example
 * ```ts
 * import type { DurableRuns } from "@agentkit/durable"
 *
 * const tag = (error: DurableRuns.DecideError) => error._tag
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export type DecideError = Operator.DecideError

/**
 * The service.
 *
 * @example
 * ```ts
 * import type { DurableRuns } from "@agentkit/durable"
 *
 * const sweepOnce = (runs: DurableRuns.Service) => runs.sweep
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface Service {
  /** Starts a run of `agent` on workflow `version`; an unregistered version fails and nothing runs. */
  readonly start: (
    agent: string,
    version: number,
    payload: DurableAgent.Payload
  ) => Effect.Effect<string, UnknownWorkflowVersion>
  /**
   * Records a decision on a suspended run's pending entry through the `Operator` (with `access`,
   * only on a run of one of its tenants); a runner's `sweep` applies it once every entry is decided.
   */
  readonly decide: (
    rootRunId: string,
    pendingId: string,
    decision: unknown,
    by: string,
    access?: Operator.Access
  ) => Effect.Effect<Operator.RecordedDecision, DecideError>
  /**
   * Wakes the suspended runs whose entries are all decided, resumes the running ones whose lease
   * expired and whose execution is suspended, and resumes the suspended executions of runs the
   * store finished since the last sweep (their bodies replay to the recorded end); reports what it
   * found. A run whose execution is complete is never woken.
   */
  readonly sweep: Effect.Effect<SweepReport, StoreError | CorruptEntry>
  /** A page of root runs of the registered agents, each with its engine state (`DurableRunsPort`). */
  readonly list: DurableRunsPort.Service["list"]
  /** One root run with its engine state (`DurableRunsPort`). */
  readonly inspect: DurableRunsPort.Service["inspect"]
  /**
   * The invariant check: the runs of the registered agents whose store record and execution
   * disagree for good, or for longer than `stuckAfter` (a sweep did not reconcile them).
   */
  readonly reconcile: DurableRunsPort.Service["reconcile"]
}

/**
 * The durable runs of this process.
 *
 * @example
 * ```ts
 * import { DurableRuns } from "@agentkit/durable"
 * import { Effect } from "effect"
 *
 * const report = Effect.flatMap(DurableRuns.DurableRuns, (runs) => runs.sweep)
 * ```
 *
 * @since 0.2.0
 * @category services
 */
export class DurableRuns extends Context.Tag("@agentkit/durable/DurableRuns")<DurableRuns, Service>() {}

/**
 * The agents package's `DurableRunsPort` over this process's `DurableRuns`: list, inspect and
 * reconcile for a console that depends on no workflow engine.
 *
 * @example
 * ```ts
 * import { DurableRuns } from "@agentkit/durable"
 *
 * const Port = DurableRuns.portLayer
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const portLayer: Layer.Layer<DurableRunsPort.DurableRunsPort, never, DurableRuns> = Layer.effect(
  DurableRunsPort.DurableRunsPort,
  Effect.map(DurableRuns, ({ inspect, list, reconcile }) => ({ list, inspect, reconcile }))
)

/** A decision as the `Operator` takes it: the caller's `by` wins; a value that is not a record is checked as a verdict. */
const withBy = (value: unknown, by: string): Approval.Decision & { readonly by: string } =>
  (typeof value === "object" && value !== null && !Array.isArray(value) ? { ...value, by } : { verdict: value, by }) as
    & Approval.Decision
    & {
      readonly by: string
    }

/** The durable agents' workflows, registered with the engine. */
const registered = (agents: ReadonlyArray<DurableAgent.DurableAgent<never>>) => {
  const byName = new Map<string, Array<DurableAgent.DurableAgent<never>>>()
  for (const durable of agents) {
    const versions = byName.get(durable.agent.name) ?? []
    if (versions.some((v) => v.version === durable.version)) {
      throw new TypeError(`DurableRuns: agent '${durable.agent.name}' version ${durable.version} is registered twice`)
    }
    versions.push(durable)
    byName.set(durable.agent.name, versions)
  }
  return byName
}

/**
 * The gauges a sweep sets: suspended runs decided but not applied (woken by this sweep), the
 * stuck ones among them, and running records whose lease expired.
 *
 * @example
 * ```ts
 * import { DurableRuns } from "@agentkit/durable"
 * import { Metric } from "effect"
 *
 * const stuck = Metric.value(DurableRuns.metrics.stuck)
 * ```
 *
 * @since 0.2.0
 * @category metrics
 */
export const metrics = {
  decidedNotApplied: Metric.gauge("agentkit_durable_decided_not_applied", {
    description: "suspended runs whose entries are all decided, not yet applied"
  }),
  stuck: Metric.gauge("agentkit_durable_stuck_runs", {
    description: "suspended runs decided longer than stuckAfter ago"
  }),
  expiredLeases: Metric.gauge("agentkit_durable_expired_leases", {
    description: "running runs whose lease expired, not taken over"
  })
} as const

/**
 * The options of `layer`.
 *
 * @example
 * ```ts
 * import type { DurableRuns } from "@agentkit/durable"
 *
 * const options: DurableRuns.Options = { stuckAfter: "2 minutes" }
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /** How long after its last decision a still-suspended run counts as stuck (default 1 minute). */
  readonly stuckAfter?: Duration.DurationInput | undefined
}

/**
 * The service over the given durable agents (every version a runner can drive), the checkpoint
 * store, the workflow engine and the `Operator` (`Operator.layer` over the same stores).
 *
 * @example
 * ```ts
 * import { Agent, Operator } from "@agentkit/agents"
 * import { DurableAgent, DurableRuns } from "@agentkit/durable"
 * import { Layer } from "effect"
 *
 * const support = DurableAgent.make(Agent.make({ name: "support", model: "claude-sonnet-4-6" }), { version: 1 })
 * // the Operator over the same stores the runs use (CheckpointStore, AuditStore)
 * const runs = DurableRuns.layer([support]).pipe(Layer.provideMerge(Operator.Operator.layer))
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = <R>(
  agents: ReadonlyArray<DurableAgent.DurableAgent<R>>,
  options: Options = {}
): Layer.Layer<DurableRuns, never, CheckpointStore | WorkflowEngine | Operator.Operator> =>
  Layer.effect(
    DurableRuns,
    Effect.gen(function*() {
      const store = yield* CheckpointStore
      const operator = yield* Operator.Operator
      const engine = yield* Effect.context<WorkflowEngine>()
      const byName = registered(agents as unknown as ReadonlyArray<DurableAgent.DurableAgent<never>>)
      const stuckAfter = Duration.toMillis(Duration.decode(options.stuckAfter ?? "1 minute"))

      const start: Service["start"] = (agent, version, payload) => {
        const versions = byName.get(agent) ?? []
        const durable = versions.find((v) => v.version === version)
        if (durable === undefined) {
          return Effect.fail(
            new UnknownWorkflowVersion({ agent, version, known: versions.map((v) => v.version).sort((a, b) => a - b) })
          )
        }
        return Effect.provide(durable.start(payload), engine)
      }

      const decide: Service["decide"] = (rootRunId, pendingId, value, by, access) =>
        operator.decide(rootRunId, pendingId, withBy(value, by), access)

      /** A run's execution: its state and the version that holds it (the first registered one that knows it). */
      const engineOf = (durables: ReadonlyArray<DurableAgent.DurableAgent<never>>, runId: string) =>
        Effect.gen(function*() {
          for (const durable of durables) {
            const result = yield* durable.poll(runId)
            if (result === undefined) continue
            const state: DurableRunsPort.EngineState = result._tag === "Suspended"
              ? "suspended"
              : result.exit._tag === "Success"
              ? "done"
              : "failed"
            return { state, durable: durable as DurableAgent.DurableAgent<never> | undefined }
          }
          return { state: "none" as DurableRunsPort.EngineState, durable: undefined }
        }).pipe(Effect.provide(engine))

      const storage = yield* Effect.serviceOption(MessageStorage)
      const sharding = yield* Effect.serviceOption(Sharding)
      /**
       * On a cluster runner: makes the unprocessed messages of a run's execution readable again
       * (`MessageStorage.resetAddress`) and reads them now. A runner paused past its shard locks can
       * come back, read the run's request that a wake reset, mark it read and skip it as already
       * processing (its own stale execution of it); the shard's owner does not read a message marked
       * read within the last 10 minutes, so the wake would wait that long. Every wake and resume of
       * the sweep does it, and so does a sweep that finds no reply to a decided run's request. For a
       * message in flight this changes nothing: its runner skips it again.
       */
      const readable = (durables: ReadonlyArray<DurableAgent.DurableAgent<never>>, runId: string) =>
        Effect.gen(function*() {
          if (Option.isNone(storage) || Option.isNone(sharding)) return
          for (const durable of durables) {
            const entityId = EntityId.make(yield* durable.executionId(runId))
            const group = Context.get(durable.workflow.annotations, ClusterSchema.ShardGroup)(entityId)
            yield* storage.value.resetAddress(
              new EntityAddress({
                entityType: EntityType.make(`Workflow/${durable.workflow.name}`),
                entityId,
                shardId: sharding.value.getShardId(entityId, group)
              })
            )
          }
          yield* sharding.value.pollStorage
        }).pipe(
          Effect.catchAll((error) => Effect.logWarning("durable sweep: a run's messages could not be reset", error))
        )

      /** Wakes a suspended execution whose run's entries are all decided. */
      const wake = (
        durable: DurableAgent.DurableAgent<never>,
        runId: string,
        pending: ReadonlyArray<Approval.PendingEntry>
      ) =>
        Effect.gen(function*() {
          const executionId = yield* durable.executionId(runId)
          const deferred = durable.decided(pending)
          const token = DurableDeferred.tokenFromExecutionId(deferred, { workflow: durable.workflow, executionId })
          yield* DurableDeferred.succeed(deferred, { token, value: undefined })
          yield* durable.workflow.resume(executionId)
        }).pipe(Effect.provide(engine), Effect.zipRight(readable([durable], runId)))

      /** Resumes a suspended execution (its body replays its journal and drives the run as the store holds it). */
      const resumeExecution = (durable: DurableAgent.DurableAgent<never>, runId: string) =>
        Effect.flatMap(durable.executionId(runId), durable.workflow.resume).pipe(
          Effect.provide(engine),
          Effect.zipRight(readable([durable], runId))
        )

      /** Every page of a store query. */
      const each = (
        query: CheckpointStore.ListQuery,
        f: (record: CheckpointStore.RunRecord) => Effect.Effect<void, StoreError | CorruptEntry>
      ) =>
        Effect.gen(function*() {
          let cursor: string | undefined
          do {
            const page = yield* store.list({ ...query, limit: 200, ...(cursor === undefined ? {} : { cursor }) })
            for (const record of page.records) yield* f(record)
            cursor = page.cursor
          } while (cursor !== undefined)
        })

      const terminal = (status: CheckpointStatus) => status === "done" || status === "failed" || status === "cancelled"

      /** Why a store record and an execution disagree for good; `undefined` when they agree or a sweep reconciles them. */
      const problemOf = (status: CheckpointStatus, engineState: DurableRunsPort.EngineState): string | undefined => {
        if ((engineState === "done" || engineState === "failed") && !terminal(status)) {
          return `the engine ended its execution ${engineState} while the store holds the run ${status}: nothing drives it again`
        }
        if (engineState === "done" && status !== "done") {
          return `the engine ended its execution done while the store holds the run ${status}`
        }
        if (engineState === "failed" && status === "done") {
          return "the engine ended its execution failed while the store holds the run done"
        }
        return undefined
      }

      const lastSweep = yield* Ref.make<number | undefined>(undefined)

      const sweep: Service["sweep"] = Effect.gen(function*() {
        const woken: Array<string> = []
        const waiting: Array<string> = []
        const unknownVersion: Array<string> = []
        const stuck: Array<string> = []
        const expiredLeases: Array<string> = []
        const resumed: Array<string> = []
        const diverged: Array<string> = []
        const now = yield* Clock.currentTimeMillis
        const since = (yield* Ref.get(lastSweep)) ?? now - stuckAfter
        // the record read by the page may be older than the engine's state (the run finished between
        // the two reads): read it again, and report only a disagreement that still holds
        const noteDiverged = (runId: string, engineState: DurableRunsPort.EngineState) =>
          Effect.flatMap(store.load(runId), (found) => {
            const problem = Option.isNone(found) ? undefined : problemOf(found.value.status, engineState)
            if (problem === undefined) return Effect.void
            return Effect.sync(() => diverged.push(runId)).pipe(
              Effect.zipLeft(
                Effect.logError("durable run: the store and the engine disagree").pipe(
                  Effect.annotateLogs({ runId, problem })
                )
              )
            )
          })
        for (const [name, durables] of byName) {
          yield* each({ status: "suspended", agent: name, rootOnly: true }, (record) =>
            Effect.gen(function*() {
              const state = yield* Effect.option(RunState.decode(record.runId, record.state))
              if (Option.isNone(state)) return
              const recorded = yield* store.decisions(record.runId)
              const decided = new Set(recorded.map((d) => d.pendingId))
              const pending = state.value.pending
              if (!pending.every((entry) => decided.has(entry.id))) {
                waiting.push(record.runId)
                return
              }
              const found = yield* engineOf(durables, record.runId)
              if (found.durable === undefined) {
                // no reply to the run's request here: a version not registered, or a request that
                // waits to be read again (see `readable`)
                unknownVersion.push(record.runId)
                return yield* readable(durables, record.runId)
              }
              if (found.state !== "suspended") return yield* noteDiverged(record.runId, found.state)
              yield* wake(found.durable, record.runId, pending)
              woken.push(record.runId)
              yield* Metric.increment(Metric.tagged(DurableMetrics.recoveries, "reason", "decided"))
              yield* Effect.logInfo("durable run woken: every entry it waits on is decided").pipe(
                Effect.annotateLogs({ runId: record.runId })
              )
              const last = recorded.reduce((at, d) => Math.max(at, d.at), 0)
              if (now - last > stuckAfter) stuck.push(record.runId)
            }))
          yield* each({ status: "running", agent: name, rootOnly: true, leaseExpiredAt: now }, (record) =>
            Effect.gen(function*() {
              expiredLeases.push(record.runId)
              const found = yield* engineOf(durables, record.runId)
              if (found.state === "done" || found.state === "failed") {
                return yield* noteDiverged(record.runId, found.state)
              }
              if (found.state !== "suspended" || found.durable === undefined) {
                return
              }
              yield* resumeExecution(found.durable, record.runId)
              resumed.push(record.runId)
              yield* Metric.increment(Metric.tagged(DurableMetrics.recoveries, "reason", "lease_expired"))
              yield* Effect.logWarning("durable run resumed: its lease expired and its execution was stopped").pipe(
                Effect.annotateLogs({ runId: record.runId, owner: record.lease?.owner ?? "" })
              )
            }))
          // runs the store finished since the last sweep whose execution is still suspended (a body
          // that stopped while another drive held the run): resumed, they replay to the recorded end
          for (const status of ["done", "failed", "cancelled"] as const) {
            yield* each({ status, agent: name, rootOnly: true, updatedAfter: since - 1000 }, (record) =>
              Effect.gen(function*() {
                const found = yield* engineOf(durables, record.runId)
                if (found.state !== "suspended" || found.durable === undefined) {
                  return
                }
                yield* resumeExecution(found.durable, record.runId)
                resumed.push(record.runId)
                yield* Metric.increment(Metric.tagged(DurableMetrics.recoveries, "reason", "store_finished"))
              }))
          }
        }
        yield* Ref.set(lastSweep, now)
        yield* Metric.set(metrics.decidedNotApplied, woken.length)
        yield* Metric.set(metrics.stuck, stuck.length)
        yield* Metric.set(metrics.expiredLeases, expiredLeases.length)
        const gauge = (state: string, value: number) =>
          Metric.set(Metric.tagged(DurableMetrics.runs, "state", state), value)
        yield* gauge("suspended_waiting", waiting.length)
        yield* gauge("suspended_decided", woken.length)
        yield* gauge("running_expired", expiredLeases.length)
        yield* gauge("diverged", diverged.length)
        return { woken, waiting, unknownVersion, stuck, expiredLeases, resumed, diverged }
      }).pipe(
        Effect.tapBoth({
          onFailure: () =>
            Metric.increment(Metric.tagged(DurableMetrics.sweepPasses, "outcome", "failed")),
          onSuccess: () =>
            Metric.increment(Metric.tagged(DurableMetrics.sweepPasses, "outcome", "ok"))
        })
      )

      /** A record beside its execution. */
      const viewOf = (record: CheckpointStore.RunRecord) =>
        Effect.gen(function*() {
          const durables = byName.get(record.agent) ?? []
          const found = yield* engineOf(durables, record.runId)
          const state = Option.getOrUndefined(yield* Effect.option(RunState.decode(record.runId, record.state)))
          const pending = (state?.pending ?? []).map((entry) => ({ id: entry.id, kind: entry.kind }))
          const recorded = pending.length === 0 ? [] : yield* store.decisions(record.runId)
          const view: DurableRunsPort.RunView = {
            runId: record.runId,
            agent: record.agent,
            tenant: record.tenant,
            store: {
              status: record.status,
              updatedAt: record.updatedAt,
              lease: record.lease === undefined
                ? undefined
                : { owner: record.lease.owner, expiresAt: record.lease.expiresAt },
              pending,
              decided: pending.filter((entry) =>
                recorded.some((d) =>
                  d.pendingId === entry.id
                )
              ).length
            },
            engine: found.state,
            version: found.durable?.version,
            problem: problemOf(record.status, found.state)
          }
          return view
        })

      /** A record beside its execution; a disagreement is checked again on the record as it is now (it may have moved on since its page was read). */
      const settledView = (record: CheckpointStore.RunRecord) =>
        Effect.flatMap(viewOf(record), (view) =>
          view.problem === undefined
            ? Effect.succeed(view)
            : Effect.flatMap(
              store.load(record.runId),
              (found) => Option.isNone(found) ? Effect.succeed(view) : viewOf(found.value)
            ))

      const list: Service["list"] = (query = {}) =>
        Effect.gen(function*() {
          const page = yield* store.list({
            rootOnly: true,
            order: "desc",
            limit: query.limit ?? 50,
            ...(query.status === undefined ? {} : { status: query.status }),
            ...(query.agent === undefined ? {} : { agent: query.agent }),
            ...(query.tenant === undefined ? {} : { tenant: query.tenant }),
            ...(query.cursor === undefined ? {} : { cursor: query.cursor })
          })
          const runs = yield* Effect.forEach(page.records, viewOf)
          return { runs, cursor: page.cursor }
        })

      const inspect: Service["inspect"] = (runId) =>
        Effect.flatMap(store.load(runId), (found) =>
          Option.isNone(found) || found.value.runId !== found.value.rootRunId
            ? Effect.succeed(Option.none())
            : Effect.map(viewOf(found.value), Option.some))

      const reconcile: Service["reconcile"] = Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const found: Array<DurableRunsPort.RunView> = []
        const late = (view: DurableRunsPort.RunView, why: string) =>
          found.push({ ...view, problem: view.problem ?? why })
        for (const name of byName.keys()) {
          for (const status of ["running", "suspended"] as const) {
            yield* each({ status, agent: name, rootOnly: true }, (record) =>
              Effect.map(settledView(record), (view) => {
                if (view.problem !== undefined) return void found.push(view)
                const old = now - record.updatedAt > stuckAfter
                if (
                  status === "suspended" && old && view.store.pending.length > 0 &&
                  view.store.decided === view.store.pending.length
                ) {
                  late(view, `every entry decided, still suspended after ${stuckAfter} ms: no sweep woke it`)
                } else if (
                  status === "running" && view.engine === "suspended" && record.lease !== undefined &&
                  now - record.lease.expiresAt > stuckAfter
                ) {
                  late(view, `its lease expired ${now - record.lease.expiresAt} ms ago and no sweep resumed it`)
                }
              }))
          }
          for (const status of ["done", "failed", "cancelled"] as const) {
            yield* each({ status, agent: name, rootOnly: true }, (record) =>
              Effect.map(settledView(record), (view) => {
                if (view.problem !== undefined) return void found.push(view)
                if (view.engine === "suspended" && now - record.updatedAt > stuckAfter) {
                  late(view, `the store finished it ${status}; its execution is still suspended`)
                }
              }))
          }
        }
        return found
      })

      return { start, decide, sweep, list, inspect, reconcile }
    })
  )
