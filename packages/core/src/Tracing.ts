/**
 * Tracing: the one telemetry vocabulary of agentkit (every span, attribute, event and metric name,
 * following the OpenTelemetry GenAI conventions where they have one), the one way to annotate the
 * current span (never failing, never throwing), the usage-to-attributes mapping, whole-run
 * sampling, and a recording tracer for tests.
 *
 * Spans are ordinary Effect spans, so `@effect/opentelemetry` exports them to any backend. Who opens
 * which span: the agent opens `invoke_agent {agent}`, the Invoker `chat {model}` and
 * `execute_tool {tool}` (outside every middleware), the ReAct loop `policy.check`.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import type * as Tracer from "effect/Tracer"
import * as EffectTracer from "effect/Tracer"
import * as contained from "./internal/contained.js"
import { locallyWith } from "./internal/locally.js"
import * as recorder from "./internal/recording.js"
import * as sampler from "./internal/sampler.js"
import * as spanning from "./internal/span.js"
import { RunContext } from "./RunContext.js"
import type { Usage } from "./Usage.js"

/**
 * Span names (OpenTelemetry GenAI conventions, plus agentkit's `policy.check`).
 *
 * @example
 * ```ts
 * import { Tracing } from "@agentkit/core"
 *
 * Tracing.SpanName.chat("claude-sonnet-4-6") // "chat claude-sonnet-4-6"
 * ```
 *
 * @since 0.1.0
 * @category names
 */
export const SpanName = {
  invokeAgent: (agent: string): string => `invoke_agent ${agent}`,
  chat: (model: string): string => `chat ${model}`,
  executeTool: (tool: string): string => `execute_tool ${tool}`,
  /** A graph run (`Graph` in `@agentkit/agents`): its nodes' spans are its children. */
  invokeWorkflow: (graph: string): string => `invoke_workflow ${graph}`,
  policyCheck: "policy.check"
} as const

/**
 * Span and event attribute names: the OpenTelemetry GenAI conventions (`gen_ai.*`), `error.type`,
 * the MCP conventions (`mcp.*`, which enrich a call's `execute_tool` span), and agentkit's own
 * (`agentkit.*`, a provider's own, the usage cost).
 *
 * @example
 * ```ts
 * import { Tracing } from "@agentkit/core"
 *
 * Tracing.Attribute.requestModel // "gen_ai.request.model"
 * ```
 *
 * @since 0.1.0
 * @category names
 */
export const Attribute = {
  operationName: "gen_ai.operation.name",
  providerName: "gen_ai.provider.name",
  agentName: "gen_ai.agent.name",
  conversationId: "gen_ai.conversation.id",
  requestModel: "gen_ai.request.model",
  requestMaxTokens: "gen_ai.request.max_tokens",
  requestTemperature: "gen_ai.request.temperature",
  responseModel: "gen_ai.response.model",
  responseId: "gen_ai.response.id",
  responseFinishReasons: "gen_ai.response.finish_reasons",
  responseToolCalls: "gen_ai.response.tool_calls",
  responseToolCallsCount: "gen_ai.response.tool_calls_count",
  responseFirstTokenLatency: "gen_ai.response.first_token_latency_ms",
  responseDuration: "gen_ai.response.duration_ms",
  usageInputTokens: "gen_ai.usage.input_tokens",
  usageOutputTokens: "gen_ai.usage.output_tokens",
  usageCacheReadTokens: "gen_ai.usage.cache_read_input_tokens",
  usageCacheWriteTokens: "gen_ai.usage.cache_creation_input_tokens",
  usageCostUsd: "gen_ai.usage.cost_usd",
  usageCostSavedByCache: "gen_ai.usage.cost_saved_by_cache_usd",
  tokenType: "gen_ai.token.type",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolType: "gen_ai.tool.type",
  toolCallArguments: "gen_ai.tool.call.arguments",
  toolResultSizeBytes: "gen_ai.tool.result_size_bytes",
  toolResultContent: "gen_ai.tool.result_content",
  toolDuration: "gen_ai.tool.duration_ms",
  messageRole: "gen_ai.message.role",
  messageContent: "gen_ai.message.content",
  messageTokens: "gen_ai.message.tokens",
  choiceRole: "gen_ai.choice.role",
  choiceContent: "gen_ai.choice.content",
  choiceFinishReason: "gen_ai.choice.finish_reason",
  choiceTokens: "gen_ai.choice.tokens",
  errorType: "error.type",
  exceptionType: "exception.type",
  exceptionMessage: "exception.message",
  exceptionStacktrace: "exception.stacktrace",
  cacheHit: "agentkit.cache.hit",
  scopeOrgId: "agentkit.scope.org_id",
  policyTool: "agentkit.policy.tool",
  policyLegs: "agentkit.policy.legs",
  policyDecision: "agentkit.policy.decision",
  policyMode: "agentkit.policy.mode",
  policyCapabilities: "agentkit.policy.capabilities",
  policyReason: "agentkit.policy.reason",
  isCoordinator: "agentkit.agent.is_coordinator",
  coordinatorPolicy: "agentkit.agent.policy",
  workflowName: "agentkit.workflow.name",
  workflowNodesCount: "agentkit.workflow.nodes_count",
  workflowStopReason: "agentkit.workflow.stop_reason",
  anthropicRequestId: "anthropic.request.id",
  mcpMethodName: "mcp.method.name",
  mcpProtocolVersion: "mcp.protocol.version",
  mcpServerName: "mcp.server.name",
  mcpToolName: "mcp.tool.name"
} as const

