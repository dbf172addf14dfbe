/**
 * The Invoker runs every model call through the chat pipeline and every tool call through the
 * separate tool pipeline (the pipeline types live in `Middleware`), composed once when the layer
 * is built. It reads the run context from the environment once per call and puts it on the call
 * record, opens the `chat {model}` and `execute_tool {tool}` spans outside every middleware, and
 * enforces the run's Budget with reservations at the innermost point (just before the provider
 * request, just before the tool runs). With an `ExecutionLedger` provided, it claims every call of
 * a side-effecting, non-idempotent tool before it runs and completes the claim after.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { errorType } from "./AgentkitError.js"
import * as CanonicalJson from "./CanonicalJson.js"
import type { ChatDelta, ChatRequest, ChatResponse } from "./Chat.js"
import { ChatModel } from "./ChatModel.js"
import { ExecutionLedger } from "./ExecutionLedger.js"
import { RecordedFailure, ToolInDoubt } from "./ExecutionLedgerError.js"
import { toolFailureText } from "./FailureText.js"
import * as BudgetRegions from "./internal/budget.js"
import { spanIn } from "./internal/span.js"
import type { InvokableTool } from "./InvokableTool.js"
import {
  type CallMetadata,
  type ChatError,
  type ChatMiddleware,
  compose,
  type ToolCallRequest,
  type ToolHandler,
  type ToolMiddleware,
  type ToolOutcome,
  type ToolPipelineError
} from "./Middleware.js"
import { RunContext } from "./RunContext.js"
import type { ToolCall } from "./ToolCall.js"
import * as Tracing from "./Tracing.js"
import * as Usage from "./Usage.js"

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
  /**
   * What the model behind the pipeline honours beyond the common request (its `ChatModel`'s
   * `features`): a cognition reads it to choose, say, a forced output tool over a schema block.
   */
  readonly features?: ChatModel.Features | undefined
  /** Runs one tool call through the tool pipeline, inside an `execute_tool {tool}` span. */
  readonly tool: <E, R>(
    call: ToolCall,
    tool: InvokableTool<E, R>,
    options?: { readonly meta?: CallMetadata }
  ) => Effect.Effect<ToolOutcome, E | ToolPipelineError, RunContext | R>
}

const noEmit = (_delta: ChatDelta): void => {}
const noEmitting: ChatModel.Options = Object.freeze({ emit: noEmit })

/** The typed failure of an exit, if it has one (a defect or an interruption has none). */
const failureOf = <E>(exit: Exit.Exit<unknown, E>): Option.Option<E> =>
  Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()

/** What the Invoker sets on its `chat {model}` span as it ends: the response, or the error's tag. */
const chatEnd = (exit: Exit.Exit<ChatResponse, ChatError>): Tracing.Attributes | undefined => {
  if (Exit.isSuccess(exit)) return responseAttributes(exit.value)
  const failure = failureOf(exit)
  return Option.isSome(failure) ? { [Tracing.Attribute.errorType]: failure.value._tag } : undefined
}

/** What the Invoker sets on its `execute_tool {tool}` span as it ends: the error's type, if it failed. */
const toolEnd = (exit: Exit.Exit<unknown, unknown>): Tracing.Attributes | undefined => {
  const failure = failureOf(exit)
  return Option.isSome(failure) ? { [Tracing.Attribute.errorType]: errorType(failure.value) } : undefined
}

/**
 * What the Invoker sets on its `chat {model}` span when the model has answered: the provider's
 * own attributes, then the response's (which win). Built by assignment: a spread followed by
 * more keys is a slow path of V8's (microseconds a call).
 */
const responseAttributes = (response: ChatResponse): Tracing.Attributes => {
  const attributes: Record<string, Tracing.AttributeValue> = {}
  const own = response.metadata?.attributes
  // (an own key "__proto__" would set the object's prototype here: it is no attribute name)
  if (own !== undefined) { for (const key of Object.keys(own)) if (key !== "__proto__") attributes[key] = own[key] }
  attributes[Tracing.Attribute.responseModel] = response.model
  attributes[Tracing.Attribute.providerName] = response.provider
  attributes[Tracing.Attribute.responseFinishReasons] = [response.finishReason]
  const usage = Tracing.usageAttributes(response.usage)
  for (const key in usage) attributes[key] = usage[key]
  // a provider without an id of its own for the response gives the request's
  const responseId = response.metadata?.responseId ?? response.requestId
  if (responseId !== undefined) attributes[Tracing.Attribute.responseId] = responseId
  return attributes
}

const withPermit = { permit: true } as const

/** The tool's execution with the call record's context and identity. */
const executing = <E, R>({ call, context, tool }: ToolCallRequest<E, R>) =>
  // RunContext is in the environment: the Invoker read it there
  tool.execute(call.arguments, { context, callId: call.id, runId: context.runId }) as Effect.Effect<unknown, E, R>

