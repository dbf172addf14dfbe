/**
 * The durable runs of a process (experimental): start a run on a registered workflow version,
 * record a decision (checked against the run's pending entry, then written to the checkpoint
 * store: the source of truth), and sweep: wake every suspended run whose entries are all decided
 * (its `DurableDeferred` completed, then `Workflow.resume`, the mitigation for the v3 lost-wake
 * bug Effect-TS/effect#6318), and report what is waiting, what was woken, the runs no registered
 * version knows (left alone), the stuck ones (decided long ago, still suspended) and the running
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
import { Operator, RunState } from "@agentkit/agents"
import type { Approval } from "@agentkit/agents"
import { CheckpointStore } from "@agentkit/core"
import type { CorruptEntry, StoreError } from "@agentkit/core"
import * as DurableDeferred from "@effect/workflow/DurableDeferred"
import type { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import type * as DurableAgent from "./DurableAgent.js"
import { UnknownWorkflowVersion } from "./DurableErrors.js"

/**
 * What a sweep found: runs woken (every entry decided), runs still waiting on a decision, and
 * suspended runs of a registered agent that no registered version knows (never touched).
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
  /** Suspended runs of a registered agent that no registered version knows (never touched). */
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
   * expired and whose execution is suspended; reports what it found.
   */
  readonly sweep: Effect.Effect<SweepReport, StoreError | CorruptEntry>
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

      /** Wakes one run whose entries are all decided, on the version that knows it. */
      const wake = (
        durables: ReadonlyArray<DurableAgent.DurableAgent<never>>,
        runId: string,
        pending: ReadonlyArray<Approval.PendingEntry>
      ) =>
        Effect.gen(function*() {
          for (const durable of durables) {
            const result = yield* durable.poll(runId)
            if (result === undefined) continue
            if (result._tag === "Suspended") {
              const executionId = yield* durable.executionId(runId)
              const deferred = durable.decided(pending)
              const token = DurableDeferred.tokenFromExecutionId(deferred, { workflow: durable.workflow, executionId })
              yield* DurableDeferred.succeed(deferred, { token, value: undefined })
              yield* durable.workflow.resume(executionId)
            }
            return true
          }
          return false
        }).pipe(Effect.provide(engine))

      /** Resumes a running run whose lease expired if its execution is suspended (no live execution drives it); whether it did. */
      const resumeStopped = (durables: ReadonlyArray<DurableAgent.DurableAgent<never>>, runId: string) =>
        Effect.gen(function*() {
          for (const durable of durables) {
            const result = yield* durable.poll(runId)
            if (result === undefined) continue
            if (result._tag !== "Suspended") return false
            yield* durable.workflow.resume(yield* durable.executionId(runId))
            return true
          }
          return false
        }).pipe(Effect.provide(engine))

      const sweep: Service["sweep"] = Effect.gen(function*() {
        const woken: Array<string> = []
        const waiting: Array<string> = []
        const unknownVersion: Array<string> = []
        const stuck: Array<string> = []
        const expiredLeases: Array<string> = []
        const resumed: Array<string> = []
        const now = yield* Clock.currentTimeMillis
        for (const [name, durables] of byName) {
          let cursor: string | undefined
          do {
            const page = yield* store.list({
              status: "suspended",
              agent: name,
              rootOnly: true,
              limit: 200,
              ...(cursor === undefined ? {} : { cursor })
            })
            for (const record of page.records) {
              const state = yield* Effect.option(RunState.decode(record.runId, record.state))
              if (Option.isNone(state)) continue
              const recorded = yield* store.decisions(record.runId)
              const decided = new Set(recorded.map((d) => d.pendingId))
              const pending = state.value.pending
              if (!pending.every((entry) => decided.has(entry.id))) {
                waiting.push(record.runId)
                continue
              }
              if (!(yield* wake(durables, record.runId, pending))) {
                unknownVersion.push(record.runId)
                continue
              }
              woken.push(record.runId)
              const last = recorded.reduce((at, d) => Math.max(at, d.at), 0)
              if (now - last > stuckAfter) stuck.push(record.runId)
            }
            cursor = page.cursor
          } while (cursor !== undefined)
          let expired: string | undefined
          do {
            const page = yield* store.list({
              status: "running",
              agent: name,
              rootOnly: true,
              leaseExpiredAt: now,
              limit: 200,
              ...(expired === undefined ? {} : { cursor: expired })
            })
            for (const record of page.records) {
              expiredLeases.push(record.runId)
              if (yield* resumeStopped(durables, record.runId)) resumed.push(record.runId)
            }
            expired = page.cursor
          } while (expired !== undefined)
        }
        yield* Metric.set(metrics.decidedNotApplied, woken.length)
        yield* Metric.set(metrics.stuck, stuck.length)
        yield* Metric.set(metrics.expiredLeases, expiredLeases.length)
        return { woken, waiting, unknownVersion, stuck, expiredLeases, resumed }
      })

      return { start, decide, sweep }
    })
  )
