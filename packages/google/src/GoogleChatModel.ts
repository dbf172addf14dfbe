/**
 * The Google provider: a `ChatModel` layer on `@google/genai` (the Gemini API), streamed
 * (`streamGenerateContent`). Text parts reach the sink as they arrive; function calls (parallel
 * ones included) arrive whole; a forced tool (`features.toolChoice`) is `mode: ANY` with the
 * tool's name allowed; a native JSON-schema output (`features.responseFormat`) is
 * `responseJsonSchema`; usage reports cached input and thinking tokens (the
 * `gemini.usage.thoughts_tokens` span attribute; they are part of `outputTokens`); cost comes
 * from the model catalog. The SDK retries nothing (the chat retry middleware owns retries);
 * interruption aborts the HTTP request.
 *
 * @since 0.1.0
 */
import { ChatModel, ChatModelError, errorMessage, ModelCatalog, ProviderConfig, Usage } from "@agentkit/core"
import type { Chat, ConfigurationError } from "@agentkit/core"
import { GoogleGenAI } from "@google/genai"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { Assembler, contentsOf, toChatModelError, toConfig } from "./internal/wire.js"
import type { Assembled, RequestSettings } from "./internal/wire.js"

/**
 * The options of the provider layer. Everything is optional: the API key then comes from
 * `GEMINI_API_KEY` (else `GOOGLE_API_KEY`) through Effect `Config`.
 *
 * @example
 * ```ts
 * import type { GoogleChatModel } from "@agentkit/google"
 *
 * const options: GoogleChatModel.Options = { model: "gemini-2.5-flash", thinkingBudget: 1024 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The API key; default: `GEMINI_API_KEY`, else `GOOGLE_API_KEY`. */
  readonly apiKey?: Redacted.Redacted<string> | string | undefined
  /** The API base URL; default: the SDK's (`https://generativelanguage.googleapis.com`). */
  readonly baseURL?: string | undefined
  /** The model for requests whose `model` is empty. The agent's own `model` always wins. */
  readonly model?: string | undefined
  /** Output tokens for requests without `maxTokens`; default: the model's. */
  readonly maxTokens?: number | undefined
  /** Tokens a thinking model may think (`thinkingConfig.thinkingBudget`; 0 turns thinking off). */
  readonly thinkingBudget?: number | undefined
  /** How long one HTTP request may take; default: the SDK's. */
  readonly timeout?: Duration.DurationInput | undefined
}

