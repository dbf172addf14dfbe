/**
 * The OpenAI provider: a `ChatModel` layer on the official `openai` SDK (7.x), streamed, over
 * either wire protocol:
 *
 * - the **Responses API** (`/responses`), the default for OpenAI's own endpoint;
 * - **Chat Completions** (`/chat/completions`), the default for any other `baseURL`: the protocol
 *   OpenAI-compatible servers speak (Azure OpenAI, Groq, Together, OpenRouter, DeepSeek, vLLM,
 *   Ollama at `http://localhost:11434/v1`). `api` chooses explicitly.
 *
 * Both stream text deltas to the sink, assemble parallel tool calls from their argument deltas,
 * honour a forced tool (`features.toolChoice`) and a native strict JSON-schema output
 * (`features.responseFormat`, used by `SingleCallCognition` for structured output), send a
 * reasoning effort, and report usage with cached input (`cacheReadTokens`) and reasoning tokens
 * (the `openai.usage.reasoning_tokens` span attribute; they are part of `outputTokens`). Cost
 * comes from the model catalog (`ModelCatalog` in context when the layer is built, else the
 * default one). Retries belong to agentkit's chat retry middleware (`maxRetries: 0` unless
 * asked); interruption aborts the HTTP request.
 *
 * @since 0.1.0
 */
import { ChatModel, ChatModelError, errorMessage, ModelCatalog, ProviderConfig, Usage } from "@agentkit/core"
import type { Chat, ConfigurationError } from "@agentkit/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import OpenAI from "openai"
import type { Assembled, Assembler } from "./internal/assembled.js"
import * as Completions from "./internal/completions.js"
import { brokenStream, streamFailure, toChatModelError } from "./internal/errors.js"
import type { FailureContext } from "./internal/errors.js"
import * as Responses from "./internal/responses.js"

/**
 * The wire protocol: the Responses API or Chat Completions.
 *
 * @example
 * ```ts
 * import type { OpenAIChatModel } from "@agentkit/openai"
 *
 * const api: OpenAIChatModel.Api = "chat"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Api = "responses" | "chat"

/**
 * How hard a reasoning model thinks (`reasoning.effort` / `reasoning_effort`).
 *
 * @example
 * ```ts
 * import type { OpenAIChatModel } from "@agentkit/openai"
 *
 * const effort: OpenAIChatModel.ReasoningEffort = "low"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type ReasoningEffort = "none" | "minimal" | "low" | "medium" | "high" | "xhigh"

const efforts: ReadonlyArray<ReasoningEffort> = ["none", "minimal", "low", "medium", "high", "xhigh"]

/**
 * The options of the provider layer. Everything is optional: the API key then comes from
 * `OPENAI_API_KEY` (through Effect `Config`), the base URL from the SDK's default
 * (`OPENAI_BASE_URL`, else `https://api.openai.com/v1`).
 *
 * @example
 * ```ts
 * import type { OpenAIChatModel } from "@agentkit/openai"
 *
 * // a local Ollama server: Chat Completions at a custom baseURL, any non-empty key
 * const ollama: OpenAIChatModel.Options = { baseURL: "http://localhost:11434/v1", apiKey: "ollama", model: "llama3.2" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The API key; default: `OPENAI_API_KEY`. A local server that needs none takes any non-empty text. */
  readonly apiKey?: Redacted.Redacted<string> | string | undefined
  /** The API base URL (with `/v1`); default: the SDK's (`OPENAI_BASE_URL`, else OpenAI's). */
  readonly baseURL?: string | undefined
  /** The wire protocol; default: `responses` for OpenAI's endpoint, `chat` for any other `baseURL`. */
  readonly api?: Api | undefined
  /** The model for requests whose `model` is empty. The agent's own `model` always wins. */
  readonly model?: string | undefined
  /** Output tokens for requests without `maxTokens`; default: the server's. */
  readonly maxTokens?: number | undefined
  /** The reasoning effort sent with every request (reasoning models only); default: not sent. */
  readonly reasoningEffort?: ReasoningEffort | undefined
  /** The name in error messages and on responses (`provider`); default `openai`. */
  readonly providerName?: string | undefined
  /** Retries the SDK itself makes; default 0 (the chat retry middleware owns retries). */
  readonly maxRetries?: number | undefined
  /** How long one HTTP request may take; default: the SDK's (10 minutes). */
  readonly timeout?: Duration.DurationInput | undefined
}

