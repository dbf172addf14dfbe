/**
 * A scripted chat model for offline tests: provide its `layer` instead of a real provider.
 *
 * @since 0.1.0
 */
import { ChatModel, ChatModelError, ModelCatalog, Usage } from "@agentkit/core"
import type { Chat, ChatModelErrorReason, ToolCall } from "@agentkit/core"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Fixture from "./Fixture.js"

/**
 * One scripted model turn: text, tool calls, usage, or a failure.
 *
 * @example
 * ```ts
 * import { Turn } from "@agentkit/testing"
 *
 * const turn: Turn = Turn({ content: "Order A-771 shipped.", chunkSize: 4 })
 * turn.usage.inputTokens // 10 (the default usage)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Turn {
  readonly content: string
  readonly toolCalls: ReadonlyArray<ToolCall.ToolCall>
  readonly usage: Usage.Usage
  /** When set, the call fails with this error before any delta. */
  readonly error: ChatModelError | undefined
  /** How many characters each streamed delta carries (default 8, as the Python FakeLLM). */
  readonly chunkSize: number
  readonly finishReason: Chat.FinishReason | undefined
}

/**
 * The fields of a turn; everything is optional.
 *
 * @example
 * ```ts
 * import { FakeLLM, Turn } from "@agentkit/testing"
 *
 * const fields: FakeLLM.TurnFields = { content: "Done.", usage: { costUsd: 0.002 }, finishReason: "max_tokens" }
 * Turn(fields).usage.inputTokens // 0: a given usage replaces the default; its missing fields are 0
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnFields {
  readonly content?: string | undefined
  readonly toolCalls?: ReadonlyArray<ToolCall.ToolCall> | undefined
  readonly usage?: Partial<Usage.Usage> | undefined
  readonly chunkSize?: number | undefined
  readonly finishReason?: Chat.FinishReason | undefined
}

/**
 * The default usage of a turn: 10 input tokens, 5 output tokens, $0.0001.
 *
 * @example
 * ```ts
 * import { FakeLLM, Turn } from "@agentkit/testing"
 *
 * Turn({ content: "hi" }).usage === FakeLLM.defaultUsage // true
 * FakeLLM.defaultUsage.costUsd // 0.0001
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultUsage: Usage.Usage = Usage.make({ inputTokens: 10, outputTokens: 5, costUsd: 0.0001 })

/**
 * Makes a turn.
 *
 * @example
 * ```ts
 * import { Turn } from "@agentkit/testing"
 *
 * Turn({ toolCalls: [{ id: "c1", name: "lookup_order", arguments: { order_id: "A-771" } }] })
 * Turn({ content: "Order A-771 shipped on 14 August and arrives Tuesday." })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const Turn = (fields: TurnFields = {}): Turn => ({
  content: fields.content ?? "",
  toolCalls: fields.toolCalls ?? [],
  usage: fields.usage === undefined ? defaultUsage : Usage.make(fields.usage),
  error: undefined,
  chunkSize: fields.chunkSize ?? 8,
  finishReason: fields.finishReason
})

/**
 * A turn that fails before any delta (for retry and fallback tests). Default: a retryable
 * `timeout` with the text `temporary upstream timeout`.
 *
 * @example
 * ```ts
 * import { FakeLLM, Turn, failure } from "@agentkit/testing"
 *
 * const llm = FakeLLM.script([failure(), Turn({ content: "ok" })])
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const failure = (
  fields: { readonly reason?: ChatModelErrorReason; readonly retryable?: boolean; readonly message?: string } = {}
): Turn => ({
  ...Turn(),
  error: new ChatModelError({
    reason: fields.reason ?? "timeout",
    retryable: fields.retryable ?? true,
    message: fields.message ?? "temporary upstream timeout"
  })
})

/**
 * A fake model handle: its `layer`, what it received, and a check that the script was used up.
 *
 * @example
 * ```ts
 * import { FakeLLM, Turn } from "@agentkit/testing"
 *
 * const llm: FakeLLM.FakeLLM = FakeLLM.script([Turn({ content: "hello" })])
 * // ... run an agent with Effect.provide(makeTestCtx({ llm })) ...
 * llm.calls // 1
 * llm.assertConsumed() // throws if a scripted turn was never played
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface FakeLLM {
  /** The `ChatModel` layer to provide. */
  readonly layer: Layer.Layer<ChatModel>
  /** Every request received, in order (failed calls included). */
  readonly requests: ReadonlyArray<Chat.ChatRequest>
  /** How many calls were made. */
  readonly calls: number
  /** Throws when scripted turns were left unplayed. */
  assertConsumed(): void
}

