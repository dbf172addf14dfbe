/**
 * Telemetry for both pipelines: the rest of the OpenTelemetry GenAI conventions on the spans the
 * Invoker opens, opt-in content capture, and the GenAI metrics (`Metrics`). The names come from
 * core's `Tracing`, like the sampler.
 *
 * @since 0.1.0
 */
import { CanonicalJson, errorMessage, Middleware, Tracing, Utf8 } from "@agentkit/core"
import type {
  Chat,
  ChatCall,
  ChatHandler,
  ChatMiddleware,
  ToolCallRequest,
  ToolHandler,
  ToolMiddleware,
  ToolOutcome,
  ToolPipelineError
} from "@agentkit/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Metrics from "./Metrics.js"

/**
 * The options of `telemetry`.
 *
 * @example
 * ```ts
 * import { Tracing } from "@agentkit/core"
 * import { Telemetry } from "@agentkit/middleware"
 *
 * const options: Telemetry.Options = { captureContent: true, sampler: Tracing.ratioSampler(0.05) }
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
  readonly sampler?: Tracing.Sampler | undefined
  /** Record the GenAI metrics (default true). */
  readonly metrics?: boolean | undefined
}

const MESSAGE_BYTES = 8 * 1024
const TOOL_BYTES = 4 * 1024
const TRUNCATED = " [truncated]"

/** Cuts recorded content to `maxBytes` UTF-8 bytes, the marker counted inside the limit. */
const capped = (text: string, maxBytes: number): string => {
  const { droppedBytes } = Utf8.cut(text, maxBytes)
  return droppedBytes === 0 ? text : Utf8.cut(text, maxBytes - Utf8.byteLength(TRUNCATED)).kept + TRUNCATED
}

/** The arguments as recorded: their canonical JSON, or a note when they cannot be read. */
const argumentsText = (args: unknown): string => {
  try {
    return CanonicalJson.stringify(args)
  } catch (error) {
    return `[arguments not recorded: ${errorMessage(error)}]`
  }
}

const messageTokens = (content: string): number => (content === "" ? 0 : Math.max(1, Math.floor(content.length / 4)))

const toolCallNames = (calls: ReadonlyArray<{ readonly name: string }>): string => {
  const names = calls.slice(0, 16).map((call) => call.name)
  return calls.length > 16 ? `${names.join(",")},+${calls.length - 16} more` : names.join(",")
}

const annotateRequest = (call: ChatCall, captureContent: boolean): Effect.Effect<void> => {
  const { request, context } = call
  const attributes = Tracing.annotate({
    [Tracing.Attribute.conversationId]: context.correlationId,
    [Tracing.Attribute.requestMaxTokens]: request.maxTokens,
    [Tracing.Attribute.requestTemperature]: request.temperature
  })
  if (!captureContent) return attributes
  return Effect.zipRight(
    attributes,
    Effect.forEach(
      request.messages,
      (message) =>
        Tracing.addEvent(Tracing.EventName.message(message.role), {
          [Tracing.Attribute.messageRole]: message.role,
          [Tracing.Attribute.messageContent]: capped(message.content, MESSAGE_BYTES),
          [Tracing.Attribute.messageTokens]: messageTokens(message.content)
        }),
      { discard: true }
    )
  )
}

// The response model, finish reasons, id, provider and token counts are the Invoker's: it sets
// them on every `chat {model}` span. These are the additions.
const annotateResponse = (
  response: Chat.ChatResponse,
  meta: ChatCall["meta"],
  startMillis: number,
  endMillis: number,
  firstTokenMillis: number | undefined,
  captureContent: boolean
): Effect.Effect<void> => {
  const usage = response.usage
  const saved = usage.cacheReadTokens > 0 && usage.inputTokens > 0 && usage.costUsd > 0
    ? usage.cacheReadTokens * (usage.costUsd / usage.inputTokens) * 0.9
    : undefined
  const calls = response.toolCalls.length
  const attributes = Tracing.annotate({
    [Tracing.Attribute.usageCostUsd]: usage.costUsd,
    [Tracing.Attribute.usageCostSavedByCache]: saved,
    [Tracing.Attribute.responseToolCalls]: calls > 0 ? toolCallNames(response.toolCalls) : undefined,
    [Tracing.Attribute.responseToolCallsCount]: calls > 0 ? calls : undefined,
    [Tracing.Attribute.cacheHit]: meta.cacheHit === true ? true : undefined,
    [Tracing.Attribute.responseFirstTokenLatency]: firstTokenMillis === undefined
      ? undefined
      : firstTokenMillis - startMillis,
    [Tracing.Attribute.responseDuration]: endMillis - startMillis
  })
  if (!captureContent) return attributes
  return Effect.zipRight(
    attributes,
    Tracing.addEvent(Tracing.EventName.choice, {
      [Tracing.Attribute.choiceRole]: "assistant",
      [Tracing.Attribute.choiceContent]: capped(response.content, MESSAGE_BYTES),
      [Tracing.Attribute.choiceFinishReason]: response.finishReason,
      [Tracing.Attribute.choiceTokens]: usage.outputTokens
    })
  )
}

