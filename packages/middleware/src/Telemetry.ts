/**
 * Telemetry for both pipelines: the rest of the OpenTelemetry GenAI conventions on the spans the
 * Invoker opens, opt-in content capture, whole-run sampling, and the GenAI metrics as Effect
 * `Metric`s (so `@effect/opentelemetry` exports them with the spans).
 *
 * @since 0.1.0
 */
import { CanonicalJson, ConfigurationError, RunContext, Tracing } from "@agentkit/core"
import type {
  Chat,
  ChatCall,
  ChatError,
  ChatHandler,
  ChatMiddleware,
  ToolHandler,
  ToolInvocation,
  ToolMiddleware,
  ToolOutcome,
  ToolPipelineError
} from "@agentkit/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as Cause from "effect/Cause"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricKey from "effect/MetricKey"
import type * as MetricKeyType from "effect/MetricKeyType"
import * as MetricLabel from "effect/MetricLabel"
import * as Option from "effect/Option"
import type * as Tracer from "effect/Tracer"
import { errorType } from "./internal/errors.js"
import { both } from "./internal/pipeline.js"
import { truncateUtf8, utf8Length } from "./internal/text.js"

/**
 * The span attribute and event names this module adds (beyond `Tracing.Attribute`).
 *
 * @example
 * ```ts
 * import { Telemetry } from "@agentkit/middleware"
 *
 * Telemetry.Names.firstTokenLatency // "gen_ai.response.first_token_latency_ms"
 * ```
 *
 * @since 0.1.0
 * @category names
 */
export const Names = {
  costUsd: "gen_ai.usage.cost_usd",
  costSavedByCache: "gen_ai.usage.cost_saved_by_cache_usd",
  firstTokenLatency: "gen_ai.response.first_token_latency_ms",
  duration: "gen_ai.response.duration_ms",
  toolCalls: "gen_ai.response.tool_calls",
  toolCallsCount: "gen_ai.response.tool_calls_count",
  cacheHit: "agentkit.cache.hit",
  toolCallArguments: "gen_ai.tool.call.arguments",
  choiceEvent: "gen_ai.choice",
  toolResultEvent: "gen_ai.tool.result",
  tokenType: "gen_ai.token.type",
  scopeOrgId: "agentkit.scope.org_id"
} as const

/**
 * Decides which runs are traced, by correlation id, so a run is kept or dropped whole.
 *
 * @example
 * ```ts
 * import type { Telemetry } from "@agentkit/middleware"
 *
 * // keep every run of one tenant's test traffic, drop the rest
 * const sampler: Telemetry.Sampler = { shouldSample: (correlationId) => correlationId.startsWith("debug-") }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Sampler {
  readonly shouldSample: (correlationId: string) => boolean
}

/**
 * Traces every run.
 *
 * @example
 * ```ts
 * import { Telemetry } from "@agentkit/middleware"
 *
 * Telemetry.alwaysSample.shouldSample("run-1") // true
 * ```
 *
 * @since 0.1.0
 * @category samplers
 */
export const alwaysSample: Sampler = { shouldSample: () => true }

