/**
 * The Anthropic provider: a `ChatModel` layer on `@anthropic-ai/sdk` 1.x (Messages API, streamed).
 *
 * - **Retries** belong to agentkit's chat retry middleware, not the SDK: the client is built with
 *   `maxRetries: 0` (unless you pass `maxRetries`), so a failed call fails at once with a
 *   `ChatModelError` whose `retryable` and `retryAfter` tell the middleware what to do. Never turn
 *   both on: attempts would multiply.
 * - **Tracing** has one owner, the `chat {model}` span the `Invoker` opens. The SDK's own
 *   OpenTelemetry span (`anthropic.messages.create`) is turned off (`openTelemetry: false`): the SDK
 *   parents it on the OpenTelemetry context, which never holds an Effect span, so it would be an
 *   orphan in a separate trace. The provider returns the response id, the request id and the
 *   `max_tokens` it sent as the response's `metadata`; the Invoker sets them on its span.
 * - **Interruption** aborts the HTTP request (the SDK gets the fiber's `AbortSignal`).
 * - **Forced tool choice**: it declares `features.toolChoice`, and a request's `toolChoice` is sent
 *   as `tool_choice: { type: "tool", name }` (a choice naming none of the request's tools fails
 *   with an `invalid_request` error before anything is sent). `SingleCallCognition` uses it for
 *   structured output.
 *
 * @since 0.1.0
 */
import { ChatModel, ChatModelError, errorMessage, ModelCatalog, ProviderConfig, Tracing, Usage } from "@agentkit/core"
import type { Chat, ConfigurationError } from "@agentkit/core"
import type Anthropic from "@anthropic-ai/sdk"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import { makeClient } from "./internal/client.js"
import { incompleteStream, toChatModelError } from "./internal/errors.js"
import { requestProblem, resolveModel, toParams } from "./internal/request.js"
import type { RequestSettings, StreamingParams } from "./internal/request.js"
import { Assembler } from "./internal/stream.js"
import type { Assembled } from "./internal/stream.js"
import * as Pricing from "./Pricing.js"

/**
 * The options of the provider layer. Everything is optional: the API key then comes from
 * `ANTHROPIC_API_KEY` (read through Effect `Config`, so any `ConfigProvider` works), the base URL
 * from the SDK's default (`ANTHROPIC_BASE_URL`, else `https://api.anthropic.com`).
 *
 * @example
 * ```ts
 * import { AnthropicChatModel } from "@agentkit/anthropic"
 * import { Redacted } from "effect"
 *
 * const options: AnthropicChatModel.Options = {
 *   apiKey: Redacted.make("sk-ant-..."),
 *   model: "claude-sonnet-4-6",
 *   maxTokens: 2048
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The API key; default: `ANTHROPIC_API_KEY`. Sent as `Authorization: Bearer <key>`. */
  readonly apiKey?: Redacted.Redacted<string> | string | undefined
  /** The API base URL; default: the SDK's (`ANTHROPIC_BASE_URL`, else `https://api.anthropic.com`). */
  readonly baseURL?: string | undefined
  /** The model for requests whose `model` is empty. The agent's own `model` always wins. */
  readonly model?: string | undefined
  /** `max_tokens` for requests without `maxTokens` (the API requires it); default 4096. */
  readonly maxTokens?: number | undefined
  /** Prompt caching breakpoints (last tool, last system block, newest message); default on. */
  readonly cache?: boolean | undefined
  /**
   * A price table or a function that replaces it; default: the prices of the `ModelCatalog` in
   * context when the layer is built (else the default catalog).
   */
  readonly pricing?: Pricing.Table | Pricing.PriceFunction | undefined
  /**
   * Retries the SDK itself makes; default 0, because the chat retry middleware owns retries.
   * Raise it only when the chat pipeline has no retry middleware.
   */
  readonly maxRetries?: number | undefined
  /** How long one HTTP request may take; default: the SDK's (10 minutes). */
  readonly timeout?: Duration.DurationInput | undefined
}

