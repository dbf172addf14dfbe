/**
 * The durable engine's metrics (experimental), as Effect `Metric`s: export them with any metrics
 * exporter (`@effect/opentelemetry`'s `Resource`/`Metrics` layers turn them into OpenTelemetry
 * instruments). Counters count from the process's start; gauges are set by each sweep.
 *
 * @since 0.2.0
 * @experimental
 */
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"

/**
 * Runs that ended, by how (`status`: `done`, `failed`): counted by the runner whose body ended
 * them.
 *
 * @example
 * ```ts
 * import { DurableMetrics } from "@agentkit/durable"
 * import { Metric } from "effect"
 *
 * const done = Metric.value(DurableMetrics.runsEnded.pipe(Metric.tagged("status", "done")))
 * ```
 *
 * @since 0.2.0
 * @category metrics
 */
export const runsEnded = Metric.counter("agentkit_durable_runs_ended_total", {
  description: "durable runs that ended, by status (done, failed)",
  incremental: true
})

/**
 * Runs by the state a sweep found them in (`state`: `suspended_waiting` on a decision,
 * `suspended_decided` woken by the sweep, `running_expired` a running record whose lease expired,
 * `diverged` the store and the engine disagree and the sweep could not reconcile them).
 *
 * @example
 * ```ts
 * import { DurableMetrics } from "@agentkit/durable"
 * import { Metric } from "effect"
 *
 * const waiting = Metric.value(DurableMetrics.runs.pipe(Metric.tagged("state", "suspended_waiting")))
 * ```
 *
 * @since 0.2.0
 * @category metrics
 */
export const runs = Metric.gauge("agentkit_durable_runs", {
  description: "durable runs by the state the last sweep found them in"
})

/**
 * Milliseconds from a run's lease expiry to the drive that took it over (a runner killed or
 * stalled past its lease), recorded by the runner that took it over.
 *
 * @example
 * ```ts
 * import { DurableMetrics } from "@agentkit/durable"
 * import { Metric } from "effect"
 *
 * const latency = Metric.value(DurableMetrics.takeoverLatency)
 * ```
 *
 * @since 0.2.0
 * @category metrics
 */
export const takeoverLatency = Metric.histogram(
  "agentkit_durable_takeover_latency_ms",
  MetricBoundaries.exponential({ start: 50, factor: 2, count: 12 }),
  "milliseconds from a run's lease expiry to its takeover"
)

/**
 * Calls found in doubt (a side-effecting call claimed by a drive that stopped before it recorded
 * the outcome): each one waits for a person's decision.
 *
 * @example
 * ```ts
 * import { DurableMetrics } from "@agentkit/durable"
 * import { Metric } from "effect"
 *
 * const inDoubt = Metric.value(DurableMetrics.inDoubt)
 * ```
 *
 * @since 0.2.0
 * @category metrics
 */
export const inDoubt = Metric.counter("agentkit_durable_in_doubt_total", {
  description: "side-effecting calls found in doubt",
  incremental: true
})

/**
 * Suspensions of durable runs (a run waiting on approvals or calls in doubt).
 *
 * @example
 * ```ts
 * import { DurableMetrics } from "@agentkit/durable"
 * import { Metric } from "effect"
 *
 * const suspended = Metric.value(DurableMetrics.suspensions)
 * ```
 *
 * @since 0.2.0
 * @category metrics
 */
export const suspensions = Metric.counter("agentkit_durable_suspensions_total", {
  description: "suspensions of durable runs",
  incremental: true
})

/**
 * Sweeps run (`outcome`: `ok`, `failed`).
 *
 * @example
 * ```ts
 * import { DurableMetrics } from "@agentkit/durable"
 * import { Metric } from "effect"
 *
 * const passes = Metric.value(DurableMetrics.sweepPasses.pipe(Metric.tagged("outcome", "ok")))
 * ```
 *
 * @since 0.2.0
 * @category metrics
 */
export const sweepPasses = Metric.counter("agentkit_durable_sweep_passes_total", {
  description: "sweeps run, by outcome",
  incremental: true
})

/**
 * Executions a sweep resumed or woke (`reason`: `decided`, `lease_expired`, `store_finished`).
 *
 * @example
 * ```ts
 * import { DurableMetrics } from "@agentkit/durable"
 * import { Metric } from "effect"
 *
 * const recovered = Metric.value(DurableMetrics.recoveries.pipe(Metric.tagged("reason", "lease_expired")))
 * ```
 *
 * @since 0.2.0
 * @category metrics
 */
export const recoveries = Metric.counter("agentkit_durable_sweep_resumes_total", {
  description: "executions a sweep woke or resumed, by reason",
  incremental: true
})
