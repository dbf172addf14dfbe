/**
 * The Invoker runs every model call through the chat pipeline and every tool call through the
 * separate tool pipeline. Middleware are plain functions from handler to handler, composed once
 * when the layer is built, the first in the list outermost. The Invoker opens the `chat {model}`
 * and `execute_tool {tool}` spans outside every middleware and enforces the run's Budget.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { ChatDelta, ChatRequest, ChatResponse, ToolSchema } from "./Chat.js"
import { ChatModel } from "./ChatModel.js"
import type { BudgetExceeded, ChatModelError, ToolDenied } from "./Errors.js"
import { RunContext } from "./RunContext.js"
import type { ToolCall } from "./ToolCall.js"
import * as Tracing from "./Tracing.js"

/**
 * What a tool declares about itself: the flags the pipelines read.
 *
 * @example
 * ```ts
 * import type { Capability } from "@agentkit/core"
 *
 * const caps: ReadonlyArray<Capability> = ["private_data", "egress"]
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Capability = "private_data" | "untrusted_content" | "egress"

/**
 * The accepted tool capabilities.
 *
 * @example
 * ```ts
 * import { capabilities } from "@agentkit/core"
 *
 * capabilities.includes("egress") // true
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export const capabilities: ReadonlyArray<Capability> = ["private_data", "untrusted_content", "egress"]

/**
 * What the Invoker needs of a tool. `Tool.make` (in `@agentkit/tools`) builds these.
 *
 * @example
 * ```ts
 * import type { InvokableTool } from "@agentkit/core"
 *
 * const describe = (tool: InvokableTool) =>
 *   `${tool.name}${tool.sideEffecting ? " (side-effecting)" : ""}: [${tool.caps.join(", ")}]`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface InvokableTool<E = unknown, R = never> {
  readonly name: string
  readonly schema: ToolSchema
  readonly sideEffecting: boolean
  readonly idempotent: boolean
  readonly requiresApproval: boolean
  readonly caps: ReadonlyArray<Capability>
  readonly urlArg: string | undefined
  /**
   * A delegating tool (a sub-agent made by `asTool`) takes no concurrency permit: the tools of the
   * sub-run take their own, so a sub-run never waits on a permit its parent holds.
   */
  readonly delegating: boolean
  /** Validates the arguments, runs the handler, checks the output. */
  readonly run: (args: unknown) => Effect.Effect<unknown, E, RunContext | R>
  /** The text the model sees for a result. */
  readonly render: (value: unknown) => string
}

/**
 * Per-call metadata: a fresh record for every call, so no per-call state lives on the run
 * context. Middleware mark it (a cache hit, a deduplicated call, the model that served).
 *
 * @example
 * ```ts
 * import type { ChatMiddleware } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const logCacheHits: ChatMiddleware = (next) => (call) =>
 *   Effect.tap(next(call), () => Effect.log(`cache hit: ${call.meta.cacheHit === true}`))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface CallMetadata {
  /** Set by a cache middleware when it served the call (such a call never reaches the model, so it is not charged). */
  cacheHit?: boolean
  /** Set by the idempotency middleware when a stored result was returned. */
  deduplicated?: boolean
  /** Set by a fallback middleware: the model that answered. */
  servedBy?: string
  [key: string]: unknown
}