const respondWith = (turn: Turn, request: Chat.ChatRequest, emit: (delta: Chat.ChatDelta) => void) => {
  if (turn.error !== undefined) return Effect.fail(turn.error)
  const size = Math.max(1, turn.chunkSize)
  for (let i = 0; i < turn.content.length; i += size) emit({ text: turn.content.slice(i, i + size) })
  return Effect.succeed<Chat.ChatResponse>({
    content: turn.content,
    toolCalls: turn.toolCalls,
    usage: turn.usage,
    finishReason: turn.finishReason ?? (turn.toolCalls.length > 0 ? "tool_use" : "end_turn"),
    model: request.model,
    provider: "fake"
  })
}

/**
 * The options of a fake model: the `features` it declares (default none). With
 * `features.toolChoice` it accepts requests that force a tool (`ChatRequest.toolChoice`), as the
 * Anthropic provider does; with `features.responseFormat` requests for a native JSON-schema
 * format (`ChatRequest.responseFormat`), as the OpenAI provider does; the script decides what it
 * answers.
 *
 * @example
 * ```ts
 * import { FakeLLM, Turn } from "@agentkit/testing"
 *
 * const options: FakeLLM.Options = { features: { toolChoice: true } }
 * const llm = FakeLLM.script([Turn({ toolCalls: [{ id: "o1", name: "structured_output", arguments: { status: "shipped" } }] })], options)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly features?: ChatModel.Features | undefined
}

/**
 * A request the fake cannot have been sent by a correct caller: a forced tool it does not declare
 * it honours, or one that names none of the request's tools. A defect, so the test fails loudly.
 */
const misuse = (request: Chat.ChatRequest, features: ChatModel.Features | undefined): string | undefined => {
  if (request.responseFormat !== undefined && features?.responseFormat !== true) {
    return `FakeLLM: the request asks for the native format '${request.responseFormat.name}', but this model does not declare features.responseFormat`
  }
  const choice = request.toolChoice
  if (choice === undefined) return undefined
  if (features?.toolChoice !== true) {
    return `FakeLLM: the request forces tool '${choice.name}', but this model does not declare features.toolChoice`
  }
  return request.tools.some((tool) => tool.name === choice.name)
    ? undefined
    : `FakeLLM: the request forces tool '${choice.name}', which is not one of its tools`
}

const make = (
  next: (request: Chat.ChatRequest, call: number) => Effect.Effect<Turn>,
  remaining: () => number,
  options: Options | undefined
): FakeLLM => {
  const requests: Array<Chat.ChatRequest> = []
  const features = options?.features
  const model = ChatModel.layer({
    chat: (request, { emit }) =>
      Effect.suspend(() => {
        requests.push(request)
        const problem = misuse(request, features)
        if (problem !== undefined) return Effect.dieMessage(problem)
        return Effect.flatMap(next(request, requests.length), (turn) => respondWith(turn, request, emit))
      }),
    ...(features === undefined ? {} : { features })
  })
  return {
    layer: model,
    requests,
    get calls() {
      return requests.length
    },
    assertConsumed() {
      const left = remaining()
      if (left > 0) {
        throw new Error(`FakeLLM: ${left} scripted turn(s) were never played (${requests.length} call(s) made)`)
      }
    }
  }
}