/** FNV-1a (32 bit) over the UTF-8 bytes of a string. */
const fnv1a32 = (text: string): number => {
  let hash = 0x811c9dc5
  const byte = (b: number) => {
    hash ^= b
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  for (let i = 0; i < text.length; i++) {
    let code = text.codePointAt(i)!
    if (code > 0xffff) i++
    if (code >= 0xd800 && code <= 0xdfff) code = 0xfffd // a lone surrogate encodes as U+FFFD
    if (code < 0x80) byte(code)
    else if (code < 0x800) {
      byte(0xc0 | (code >> 6))
      byte(0x80 | (code & 0x3f))
    } else if (code < 0x10000) {
      byte(0xe0 | (code >> 12))
      byte(0x80 | ((code >> 6) & 0x3f))
      byte(0x80 | (code & 0x3f))
    } else {
      byte(0xf0 | (code >> 18))
      byte(0x80 | ((code >> 12) & 0x3f))
      byte(0x80 | ((code >> 6) & 0x3f))
      byte(0x80 | (code & 0x3f))
    }
  }
  return hash
}

/**
 * Keeps a share `ratio` (0 to 1) of runs, deterministically: a run is kept when the FNV-1a 32-bit
 * hash of its correlation id's UTF-8 bytes is below ratio · 2^32 (the Python agentkit's
 * `TraceIdRatioSampler`), so every process makes the same decision for the same run. A ratio
 * outside [0, 1] throws `ConfigurationError`.
 *
 * @example
 * ```ts
 * import { Telemetry } from "@agentkit/middleware"
 *
 * const tenPercent = Telemetry.ratioSampler(0.1)
 * tenPercent.shouldSample("run-42") === tenPercent.shouldSample("run-42") // true
 * ```
 *
 * @since 0.1.0
 * @category samplers
 */
export const ratioSampler = (ratio: number): Sampler => {
  if (typeof ratio !== "number" || !(ratio >= 0 && ratio <= 1)) {
    throw new ConfigurationError({
      field: "sampler.ratio",
      message: `sampler ratio must be a number from 0 to 1; got ${String(ratio)}`
    })
  }
  const threshold = Math.floor(ratio * 2 ** 32)
  if (threshold === 0) return { shouldSample: () => false }
  if (threshold >= 2 ** 32) return alwaysSample
  return { shouldSample: (correlationId) => fnv1a32(correlationId) < threshold }
}

/**
 * Runs `self` with tracing off when the sampler drops the current run: every span of the run (the
 * agent's, the Invoker's, the tools') is then a no-op. Wrap the whole run with it; the
 * `telemetry` middleware alone can only keep its own additions and inner spans out of a dropped
 * run, since the Invoker has opened the call's span before the middleware runs.
 *
 * @example
 * ```ts
 * import { Telemetry } from "@agentkit/middleware"
 *
 * const sampler = Telemetry.ratioSampler(0.25)
 * const traced = agent.run("What happened to order A-771?").pipe(Telemetry.sampleRun(sampler))
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const sampleRun =
  (sampler: Sampler) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | RunContext> =>
    Effect.flatMap(RunContext, (context) =>
      sampler.shouldSample(context.correlationId) ? self : Effect.withTracerEnabled(self, false)
    )

const tokenUsageKey = MetricKey.histogram(
  "gen_ai.client.token.usage",
  MetricBoundaries.fromIterable([1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]),
  "Number of input and output tokens used per GenAI operation"
)
const operationDurationKey = MetricKey.histogram(
  "gen_ai.client.operation.duration",
  MetricBoundaries.fromIterable([0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]),
  "GenAI operation duration in seconds"
)
const errorCountKey = MetricKey.counter("gen_ai.client.error.count", {
  description: "Failed GenAI operations",
  incremental: true
})

/**
 * `gen_ai.client.token.usage`: a histogram of input and output tokens per model call (tag
 * `gen_ai.token.type`), with the GenAI conventions' bucket boundaries.
 *
 * @example
 * ```ts
 * import { Telemetry } from "@agentkit/middleware"
 * import { Effect, Metric } from "effect"
 *
 * const state = Metric.value(Telemetry.tokenUsage.pipe(Metric.tagged("gen_ai.token.type", "input")))
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
 * import { Telemetry } from "@agentkit/middleware"
 * import { Metric } from "effect"
 *
 * const state = Metric.value(Telemetry.operationDuration)
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
 * import { Telemetry } from "@agentkit/middleware"
 * import { Metric } from "effect"
 *
 * const failures = Metric.value(Telemetry.errorCount.pipe(Metric.tagged("error.type", "ChatModelError")))
 * ```
 *
 * @since 0.1.0
 * @category metrics
 */
export const errorCount = Metric.fromMetricKey(errorCountKey)

/**
 * The options of `telemetry`.
 *
 * @example
 * ```ts
 * import { Telemetry } from "@agentkit/middleware"
 *
 * const options: Telemetry.Options = { captureContent: true, sampler: Telemetry.ratioSampler(0.05) }
 * const telemetry = Telemetry.telemetry(options)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * Record message content (opt-in: it may hold personal data): one `gen_ai.{role}.message` event
   * per request message and a `gen_ai.choice` event (each cut to 8 KB), the tool arguments and the
   * tool result text (cut to 4 KB). Default false.
   */
  readonly captureContent?: boolean | undefined
  /** Which runs get the middleware's span additions (default: all). Metrics are always recorded. */
  readonly sampler?: Sampler | undefined
  /** Record the GenAI metrics (default true). */
  readonly metrics?: boolean | undefined
}

