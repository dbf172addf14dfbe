/**
 * The pipelines' home: the call records that travel through the chat and tool pipelines, the
 * handler and middleware types, their composition, and the helpers middleware share (one value
 * for both pipelines, observing the delta sink, observing a tool's start).
 *
 * A middleware is a plain function from handler to handler. The Invoker composes each list once,
 * when its layer is built, the first in the list outermost, and opens the `chat {model}` and
 * `execute_tool {tool}` spans outside every middleware.
 *
 * One run-context channel: the Invoker reads the `RunContext` from the environment once per call
 * and puts it on the call record (`call.context`); middleware and the tool read it there (a tool
 * handler gets it in its second argument), and nothing looks it up again. Effect code inside a
 * handler that reads `yield* RunContext` reads the environment the Invoker read it from, so a
 * middleware that hands the rest of the pipeline another context (a child, say) puts it on the
 * record and provides it: `Effect.provideService(next({ ...call, context }), RunContext, context)`.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type { BudgetExceeded } from "./BudgetError.js"
import type { ChatDelta, ChatRequest, ChatResponse } from "./Chat.js"
import type { ChatModelError } from "./ChatModelError.js"
import type { RecordedFailure, ToolInDoubt } from "./ExecutionLedgerError.js"
import type { ExecuteOptions, InvokableTool } from "./InvokableTool.js"
import type { RunContext } from "./RunContext.js"
import type { StoreError } from "./StoreError.js"
import type { ToolCall } from "./ToolCall.js"
import type { ToolDenied } from "./ToolError.js"

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
  /**
   * Set by the agent loop on a tool call: its execution-ledger key (`<runId>/t<turn>/c<index>`).
   * A call without one is keyed `<runId>/<callId>`.
   */
  executionKey?: string
  /** Set by the agent loop on a call a person approved (or edited): who decided, when known (the audit records it). */
  decidedBy?: string
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
 * One tool call travelling through the tool pipeline: the model's call, the tool and its flags,
 * the call's metadata and the run context.
 *
 * @example
 * ```ts
 * import type { ToolCallRequest } from "@agentkit/core"
 *
 * const label = (request: ToolCallRequest) => `${request.tool.name}#${request.call.id} (run ${request.context.correlationId})`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolCallRequest<E = unknown, R = never> {
  readonly call: ToolCall
  readonly tool: InvokableTool<E, R>
  readonly meta: CallMetadata
  readonly context: RunContext.Service
}

/**
 * The former name of `ToolCallRequest`.
 *
 * @example
 * ```ts
 * import type { ToolInvocation } from "@agentkit/core"
 *
 * const name = (invocation: ToolInvocation) => invocation.tool.name
 * ```
 *
 * @deprecated Use `ToolCallRequest`.
 * @since 0.1.0
 * @category models
 */
export type ToolInvocation<E = unknown, R = never> = ToolCallRequest<E, R>

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
 * Errors the tool pipeline may add to the tool's own: a denial, a budget ceiling, and, when an
 * execution ledger is provided, a call in doubt, a recorded failure replayed, a broken store.
 *
 * @example
 * ```ts
 * import type { ToolPipelineError } from "@agentkit/core"
 *
 * const describe = (error: ToolPipelineError) =>
 *   error._tag === "ToolDenied" ? `denied (${error.reason}): ${error.message}` : `${error._tag}: ${error.message}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type ToolPipelineError = ToolDenied | BudgetExceeded | ToolInDoubt | RecordedFailure | StoreError

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
export type ToolHandler = <E, R>(call: ToolCallRequest<E, R>) => Effect.Effect<ToolOutcome, E | ToolPipelineError, R>

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
 * A middleware that fits either pipeline's list (`retry`, `meter`, `telemetry`): build it with
 * `both`.
 *
 * @example
 * ```ts
 * import type { Middleware } from "@agentkit/core"
 * import { Retry } from "@agentkit/middleware"
 *
 * const retry: Middleware.Both = Retry.retry()
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Both = ChatMiddleware & ToolMiddleware

/**
 * Composes a middleware list over a terminal handler, the first in the list outermost.
 *
 * @example
 * ```ts
 * import { Middleware, type ChatHandler, type ChatMiddleware } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * declare const terminal: ChatHandler
 * const logged: ChatMiddleware = (next) => (call) => Effect.zipRight(Effect.log(call.request.model), next(call))
 * const handler: ChatHandler = Middleware.compose([logged], terminal)
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const compose: {
  (middleware: ReadonlyArray<ChatMiddleware>, terminal: ChatHandler): ChatHandler
  (middleware: ReadonlyArray<ToolMiddleware>, terminal: ToolHandler): ToolHandler
} = <H>(middleware: ReadonlyArray<(next: H) => H>, terminal: H): H =>
  middleware.reduceRight((next, wrap) => wrap(next), terminal)

