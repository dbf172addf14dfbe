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
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { errorType } from "./AgentkitError.js"
import type * as Budget from "./Budget.js"
import * as CanonicalJson from "./CanonicalJson.js"
import type { ChatDelta, ChatRequest, ChatResponse } from "./Chat.js"
import { ChatModel } from "./ChatModel.js"
import { ChatModelError } from "./ChatModelError.js"
import { ExecutionLedger } from "./ExecutionLedger.js"
import { RecordedFailure, ToolInDoubt } from "./ExecutionLedgerError.js"
import { toolFailureText } from "./FailureText.js"
import type { InvokableTool } from "./InvokableTool.js"
import {
  type CallMetadata,
  type ChatCall,
  type ChatError,
  type ChatMiddleware,
  compose,
  type ToolCallRequest,
  type ToolHandler,
  type ToolMiddleware,
  type ToolOutcome,
  type ToolPipelineError
} from "./Middleware.js"
import * as ModelCatalog from "./ModelCatalog.js"
import { RunContext } from "./RunContext.js"
import * as TokenEstimator from "./TokenEstimator.js"
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

/** The tool's execution with the call record's context and identity. */
const executing = <E, R>({ call, context, tool }: ToolCallRequest<E, R>) =>
  // RunContext is in the environment: the Invoker read it there
  tool.execute(call.arguments, { context, callId: call.id, runId: context.runId }) as Effect.Effect<unknown, E, R>

/** What the model is shown of a tool's value, beside the value. */
const outcomeOf = (tool: InvokableTool<unknown, unknown>) => (value: unknown): ToolOutcome => ({
  value,
  text: tool.render(value)
})

/** Whether a call of `tool` is claimed in the execution ledger when one is provided: a side-effecting, non-idempotent tool's. */
const claims = (tool: InvokableTool<unknown, unknown>): boolean => tool.sideEffecting && !tool.idempotent

/**
 * The end of the tool pipeline, the one way a tool call runs: the tool runs with the call
 * record's context and identity (no environment lookup, nothing provided per call), under the
 * run's budget reservation (`Budget.toolCall`, taken here, at the innermost point, so each retry
 * reserves) and one of the tree-wide concurrency permits (a delegating tool, a sub-agent, takes
 * none of its own). A side-effecting, non-idempotent call is claimed in the execution ledger, when
 * one is provided, inside the reservation: a call the ledger answers never runs and is not counted.
 */
const toolTerminal: ToolHandler = <E, R>(request: ToolCallRequest<E, R>) => {
  const { context, tool } = request
  const execute = Effect.map(executing(request), outcomeOf(tool))
  const permit = !tool.delegating
  // the ledger is looked up only for a call it would claim, so a read-only call never looks it up
  if (!claims(tool)) return context.budget.toolCall(execute, { permit })
  return Effect.flatMap(Effect.serviceOption(ExecutionLedger), (ledger) =>
    context.budget.toolCall(execute, {
      permit,
      around: Option.isNone(ledger) ? undefined : (run) => claimed(ledger.value, request, run)
    }))
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
  // the claim and the run are interruptible; completing the claim once the run ended is not
  return Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(
      restore(ledger.claim(key, digest)),
      (claim): Out =>
        claim._tag === "Claimed"
          ? Effect.flatMap(Effect.exit(restore(run)), complete)
          : Effect.suspend(() => stored(claim))
    )
  )
}

/**
 * The end of the chat pipeline, the one way a model call reaches the model: reserved in the run's
 * budget just before the provider request (`Budget.modelCall`, so each retry and fallback
 * reserves), counted when it returns, and its usage charged to the budget and to the run's tally
 * when it answered, so middleware on the way out (a quota meter) see a call that broke the budget
 * fail, and a call served from a cache never reaches it (never counted or charged).
 */
const reservedChat = (model: ChatModel.Service, call: ChatCall): Effect.Effect<ChatResponse, ChatError> => {
  const budget = call.context.budget
  const send = model.chat(call.request, call.emit === noEmit ? noEmitting : { emit: call.emit })
  const usageOf = (response: ChatResponse) => {
    call.context.charge(response.usage)
    return response.usage
  }
  // under count ceilings alone a call holds no amounts: nothing to price
  if (!budget.reservesAmounts) return budget.modelCall(send, usageOf)
  return Effect.flatMap(reservationOf(call.request, budget), (held) => budget.modelCall(send, usageOf, held))
}