/** What the model is shown of a tool's value, beside the value. */
const outcomeOf = (tool: InvokableTool<unknown, unknown>) => (value: unknown): ToolOutcome => ({
  value,
  text: tool.render(value)
})

/**
 * A tool call with nothing between the Invoker and its reservation: the reservation's region,
 * made from a step running on `fiber`, the outcome made in its settlement.
 */
const reservedTool = <E, R>(fiber: Fiber.RuntimeFiber<unknown, unknown>, request: ToolCallRequest<E, R>) =>
  BudgetRegions.toolCall(
    request.context.budget,
    fiber,
    executing(request),
    !request.tool.delegating,
    outcomeOf(request.tool)
  )

/** `reservedTool` as an effect (a span's region runs its `withFiberRuntime` in its own step). */
const reserving = <E, R>(request: ToolCallRequest<E, R>): Effect.Effect<ToolOutcome, E | ToolPipelineError, R> =>
  Effect.withFiberRuntime((fiber) => reservedTool(fiber, request))

/** Whether a call of `tool` is claimed in the execution ledger when one is provided: a side-effecting, non-idempotent tool's. */
const claims = (tool: InvokableTool<unknown, unknown>): boolean => tool.sideEffecting && !tool.idempotent

// The tool runs with the call record's context and identity: no environment lookup, nothing
// provided per call. It is counted against `maxToolCalls` by a reservation taken here, at the
// innermost point (so each retry reserves), before its concurrency permit; a delegating tool (a
// sub-agent) takes no permit of its own.
const toolTerminal: ToolHandler = <E, R>(request: ToolCallRequest<E, R>) => {
  const { tool, context } = request
  const execute = Effect.map(executing(request), outcomeOf(tool))
  const permit = tool.delegating ? undefined : withPermit
  // At most once: a side-effecting, non-idempotent call is claimed in the execution ledger, when
  // one is provided (read only for such tools, so a read-only call never looks it up).
  if (!claims(tool)) return context.budget.toolCall(execute, permit)
  return Effect.flatMap(Effect.serviceOption(ExecutionLedger), (ledger) =>
    Option.isNone(ledger)
      ? context.budget.toolCall(execute, permit)
      : claimed(ledger.value, request, tool.delegating ? execute : context.budget.withPermit(execute)))
}

/**
 * The ledger's side of a tool call: reserve, claim, then run (or return what the ledger knows),
 * and complete the claim with the text the model sees. An interruption or a defect leaves the
 * claim open: the call may have had its effect, so it is in doubt.
 */