/**
 * The `max_tokens` sent when neither the request nor the layer sets one.
 *
 * @example
 * ```ts
 * import { AnthropicChatModel } from "@agentkit/anthropic"
 *
 * AnthropicChatModel.defaultMaxTokens // 4096
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxTokens = 4096

/**
 * The `provider` name on every response.
 *
 * @example
 * ```ts
 * import { AnthropicChatModel } from "@agentkit/anthropic"
 *
 * AnthropicChatModel.providerName // "anthropic"
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const providerName = "anthropic"

const finishReasons: ReadonlySet<string> = new Set<Chat.FinishReason>([
  "end_turn",
  "tool_use",
  "max_tokens",
  "stop_sequence",
  "pause_turn",
  "refusal",
  "model_context_window_exceeded"
])

/** It honours a forced tool choice (`tool_choice: { type: "tool", name }`). */
const features: ChatModel.Features = Object.freeze({ toolChoice: true })

const toFinishReason = (stopReason: string | null): Chat.FinishReason =>
  stopReason !== null && finishReasons.has(stopReason) ? (stopReason as Chat.FinishReason) : "other"

const configurationError = (field: string, message: string) =>
  ProviderConfig.error("AnthropicChatModel", field, message)

const checkInteger = (field: string, value: number | undefined, min: number) =>
  ProviderConfig.integer("AnthropicChatModel", field, value, min)

interface Outcome {
  readonly assembled: Assembled
  readonly requestId: string | undefined
}

const stream = async (
  client: Anthropic,
  params: StreamingParams,
  emit: (delta: Chat.ChatDelta) => void,
  signal: AbortSignal
): Promise<Outcome> => {
  const assembler = new Assembler(emit)
  let requestId: string | undefined
  try {
    const { data, request_id } = await client.messages.create(params, { signal }).withResponse()
    requestId = request_id ?? undefined
    for await (const event of data) assembler.push(event)
  } catch (error) {
    throw toChatModelError(error, { emitted: assembler.emitted, requestId })
  }
  if (!assembler.complete) throw incompleteStream({ emitted: assembler.emitted, requestId })
  return { assembled: assembler.finish(), requestId }
}