/**
 * What a model request may cost at most, for a budget with a cost or token ceiling: its input
 * tokens by the `TokenEstimator` in context, its output at the request's `maxTokens` or else the
 * model's output limit, priced from the `ModelCatalog` in context (input at the dearer of the
 * input and cache-write prices: a cached prompt may be written). A model the catalog does not know
 * fails closed: its calls cannot be priced (under a cost ceiling) or bounded (under a token ceiling
 * with no `maxTokens`) before they are sent.
 */
const reservationOf = (
  request: ChatRequest,
  budget: Budget.Budget
): Effect.Effect<Budget.Reservation, ChatModelError> =>
  Effect.flatMap(ModelCatalog.current, (catalog) => {
    const entry = Option.getOrUndefined(catalog.lookup(request.model))
    const output = request.maxTokens ?? entry?.maxOutputTokens
    if (output === undefined || (entry === undefined && budget.maxCostUsd !== undefined)) {
      return Effect.fail(unpriced(request.model, budget.maxCostUsd !== undefined))
    }
    return Effect.map(TokenEstimator.current, (estimator): Budget.Reservation => {
      const input = estimator.inputTokens(request)
      const prices = entry?.prices
      return {
        tokens: input + output,
        nanos: prices === undefined
          ? 0
          : Math.ceil(input * Math.max(prices.input, prices.cacheWrite) * 1e3 + output * prices.output * 1e3)
      }
    })
  })

/** A model the catalog does not know, under a ceiling that needs its entry. */
const unpriced = (model: string, cost: boolean): ChatModelError =>
  new ChatModelError({
    reason: "configuration",
    retryable: false,
    message: `model '${model}' is not in the model catalog, so the budget's ${
      cost ? "maxCostUsd cannot price" : "maxTokens cannot bound (the request has no maxTokens)"
    } a call to it before it is sent; add it with ModelCatalog.layer({ "${model}": { provider, contextWindow, maxOutputTokens, prices, capabilities } })`
  })

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
  // The run's Budget reserves and charges at the innermost point, the pipelines' ends (`reservedChat`, `toolTerminal`)
  const chatPipeline = compose(options.chatMiddleware ?? [], (call) => reservedChat(model, call))
  const toolPipeline = compose(options.toolMiddleware ?? [], toolTerminal)

  // One path for every call, with or without middleware: the call record (the run context read
  // from the environment, a fresh metadata record), the span outside every middleware (when the
  // run traces), the pipeline, whose end reserves.
  const chat: Service["chat"] = (request, callOptions) =>
    RunContext.with((context) => {
      // a copy: per-call marks (a cache hit) never leak into the caller's object or a later call
      const meta: CallMetadata = { ...callOptions?.meta }
      // a call served from a cache spent nothing: its caller (the run's usage) counts it as 0
      const run = Effect.map(
        chatPipeline({ request, emit: callOptions?.emit ?? noEmit, meta, context }),
        (response) => meta.cacheHit === true ? { ...response, usage: Usage.zero } : response
      )
      if (!context.tracing) return run
      return Tracing.span<ChatResponse, ChatError>(Tracing.SpanName.chat(request.model), {
        kind: "client",
        captureStackTrace: false,
        attributes: {
          [Tracing.Attribute.operationName]: Tracing.Operation.chat,
          [Tracing.Attribute.requestModel]: request.model
        },
        onEnd: chatEnd
      })(run)
    })

  const tool: Service["tool"] = <E, R>(
    call: ToolCall,
    invokable: InvokableTool<E, R>,
    callOptions?: { readonly meta?: CallMetadata }
  ) =>
    RunContext.with((context) => {
      const run = toolPipeline({ call, tool: invokable, meta: { ...callOptions?.meta }, context })
      if (!context.tracing) return run
      return Tracing.span<ToolOutcome, E | ToolPipelineError>(Tracing.SpanName.executeTool(invokable.name), {
        kind: "internal",
        captureStackTrace: false,
        onEnd: toolEnd,
        attributes: {
          [Tracing.Attribute.operationName]: Tracing.Operation.executeTool,
          [Tracing.Attribute.toolName]: invokable.name,
          [Tracing.Attribute.toolCallId]: call.id,
          [Tracing.Attribute.toolType]: "function"
        }
      })(run)
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