/**
 * One model call travelling through the chat pipeline.
 *
 * @example
 * ```ts
 * import type { ChatCall } from "@agentkit/core"
 *
 * const summary = (call: ChatCall) =>
 *   `${call.request.model}: ${call.request.messages.length} message(s) for ${call.context.scope.key}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ChatCall {
  readonly request: ChatRequest
  readonly emit: (delta: ChatDelta) => void
  readonly meta: CallMetadata
  readonly context: RunContext.Service
}

/**
 * One tool call travelling through the tool pipeline: the call, the tool and its flags.
 *
 * @example
 * ```ts
 * import type { ToolInvocation } from "@agentkit/core"
 *
 * const label = (invocation: ToolInvocation) => `${invocation.tool.name}#${invocation.call.id} (run ${invocation.context.correlationId})`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolInvocation<E = unknown, R = never> {
  readonly call: ToolCall
  readonly tool: InvokableTool<E, R>
  readonly meta: CallMetadata
  readonly context: RunContext.Service
}

/**
 * What a tool call produced: the value and the text the model sees for it.
 *
 * @example
 * ```ts
 * import type { ToolMiddleware } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const stamp: ToolMiddleware = (next) => (call) =>
 *   Effect.map(next(call), (outcome) => ({ ...outcome, text: `[${call.tool.name}] ${outcome.text}` }))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolOutcome {
  readonly value: unknown
  readonly text: string
}

/**
 * Errors the chat pipeline may add to the provider's.
 *
 * @example
 * ```ts
 * import type { ChatError } from "@agentkit/core"
 *
 * const describe = (error: ChatError) =>
 *   error._tag === "ChatModelError" ? `model failed (${error.reason})` : `over budget: ${error.message}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type ChatError = ChatModelError | BudgetExceeded

/**
 * Errors the tool pipeline may add to the tool's own.
 *
 * @example
 * ```ts
 * import type { ToolPipelineError } from "@agentkit/core"
 *
 * const describe = (error: ToolPipelineError) =>
 *   error._tag === "ToolDenied" ? `denied (${error.reason}): ${error.message}` : `over budget: ${error.message}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type ToolPipelineError = ToolDenied | BudgetExceeded

/**
 * A chat pipeline handler.
 *
 * @example
 * ```ts
 * import type { ChatHandler } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const withLog = (next: ChatHandler): ChatHandler => (call) =>
 *   Effect.zipRight(Effect.log(`calling ${call.request.model}`), next(call))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type ChatHandler = (call: ChatCall) => Effect.Effect<ChatResponse, ChatError>

/**
 * A tool pipeline handler (generic in the tool's own errors and requirements).
 *
 * @example
 * ```ts
 * import type { ToolHandler } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const withLog = (next: ToolHandler): ToolHandler => (call) =>
 *   Effect.zipRight(Effect.log(`running ${call.tool.name}`), next(call))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type ToolHandler = <E, R>(call: ToolInvocation<E, R>) => Effect.Effect<ToolOutcome, E | ToolPipelineError, R>

/**
 * A chat middleware: wraps the next handler.
 *
 * @example
 * ```ts
 * import type { ChatMiddleware } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const logModel: ChatMiddleware = (next) => (call) =>
 *   Effect.tap(next(call), (response) => Effect.log(`answered by ${response.model}`))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type ChatMiddleware = (next: ChatHandler) => ChatHandler

/**
 * A tool middleware: wraps the next handler.
 *
 * @example
 * ```ts
 * import type { ToolMiddleware } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const logTool: ToolMiddleware = (next) => (call) =>
 *   Effect.zipLeft(next(call), Effect.log(`ran ${call.tool.name}`))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type ToolMiddleware = (next: ToolHandler) => ToolHandler

/**
 * The two middleware lists.
 *
 * @example
 * ```ts
 * import { Invoker } from "@agentkit/core"
 *
 * const options: Invoker.Options = { chatMiddleware: [], toolMiddleware: [] }
 * const InvokerLive = Invoker.layer(options)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly chatMiddleware?: ReadonlyArray<ChatMiddleware> | undefined
  readonly toolMiddleware?: ReadonlyArray<ToolMiddleware> | undefined
}

/**
 * The Invoker service.
 *
 * @example
 * ```ts
 * import { Invoker, Message } from "@agentkit/core"
 *
 * const ask = (invoker: Invoker.Service, text: string) =>
 *   invoker.chat({ model: "claude-sonnet-4-6", messages: [Message.user(text)], tools: [] })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Runs one model call through the chat pipeline, inside a `chat {model}` span. */
  readonly chat: (
    request: ChatRequest,
    options?: { readonly emit?: (delta: ChatDelta) => void; readonly meta?: CallMetadata }
  ) => Effect.Effect<ChatResponse, ChatError, RunContext>
  /** Runs one tool call through the tool pipeline, inside an `execute_tool {tool}` span. */
  readonly tool: <E, R>(
    call: ToolCall,
    tool: InvokableTool<E, R>,
    options?: { readonly meta?: CallMetadata }
  ) => Effect.Effect<ToolOutcome, E | ToolPipelineError, RunContext | R>
}