/**
 * Values of `gen_ai.operation.name`.
 *
 * @example
 * ```ts
 * import { Tracing } from "@agentkit/core"
 *
 * Tracing.Operation.executeTool // "execute_tool"
 * ```
 *
 * @since 0.1.0
 * @category names
 */
export const Operation = {
  invokeAgent: "invoke_agent",
  invokeWorkflow: "invoke_workflow",
  chat: "chat",
  executeTool: "execute_tool"
} as const

/**
 * Span event names: agentkit's own and the GenAI content events.
 *
 * @example
 * ```ts
 * import { Tracing } from "@agentkit/core"
 *
 * Tracing.EventName.toolShapeMismatch // "tool.shape_mismatch"
 * Tracing.EventName.message("user") // "gen_ai.user.message"
 * ```
 *
 * @since 0.1.0
 * @category names
 */
export const EventName = {
  toolShapeMismatch: "tool.shape_mismatch",
  retryAttempt: "retry.attempt",
  budgetCheckpoint: "budget.checkpoint",
  policyFlagged: "policy.flagged",
  /** A coordinator picked the child that acts next (attributes `policy`, `selected_child`, `selection_reason`). */
  policyDispatch: "policy.dispatch",
  /** @deprecated the dynamic check is a `policy.check` span: `SpanName.policyCheck` */
  policyCheck: "policy.check",
  toolResult: "gen_ai.tool.result",
  circuitOpen: "circuit.open",
  cacheHit: "cache.hit",
  choice: "gen_ai.choice",
  /** A tool handler's defect (OpenTelemetry's exception event): its type, message and stack trace. */
  exception: "exception",
  message: (role: string): string => `gen_ai.${role}.message`
} as const

/**
 * The attribute names of agentkit's own span events (`retry.attempt`, `circuit.open`,
 * `cache.hit`, `budget.checkpoint`, `tool.shape_mismatch`).
 *
 * @example
 * ```ts
 * import { Tracing } from "@agentkit/core"
 *
 * Tracing.EventAttribute.backoffMs // "backoff_ms"
 * ```
 *
 * @since 0.1.0
 * @category names
 */
export const EventAttribute = {
  attempt: "attempt",
  lastErrorType: "last_error_type",
  lastErrorMessage: "last_error_message",
  backoffMs: "backoff_ms",
  circuit: "circuit",
  cacheKey: "cache_key",
  spentUsd: "spent_usd",
  remainingUsd: "remaining_usd",
  calls: "calls",
  toolName: "tool_name",
  expectedShape: "expected_shape",
  policy: "policy",
  selectedChild: "selected_child",
  selectionReason: "selection_reason"
} as const

/**
 * The GenAI client metric names.
 *
 * @example
 * ```ts
 * import { Tracing } from "@agentkit/core"
 *
 * Tracing.MetricName.tokenUsage // "gen_ai.client.token.usage"
 * ```
 *
 * @since 0.1.0
 * @category names
 */
export const MetricName = {
  tokenUsage: "gen_ai.client.token.usage",
  operationDuration: "gen_ai.client.operation.duration",
  errorCount: "gen_ai.client.error.count"
} as const

