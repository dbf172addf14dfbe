/**
 * Tracing: the OpenTelemetry GenAI span, attribute and event names agentkit uses, a safe way to
 * add span events, and a recording tracer for tests.
 *
 * Spans are ordinary Effect spans, so `@effect/opentelemetry` exports them to any backend.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"

/**
 * Span names (OpenTelemetry GenAI conventions).
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
  executeTool: (tool: string): string => `execute_tool ${tool}`
} as const

/**
 * Span attribute names (OpenTelemetry GenAI conventions plus `error.type`).
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
  usageInputTokens: "gen_ai.usage.input_tokens",
  usageOutputTokens: "gen_ai.usage.output_tokens",
  usageCacheReadTokens: "gen_ai.usage.cache_read_input_tokens",
  usageCacheWriteTokens: "gen_ai.usage.cache_creation_input_tokens",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolType: "gen_ai.tool.type",
  errorType: "error.type"
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
  chat: "chat",
  executeTool: "execute_tool"
} as const

/**
 * agentkit's own span event names.
 *
 * @example
 * ```ts
 * import { Tracing } from "@agentkit/core"
 *
 * Tracing.EventName.toolShapeMismatch // "tool.shape_mismatch"
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
  policyCheck: "policy.check",
  toolResult: "gen_ai.tool.result",
  circuitOpen: "circuit.open"
} as const

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
  Effect.flatMap(Effect.option(Effect.currentSpan), (span) =>
    Option.isNone(span)
      ? Effect.void
      : Effect.flatMap(Effect.clockWith((clock) => clock.currentTimeNanos), (now) =>
          Effect.sync(() => {
            try {
              span.value.event(name, now, attributes)
            } catch {
              // a tracer that throws never breaks the run
            }
          })
        )
  )

/**
 * Sets attributes on the current span, if there is one. Never fails and never throws.
 *
 * @example
 * ```ts
 * import { Tracing } from "@agentkit/core"
 *
 * Tracing.setAttributes({ "gen_ai.usage.input_tokens": 10 })
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const setAttributes = (attributes: Record<string, unknown>): Effect.Effect<void> =>
  Effect.flatMap(Effect.option(Effect.currentSpan), (span) =>
    Option.isNone(span)
      ? Effect.void
      : Effect.sync(() => {
          try {
            for (const key in attributes) span.value.attribute(key, attributes[key])
          } catch {
            // a tracer that throws never breaks the run
          }
        })
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
export class RecordedSpan implements Tracer.Span {
  readonly _tag = "Span"
  readonly attributes = new Map<string, unknown>()
  readonly events: Array<RecordedEvent> = []
  readonly links: Array<Tracer.SpanLink>
  readonly sampled = true
  status: Tracer.SpanStatus
  exit: Exit.Exit<unknown, unknown> | undefined = undefined

  constructor(
    readonly name: string,
    readonly spanId: string,
    readonly traceId: string,
    readonly parent: Option.Option<Tracer.AnySpan>,
    readonly context: Tracer.Span["context"],
    links: ReadonlyArray<Tracer.SpanLink>,
    startTime: bigint,
    readonly kind: Tracer.SpanKind
  ) {
    this.links = [...links]
    this.status = { _tag: "Started", startTime }
  }

  /** The parent span's id, when the parent is a span of this tracer or an external span. */
  get parentSpanId(): string | undefined {
    return Option.isSome(this.parent) ? this.parent.value.spanId : undefined
  }
  /** Whether the span has ended. */
  get ended(): boolean {
    return this.status._tag === "Ended"
  }
  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
    this.status = { _tag: "Ended", startTime: this.status.startTime, endTime, exit }
    this.exit = exit
  }
  attribute(key: string, value: unknown): void {
    this.attributes.set(key, value)
  }
  event(name: string, _startTime: bigint, attributes?: Record<string, unknown>): void {
    this.events.push({ name, attributes: attributes ?? {} })
  }
  addLinks(links: ReadonlyArray<Tracer.SpanLink>): void {
    this.links.push(...links)
  }
}

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
export const recording = (): RecordingTracer => {
  const spans: Array<RecordedSpan> = []
  let next = 0
  const hex = (n: number, width: number) => n.toString(16).padStart(width, "0")
  const tracer = Tracer.make({
    span(name, parent, context, links, startTime, kind) {
      next += 1
      const traceId = Option.isSome(parent) ? parent.value.traceId : hex(next, 32)
      const span = new RecordedSpan(name, hex(next, 16), traceId, parent, context, links, startTime, kind)
      spans.push(span)
      return span
    },
    context: (f) => f()
  })
  return {
    layer: Layer.setTracer(tracer),
    spans,
    named: (name) => spans.filter((span) => span.name === name),
    one(name) {
      const found = spans.filter((span) => span.name === name)
      if (found.length !== 1) {
        throw new Error(`expected one span '${name}', found ${found.length}: [${spans.map((s) => s.name).join(", ")}]`)
      }
      return found[0]!
    },
    childrenOf: (span) => spans.filter((s) => s.parentSpanId === span.spanId),
    clear: () => {
      spans.length = 0
    }
  }
}