const noEmit = (_delta: ChatDelta): void => {}

const composeChat = (middleware: ReadonlyArray<ChatMiddleware>, terminal: ChatHandler): ChatHandler =>
  middleware.reduceRight((next, wrap) => wrap(next), terminal)

const composeTool = (middleware: ReadonlyArray<ToolMiddleware>, terminal: ToolHandler): ToolHandler =>
  middleware.reduceRight((next, wrap) => wrap(next), terminal)

const toolTerminal: ToolHandler = <E, R>(invocation: ToolInvocation<E, R>) => {
  const { tool, call, context } = invocation
  // tool.run reads the RunContext from the environment. That is `context` already (the Invoker
  // took it from there) unless a middleware swapped it, so it is provided only then.
  const outcome = Effect.map(tool.run(call.arguments), (value): ToolOutcome => ({ value, text: tool.render(value) }))
  const run: Effect.Effect<ToolOutcome, E, R> = Effect.flatMap(RunContext, (current) =>
    current === context ? outcome : Effect.provideService(outcome, RunContext, context)
  ) as Effect.Effect<ToolOutcome, E, R>
  return tool.delegating ? run : context.budget.withPermit(run)
}

/**
 * Builds an Invoker from a chat model and two middleware lists.
 *
 * @example
 * ```ts
 * import { ChatModel, Invoker } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const program = Effect.map(ChatModel, (model) => Invoker.make(model, { chatMiddleware: [], toolMiddleware: [] }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (model: ChatModel.Service, options: Options = {}): Service => {
  // The run's Budget is charged at the innermost point, when the model has answered: middleware on
  // the way out (a quota meter) see a call that broke the budget fail, as in the Python agentkit,
  // and a call served from a cache never reaches the model, so it is never charged.
  const chatPipeline = composeChat(options.chatMiddleware ?? [], (call) =>
    Effect.tap(model.chat(call.request, { emit: call.emit }), (response) => call.context.budget.charge(response.usage))
  )
  const toolPipeline = composeTool(options.toolMiddleware ?? [], toolTerminal)

  const chat: Service["chat"] = (request, callOptions) =>
    Effect.flatMap(RunContext, (context) => {
      // a copy: per-call marks (a cache hit) never leak into the caller's object or a later call
      const meta: CallMetadata = { ...callOptions?.meta }
      const run = Effect.zipRight(
        context.budget.guard,
        chatPipeline({ request, emit: callOptions?.emit ?? noEmit, meta, context })
      )
      if (!context.tracing) return run
      return run.pipe(
        Effect.tap((response) =>
          Tracing.setAttributes({
            [Tracing.Attribute.responseModel]: response.model,
            [Tracing.Attribute.providerName]: response.provider,
            [Tracing.Attribute.responseFinishReasons]: [response.finishReason],
            // GenAI semantic conventions: input tokens include the cached ones.
            [Tracing.Attribute.usageInputTokens]:
              response.usage.inputTokens + response.usage.cacheReadTokens + response.usage.cacheWriteTokens,
            [Tracing.Attribute.usageOutputTokens]: response.usage.outputTokens,
            [Tracing.Attribute.usageCacheReadTokens]: response.usage.cacheReadTokens,
            [Tracing.Attribute.usageCacheWriteTokens]: response.usage.cacheWriteTokens
          })
        ),
        Effect.tapError((error) => Tracing.setAttributes({ [Tracing.Attribute.errorType]: error._tag })),
        Effect.withSpan(Tracing.SpanName.chat(request.model), {
          kind: "client",
          captureStackTrace: false,
          attributes: {
            [Tracing.Attribute.operationName]: Tracing.Operation.chat,
            [Tracing.Attribute.requestModel]: request.model
          }
        })
      )
    })

  const tool: Service["tool"] = (call, invokable, callOptions) =>
    Effect.flatMap(RunContext, (context) => {
      const run = Effect.zipRight(
        context.budget.startToolCall,
        toolPipeline({ call, tool: invokable, meta: { ...callOptions?.meta }, context })
      )
      if (!context.tracing) return run
      return run.pipe(
        Effect.tapError((error) =>
          Tracing.setAttributes({
            [Tracing.Attribute.errorType]:
              typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : "Error"
          })
        ),
        Effect.withSpan(Tracing.SpanName.executeTool(invokable.name), {
          kind: "internal",
          captureStackTrace: false,
          attributes: {
            [Tracing.Attribute.operationName]: Tracing.Operation.executeTool,
            [Tracing.Attribute.toolName]: invokable.name,
            [Tracing.Attribute.toolCallId]: call.id,
            [Tracing.Attribute.toolType]: "function"
          }
        })
      )
    })

  return { chat, tool }
}

/**
 * The Invoker service. Build it with `Invoker.layer({ chatMiddleware, toolMiddleware })` over a
 * `ChatModel` layer; read it with `yield* Invoker`.
 *
 * @example
 * ```ts
 * import { Invoker, Message } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const invoker = yield* Invoker
 *   return yield* invoker.chat({ model: "claude-sonnet-4-6", messages: [Message.user("hi")], tools: [] })
 * })
 * const InvokerLive = Invoker.layer({ chatMiddleware: [], toolMiddleware: [] })
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class Invoker extends Context.Tag("@agentkit/core/Invoker")<Invoker, Service>() {
  /** Builds the Invoker over the `ChatModel`; the pipelines are composed once, here. */
  static layer(options: Options = {}): Layer.Layer<Invoker, never, ChatModel> {
    return Layer.effect(Invoker, Effect.map(ChatModel, (model) => make(model, options)))
  }
  /** Builds an Invoker value directly from a chat model implementation. */
  static readonly make = make
}