/**
 * A value an attribute may hold: a primitive or an array of one primitive type (OpenTelemetry's
 * attribute values); `undefined` means "leave the attribute unset".
 *
 * @example
 * ```ts
 * import type { Tracing } from "@agentkit/core"
 *
 * const reasons: Tracing.AttributeValue = ["end_turn"]
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type AttributeValue =
  | string
  | number
  | boolean
  | ReadonlyArray<string>
  | ReadonlyArray<number>
  | ReadonlyArray<boolean>
  | undefined

/**
 * A set of attributes for `annotate`.
 *
 * @example
 * ```ts
 * import { Tracing } from "@agentkit/core"
 *
 * const attributes: Tracing.Attributes = { [Tracing.Attribute.responseModel]: "claude-sonnet-4-6" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Attributes = Readonly<Record<string, AttributeValue>>

/**
 * Sets attributes on the current span, if there is one: the one way agentkit annotates a span.
 * An `undefined` value is skipped; an array reaches OpenTelemetry as an array (also through
 * `@effect/opentelemetry`, which would otherwise turn it into a JSON string). Never fails and
 * never throws: a broken tracer must not break the run.
 *
 * @example
 * ```ts
 * import { Tracing } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const program = Tracing.annotate({ [Tracing.Attribute.responseFinishReasons]: ["end_turn"] }).pipe(Effect.withSpan("chat m"))
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const annotate = (attributes: Attributes): Effect.Effect<void> =>
  Effect.withFiberRuntime((fiber) => {
    const span = fiber.currentSpan
    if (span?._tag === "Span") spanning.setOn(span, attributes)
    return Effect.void
  })

/**
 * Adds an event to the current span, if there is one. Never fails and never throws: a broken
 * tracer must not break the run.
 *
 * @example
 * ```ts
 * import { Tracing } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const program = Tracing.addEvent("tool.shape_mismatch", { tool_name: "quote", expected_shape: "Quote" }).pipe(
 *   Effect.withSpan("execute_tool quote")
 * )
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const addEvent = (name: string, attributes: Record<string, unknown> = {}): Effect.Effect<void> =>
  Effect.withFiberRuntime((fiber) => {
    const span = fiber.currentSpan
    if (span?._tag === "Span") {
      try {
        span.event(name, Context.get(fiber.currentDefaultServices, Clock.Clock).unsafeCurrentTimeNanos(), attributes)
      } catch {
        // a tracer that throws never breaks the run
      }
    }
    return Effect.void
  })

/**
 * Runs `self` with the current tracer contained: whatever the tracer does, throwing from `span`,
 * from a span's `end`, `attribute`, `event` or `addLinks`, or from reading a span's fields, the
 * run goes on (a span the tracer failed to make is replaced by a stand-in that records nothing,
 * so the spans below it still nest). The tracer is wrapped once (a nested `contain`, a sub-agent's
 * run, reuses the wrapper) and the wrapped tracer still sees its own spans as parents. Every agent
 * run does this when tracing is on; with tracing off (`RunContext` `tracing: false`) nothing is
 * wrapped and it costs nothing. Use it around Invoker calls made outside an agent run. (The
 * tracer's `context` hook, which wraps every step of a fiber, is not contained: it is the run loop.
 * It sees the tracer's own span as the fiber's current one, so OpenTelemetry code inside a run, an
 * instrumented client say, finds the run's recording span active.)
 * Effect's own default tracer, whose spans never throw, is left as it is.
 *
 * @example
 * ```ts
 * import { Tracing } from "@agentkit/core"
 * import { Effect, Tracer } from "effect"
 *
 * const broken = Tracer.make({ span: () => { throw new Error("exporter down") }, context: (f) => f() })
 * const program = Effect.succeed("ok").pipe(Effect.withSpan("work"), Tracing.contain, Effect.withTracer(broken))
 * Effect.runSync(program) // "ok"
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const contain = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime((fiber) => {
    const tracer = fiber.currentTracer
    return tracer === nativeTracer || contained.isContained(tracer)
      ? self
      : locallyWith(
        self,
        DefaultServices.currentServices,
        (services) => Context.add(services, EffectTracer.Tracer, contained.contained(tracer))
      )
  })

/** Effect's own tracer, the default one (a fiber's unless another is installed). */
const nativeTracer: Tracer.Tracer = Context.get(DefaultServices.liveServices, EffectTracer.Tracer)

