/**
 * The GenAI client metrics as Effect `Metric`s (so `@effect/opentelemetry` exports them with the
 * spans), and the recording of one chat call into them. The `telemetry` middleware records them;
 * read them with `Metric.value`.
 *
 * @since 0.1.0
 */
import { errorType, Tracing } from "@agentkit/core"
import type { Chat, ChatCall, ChatError } from "@agentkit/core"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricKey from "effect/MetricKey"
import type * as MetricKeyType from "effect/MetricKeyType"
import * as MetricLabel from "effect/MetricLabel"
import * as Option from "effect/Option"

const tokenUsageKey = MetricKey.histogram(
  Tracing.MetricName.tokenUsage,
  MetricBoundaries.fromIterable([
    1,
    4,
    16,
    64,
    256,
    1024,
    4096,
    16384,
    65536,
    262144,
    1048576,
    4194304,
    16777216,
    67108864
  ]),
  "Number of input and output tokens used per GenAI operation"
)
const operationDurationKey = MetricKey.histogram(
  Tracing.MetricName.operationDuration,
  MetricBoundaries.fromIterable([
    0.01,
    0.02,
    0.04,
    0.08,
    0.16,
    0.32,
    0.64,
    1.28,
    2.56,
    5.12,
    10.24,
    20.48,
    40.96,
    81.92
  ]),
  "GenAI operation duration in seconds"
)
const errorCountKey = MetricKey.counter(Tracing.MetricName.errorCount, {
  description: "Failed GenAI operations",
  incremental: true
})

/**
 * `gen_ai.client.token.usage`: a histogram of input and output tokens per model call (tag
 * `gen_ai.token.type`), with the GenAI conventions' bucket boundaries.
 *
 * @example
 * ```ts
 * import { Metrics } from "@agentkit/middleware"
 * import { Metric } from "effect"
 *
 * const state = Metric.value(Metrics.tokenUsage.pipe(Metric.tagged("gen_ai.token.type", "input")))
 * ```
 *
 * @since 0.1.0
 * @category metrics
 */
export const tokenUsage = Metric.fromMetricKey(tokenUsageKey)

/**
 * `gen_ai.client.operation.duration`: a histogram of model call durations in seconds (tag
 * `error.type` on failures), with the GenAI conventions' bucket boundaries.
 *
 * @example
 * ```ts
 * import { Metrics } from "@agentkit/middleware"
 * import { Metric } from "effect"
 *
 * const state = Metric.value(Metrics.operationDuration)
 * ```
 *
 * @since 0.1.0
 * @category metrics
 */
export const operationDuration = Metric.fromMetricKey(operationDurationKey)

/**
 * `gen_ai.client.error.count`: failed model calls, tagged with `error.type`.
 *
 * @example
 * ```ts
 * import { Metrics } from "@agentkit/middleware"
 * import { Metric } from "effect"
 *
 * const failures = Metric.value(Metrics.errorCount.pipe(Metric.tagged("error.type", "ChatModelError")))
 * ```
 *
 * @since 0.1.0
 * @category metrics
 */
export const errorCount = Metric.fromMetricKey(errorCountKey)

type Histogram = Metric.Metric<MetricKeyType.MetricKeyType.Histogram, number, unknown>
type Counter = Metric.Metric<MetricKeyType.MetricKeyType.Counter<number>, number, unknown>

const withLabels = <T extends MetricKeyType.MetricKeyType<number, unknown>>(
  key: MetricKey.MetricKey<T>,
  labels: ReadonlyArray<readonly [string, string]>
) => Metric.fromMetricKey(MetricKey.taggedWithLabels(key, labels.map(([k, v]) => MetricLabel.make(k, v))))

interface SuccessMetrics {
  readonly duration: Histogram
  readonly input: Histogram
  readonly output: Histogram
}
interface FailureMetrics {
  readonly duration: Histogram
  readonly errors: Counter
}

// The tagged metrics of each label set, built once: tagging a metric per call would rebuild and
// rehash its key on every update. Bounded, since model names and tenants come from outside.
const successMetrics = new Map<string, SuccessMetrics>()
const failureMetrics = new Map<string, FailureMetrics>()

const bounded = <V>(cache: Map<string, V>, id: string, make: () => V): V => {
  let value = cache.get(id)
  if (value === undefined) {
    if (cache.size >= 2048) cache.clear()
    value = make()
    cache.set(id, value)
  }
  return value
}

/**
 * Records one chat call: its duration (seconds), and its input and output tokens (skipped for
 * zero counts and cache hits) or its failure, tagged with the operation, the request model, the
 * provider (on success), the scope's org id and `error.type` (on failure). Labels set with
 * `Effect.tagMetrics` are honoured.
 *
 * @example
 * ```ts
 * import type { ChatMiddleware } from "@agentkit/core"
 * import { Metrics } from "@agentkit/middleware"
 * import { Clock, Effect } from "effect"
 *
 * const measured: ChatMiddleware = (next) => (call) =>
 *   Effect.flatMap(Clock.currentTimeMillis, (start) =>
 *     Effect.onExit(next(call), (exit) =>
 *       Effect.flatMap(Clock.currentTimeMillis, (end) => Metrics.recordChatCall(call, exit, (end - start) / 1000))
 *     )
 *   )
 * ```
 *
 * @since 0.1.0
 * @category metrics
 */
export const recordChatCall = (
  call: ChatCall,
  exit: Exit.Exit<Chat.ChatResponse, ChatError>,
  seconds: number
): Effect.Effect<void> =>
  // one step for every update
  Effect.flatMap(FiberRef.get(FiberRef.currentMetricLabels), (extra) =>
    Effect.sync(() => {
      const orgId = call.context.scope.orgId
      const model = call.request.model
      const org = orgId === undefined ? "none" : String(orgId)
      const common = () =>
        [
          [Tracing.Attribute.operationName, Tracing.Operation.chat],
          [Tracing.Attribute.requestModel, model],
          [Tracing.Attribute.scopeOrgId, org]
        ] as const
      if (Exit.isFailure(exit)) {
        const failure = Cause.failureOption(exit.cause)
        const type = Option.isSome(failure)
          ? errorType(failure.value)
          : Cause.isInterruptedOnly(exit.cause)
          ? "Interrupted"
          : "Defect"
        const metrics = bounded(failureMetrics, `${model}\u0000${org}\u0000${type}`, () => {
          const labels = [...common(), [Tracing.Attribute.errorType, type] as const]
          return { duration: withLabels(operationDurationKey, labels), errors: withLabels(errorCountKey, labels) }
        })
        metrics.errors.unsafeUpdate(1, extra)
        metrics.duration.unsafeUpdate(seconds, extra)
        return
      }
      const provider = exit.value.provider
      const metrics = bounded(successMetrics, `${model}\u0000${org}\u0000${provider}`, () => {
        const labels = [...common(), [Tracing.Attribute.providerName, provider] as const]
        return {
          duration: withLabels(operationDurationKey, labels),
          input: withLabels(tokenUsageKey, [...labels, [Tracing.Attribute.tokenType, "input"]]),
          output: withLabels(tokenUsageKey, [...labels, [Tracing.Attribute.tokenType, "output"]])
        }
      })
      metrics.duration.unsafeUpdate(seconds, extra)
      // a cache hit used no tokens
      if (call.meta.cacheHit === true) return
      const { inputTokens, outputTokens } = exit.value.usage
      if (inputTokens > 0) metrics.input.unsafeUpdate(inputTokens, extra)
      if (outputTokens > 0) metrics.output.unsafeUpdate(outputTokens, extra)
    }))