const MESSAGE_BYTES = 8 * 1024
const TOOL_BYTES = 4 * 1024
const TRUNCATED = " [truncated]"

/** Runs `f` on the current span, if any; a throwing tracer is ignored. */
const onSpan = (f: (span: Tracer.Span, now: bigint) => void): Effect.Effect<void> =>
  Effect.flatMap(Effect.option(Effect.currentSpan), (span) =>
    Option.isNone(span)
      ? Effect.void
      : Effect.clockWith((clock) =>
          Effect.sync(() => {
            try {
              f(span.value, clock.unsafeCurrentTimeNanos())
            } catch {
              // a tracer that throws never breaks the run
            }
          })
        )
  )

const messageTokens = (content: string): number => (content === "" ? 0 : Math.max(1, Math.floor(content.length / 4)))

const toolCallNames = (calls: ReadonlyArray<{ readonly name: string }>): string => {
  const names = calls.slice(0, 16).map((call) => call.name)
  return calls.length > 16 ? `${names.join(",")},+${calls.length - 16} more` : names.join(",")
}

const annotateRequest = (call: ChatCall, captureContent: boolean): Effect.Effect<void> =>
  onSpan((span, now) => {
    const { request, context } = call
    span.attribute(Tracing.Attribute.conversationId, context.correlationId)
    if (request.maxTokens !== undefined) span.attribute(Tracing.Attribute.requestMaxTokens, request.maxTokens)
    if (request.temperature !== undefined) span.attribute(Tracing.Attribute.requestTemperature, request.temperature)
    if (!captureContent) return
    for (const message of request.messages) {
      span.event(`gen_ai.${message.role}.message`, now, {
        "gen_ai.message.role": message.role,
        "gen_ai.message.content": truncateUtf8(message.content, MESSAGE_BYTES, TRUNCATED),
        "gen_ai.message.tokens": messageTokens(message.content)
      })
    }
  })

const annotateResponse = (
  response: Chat.ChatResponse,
  meta: ChatCall["meta"],
  startMillis: number,
  endMillis: number,
  firstTokenMillis: number | undefined,
  captureContent: boolean
): Effect.Effect<void> =>
  onSpan((span, now) => {
    const usage = response.usage
    span.attribute(Tracing.Attribute.responseModel, response.model)
    span.attribute(Tracing.Attribute.responseFinishReasons, [response.finishReason])
    if (response.requestId !== undefined) span.attribute(Tracing.Attribute.responseId, response.requestId)
    span.attribute(Names.costUsd, usage.costUsd)
    if (usage.cacheReadTokens > 0) {
      span.attribute(Tracing.Attribute.usageCacheReadTokens, usage.cacheReadTokens)
      if (usage.inputTokens > 0 && usage.costUsd > 0) {
        span.attribute(Names.costSavedByCache, usage.cacheReadTokens * (usage.costUsd / usage.inputTokens) * 0.9)
      }
    }
    if (usage.cacheWriteTokens > 0) span.attribute(Tracing.Attribute.usageCacheWriteTokens, usage.cacheWriteTokens)
    if (response.toolCalls.length > 0) {
      span.attribute(Names.toolCalls, toolCallNames(response.toolCalls))
      span.attribute(Names.toolCallsCount, response.toolCalls.length)
    }
    if (meta.cacheHit === true) span.attribute(Names.cacheHit, true)
    if (firstTokenMillis !== undefined) span.attribute(Names.firstTokenLatency, firstTokenMillis - startMillis)
    span.attribute(Names.duration, endMillis - startMillis)
    if (captureContent) {
      span.event(Names.choiceEvent, now, {
        "gen_ai.choice.role": "assistant",
        "gen_ai.choice.content": truncateUtf8(response.content, MESSAGE_BYTES, TRUNCATED),
        "gen_ai.choice.finish_reason": response.finishReason,
        "gen_ai.choice.tokens": usage.outputTokens
      })
    }
  })

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