/**
 * The `provider` name on every response, unless `providerName` is given.
 *
 * @example
 * ```ts
 * import { OpenAIChatModel } from "@agentkit/openai"
 *
 * OpenAIChatModel.providerName // "openai"
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const providerName = "openai"

/** It honours a forced tool and a native JSON-schema format. */
const features: ChatModel.Features = Object.freeze({ toolChoice: true, responseFormat: true })

const configurationError = (field: string, message: string) => ProviderConfig.error("OpenAIChatModel", field, message)

const checkInteger = (field: string, value: number | undefined, min: number) =>
  ProviderConfig.integer("OpenAIChatModel", field, value, min)

/** Whether a base URL is OpenAI's own endpoint (the SDK's default when none is given). */
const isOfficial = (baseURL: string | undefined): boolean => {
  if (baseURL === undefined) return true
  try {
    return new URL(baseURL).hostname === "api.openai.com"
  } catch {
    return false
  }
}

const validate = (options: Options): Effect.Effect<void, ConfigurationError> =>
  Effect.gen(function*() {
    yield* checkInteger("maxTokens", options.maxTokens, 1)
    yield* checkInteger("maxRetries", options.maxRetries, 0)
    if (options.model !== undefined && options.model.trim() === "") {
      return yield* configurationError("model", "model must be a non-empty model id when given")
    }
    if (options.api !== undefined && options.api !== "responses" && options.api !== "chat") {
      return yield* configurationError("api", `api must be 'responses' or 'chat'; got '${String(options.api)}'`)
    }
    if (options.reasoningEffort !== undefined && !efforts.includes(options.reasoningEffort)) {
      return yield* configurationError(
        "reasoningEffort",
        `reasoningEffort must be one of ${efforts.join(", ")}; got '${String(options.reasoningEffort)}'`
      )
    }
    if (options.baseURL !== undefined) {
      const url = URL.canParse(options.baseURL) ? new URL(options.baseURL) : undefined
      if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
        return yield* configurationError("baseURL", `baseURL must be an http(s) URL; got '${options.baseURL}'`)
      }
    }
  })

interface Outcome {
  readonly assembled: Assembled
  readonly requestId: string | undefined
}

/** One streamed call: sends, folds every event into the assembler, and checks the stream ended. */
const run = async (
  start: (
    signal: AbortSignal
  ) => Promise<{ readonly data: AsyncIterable<unknown>; readonly request_id: string | null }>,
  assembler: Assembler,
  label: string,
  signal: AbortSignal
): Promise<Outcome> => {
  let requestId: string | undefined
  const context = (): FailureContext => ({ label, emitted: assembler.emitted, requestId })
  try {
    const { data, request_id } = await start(signal)
    requestId = request_id ?? undefined
    for await (const event of data) assembler.push(event)
  } catch (error) {
    throw toChatModelError(error, context())
  }
  const result = assembler.finish()
  if ("_tag" in result) {
    switch (result._tag) {
      case "incomplete":
        throw brokenStream(context(), "ended before the answer was complete")
      case "inconsistent":
        throw brokenStream(context(), `was inconsistent: ${result.detail}`)
      case "failed":
        throw streamFailure(context(), result.code, result.message)
    }
  }
  return { assembled: result, requestId }
}

