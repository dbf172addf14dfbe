/**
 * An agent run as a durable workflow (experimental, Effect 3 `@effect/workflow`). The workflow
 * drives the same ReAct step function as `agent.run`, through the agents engine hook: every model
 * call (`turn-<i>`) and tool call (`tool-<callId>`) is an activity whose result is journaled, so a
 * run re-driven on another runner after a crash replays them instead of calling again. The
 * checkpoint store stays the source of truth for the run's status, pending entries and decisions:
 * the run's lifecycle (create, take over, suspend, resume, finish) is the in-process one. A
 * sub-run's steps (`asTool`, `runAgents`, coordinators, graphs) are activities too, named under
 * its path below the root (`ask_billing#c1/turn-0`).
 *
 * A suspended run waits on a `DurableDeferred` raced against a `DurableClock` (the approval
 * timeout); the deferred is completed by a runner once every pending entry has a recorded
 * decision (`DurableRuns.sweep`). Whichever comes first, the run is resumed with the decisions
 * recorded in the store, and an entry without one is rejected, as in-process. The in-flight
 * activity of a crashed runner is run again by the engine; the execution ledger (provide one)
 * makes a side-effecting, non-idempotent tool run at most once even then: the re-run finds the
 * claim and the run suspends with an `InDoubt` entry. A body that stops on a defect (the engine's
 * storage failing under it) suspends its execution rather than completing it, so that a sweep
 * resumes it (`DurableRuns.sweep`, `resumed`).
 *
 * @since 0.2.0
 * @experimental
 */
import { Approval, RunEngine, RunLease } from "@agentkit/agents"
import type { Agent, AgentResult } from "@agentkit/agents"
import { CanonicalJson, CheckpointStore, RunContext, Usage } from "@agentkit/core"
import type { Invoker } from "@agentkit/core"
import * as Activity from "@effect/workflow/Activity"
import * as DurableClock from "@effect/workflow/DurableClock"
import * as DurableDeferred from "@effect/workflow/DurableDeferred"
import * as Workflow from "@effect/workflow/Workflow"
import { WorkflowEngine, WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { DurableRunFailed } from "./DurableErrors.js"
import * as DurableMetrics from "./DurableMetrics.js"
import { wrap } from "./internal/activities.js"
import { digest } from "./internal/hash.js"

/**
 * What starts a durable run: its run id (the workflow's idempotency key: starting it again gives
 * the same execution), the user's input and, optionally, its autonomy.
 *
 * @example
 * ```ts
 * import { DurableAgent } from "@agentkit/durable"
 *
 * const payload: DurableAgent.Payload = { runId: "order-771", input: "Cancel order A-771", autonomy: "gated" }
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export const Payload = Schema.Struct({
  runId: Schema.String,
  input: Schema.String,
  autonomy: Schema.optional(Schema.Literal("auto", "gated", "manual"))
})

/**
 * What starts a durable run.
 *
 * @example
 * ```ts
 * import type { DurableAgent } from "@agentkit/durable"
 *
 * const payload: DurableAgent.Payload = { runId: "order-771", input: "Where is order A-771?" }
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface Payload extends Schema.Schema.Type<typeof Payload> {}

/**
 * A finished durable run, as its workflow journals it.
 *
 * @example
 * ```ts
 * import type { DurableAgent } from "@agentkit/durable"
 *
 * const done = (result: DurableAgent.Result) => `${result.stopReason}: ${result.output}`
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export const Result = Schema.Struct({
  output: Schema.String,
  stopReason: Schema.String,
  partial: Schema.Boolean,
  usage: Usage.Usage
})

/**
 * A finished durable run.
 *
 * @example
 * ```ts
 * import type { DurableAgent } from "@agentkit/durable"
 *
 * const answer = (result: DurableAgent.Result): string => result.output
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface Result extends Schema.Schema.Type<typeof Result> {}

/**
 * The options of `DurableAgent.make`.
 *
 * @example
 * ```ts
 * import type { DurableAgent } from "@agentkit/durable"
 *
 * const options: DurableAgent.Options = { version: 1, approvalTimeout: "2 days", context: { scope: { orgId: "acme" } } }
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /** The workflow version (a positive integer): the workflow is named `agentkit/<agent>/v<version>`. */
  readonly version: number
  /** How long a suspended run waits for its decisions before its entries are rejected (default 24 hours). */
  readonly approvalTimeout?: Duration.DurationInput | undefined
  /** The run context of every run (its run id is the payload's). */
  readonly context?: Omit<RunContext.Options, "runId"> | undefined
  /** How often a run held by a dead runner's lease is tried again until the lease expires (default 1 second). */
  readonly leaseRetry?: Duration.DurationInput | undefined
}

