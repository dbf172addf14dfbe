/**
 * Which model the demo talks to. Offline (the scripted two-turn model of the seed) unless
 * `AGENTKIT_MODEL=provider:model` names one; a provider key alone in the environment takes
 * nothing online. The named provider reads its key from the vendor's usual variable:
 *
 * | `AGENTKIT_MODEL`             | provider                                | key                 |
 * | ---------------------------- | --------------------------------------- | ------------------- |
 * | `anthropic:claude-sonnet-4-6` | `@agentkit/anthropic`                   | `ANTHROPIC_API_KEY` |
 * | `openai:gpt-4.1-mini`        | `@agentkit/openai` (Responses API)      | `OPENAI_API_KEY`    |
 * | `google:gemini-2.5-flash`    | `@agentkit/google` (Gemini API)         | `GEMINI_API_KEY`    |
 * | `ollama:llama3.2`            | `@agentkit/openai` (Chat Completions at `OLLAMA_BASE_URL`, default `http://localhost:11434/v1`) | none |
 */
import { AnthropicChatModel } from "@agentkit/anthropic"
import { ConfigurationError } from "@agentkit/core"
import type { ChatModel } from "@agentkit/core"
import { GoogleChatModel } from "@agentkit/google"
import { OpenAIChatModel } from "@agentkit/openai"
import { Config, Effect, Layer, Option } from "effect"
import { defaultModel, scriptedModel } from "./program.js"

/** The model the demo runs on: its layer and the model id the agent sends. */
export interface ChosenModel {
  readonly layer: Layer.Layer<ChatModel, ConfigurationError>
  readonly model: string
  /** Whether it goes over the network (a provider named by `AGENTKIT_MODEL`). */
  readonly online: boolean
}

const providers: Readonly<
  Record<string, (model: string) => Effect.Effect<Layer.Layer<ChatModel, ConfigurationError>, ConfigurationError>>
> = {
  anthropic: (model) => Effect.succeed(AnthropicChatModel.layer({ model })),
  openai: (model) => Effect.succeed(OpenAIChatModel.layer({ model })),
  google: (model) => Effect.succeed(GoogleChatModel.layer({ model })),
  ollama: (model) =>
    Effect.map(
      Config.string("OLLAMA_BASE_URL").pipe(
        Config.withDefault("http://localhost:11434/v1"),
        Effect.mapError(() =>
          new ConfigurationError({ field: "OLLAMA_BASE_URL", message: "OLLAMA_BASE_URL could not be read" })
        )
      ),
      (baseURL) => OpenAIChatModel.layer({ model, baseURL, apiKey: "ollama", providerName: "ollama" })
    )
}

const FORMAT = /^([a-z]+):(\S+)$/

/**
 * Reads `AGENTKIT_MODEL` (through Effect `Config`): unset or empty is the offline scripted
 * model; `provider:model` with a known provider is that provider; anything else fails with a
 * `ConfigurationError` naming the variable and what it accepts.
 */
export const chooseModel: Effect.Effect<ChosenModel, ConfigurationError> = Effect.gen(function*() {
  const named = yield* Config.option(Config.string("AGENTKIT_MODEL")).pipe(
    Effect.mapError(() =>
      new ConfigurationError({ field: "AGENTKIT_MODEL", message: "AGENTKIT_MODEL could not be read" })
    )
  )
  const value = Option.getOrElse(named, () => "").trim()
  if (value === "") return { layer: Layer.orDie(scriptedModel()), model: defaultModel, online: false }
  const match = FORMAT.exec(value)
  const make = match === null ? undefined : providers[match[1]!]
  if (match === null || make === undefined) {
    return yield* new ConfigurationError({
      field: "AGENTKIT_MODEL",
      message: `AGENTKIT_MODEL must be provider:model with provider one of ${
        Object.keys(providers).join(", ")
      } (e.g. openai:gpt-4.1-mini); got '${value}'`
    })
  }
  return { layer: yield* make(match[2]!), model: match[2]!, online: true }
})