/**
 * Options of `Tracing.span`: Effect's span options (no stack trace is captured), and `onEnd`,
 * the attributes to set from the outcome just before the span ends.
 *
 * @example
 * ```ts
 * import { Tracing } from "@agentkit/core"
 * import { Exit } from "effect"
 *
 * const options: Tracing.SpanOptions<string, Error> = {
 *   kind: "client",
 *   attributes: { [Tracing.Attribute.operationName]: Tracing.Operation.chat },
 *   onEnd: (exit) => (Exit.isSuccess(exit) ? { [Tracing.Attribute.responseModel]: exit.value } : undefined)
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface SpanOptions<A, E> extends Omit<Tracer.SpanOptions, "captureStackTrace"> {
  readonly onEnd?: ((exit: Exit.Exit<A, E>) => Attributes | undefined) | undefined
  /** No stack trace is ever captured; options that say so are passed to Effect as they are (no copy). */
  readonly captureStackTrace?: false | undefined
}

/**
 * Runs `self` inside a span: `Effect.withSpan` (the same span, with the parent, links,
 * annotations, tracer and clock Effect would give it; the parent of every span `self` opens; ended
 * when `self` ends, however it ends), with the attributes `onEnd` computes from the outcome set
 * on it as it ends (never failing, never throwing, like `annotate`). agentkit opens its own spans
 * with it; no stack trace is captured.
 *
 * @example
 * ```ts
 * import { Tracing } from "@agentkit/core"
 * import { Effect, Exit } from "effect"
 *
 * const program = Effect.succeed(42).pipe(
 *   Tracing.span("execute_tool quote", {
 *     attributes: { [Tracing.Attribute.toolName]: "quote" },
 *     onEnd: (exit) => (Exit.isFailure(exit) ? { [Tracing.Attribute.errorType]: "failed" } : undefined)
 *   })
 * )
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const span =
  <A, E>(name: string, options: SpanOptions<NoInfer<A>, NoInfer<E>> = {}) =>
  <R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => spanning.span(name, options, self)

/**
 * The usage attributes of a model call or a run (GenAI conventions: the input tokens include the
 * cached ones, read and written).
 *
 * @example
 * ```ts
 * import { Tracing, Usage } from "@agentkit/core"
 *
 * Tracing.usageAttributes(Usage.make({ inputTokens: 10, outputTokens: 5, cacheReadTokens: 90 }))
 * // { "gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 5, "gen_ai.usage.cache_read_input_tokens": 90, "gen_ai.usage.cache_creation_input_tokens": 0 }
 * ```
 *
 * @since 0.1.0
 * @category tracing
 */
export const usageAttributes = (usage: Usage): Attributes => ({
  [Attribute.usageInputTokens]: usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens,
  [Attribute.usageOutputTokens]: usage.outputTokens,
  [Attribute.usageCacheReadTokens]: usage.cacheReadTokens,
  [Attribute.usageCacheWriteTokens]: usage.cacheWriteTokens
})

/**
 * Decides which runs are traced, by correlation id, so a run is kept or dropped whole.
 *
 * @example
 * ```ts
 * import type { Tracing } from "@agentkit/core"
 *
 * // keep the debug runs, drop the rest
 * const debugOnly: Tracing.Sampler = { shouldSample: (correlationId) => correlationId.startsWith("debug-") }
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
 * import { Tracing } from "@agentkit/core"
 *
 * Tracing.alwaysSample.shouldSample("run-1") // true
 * ```
 *
 * @since 0.1.0
 * @category tracing
 */
export const alwaysSample: Sampler = sampler.always

/**
 * Keeps a share `ratio` (0 to 1) of runs, deterministically: a run is kept when the FNV-1a 32-bit
 * hash of its correlation id's UTF-8 bytes is below ratio · 2^32 (the Python agentkit's
 * `TraceIdRatioSampler`), so every process makes the same decision for the same run. A ratio
 * outside [0, 1] throws `ConfigurationError`.
 *
 * @example
 * ```ts
 * import { Tracing } from "@agentkit/core"
 *
 * const tenPercent = Tracing.ratioSampler(0.1)
 * tenPercent.shouldSample("run-42") === tenPercent.shouldSample("run-42") // true
 * ```
 *
 * @since 0.1.0
 * @category tracing
 */
