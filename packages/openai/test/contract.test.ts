/**
 * The chat-model contract over both wire protocols' emulators, through the real `openai` SDK.
 */
import { ChatModelContract } from "@agentkit/testing"
import { describe, it } from "@effect/vitest"
import { harness } from "./harness.js"

describe("OpenAIChatModel", () => {
  ChatModelContract.register(it, { name: "openai responses", model: "gpt-4.1-mini", make: harness("responses") })
  ChatModelContract.register(it, { name: "openai chat completions", model: "gpt-4.1-mini", make: harness("chat") })
})