/**
 * Whether a pipeline call is a tool call (a tool call request carries the tool).
 *
 * @example
 * ```ts
 * import { Middleware, type ChatCall, type ToolCallRequest } from "@agentkit/core"
 *
 * const pipelineOf = (call: ChatCall | ToolCallRequest) => (Middleware.isToolCallRequest(call) ? "tool" : "chat")
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isToolCallRequest = (
  call: ChatCall | ToolCallRequest<unknown, unknown>
): call is ToolCallRequest<unknown, unknown> => "tool" in call

/**
 * Joins a chat middleware and a tool middleware into one value that fits either list. Each side
 * is composed once, on the first call that reaches it.
 *
 * @example
 * ```ts
 * import { Middleware } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const logged: Middleware.Both = Middleware.both(
 *   (next) => (call) => Effect.zipRight(Effect.log(`chat ${call.request.model}`), next(call)),
 *   (next) => (call) => Effect.zipRight(Effect.log(`tool ${call.tool.name}`), next(call))
 * )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const both = (chat: ChatMiddleware, tool: ToolMiddleware): Both => {
  const wrap = (next: ChatHandler | ToolHandler) => {
    let chatHandler: ChatHandler | undefined
    let toolHandler: ToolHandler | undefined
    return (call: ChatCall | ToolCallRequest<unknown, unknown>) =>
      isToolCallRequest(call)
        ? (toolHandler ??= tool(next as ToolHandler))(call)
        : (chatHandler ??= chat(next as ChatHandler))(call)
  }
  return wrap as unknown as Both
}

/**
 * The same call with `observe` told of every delta before it is passed on: how retry and
 * fallback know text was shown, and telemetry when the first token came.
 *
 * @example
 * ```ts
 * import { Middleware, type ChatMiddleware } from "@agentkit/core"
 *
 * const countDeltas: ChatMiddleware = (next) => (call) => {
 *   let deltas = 0
 *   return next(Middleware.tapEmit(call, () => void deltas++))
 * }
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const tapEmit = (call: ChatCall, observe: (delta: ChatDelta) => void): ChatCall => {
  const emit = call.emit
  return {
    request: call.request,
    emit: (delta) => {
      observe(delta)
      emit(delta)
    },
    meta: call.meta,
    context: call.context
  }
}

/**
 * The same tool call with `observe` told when the tool starts running (after the terminal has
 * its concurrency permit): how retry knows a non-idempotent tool never ran.
 *
 * @example
 * ```ts
 * import { Middleware, type ToolMiddleware } from "@agentkit/core"
 *
 * const started: ToolMiddleware = (next) => (request) => {
 *   let ran = false
 *   return next(Middleware.tapExecute(request, () => (ran = true)))
 * }
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const tapExecute = <E, R>(request: ToolCallRequest<E, R>, observe: () => void): ToolCallRequest<E, R> => {
  const tool = request.tool
  const watched: InvokableTool<E, R> = Object.create(tool, {
    execute: {
      value: (args: unknown, options: ExecuteOptions) =>
        Effect.suspend(() => {
          observe()
          return tool.execute(args, options)
        })
    }
  })
  return { call: request.call, tool: watched, meta: request.meta, context: request.context }
}