/**
 * A model that plays `turns` in order, one per call. A call past the end dies with
 * `FakeLLM: call N but the script has M turns` (stricter than the Python fake, which repeats the
 * last turn). A request forcing a tool (`toolChoice`) dies unless `options.features.toolChoice`
 * is set and the tool is one of the request's.
 *
 * @example
 * ```ts
 * import { FakeLLM, Turn } from "@agentkit/testing"
 *
 * const llm = FakeLLM.script([
 *   Turn({ toolCalls: [{ id: "c1", name: "lookup_order", arguments: { order_id: "A-771" } }] }),
 *   Turn({ content: "Order A-771 shipped on 14 August and arrives Tuesday." })
 * ])
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const script = (turns: ReadonlyArray<Turn>, options?: Options): FakeLLM => {
  const played = { count: 0 }
  return make(
    (_request, call) => {
      const turn = turns[call - 1]
      if (turn === undefined) return Effect.dieMessage(`FakeLLM: call ${call} but the script has ${turns.length} turns`)
      played.count = call
      return Effect.succeed(turn)
    },
    () => turns.length - played.count,
    options
  )
}

/**
 * A model written as a function of the request (and the call number, from 1).
 *
 * @example
 * ```ts
 * import { FakeLLM, Turn } from "@agentkit/testing"
 *
 * const llm = FakeLLM.respond((request) => Turn({ content: `${request.messages.length} message(s)` }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const respond = (
  fn: (request: Chat.ChatRequest, call: number) => Turn | Effect.Effect<Turn>,
  options?: Options
): FakeLLM =>
  make(
    (request, call) => {
      const turn = fn(request, call)
      return Effect.isEffect(turn) ? turn : Effect.succeed(turn)
    },
    () => 0,
    options
  )

/**
 * What a `replying` model is given for each call: the call number (from 1), the request and the
 * delta sink.
 *
 * @example
 * ```ts
 * import { type FakeLLM, Fixture } from "@agentkit/testing"
 * import { Effect } from "effect"
 *
 * const echo: FakeLLM.Reply = (_call, request, emit) => {
 *   emit({ text: "hi" })
 *   return Effect.succeed(Fixture.response({ model: request.model, content: "hi" }))
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Reply = (
  call: number,
  request: Chat.ChatRequest,
  emit: (delta: Chat.ChatDelta) => void
) => Effect.Effect<Chat.ChatResponse, ChatModelError>

/**
 * A model written at the provider's level: `reply` decides each call's outcome (any response or
 * `ChatModelError`, any deltas, any timing). Without `reply` every call emits the deltas `"o"`,
 * `"k"` and answers `Fixture.response()` with the request's model. Every request is recorded;
 * `service` is the `ChatModel` implementation itself.
 *
 * @example
 * ```ts
 * import { ChatModelError } from "@agentkit/core"
 * import { FakeLLM, Fixture } from "@agentkit/testing"
 * import { Effect } from "effect"
 *
 * // fails once with a retryable error, then answers
 * const flaky = FakeLLM.replying((call, request) =>
 *   call === 1 ? Effect.fail(Fixture.timeoutError()) : Effect.succeed(Fixture.response({ model: request.model }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const replying = (reply?: Reply): FakeLLM & { readonly service: ChatModel.Service } => {
  const requests: Array<Chat.ChatRequest> = []
  const service: ChatModel.Service = {
    chat: (request, { emit }) =>
      Effect.suspend(() => {
        requests.push(request)
        if (reply !== undefined) return reply(requests.length, request, emit)
        emit({ text: "o" })
        emit({ text: "k" })
        return Effect.succeed(Fixture.response({ model: request.model }))
      })
  }
  return {
    service,
    layer: ChatModel.layer(service),
    requests,
    get calls() {
      return requests.length
    },
    assertConsumed() {}
  }
}

const free: ModelCatalog.Prices = Object.freeze({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 })

/**
 * A model catalog in which `models` cost nothing (their output limits and capabilities as the
 * default catalog has them; a model it does not know gets a 4,096-token output limit and every
 * capability). A fake model bills what its script says: under a budget's cost ceiling, a call to
 * one of these models reserves no money before it is sent, so the script's usage is all the budget
 * charges. Without it, a call is reserved at the model's list prices, up to its output limit.
 *
 * @example
 * ```ts
 * import { Agent } from "@agentkit/agents"
 * import { FakeLLM, makeTestCtx, Seed, Turn } from "@agentkit/testing"
 * import { Effect, Layer } from "effect"
 *
 * const llm = FakeLLM.script([Turn({ content: "Done.", usage: { costUsd: 0.01 } })])
 * const agent = Agent.make({ name: "support", model: Seed.MODEL })
 * const run = agent.run("hi").pipe(
 *   Effect.provide(Layer.merge(makeTestCtx({ llm, budget: { maxCostUsd: 0.015 } }), FakeLLM.freeCatalog(Seed.MODEL)))
 * )
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const freeCatalog = (...models: ReadonlyArray<string>): Layer.Layer<ModelCatalog.ModelCatalog> => {
  const entries: Record<string, ModelCatalog.Entry> = {}
  for (const model of models) {
    const known = Option.getOrUndefined(ModelCatalog.lookup(ModelCatalog.defaults, model))
    entries[model] = {
      provider: known?.provider ?? "fake",
      contextWindow: known?.contextWindow ?? 1_000_000,
      maxOutputTokens: known?.maxOutputTokens ?? 4096,
      capabilities: known?.capabilities ?? ModelCatalog.capabilities,
      prices: free
    }
  }
  return ModelCatalog.layer(entries)
}