/**
 * Builds the provider service. The API key is resolved here, so a missing key fails when the
 * layer is built, with a `ConfigurationError` naming `apiKey`, not at the first call.
 *
 * @example
 * ```ts
 * import { Message } from "@agentkit/core"
 * import { OpenAIChatModel } from "@agentkit/openai"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const model = yield* OpenAIChatModel.make({ model: "gpt-4.1-mini" })
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
      layer: "OpenAIChatModel",
      variables: ["OPENAI_API_KEY"],
      given: options.apiKey
    })
    yield* validate(options)
    const official = isOfficial(options.baseURL)
    const api: Api = options.api ?? (official ? "responses" : "chat")
    const provider = options.providerName ?? providerName
    const label = provider === providerName ? "OpenAI" : provider
    const client = yield* Effect.try({
      try: () =>
        new OpenAI({
          apiKey: Redacted.value(apiKey),
          ...(options.baseURL !== undefined ? { baseURL: options.baseURL } : {}),
          maxRetries: options.maxRetries ?? 0,
          ...(options.timeout !== undefined ? { timeout: Duration.toMillis(Duration.decode(options.timeout)) } : {})
        }),
      catch: (error) => configurationError("client", `the OpenAI client could not be built: ${errorMessage(error)}`)
    })
    const catalog = yield* ModelCatalog.current
    const unpriced = new Set<string>()
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
          `OpenAIChatModel: no price for model '${name}'; its calls cost $0. Add it with ModelCatalog.layer to price it.`
        ),
        0
      )
    }
    const responsesSettings: Responses.RequestSettings = {
      reasoningEffort: options.reasoningEffort,
      defaultMaxTokens: options.maxTokens
    }
    const completionsSettings: Completions.RequestSettings = { ...responsesSettings, official }

    const chat: ChatModel.Service["chat"] = (request, { emit }) => {
      const model = request.model !== "" ? request.model : options.model
      if (model === undefined) {
        return Effect.fail(
          new ChatModelError({
            reason: "configuration",
            retryable: false,
            message:
              "OpenAIChatModel: the request has no model; set the agent's model or OpenAIChatModel.layer({ model })"
          })
        )
      }
      const choice = request.toolChoice
      if (choice !== undefined && !request.tools.some((tool) => tool.name === choice.name)) {
        return Effect.fail(
          new ChatModelError({
            reason: "invalid_request",
            retryable: false,
            message: `OpenAIChatModel: toolChoice names '${choice.name}', which is not one of the request's tools (${
              request.tools.map((tool) => tool.name).join(", ") || "none"
            })`
          })
        )
      }
      return Effect.tryPromise({
        try: (signal) =>
          api === "responses"
            ? run(
              (signal) =>
                client.responses.create(Responses.toParams(request, model, responsesSettings), { signal })
                  .withResponse(),
              new Responses.ResponsesAssembler(emit),
              label,
              signal
            )
            : run(
              (signal) =>
                client.chat.completions.create(Completions.toParams(request, model, completionsSettings), { signal })
                  .withResponse(),
              new Completions.CompletionsAssembler(emit),
              label,
              signal
            ),
        catch: (error) => toChatModelError(error, { label, emitted: false })
      }).pipe(Effect.flatMap(({ assembled, requestId }) => respond(model, assembled, requestId)))
    }

    const respond = (model: string, assembled: Assembled, requestId: string | undefined) =>
      Effect.gen(function*() {
        const tokens: ModelCatalog.Tokens = {
          inputTokens: assembled.usage.input,
          outputTokens: assembled.usage.output,
          cacheReadTokens: assembled.usage.cacheRead,
          cacheWriteTokens: 0
        }
        const costUsd = yield* costOf(model, assembled.model, tokens)
        for (const call of assembled.invalidToolInputs) {
          yield* Effect.logWarning(
            `OpenAIChatModel: tool call ${call.id} to '${call.name}' sent arguments that are not a JSON object; passed on as { _raw } arguments`
          )
        }
        for (const call of assembled.droppedToolCalls) {
          yield* Effect.logWarning(
            `OpenAIChatModel: tool call ${call.id} to '${call.name}' dropped: its arguments may be incomplete (finish ${assembled.finishReason})`
          )
        }
        const attributes: Record<string, string | number> = {
          "openai.api": api,
          "openai.usage.reasoning_tokens": assembled.usage.reasoning
        }
        if (requestId !== undefined) attributes["openai.request.id"] = requestId
        const response: Chat.ChatResponse = {
          content: assembled.content,
          toolCalls: assembled.toolCalls,
          usage: Usage.make({ ...tokens, costUsd }),
          finishReason: assembled.finishReason,
          model: assembled.model ?? model,
          provider,
          ...(requestId !== undefined ? { requestId } : {}),
          metadata: {
            ...(assembled.responseId !== undefined ? { responseId: assembled.responseId } : {}),
            attributes
          }
        }
        return response
      })

    return ChatModel.of({ chat, features })
  })

/**
 * The provider as a `ChatModel` layer. Building it fails with a `ConfigurationError` when there
 * is no API key (option or `OPENAI_API_KEY`) or an option is invalid.
 *
 * @example
 * ```ts
 * import { Invoker } from "@agentkit/core"
 * import { OpenAIChatModel } from "@agentkit/openai"
 * import { Layer } from "effect"
 *
 * // OPENAI_API_KEY from the environment; the Responses API
 * const ModelLive = OpenAIChatModel.layer({ model: "gpt-4.1-mini" })
 * const InvokerLive = Invoker.layer({ chatMiddleware: [], toolMiddleware: [] }).pipe(Layer.provide(ModelLive))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<ChatModel, ConfigurationError> =>
  Layer.effect(ChatModel, make(options))