/**
 * Builds the provider service. The API key is resolved here, so a missing key fails when the
 * layer is built, with a `ConfigurationError` naming `apiKey`, not at the first call.
 *
 * @example
 * ```ts
 * import { AnthropicChatModel } from "@agentkit/anthropic"
 * import { Message } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const model = yield* AnthropicChatModel.make({ model: "claude-sonnet-4-6" })
 *   return yield* model.chat(
 *     { model: "", messages: [Message.user("Say hi")], tools: [] },
 *     { emit: (delta) => process.stdout.write(delta.text) }
 *   )
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<ChatModel.Service, ConfigurationError> =>
  Effect.gen(function*() {
    const apiKey = yield* ProviderConfig.apiKey({
      layer: "AnthropicChatModel",
      variables: ["ANTHROPIC_API_KEY"],
      given: options.apiKey
    })
    yield* checkInteger("maxTokens", options.maxTokens, 1)
    yield* checkInteger("maxRetries", options.maxRetries, 0)
    if (options.model !== undefined && options.model.trim() === "") {
      return yield* Effect.fail(configurationError("model", "model must be a non-empty model id when given"))
    }
    const client = yield* Effect.try({
      try: () =>
        makeClient({ apiKey, baseURL: options.baseURL, maxRetries: options.maxRetries, timeout: options.timeout }),
      catch: (error) => configurationError("client", `the Anthropic client could not be built: ${errorMessage(error)}`)
    })

    const settings: RequestSettings = {
      defaultModel: options.model,
      maxTokens: options.maxTokens ?? defaultMaxTokens,
      cache: options.cache ?? true
    }
    const catalog = yield* ModelCatalog.current
    const pricing = options.pricing ??
      (catalog === ModelCatalog.standard ? Pricing.defaultTable : Object.fromEntries(
        Object.entries(catalog.entries).map(([name, entry]) => [name, entry.prices])
      ))
    const unpriced = new Set<string>()

    const costOf = (requested: string, served: string | undefined, tokens: Pricing.Tokens): Effect.Effect<number> => {
      if (typeof pricing === "function") {
        return Effect.sync(() => {
          const usd = pricing(served ?? requested, tokens)
          return Number.isFinite(usd) && usd >= 0 ? Usage.usdOf(Math.round(usd * 1e9)) : 0
        })
      }
      const found = Option.orElse(
        served === undefined ? Option.none() : Pricing.cost(served, tokens, pricing),
        () => Pricing.cost(requested, tokens, pricing)
      )
      if (Option.isSome(found)) return Effect.succeed(found.value)
      const name = served ?? requested
      if (unpriced.has(name)) return Effect.succeed(0)
      unpriced.add(name)
      return Effect.as(
        Effect.logWarning(
          `AnthropicChatModel: no price for model '${name}'; its calls cost $0. Pass { pricing } to AnthropicChatModel.layer to price it.`
        ),
        0
      )
    }

    const chat: ChatModel.Service["chat"] = (request, { emit }) => {
      const model = resolveModel(request, settings)
      if (model === undefined) {
        return Effect.fail(
          new ChatModelError({
            reason: "configuration",
            retryable: false,
            message:
              "AnthropicChatModel: the request has no model; set the agent's model or AnthropicChatModel.layer({ model })"
          })
        )
      }
      const problem = requestProblem(request)
      if (problem !== undefined) {
        return Effect.fail(new ChatModelError({ reason: "invalid_request", retryable: false, message: problem }))
      }
      const params = toParams(request, model, settings)
      return Effect.tryPromise({
        try: (signal) => stream(client, params, emit, signal),
        catch: (error) => toChatModelError(error, { emitted: false })
      }).pipe(
        Effect.flatMap(({ assembled, requestId }) =>
          Effect.gen(function*() {
            const tokens: Pricing.Tokens = {
              inputTokens: assembled.usage.input,
              outputTokens: assembled.usage.output,
              cacheReadTokens: assembled.usage.cacheRead,
              cacheWriteTokens: assembled.usage.cacheWrite
            }
            const costUsd = yield* costOf(model, assembled.model, tokens)
            for (const call of assembled.invalidToolInputs) {
              yield* Effect.logWarning(
                `AnthropicChatModel: tool call ${call.id} to '${call.name}' sent input that is not a JSON object; passed on as { _raw } arguments`
              )
            }
            for (const call of assembled.droppedToolCalls) {
              yield* Effect.logWarning(
                `AnthropicChatModel: tool call ${call.id} to '${call.name}' dropped: its input may be incomplete (stop reason ${
                  assembled.stopReason ?? "none"
                })`
              )
            }
            // the Invoker sets these on its `chat {model}` span (with the provider, model and usage)
            const attributes: Record<string, string | number> = {
              [Tracing.Attribute.requestMaxTokens]: params.max_tokens
            }
            if (requestId !== undefined) attributes[Tracing.Attribute.anthropicRequestId] = requestId
            const response: Chat.ChatResponse = {
              content: assembled.content,
              toolCalls: assembled.toolCalls,
              usage: Usage.make({ ...tokens, costUsd }),
              finishReason: toFinishReason(assembled.stopReason),
              model: assembled.model ?? model,
              provider: providerName,
              ...(requestId !== undefined ? { requestId } : {}),
              metadata: {
                ...(assembled.messageId !== undefined ? { responseId: assembled.messageId } : {}),
                attributes
              }
            }
            return response
          })
        )
      )
    }

    return ChatModel.of({ chat, features })
  })

/**
 * The provider as a `ChatModel` layer. Building it fails with a `ConfigurationError` when there
 * is no API key (option or `ANTHROPIC_API_KEY`) or an option is invalid.
 *
 * @example
 * ```ts
 * import { AnthropicChatModel } from "@agentkit/anthropic"
 * import { Invoker } from "@agentkit/core"
 * import { Layer } from "effect"
 *
 * // ANTHROPIC_API_KEY from the environment; the agent's model is sent, this one is the default
 * const ModelLive = AnthropicChatModel.layer({ model: "claude-sonnet-4-6" })
 * const InvokerLive = Invoker.layer({ chatMiddleware: [], toolMiddleware: [] }).pipe(Layer.provide(ModelLive))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<ChatModel, ConfigurationError> =>
  Layer.effect(ChatModel, make(options))