/**
 * The `provider` name on every response.
 *
 * @example
 * ```ts
 * import { GoogleChatModel } from "@agentkit/google"
 *
 * GoogleChatModel.providerName // "google"
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const providerName = "google"

const features: ChatModel.Features = Object.freeze({ toolChoice: true, responseFormat: true })

const configurationError = (field: string, message: string) => ProviderConfig.error("GoogleChatModel", field, message)

const checkInteger = (field: string, value: number | undefined, min: number) =>
  ProviderConfig.integer("GoogleChatModel", field, value, min)

/**
 * Builds the provider service. The API key is resolved here, so a missing key fails when the
 * layer is built, with a `ConfigurationError` naming `apiKey`.
 *
 * @example
 * ```ts
 * import { Message } from "@agentkit/core"
 * import { GoogleChatModel } from "@agentkit/google"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const model = yield* GoogleChatModel.make({ model: "gemini-2.5-flash" })
 *   return yield* model.chat({ model: "", messages: [Message.user("Say hi")], tools: [] }, { emit: () => {} })
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<ChatModel.Service, ConfigurationError> =>
  Effect.gen(function*() {
    const apiKey = yield* ProviderConfig.apiKey({
      layer: "GoogleChatModel",
      variables: ["GEMINI_API_KEY", "GOOGLE_API_KEY"],
      given: options.apiKey
    })
    yield* checkInteger("maxTokens", options.maxTokens, 1)
    yield* checkInteger("thinkingBudget", options.thinkingBudget, 0)
    if (options.model !== undefined && options.model.trim() === "") {
      return yield* configurationError("model", "model must be a non-empty model id when given")
    }
    if (options.baseURL !== undefined && !/^https?:\/\//.test(options.baseURL)) {
      return yield* configurationError("baseURL", `baseURL must be an http(s) URL; got '${options.baseURL}'`)
    }
    const client = yield* Effect.try({
      try: () =>
        new GoogleGenAI({
          apiKey: Redacted.value(apiKey),
          httpOptions: {
            ...(options.baseURL !== undefined ? { baseUrl: options.baseURL } : {}),
            ...(options.timeout !== undefined ? { timeout: Duration.toMillis(Duration.decode(options.timeout)) } : {})
          }
        }),
      catch: (error) => configurationError("client", `the Gemini client could not be built: ${errorMessage(error)}`)
    })
    const catalog = yield* ModelCatalog.current
    const settings: RequestSettings = { defaultMaxTokens: options.maxTokens, thinkingBudget: options.thinkingBudget }
    const unpriced = new Set<string>()

    const stream = async (
      request: Chat.ChatRequest,
      model: string,
      assembler: Assembler,
      signal: AbortSignal
    ): Promise<Assembled> => {
      try {
        const chunks = await client.models.generateContentStream({
          model,
          contents: contentsOf(request.messages),
          config: { ...toConfig(request, settings), abortSignal: signal }
        })
        for await (const chunk of chunks) assembler.push(chunk)
      } catch (error) {
        throw toChatModelError(error, assembler.emitted)
      }
      const result = assembler.result()
      if (result === undefined) {
        throw new ChatModelError({
          reason: "stream",
          retryable: !assembler.emitted,
          message: `Gemini stream ended before a finish reason${
            assembler.emitted ? " (after text was streamed; not retryable)" : ""
          }`
        })
      }
      return result
    }

    const costOf = (requested: string, served: string | undefined, tokens: ModelCatalog.Tokens) => {
      const found = Option.orElse(
        served === undefined ? Option.none() : catalog.cost(served, tokens),
        () => catalog.cost(requested, tokens)
      )
      if (Option.isSome(found)) return Effect.succeed(found.value)
      const name = served ?? requested
      if (unpriced.has(name)) return Effect.succeed(0)
      unpriced.add(name)
      return Effect.as(
        Effect.logWarning(
          `GoogleChatModel: no price for model '${name}'; its calls cost $0. Add it with ModelCatalog.layer.`
        ),
        0
      )
    }

    const chat: ChatModel.Service["chat"] = (request, { emit }) => {
      const model = request.model !== "" ? request.model : options.model
      if (model === undefined) {
        return Effect.fail(
          new ChatModelError({
            reason: "configuration",
            retryable: false,
            message:
              "GoogleChatModel: the request has no model; set the agent's model or GoogleChatModel.layer({ model })"
          })
        )
      }
      const choice = request.toolChoice
      if (choice !== undefined && !request.tools.some((tool) => tool.name === choice.name)) {
        return Effect.fail(
          new ChatModelError({
            reason: "invalid_request",
            retryable: false,
            message: `GoogleChatModel: toolChoice names '${choice.name}', which is not one of the request's tools`
          })
        )
      }
      return Effect.tryPromise({
        try: (signal) => stream(request, model, new Assembler(emit), signal),
        catch: (error) => toChatModelError(error, false)
      }).pipe(
        Effect.flatMap((assembled) => {
          const tokens: ModelCatalog.Tokens = {
            inputTokens: assembled.usage.input,
            outputTokens: assembled.usage.output,
            cacheReadTokens: assembled.usage.cacheRead,
            cacheWriteTokens: 0
          }
          return Effect.map(costOf(model, assembled.model, tokens), (costUsd): Chat.ChatResponse => ({
            content: assembled.content,
            toolCalls: assembled.toolCalls,
            usage: Usage.make({ ...tokens, costUsd }),
            finishReason: assembled.finishReason,
            model: assembled.model ?? model,
            provider: providerName,
            metadata: {
              ...(assembled.responseId !== undefined ? { responseId: assembled.responseId } : {}),
              attributes: { "gemini.usage.thoughts_tokens": assembled.usage.reasoning }
            }
          }))
        })
      )
    }

    return ChatModel.of({ chat, features })
  })

/**
 * The provider as a `ChatModel` layer. Building it fails with a `ConfigurationError` when there
 * is no API key (option, `GEMINI_API_KEY` or `GOOGLE_API_KEY`) or an option is invalid.
 *
 * @example
 * ```ts
 * import { Invoker } from "@agentkit/core"
 * import { GoogleChatModel } from "@agentkit/google"
 * import { Layer } from "effect"
 *
 * const ModelLive = GoogleChatModel.layer({ model: "gemini-2.5-flash" })
 * const InvokerLive = Invoker.layer({ chatMiddleware: [], toolMiddleware: [] }).pipe(Layer.provide(ModelLive))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<ChatModel, ConfigurationError> =>
  Layer.effect(ChatModel, make(options))