const recordChatMetrics = (
  call: ChatCall,
  exit: Exit.Exit<Chat.ChatResponse, ChatError>,
  seconds: number
): Effect.Effect<void> =>
  // one step for every update; labels set with `Effect.tagMetrics` are honoured
  Effect.flatMap(FiberRef.get(FiberRef.currentMetricLabels), (extra) =>
    Effect.sync(() => {
      const orgId = call.context.scope.orgId
      const model = call.request.model
      const org = orgId === undefined ? "none" : String(orgId)
      const common = () =>
        [
          [Tracing.Attribute.operationName, Tracing.Operation.chat],
          [Tracing.Attribute.requestModel, model],
          [Names.scopeOrgId, org]
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
          input: withLabels(tokenUsageKey, [...labels, [Names.tokenType, "input"]]),
          output: withLabels(tokenUsageKey, [...labels, [Names.tokenType, "output"]])
        }
      })
      metrics.duration.unsafeUpdate(seconds, extra)
      // a cache hit used no tokens
      if (call.meta.cacheHit === true) return
      const { inputTokens, outputTokens } = exit.value.usage
      if (inputTokens > 0) metrics.input.unsafeUpdate(inputTokens, extra)
      if (outputTokens > 0) metrics.output.unsafeUpdate(outputTokens, extra)
    })
  )

const resultContent = (outcome: ToolOutcome): string => truncateUtf8(outcome.text, TOOL_BYTES, TRUNCATED)

/**
 * Enriches the spans the Invoker opened with the rest of the OpenTelemetry GenAI conventions and
 * records the GenAI metrics. Works on both pipelines (put the same value in both lists).
 *
 * On a `chat {model}` span: `gen_ai.conversation.id`, `gen_ai.request.max_tokens` and
 * `temperature`, `gen_ai.response.model`, `finish_reasons`, `id`, `gen_ai.usage.cost_usd`, the
 * cache token counts (when non-zero) and `gen_ai.usage.cost_saved_by_cache_usd`,
 * `gen_ai.response.tool_calls` (names, 16 at most, then `,+N more`) and `tool_calls_count`,
 * `gen_ai.response.first_token_latency_ms` (when text arrived), `gen_ai.response.duration_ms`,
 * `agentkit.cache.hit`; with `captureContent`, a `gen_ai.{role}.message` event per request
 * message and a `gen_ai.choice` event (content cut to 8 KB). Metrics: `gen_ai.client.token.usage`
 * (skipped for zero counts and cache hits), `gen_ai.client.operation.duration` (seconds),
 * `gen_ai.client.error.count`, tagged with the operation, request model, provider, scope org and
 * `error.type`.
 *
 * On an `execute_tool {tool}` span: a `gen_ai.tool.result` event with `gen_ai.tool.name`,
 * `gen_ai.tool.result_size_bytes` (UTF-8, before any cut) and `gen_ai.tool.duration_ms`; with
 * `captureContent`, also `gen_ai.tool.result_content` (cut to 4 KB) and the
 * `gen_ai.tool.call.arguments` attribute.
 *
 * A run the sampler drops gets none of these span additions, and the spans opened inside the
 * pipeline (a tool's own spans, HTTP client spans) are no-ops; use `sampleRun` to drop the whole
 * run. Metrics are recorded for every run. A tracer that throws never breaks the run. A run with
 * `tracing: false` gets metrics only.
 *
 * Place: outermost in both pipelines, so it measures everything the call costs:
 * `[telemetry, ...]`.
 *
 * @example
 * ```ts
 * import { Invoker } from "@agentkit/core"
 * import { Telemetry } from "@agentkit/middleware"
 *
 * const telemetry = Telemetry.telemetry({ captureContent: false, sampler: Telemetry.ratioSampler(0.1) })
 * const InvokerLive = Invoker.layer({ chatMiddleware: [telemetry], toolMiddleware: [telemetry] })
 * ```
 *
 * @since 0.1.0
 * @category middleware
 */