/**
 * A durable agent: its workflow, the layer that registers it with the engine, and how to start
 * and watch its runs.
 *
 * @example
 * ```ts
 * import type { DurableAgent } from "@agentkit/durable"
 *
 * const describe = (durable: DurableAgent.DurableAgent<never>) => `${durable.workflow.name} (v${durable.version})`
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface DurableAgent<R> {
  readonly agent: Agent.Agent<R>
  readonly version: number
  readonly workflow: Workflow.Workflow<string, typeof Payload, typeof Result, typeof DurableRunFailed>
  /** Registers the workflow with the engine; its runs need the agent's services and a checkpoint store. */
  readonly layer: Layer.Layer<never, never, WorkflowEngine | Invoker | CheckpointStore | Exclude<R, RunContext>>
  /** Starts a run (at once; the engine drives it) and gives its execution id. Starting it again changes nothing. */
  readonly start: (payload: Payload) => Effect.Effect<string, never, WorkflowEngine>
  /** The execution id of a run. */
  readonly executionId: (runId: string) => Effect.Effect<string>
  /** Where a run is: `undefined` (unknown here), `Suspended`, or `Complete` with its exit. */
  readonly poll: (
    runId: string
  ) => Effect.Effect<Workflow.Result<Result, DurableRunFailed> | undefined, never, WorkflowEngine>
  /** The deferred a run suspended on `pending` waits for. */
  readonly decided: (
    pending: ReadonlyArray<Approval.PendingEntry>
  ) => DurableDeferred.DurableDeferred<typeof Schema.Void>
}

/** A suspension's key: its entries' ids, kinds and creation times (an entry found in doubt after an approval keeps its id). */
const suspensionKey = (pending: ReadonlyArray<Approval.PendingEntry>): string =>
  digest(CanonicalJson.stringify(pending.map((entry) => [entry.id, entry.kind, entry.createdAt])))

/** Why a run failed, as the lifecycle records it: the error's tag and message. */
const reasonOf = (error: unknown): string => {
  if (typeof error === "object" && error !== null && "_tag" in error) {
    const message = "message" in error && typeof error.message === "string" ? error.message : ""
    return `${String(error._tag)}: ${message}`
  }
  return String(error)
}

/**
 * A defect in a body (not a failure it journals: the engine's own storage failing under it, e.g.
 * SQLite busy past its timeout) suspends the execution instead of completing it. Completed, it
 * would end for good while its record stays `running` (its lease released on the defect, or left
 * to expire) and nothing would drive the run again; suspended, a sweep finds the record's lease
 * expired and resumes it (`Workflow.resume`): the body replays its journal and the lifecycle
 * takes the run over, one more recovery counted (a defect that keeps recurring ends the run
 * `failed` past `maxRecoveries`).
 */
const suspendOnDefect =
  (runId: string) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | WorkflowInstance> =>
    Effect.catchAllDefect(self, (defect) =>
      Effect.zipRight(
        Effect.logWarning(
          `durable run '${runId}': its body stopped on a defect; the execution is suspended until a sweep resumes it`,
          defect
        ),
        Effect.flatMap(WorkflowInstance, Workflow.suspend)
      ))

const decodeDecision = Schema.decodeUnknownOption(Schema.parseJson(Approval.Decision))

/** The decisions recorded for a run (one that does not decode is left out: it rejects). */
const recorded = (store: CheckpointStore.Service, runId: string) =>
  Effect.map(store.decisions(runId), (entries) => {
    const decisions: Record<string, Approval.Decision> = {}
    for (const entry of entries) {
      const decoded = decodeDecision(entry.decision)
      if (Option.isSome(decoded)) decisions[entry.pendingId] = decoded.value
    }
    return decisions
  })

/** Of the decisions recorded for a run, those of the entries it waits on now (an earlier suspension's are left out). */
const only = (
  decisions: Readonly<Record<string, Approval.Decision>>,
  pending: ReadonlyArray<Approval.PendingEntry>
): Approval.Decisions => {
  const kept: Array<readonly [Approval.PendingId, Approval.Decision]> = []
  for (const entry of pending) {
    const decision = decisions[entry.id]
    if (decision !== undefined) kept.push([entry.id, decision])
  }
  return Approval.decisions(kept)
}

/**
 * Where a drive stopped: the run's answer, a suspension on entries, or a stop that is not the
 * run's end (its record is neither finished nor waiting: a lost lease, a store failing): the
 * execution suspends until a sweep resumes it.
 */
type Segment =
  | { readonly _tag: "Done"; readonly result: AgentResult.AgentResult }
  | { readonly _tag: "Suspended"; readonly pending: ReadonlyArray<Approval.PendingEntry> }
  | { readonly _tag: "Stopped"; readonly reason: string; readonly status: string }

