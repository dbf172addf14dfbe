/**
 * Which model the demo talks to: Claude when ANTHROPIC_API_KEY is set, else the scripted
 * two-turn model of the seed (offline, no key needed).
 */
import { AnthropicChatModel } from "@agentkit/anthropic"
import type { ChatModel, ConfigurationError } from "@agentkit/core"
import { Config, Effect, Layer, Option } from "effect"
import { scriptedModel } from "./program.js"

/** The model layer, chosen from the environment when the program starts. */
export const chooseModel: Effect.Effect<Layer.Layer<ChatModel, ConfigurationError>> = Effect.map(
  Effect.orElseSucceed(Config.option(Config.nonEmptyString("ANTHROPIC_API_KEY")), () => Option.none()),
  (
    key
  ) => (Option.isSome(key) ? AnthropicChatModel.layer({ model: "claude-sonnet-4-6" }) : Layer.orDie(scriptedModel()))
)