/**
 * The Invoker module's types, reachable through the `Invoker` class: `Invoker.Service`,
 * `Invoker.Options`, `Invoker.ChatMiddleware`, `Invoker.ToolMiddleware` and the rest.
 *
 * @example
 * ```ts
 * import { Invoker } from "@agentkit/core"
 *
 * const passThrough: Invoker.ToolMiddleware = (next) => (call) => next(call)
 * const options: Invoker.Options = { toolMiddleware: [passThrough] }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace Invoker {
  /** @since 0.1.0 */
  export type Service = import("./Invoker.js").Service
  /** @since 0.1.0 */
  export type Options = import("./Invoker.js").Options
  /** @since 0.1.0 */
  export type ChatCall = import("./Invoker.js").ChatCall
  /** @since 0.1.0 */
  export type ChatHandler = import("./Invoker.js").ChatHandler
  /** @since 0.1.0 */
  export type ChatMiddleware = import("./Invoker.js").ChatMiddleware
  /** @since 0.1.0 */
  export type ChatError = import("./Invoker.js").ChatError
  /** @since 0.1.0 */
  export type ToolInvocation<E = unknown, R = never> = import("./Invoker.js").ToolInvocation<E, R>
  /** @since 0.1.0 */
  export type ToolHandler = import("./Invoker.js").ToolHandler
  /** @since 0.1.0 */
  export type ToolMiddleware = import("./Invoker.js").ToolMiddleware
  /** @since 0.1.0 */
  export type ToolOutcome = import("./Invoker.js").ToolOutcome
  /** @since 0.1.0 */
  export type ToolPipelineError = import("./Invoker.js").ToolPipelineError
  /** @since 0.1.0 */
  export type CallMetadata = import("./Invoker.js").CallMetadata
}
