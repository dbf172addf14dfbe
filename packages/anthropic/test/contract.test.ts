/**
 * The chat-model contract over the Messages API emulator, through the real `@anthropic-ai/sdk`.
 * The harness writes the contract's script as Messages API wire events (`message_start`,
 * `content_block_*`, `message_delta`, `message_stop`; error bodies `{ type: "error", error }`)
 * and reads each request body back (system blocks, user/assistant content blocks, tools,
 * `tool_choice`).
 */
import { AnthropicChatModel } from "@agentkit/anthropic"
import { ChatModelContract } from "@agentkit/testing"
import { describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { apiError, emulator, messageEvents } from "./emulator.js"
import type { Block, Reply } from "./emulator.js"

const model = "claude-sonnet-4-6"

const errorType = (status: number): string =>
  status === 429 ? "rate_limit_error" : status >= 500 ? "api_error" : "invalid_request_error"

const toWire = (reply: ChatModelContract.Reply): Reply => {
  switch (reply._tag) {
    case "Failure":
      return apiError(reply.status, errorType(reply.status), reply.message)
    case "ContextLength":
      return apiError(400, "invalid_request_error", `prompt is too long: 210000 tokens > 200000 maximum`)
    case "Hang":
    case "Cut":
      return {
        _tag: "sse",
        events: messageEvents({ blocks: [{ text: reply.text }], stopReason: null, truncate: true }),
        ...(reply._tag === "Hang" ? { hang: true } : { abruptEnd: true })
      }
    case "Answer": {
      const blocks: Array<Block> = []
      if (reply.text.length > 0) blocks.push({ text: reply.text })
      for (const call of reply.toolCalls) {
        blocks.push({ toolUse: { id: call.id, name: call.name, json: call.argumentFragments } })
      }
      return {
        _tag: "sse",
        events: messageEvents({
          blocks,
          stopReason: reply.toolCalls.length > 0 ? "tool_use" : "end_turn",
          usage: {
            input_tokens: reply.usage.inputTokens,
            output_tokens: reply.usage.outputTokens,
            cache_read_input_tokens: reply.usage.cacheReadTokens
          }
        }),
        chunkSize: 7
      }
    }
  }
}

type Json = Record<string, unknown>

/** A Messages API request body as the contract observes it. */
const observed = (body: Json): ChatModelContract.Observed => {
  const system = Array.isArray(body["system"]) ? (body["system"] as Array<Json>).map((b) => String(b["text"])) : []
  const items: Array<ChatModelContract.ObservedItem> = []
  for (const message of (body["messages"] as Array<Json> | undefined) ?? []) {
    const content = typeof message["content"] === "string"
      ? [{ type: "text", text: message["content"] }]
      : (message["content"] as Array<Json>)
    for (const block of content) {
      if (block["type"] === "text") {
        items.push({ kind: message["role"] === "user" ? "user" : "assistant", text: String(block["text"]) })
      } else if (block["type"] === "tool_use") {
        items.push({ kind: "call", id: String(block["id"]), name: String(block["name"]), arguments: block["input"] })
      } else if (block["type"] === "tool_result") {
        items.push({ kind: "result", callId: String(block["tool_use_id"]), content: String(block["content"]) })
      }
    }
  }
  const choice = body["tool_choice"] as Json | undefined
  return {
    model: String(body["model"]),
    system,
    items,
    tools: ((body["tools"] as Array<Json> | undefined) ?? []).map((t) => String(t["name"])),
    toolChoice: choice?.["type"] === "tool" ? String(choice["name"]) : undefined,
    responseSchema: undefined
  }
}

const harness = (script: ReadonlyArray<ChatModelContract.Reply>) =>
  Effect.gen(function*() {
    const emu = yield* emulator(script.map(toWire))
    const service = yield* AnthropicChatModel.make({ apiKey: "test-key", baseURL: emu.url })
    return {
      model: service,
      requests: () => emu.requests.map((request) => observed(request.body)),
      closedEarly: (index: number) => Effect.promise(() => emu.closedEarly(index))
    } satisfies ChatModelContract.Harness
  })

describe("AnthropicChatModel", () => {
  ChatModelContract.register(it, { name: "anthropic messages", model, make: harness })
})