const claimed = <E, R>(
  ledger: ExecutionLedger.Service,
  request: ToolCallRequest<E, R>,
  run: Effect.Effect<ToolOutcome, E, R>
): Effect.Effect<ToolOutcome, E | ToolPipelineError, R> => {
  const { call, context, meta, tool } = request
  const budget = context.budget
  const key = meta.executionKey ?? `${context.runId}/${call.id}`
  const digest = CanonicalJson.hash({ tool: tool.name, arguments: call.arguments })
  type Out = Effect.Effect<ToolOutcome, E | ToolPipelineError, R>
  const stored = (claim: Exclude<ExecutionLedger.Claim, { readonly _tag: "Claimed" }>): Out => {
    if (claim._tag === "InDoubt") return Effect.fail(new ToolInDoubt({ key, call, claimedAt: claim.claimedAt }))
    meta.deduplicated = true
    return claim.outcome.isError
      ? Effect.fail(new RecordedFailure({ toolName: tool.name, text: claim.outcome.text }))
      : Effect.succeed({ value: claim.outcome.text, text: claim.outcome.text })
  }
  const complete = (exit: Exit.Exit<ToolOutcome, E>): Out => {
    if (Exit.isSuccess(exit)) {
      return Effect.zipRight(ledger.complete(key, { text: exit.value.text, isError: false }), exit)
    }
    const failure = Cause.failureOption(exit.cause)
    // interrupted or a defect: the effect may have happened, so the claim stays (in doubt)
    if (Option.isNone(failure)) return exit
    return Effect.zipRight(
      ledger.complete(key, { text: toolFailureText(tool.name, failure.value), isError: true }),
      exit
    )
  }
  return Effect.uninterruptibleMask(
    (restore): Out =>
      Effect.zipRight(
        budget.reserveToolCall,
        Effect.flatMap(
          Effect.onError(restore(ledger.claim(key, digest)), () => budget.releaseToolCall),
          (claim): Out =>
            claim._tag === "Claimed"
              ? Effect.flatMap(Effect.exit(restore(run)), (exit) =>
                Effect.zipRight(budget.settleToolCall, complete(exit)))
              : Effect.zipRight(
                budget.releaseToolCall,
                Effect.suspend(() =>
                  stored(claim)
                )
              )
        )
      )
  )
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
  // The run's Budget reserves and charges at the innermost point: a model call is reserved just
  // before the provider request (each retry and fallback reserves) and charged when the model has
  // answered, so middleware on the way out (a quota meter) see a call that broke the budget fail,
  // as in the Python agentkit, and a call served from a cache never reaches the model, so it is
  // never counted or charged (and its response reaches the caller with zero usage).
  // The run's tally is charged at the same point (so a run tree's usage is what its budget spent).
  const chatMiddleware = options.chatMiddleware ?? []
  const toolMiddleware = options.toolMiddleware ?? []
  const chatPipeline = compose(
    chatMiddleware,
    (call) =>
      call.context.budget.modelCall(model.chat(call.request, { emit: call.emit }), (response) => {
        call.context.charge(response.usage)
        return response.usage
      })
  )
  const toolPipeline = compose(toolMiddleware, toolTerminal)

  // The context is read in the same step that builds the call (not `RunContext.with`, whose extra
  // closure the caller's continuation would keep alive while the model answers).
  // With nothing between the Invoker and a call's reservation (no middleware, no cache mark, no
  // execution-ledger claim) the reservation's region is made in the Invoker's own step, or, with
  // tracing on, in the step of the span's region (which is made in the Invoker's step, and runs
  // the reservation's `withFiberRuntime` in its own: the two regions are one): the reservation,
  // and the span, take no step of their own, and a tool's outcome is made in the settlement.
  const chat: Service["chat"] = (request, callOptions) =>
    Effect.withFiberRuntime((fiber) => {
      const context = RunContext.unsafeOf(fiber)
      // only a middleware (or the caller's own metadata) can mark a cache hit: without either,
      // the call goes straight to the reservation, its usage charged to the run in the settlement
      const direct = chatMiddleware.length === 0 && callOptions?.meta?.cacheHit !== true
      // (a shared options record when there is no delta sink)
      const emitting = callOptions?.emit === undefined ? noEmitting : { emit: callOptions.emit }
      let run: Effect.Effect<ChatResponse, ChatError>
      if (direct) {
        if (!context.tracing) {
          return BudgetRegions.modelCall(context.budget, fiber, model.chat(request, emitting), context)
        }
        run = Effect.withFiberRuntime((fiber) =>
          BudgetRegions.modelCall(context.budget, fiber, model.chat(request, emitting), context)
        )
      } else {
        // a copy: per-call marks (a cache hit) never leak into the caller's object or a later call
        const meta: CallMetadata = { ...callOptions?.meta }
        // a call served from a cache spent nothing: its caller (the run's usage) counts it as 0
        run = Effect.map(chatPipeline({ request, emit: emitting.emit, meta, context }), (response) =>
          meta.cacheHit === true ? { ...response, usage: Usage.zero } : response)
        if (!context.tracing) {
          return run
        }
      }
      return spanIn(fiber, Tracing.SpanName.chat(request.model), {
        kind: "client",
        captureStackTrace: false,
        attributes: {
          [Tracing.Attribute.operationName]: Tracing.Operation.chat,
          [Tracing.Attribute.requestModel]: request.model
        },
        onEnd: chatEnd
      }, run)
    })

  const tool: Service["tool"] = (call, invokable, callOptions) =>
    Effect.withFiberRuntime((fiber) => {
      const context = RunContext.unsafeOf(fiber)
      const request = { call, tool: invokable, meta: { ...callOptions?.meta }, context }
      const direct = toolMiddleware.length === 0 &&
        (!claims(invokable) || Option.isNone(Context.getOption(fiber.currentContext, ExecutionLedger)))
      if (!context.tracing) return direct ? reservedTool(fiber, request) : toolPipeline(request)
      const run = direct ? reserving(request) : toolPipeline(request)
      return spanIn(fiber, Tracing.SpanName.executeTool(invokable.name), {
        kind: "internal",
        captureStackTrace: false,
        onEnd: toolEnd,
        attributes: {
          [Tracing.Attribute.operationName]: Tracing.Operation.executeTool,
          [Tracing.Attribute.toolName]: invokable.name,
          [Tracing.Attribute.toolCallId]: call.id,
          [Tracing.Attribute.toolType]: "function"
        }
      }, run)
    })

  return { chat, tool, features: model.features ?? noFeatures }
}

const noFeatures: ChatModel.Features = Object.freeze({})

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
 * The Invoker module's types, reachable through the `Invoker` class: `Invoker.Service` and
 * `Invoker.Options`. (The pipeline types live in `Middleware`.)
 *
 * @example
 * ```ts
 * import { Invoker, type ToolMiddleware } from "@agentkit/core"
 *
 * const passThrough: ToolMiddleware = (next) => (call) => next(call)
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
}