export const telemetry = (options: Options = {}): ChatMiddleware & ToolMiddleware => {
  const captureContent = options.captureContent ?? false
  const sampler = options.sampler ?? alwaysSample
  const metrics = options.metrics ?? true

  const chat: ChatMiddleware = (next: ChatHandler): ChatHandler => (call) =>
    Effect.clockWith((clock) => {
      const context = call.context
      const traced = context.tracing && sampler.shouldSample(context.correlationId)
      const start = clock.unsafeCurrentTimeMillis()
      let firstToken: number | undefined
      const inner: ChatCall = {
        request: call.request,
        emit: (delta) => {
          if (firstToken === undefined && delta.text !== "") firstToken = clock.unsafeCurrentTimeMillis()
          call.emit(delta)
        },
        meta: call.meta,
        context
      }
      const run = context.tracing && !traced ? Effect.withTracerEnabled(next(inner), false) : next(inner)
      const measured = Effect.onExit(run, (exit) => {
        const end = clock.unsafeCurrentTimeMillis()
        const annotated =
          traced && Exit.isSuccess(exit)
            ? annotateResponse(exit.value, call.meta, start, end, firstToken, captureContent)
            : Effect.void
        return metrics ? Effect.zipRight(annotated, recordChatMetrics(call, exit, (end - start) / 1000)) : annotated
      })
      return traced ? Effect.zipRight(annotateRequest(call, captureContent), measured) : measured
    })

  const tool: ToolMiddleware = (next: ToolHandler): ToolHandler =>
    <E, R>(invocation: ToolInvocation<E, R>): Effect.Effect<ToolOutcome, E | ToolPipelineError, R> => {
      const context = invocation.context
      if (!context.tracing) return next(invocation)
      if (!sampler.shouldSample(context.correlationId)) return Effect.withTracerEnabled(next(invocation), false)
      const name = invocation.tool.name
      const before = captureContent
        ? onSpan((span) =>
            span.attribute(
              Names.toolCallArguments,
              truncateUtf8(CanonicalJson.stringify(invocation.call.arguments), TOOL_BYTES, TRUNCATED)
            )
          )
        : Effect.void
      return Effect.zipRight(
        before,
        Effect.flatMap(Clock.currentTimeMillis, (start) =>
          Effect.tap(next(invocation), (outcome) =>
            Effect.flatMap(Clock.currentTimeMillis, (end) =>
              onSpan((span, now) => {
                const attributes: Record<string, unknown> = {
                  [Tracing.Attribute.toolName]: name,
                  "gen_ai.tool.result_size_bytes": utf8Length(outcome.text),
                  "gen_ai.tool.duration_ms": end - start
                }
                if (captureContent) attributes["gen_ai.tool.result_content"] = resultContent(outcome)
                span.event(Names.toolResultEvent, now, attributes)
              })
            )
          )
        )
      )
    }

  return both(chat, tool)
}