export const ratioSampler: (ratio: number) => Sampler = sampler.ratio

/**
 * Runs `self` with tracing off when the sampler drops the current run: every span of the run (the
 * agent's, the Invoker's, the tools') is then a no-op. Wrap the whole run with it; the
 * `telemetry` middleware alone can only keep its own additions and inner spans out of a dropped
 * run, since the Invoker has opened the call's span before the middleware runs.
 *
 * @example
 * ```ts
 * import { Tracing } from "@agentkit/core"
 *
 * const sampler = Tracing.ratioSampler(0.25)
 * const traced = agent.run("What happened to order A-771?").pipe(Tracing.sampleRun(sampler))
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const sampleRun =
  (sampler: Sampler) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | RunContext> =>
    Effect.flatMap(
      RunContext,
      (context) => sampler.shouldSample(context.correlationId) ? self : Effect.withTracerEnabled(self, false)
    )

/**
 * A recorded span event.
 *
 * @example
 * ```ts
 * import { Tracing } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const tracer = Tracing.recording()
 * Effect.runSync(Tracing.addEvent("retry.attempt", { attempt: 1 }).pipe(Effect.withSpan("outer"), Effect.provide(tracer.layer)))
 * const events: ReadonlyArray<Tracing.RecordedEvent> = tracer.one("outer").events
 * // [{ name: "retry.attempt", attributes: { attempt: 1 } }]
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface RecordedEvent {
  readonly name: string
  readonly attributes: Readonly<Record<string, unknown>>
}

/**
 * A span kept in memory by the recording tracer.
 *
 * @example
 * ```ts
 * import { Tracing } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const tracer = Tracing.recording()
 * Effect.runSync(Effect.void.pipe(Effect.withSpan("chat m", { attributes: { "gen_ai.request.model": "m" } }), Effect.provide(tracer.layer)))
 * const span: Tracing.RecordedSpan = tracer.one("chat m")
 * span.attributes.get("gen_ai.request.model") // "m"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export const RecordedSpan: typeof recorder.RecordedSpan = recorder.RecordedSpan

/**
 * The type of a span kept in memory by the recording tracer.
 *
 * @example
 * ```ts
 * import type { Tracing } from "@agentkit/core"
 *
 * const eventNames = (span: Tracing.RecordedSpan) => span.events.map((event) => event.name)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type RecordedSpan = recorder.RecordedSpan

/**
 * An in-memory tracer for assertions: its `layer` makes it the current tracer.
 *
 * @example
 * ```ts
 * import { Tracing } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const tracer: Tracing.RecordingTracer = Tracing.recording()
 * Effect.runSync(Effect.void.pipe(Effect.withSpan("inner"), Effect.withSpan("outer"), Effect.provide(tracer.layer)))
 * tracer.childrenOf(tracer.one("outer")).map((span) => span.name) // ["inner"]
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface RecordingTracer {
  /** Installs this tracer for the effects it is provided to. */
  readonly layer: Layer.Layer<never>
  /** Every span started, in start order. */
  readonly spans: ReadonlyArray<RecordedSpan>
  /** The spans with this name, in start order. */
  named(name: string): ReadonlyArray<RecordedSpan>
  /** The only span with this name; throws when there is none or more than one. */
  one(name: string): RecordedSpan
  /** The spans whose parent is `span`. */
  childrenOf(span: RecordedSpan): ReadonlyArray<RecordedSpan>
  /** Forgets every span recorded so far. */
  clear(): void
}

/**
 * Makes a recording tracer.
 *
 * @example
 * ```ts
 * import { Tracing } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const tracer = Tracing.recording()
 * Effect.runSync(Effect.void.pipe(Effect.withSpan("outer"), Effect.provide(tracer.layer)))
 * tracer.one("outer").ended // true
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
/**
 * Makes a recording tracer.
 *
 * @example
 * ```ts
 * import { Tracing } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const tracer = Tracing.recording()
 * Effect.runSync(Effect.void.pipe(Effect.withSpan("outer"), Effect.provide(tracer.layer)))
 * tracer.one("outer").ended // true
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const recording: () => RecordingTracer = recorder.recording