/** Errors a drive ends on that say a resume's decisions were refused: the run cannot go on with them. */
const refusals = new Set([
  "UnknownPending",
  "InvalidDecision",
  "InvalidDecisions",
  "DigestMismatch",
  "ToolArgumentError",
  "AlreadyDecided"
])

/** How many times in a row a body re-drives a run that it lost (another drive took it over) before it stops. */
const maxRedrives = 20

/**
 * Makes a durable agent of a (ReAct) agent. A version that is not a positive integer throws.
 *
 * @example
 * ```ts
 * import { Agent, ReActCognition } from "@agentkit/agents"
 * import { DurableAgent } from "@agentkit/durable"
 *
 * const support = Agent.make({ name: "support", model: "claude-sonnet-4-6", cognition: ReActCognition.make({ tools: [] }) })
 * const durable = DurableAgent.make(support, { version: 1 })
 * durable.workflow.name // "agentkit/support/v1"
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = <R>(agent: Agent.Agent<R>, options: Options): DurableAgent<R> => {
  if (!Number.isInteger(options.version) || options.version < 1) {
    throw new TypeError(`DurableAgent.make: version must be a positive integer; got ${String(options.version)}`)
  }
  const approvalTimeout = Duration.decode(options.approvalTimeout ?? "24 hours")
  const leaseRetry = Schedule.spaced(options.leaseRetry ?? "1 second")
  const workflow = Workflow.make({
    name: `agentkit/${agent.name}/v${options.version}`,
    payload: Payload,
    success: Result,
    error: DurableRunFailed,
    idempotencyKey: ({ runId }) => runId
  })
  const decided = (pending: ReadonlyArray<Approval.PendingEntry>) =>
    DurableDeferred.make(`decided-${suspensionKey(pending)}`)

  const body = (payload: Payload) =>
    Effect.gen(function*() {
      const store = yield* CheckpointStore
      const engine = yield* WorkflowEngine
      const instance = yield* WorkflowInstance
      const lease = yield* Effect.map(Effect.serviceOption(RunLease), Option.getOrElse(() => RunLease.defaults))
      const runId = payload.runId
      const context = yield* Effect.orDie(
        RunContext.make({
          ...options.context,
          runId,
          ...(payload.autonomy === undefined ? {} : { autonomy: payload.autonomy })
        })
      )
      const hook = { wrap: wrap({ engine, instance }) }
      const failed = (reason: string) =>
        Effect.zipRight(
          Effect.zipRight(
            Effect.logError("durable run failed").pipe(Effect.annotateLogs({ reason })),
            Metric.increment(Metric.tagged(DurableMetrics.runsEnded, "status", "failed"))
          ),
          Effect.fail(new DurableRunFailed({ runId, reason }))
        )

      /** A drive is about to take over a run whose lease expired: logged, its latency recorded. */
      const noteTakeover = Effect.gen(function*() {
        const found = yield* Effect.option(store.load(runId))
        if (Option.isNone(found) || Option.isNone(found.value)) return
        const record = found.value.value
        const now = yield* Clock.currentTimeMillis
        if (record.status !== "running" || record.lease === undefined || record.lease.expiresAt > now) return
        const latency = Math.max(0, now - record.lease.expiresAt)
        yield* Metric.update(DurableMetrics.takeoverLatency, latency)
        yield* Effect.logWarning("durable run taken over: its lease expired").pipe(
          Effect.annotateLogs({ from: record.lease.owner, by: lease.owner, expiredMsAgo: latency })
        )
      })

      /** Drives the run (`agent.run`, or `agent.resume` with the decisions of the entries it waits on) to its next stop. */
      const segment = (
        drive: Effect.Effect<AgentResult.AgentResult, unknown, unknown>,
        redrives = 0
      ): Effect.Effect<Segment, DurableRunFailed> =>
        Effect.suspend(() =>
          (drive as Effect.Effect<AgentResult.AgentResult, { readonly _tag?: string }>).pipe(
            // a lease held by a live drive elsewhere (or a dead runner's, until it expires)
            Effect.retry({ schedule: leaseRetry, while: (error) => error._tag === "RunInProgress", times: 600 }),
            Effect.map((result): Segment =>
              result.suspended === undefined
                ? { _tag: "Done", result }
                : { _tag: "Suspended", pending: result.suspended.pending }
            ),
            Effect.catchAll((error): Effect.Effect<Segment, DurableRunFailed> => {
              // a run the store already holds suspended (the body re-driven after a crash or a wake)
              if (error._tag === "RunSuspended") {
                const pending = (error as { readonly pending?: ReadonlyArray<Approval.PendingEntry> }).pending ?? []
                return Effect.succeed({ _tag: "Suspended", pending })
              }
              const reason = reasonOf(error)
              if (refusals.has(error._tag ?? "")) return failed(reason)
              return Effect.flatMap(
                Effect.all([Effect.either(store.load(runId)), Clock.currentTimeMillis]),
                ([found, now]): Effect.Effect<Segment, DurableRunFailed> => {
                  if (found._tag === "Left") return Effect.succeed({ _tag: "Stopped", reason, status: "unreadable" })
                  if (Option.isNone(found.right)) return failed(reason)
                  const record = found.right.value
                  if (record.status === "failed" || record.status === "cancelled") return failed(reason)
                  // lost to another drive (a stall past the lease), or finished meanwhile: drive it as it is now
                  if (
                    redrives < maxRedrives && (error._tag === "StaleLease" || record.status === "done" ||
                      record.status === "suspended" ||
                      (record.status === "running" && (record.lease?.expiresAt ?? 0) <= now))
                  ) {
                    return Effect.zipRight(
                      Effect.logWarning("durable run lost its drive; driving it again as the store holds it").pipe(
                        Effect.annotateLogs({ reason, status: record.status })
                      ),
                      segment(Effect.zipRight(noteTakeover, agent.run(payload.input)) as never, redrives + 1)
                    )
                  }
                  return Effect.succeed({ _tag: "Stopped", reason, status: record.status })
                }
              )
            }),
            Effect.provideService(RunContext, context),
            Effect.provideService(RunEngine.RunEngine, hook)
          )
        )
      let step = yield* segment(
        Effect.zipRight(noteTakeover, agent.run(payload.input)) as Effect.Effect<AgentResult.AgentResult, unknown>
      )
      let previous = ""
      let repeats = 0
      while (step._tag !== "Done") {
        if (step._tag === "Suspended") {
          const key = suspensionKey(step.pending)
          repeats = key === previous ? repeats + 1 : 0
          previous = key
          // the same suspension met again and again: its resume keeps stopping short of the run's end
          if (repeats > maxRedrives) {
            step = { _tag: "Stopped", reason: "its resume keeps stopping", status: "suspended" }
          }
        }
        if (step._tag === "Stopped") {
          yield* Effect.logWarning("durable run stopped before its end; its execution waits for a sweep to resume it")
            .pipe(Effect.annotateLogs({ reason: step.reason, status: step.status }))
          return yield* Effect.flatMap(WorkflowInstance, Workflow.suspend)
        }
        const pending = step.pending
        const key = suspensionKey(pending)
        const doubts = pending.filter((entry) => entry.kind === "InDoubt")
        yield* Effect.logInfo("durable run suspended").pipe(
          Effect.annotateLogs({ pending: pending.map((entry) => `${entry.kind}:${entry.id}`).join(",") })
        )
        for (const entry of doubts) {
          yield* Effect.logWarning("durable run: a side-effecting call is in doubt; a person decides it").pipe(
            Effect.annotateLogs({ pendingId: entry.id, tool: entry.call.name, path: entry.path })
          )
        }
        const wake: Effect.Effect<"decided" | "timeout", never, WorkflowEngine | WorkflowInstance> = Effect.as(
          DurableDeferred.await(decided(pending)),
          "decided"
        )
        const timeout: Effect.Effect<"decided" | "timeout", never, WorkflowEngine | WorkflowInstance> = Effect.as(
          DurableClock.sleep({ name: `approval-timeout-${key}`, duration: approvalTimeout }),
          "timeout"
        )
        const counted = Effect.zipRight(
          Effect.zipRight(
            Metric.increment(DurableMetrics.suspensions),
            Metric.incrementBy(DurableMetrics.inDoubt, doubts.length)
          ),
          Effect.succeed("counted" as const)
        )
        // counted once per suspension (journaled: a replay does not count it again)
        yield* Activity.make({ name: `suspended-${key}`, success: Schema.Literal("counted"), execute: counted })
        yield* DurableDeferred.raceAll({
          name: `approval-${key}`,
          success: Schema.Literal("decided", "timeout"),
          error: Schema.Never,
          effects: [wake, timeout]
        })
        // the decisions recorded in the store for the entries it waits on, whichever came first: an entry without one is rejected
        step = yield* segment(
          Effect.flatMap(recorded(store, runId), (decisions) => agent.resume(runId, only(decisions, pending))) as never
        )
      }
      const { output, partial, stopReason, usage } = step.result
      yield* Metric.increment(Metric.tagged(DurableMetrics.runsEnded, "status", "done"))
      return { output, partial, stopReason, usage }
    }).pipe(suspendOnDefect(payload.runId), Effect.annotateLogs({ runId: payload.runId, agent: agent.name }))

  const executionId = (runId: string) => workflow.executionId({ runId, input: "" })
  return {
    agent,
    version: options.version,
    workflow,
    layer: workflow.toLayer(body as never) as never,
    start: (payload) => workflow.execute(payload, { discard: true }),
    executionId,
    poll: (runId) => Effect.flatMap(executionId(runId), workflow.poll),
    decided
  }
}