/**
 * Enriches the spans the Invoker opened with the rest of the OpenTelemetry GenAI conventions and
 * records the GenAI metrics (`Metrics`). Works on both pipelines (put the same value in both
 * lists).
 *
 * On a `chat {model}` span: `gen_ai.conversation.id`, `gen_ai.request.max_tokens` and
 * `temperature`, `gen_ai.usage.cost_usd` and `gen_ai.usage.cost_saved_by_cache_usd`,
 * `gen_ai.response.tool_calls` (names, 16 at most, then `,+N more`) and `tool_calls_count`,
 * `gen_ai.response.first_token_latency_ms` (when text arrived), `gen_ai.response.duration_ms`,
 * `agentkit.cache.hit`; with `captureContent`, a `gen_ai.{role}.message` event per request
 * message and a `gen_ai.choice` event (content cut to 8 KB). (The Invoker itself sets the
 * response model, finish reasons, id, provider and token counts.) Metrics:
 * `gen_ai.client.token.usage` (skipped for zero counts and cache hits),
 * `gen_ai.client.operation.duration` (seconds), `gen_ai.client.error.count`, tagged with the
 * operation, request model, provider, scope org and `error.type`.
 *
 * On an `execute_tool {tool}` span: a `gen_ai.tool.result` event with `gen_ai.tool.name`,
 * `gen_ai.tool.result_size_bytes` (UTF-8, before any cut) and `gen_ai.tool.duration_ms`; with
 * `captureContent`, also `gen_ai.tool.result_content` (cut to 4 KB) and the
 * `gen_ai.tool.call.arguments` attribute.
 *
 * A run the sampler drops gets none of these span additions, and the spans opened inside the
 * pipeline (a tool's own spans, HTTP client spans) are no-ops; use `Tracing.sampleRun` to drop
 * the whole run. Metrics are recorded for every run. A tracer that throws never breaks the run.
 * A run with `tracing: false` gets metrics only.
 *
 * Place: outermost in both pipelines, so it measures everything the call costs:
 * `[telemetry, ...]`.
 *
 * @example
 * ```ts
 * import { Invoker, Tracing } from "@agentkit/core"
 * import { Telemetry } from "@agentkit/middleware"
 *
 * const telemetry = Telemetry.telemetry({ captureContent: false, sampler: Tracing.ratioSampler(0.1) })
 * const InvokerLive = Invoker.layer({ chatMiddleware: [telemetry], toolMiddleware: [telemetry] })
 * ```
 *
 * @since 0.1.0
 * @category middleware
 */
export const telemetry = (options: Options = {}): Middleware.Both => {
  const captureContent = options.captureContent ?? false
  const sampler = options.sampler ?? Tracing.alwaysSample
  const metrics = options.metrics ?? true

  const chat: ChatMiddleware = (next: ChatHandler): ChatHandler => (call) =>
    Effect.clockWith((clock) => {
      const context = call.context
      const traced = context.tracing && sampler.shouldSample(context.correlationId)
      const start = clock.unsafeCurrentTimeMillis()
      let firstToken: number | undefined
      const inner = Middleware.tapEmit(call, (delta) => {
        if (firstToken === undefined && delta.text !== "") firstToken = clock.unsafeCurrentTimeMillis()
      })
      const run = context.tracing && !traced ? Effect.withTracerEnabled(next(inner), false) : next(inner)
      const measured = Effect.onExit(run, (exit) => {
        const end = clock.unsafeCurrentTimeMillis()
        const annotated = traced && Exit.isSuccess(exit)
          ? annotateResponse(exit.value, call.meta, start, end, firstToken, captureContent)
          : Effect.void
        return metrics
          ? Effect.zipRight(annotated, Metrics.recordChatCall(call, exit, (end - start) / 1000))
          : annotated
      })
      return traced ? Effect.zipRight(annotateRequest(call, captureContent), measured) : measured
    })

  const tool: ToolMiddleware =
    (next: ToolHandler): ToolHandler =>
    <E, R>(request: ToolCallRequest<E, R>): Effect.Effect<ToolOutcome, E | ToolPipelineError, R> => {
      const context = request.context
      if (!context.tracing) return next(request)
      if (!sampler.shouldSample(context.correlationId)) return Effect.withTracerEnabled(next(request), false)
      const name = request.tool.name
      const before = captureContent
        ? Tracing.annotate({
          [Tracing.Attribute.toolCallArguments]: capped(argumentsText(request.call.arguments), TOOL_BYTES)
        })
        : Effect.void
      return Effect.zipRight(
        before,
        Effect.flatMap(
          Clock.currentTimeMillis,
          (start) =>
            Effect.tap(
              next(request),
              (outcome) =>
                Effect.flatMap(Clock.currentTimeMillis, (end) =>
                  Tracing.addEvent(Tracing.EventName.toolResult, {
                    [Tracing.Attribute.toolName]: name,
                    [Tracing.Attribute.toolResultSizeBytes]: Utf8.byteLength(outcome.text),
                    [Tracing.Attribute.toolDuration]: end - start,
                    ...(captureContent
                      ? { [Tracing.Attribute.toolResultContent]: capped(outcome.text, TOOL_BYTES) }
                      : {})
                  }))
            )
        )
      )
    }

  return Middleware.both(chat, tool)
}
