/**
 * What the contract does not cover: the wire protocol chosen by `baseURL`, an Ollama-style
 * OpenAI-compatible server at a custom `baseURL` (calls sent whole, `stop` with tool calls, no
 * cache details), the reasoning effort and reasoning tokens, strict schemas only where they are
 * strict-compatible, an inconsistent stream, and the layer's option checks.
 */
import { ConfigurationError, Message } from "@agentkit/core"
import type { Chat } from "@agentkit/core"
import { OpenAIChatModel } from "@agentkit/openai"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Either } from "effect"
import { apiError, chatFrames, emulator, responsesFrames } from "./emulator.js"
import type { Frame } from "./emulator.js"

const lookupOrder: Chat.ToolSchema = {
  name: "lookup_order",
  description: "Look up an order by its id.",
  parameters: {
    type: "object",
    properties: { order_id: { type: "string" } },
    required: ["order_id"],
    additionalProperties: false
  }
}
const open: Chat.ToolSchema = {
  name: "cancel_order",
  description: "Cancel an order.",
  parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] }
}
const loose: Chat.ToolSchema = {
  name: "note",
  description: "Take a note.",
  parameters: { type: "object", properties: { text: { type: "string" }, tag: { type: "string" } }, required: ["text"] }
}

const ask = (fields: Partial<Chat.ChatRequest> = {}): Chat.ChatRequest => ({
  model: "gpt-4.1-mini",
  messages: [Message.system("Be brief."), Message.user("Where is A-771?")],
  tools: [],
  ...fields
})

const chatOnce = (
  model: {
    readonly chat: (
      r: Chat.ChatRequest,
      o: { emit: (d: Chat.ChatDelta) => void }
    ) => Effect.Effect<Chat.ChatResponse, unknown>
  },
  request: Chat.ChatRequest
) => model.chat(request, { emit: () => undefined })

describe("OpenAIChatModel", () => {
  it.scopedLive("an Ollama-style server at a custom baseURL: Chat Completions, whole calls, `stop` with tool calls", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([
        {
          _tag: "sse",
          frames: chatFrames({
            style: "ollama",
            text: [],
            calls: [
              { id: "call_x1", name: "lookup_order", fragments: ["{\"order_id\":\"A-771\"}"] },
              { id: "call_x2", name: "lookup_order", fragments: ["{\"order_id\":\"B-100\"}"] }
            ],
            tokens: { input: 40, output: 12, cached: 0 }
          })
        }
      ])
      const model = yield* OpenAIChatModel.make({ baseURL: emu.url, apiKey: "ollama", providerName: "ollama" })
      const response = yield* chatOnce(model, ask({ model: "llama3.2", tools: [lookupOrder], maxTokens: 300 }))
      expect(response.toolCalls).toEqual([
        { id: "call_x1", name: "lookup_order", arguments: { order_id: "A-771" } },
        { id: "call_x2", name: "lookup_order", arguments: { order_id: "B-100" } }
      ])
      expect([response.finishReason, response.provider, response.model]).toEqual(["tool_use", "ollama", "llama3.2"])
      expect([response.usage.inputTokens, response.usage.outputTokens, response.usage.costUsd]).toEqual([40, 12, 0])
      const sent = emu.requests[0]!
      expect(sent.path).toBe("/v1/chat/completions")
      expect(sent.headers["authorization"]).toBe("Bearer ollama")
      // a compatible server gets the fields they all accept: max_tokens, no strict, no parallel_tool_calls
      expect(sent.body["max_tokens"]).toBe(300)
      expect(sent.body["max_completion_tokens"]).toBeUndefined()
      expect(sent.body["parallel_tool_calls"]).toBeUndefined()
      expect((sent.body["tools"] as Array<{ function: Record<string, unknown> }>)[0]!.function["strict"])
        .toBeUndefined()
      expect(sent.body["stream_options"]).toEqual({ include_usage: true })
    }))

  it.scopedLive("the Responses API: reasoning effort sent, reasoning tokens reported, strict only where the schema allows", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([
        {
          _tag: "sse",
          frames: responsesFrames({
            text: ["Shipped."],
            calls: [],
            tokens: { input: 100, output: 80, cached: 0, reasoning: 64 },
            model: "o4-mini-2025-04-16"
          })
        }
      ])
      const model = yield* OpenAIChatModel.make({
        baseURL: emu.url,
        apiKey: "k",
        api: "responses",
        reasoningEffort: "low"
      })
      const response = yield* chatOnce(
        model,
        ask({ model: "o4-mini", tools: [lookupOrder, open, loose], maxTokens: 500 })
      )
      expect(response.metadata?.attributes?.["openai.usage.reasoning_tokens"]).toBe(64)
      expect(response.metadata?.attributes?.["openai.request.id"]).toBe("req_emu_1")
      expect(response.metadata?.responseId).toBe("resp_emu_1")
      // o4-mini: 100 × 1.1 + 80 × 4.4 per million
      expect(response.usage.costUsd).toBe(0.000462)
      const body = emu.requests[0]!.body
      expect(emu.requests[0]!.path).toBe("/v1/responses")
      expect(body["reasoning"]).toEqual({ effort: "low" })
      expect(body["max_output_tokens"]).toBe(500)
      expect([body["store"], body["stream"], body["parallel_tool_calls"]]).toEqual([false, true, true])
      // a schema that requires every property is closed and sent strict; one with an optional property as it is
      const tools = body["tools"] as Array<Record<string, unknown>>
      expect(tools.map((t) => [t["name"], t["strict"]])).toEqual([
        ["lookup_order", true],
        ["cancel_order", true],
        ["note", false]
      ])
      expect(tools[1]!["parameters"]).toEqual({ ...open.parameters, additionalProperties: false })
      expect(tools[2]!["parameters"]).toEqual(loose.parameters)
    }))

  it.scopedLive("the wire protocol follows baseURL: Chat Completions for any server but OpenAI's, unless `api` says", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([
        { _tag: "sse", frames: chatFrames({ text: ["a"], calls: [] }) },
        { _tag: "sse", frames: responsesFrames({ text: ["b"], calls: [] }) }
      ])
      const byUrl = yield* OpenAIChatModel.make({ baseURL: emu.url, apiKey: "k" })
      expect((yield* chatOnce(byUrl, ask())).content).toBe("a")
      const chosen = yield* OpenAIChatModel.make({ baseURL: emu.url, apiKey: "k", api: "responses" })
      expect((yield* chatOnce(chosen, ask())).content).toBe("b")
      expect(emu.requests.map((r) => r.path)).toEqual(["/v1/chat/completions", "/v1/responses"])
    }))

  it.scopedLive("a stream whose argument deltas disagree with the call's final arguments is refused", () =>
    Effect.gen(function*() {
      const frames: Array<Frame> = responsesFrames({
        text: [],
        calls: [{ id: "c1", name: "lookup_order", fragments: ["{\"order_id\":", "\"A-771\"}"] }]
      }).filter((frame) => !frame.data.includes("\"delta\":\"\\\"A-771\\\"}\""))
      const emu = yield* emulator([{ _tag: "sse", frames }])
      const model = yield* OpenAIChatModel.make({ baseURL: emu.url, apiKey: "k", api: "responses" })
      const result = yield* Effect.either(chatOnce(model, ask({ tools: [lookupOrder] })))
      expect(Either.isLeft(result) && result.left).toMatchObject({ reason: "stream" })
      expect(Either.isLeft(result) && String((result.left as { message: string }).message)).toContain("disagree")
    }))

  it.scopedLive("the SDK's errors: auth, quota, retry-after, an error event after text", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([
        apiError(401, "Incorrect API key provided: sk-bad.", "invalid_request_error", "invalid_api_key"),
        apiError(429, "You exceeded your current quota.", "insufficient_quota", "insufficient_quota"),
        apiError(429, "Rate limit reached.", "requests", "rate_limit_exceeded", { "retry-after-ms": "1500" }),
        {
          _tag: "sse",
          frames: [
            ...responsesFrames({ text: ["Partial "], calls: [], truncate: true }),
            {
              event: "error",
              data: JSON.stringify({
                type: "error",
                code: "server_error",
                message: "upstream died",
                param: null,
                sequence_number: 9
              })
            }
          ]
        }
      ])
      const model = yield* OpenAIChatModel.make({ baseURL: emu.url, apiKey: "k", api: "responses" })
      const failure = Effect.flatMap(Effect.flip(chatOnce(model, ask())), (error) =>
        Effect.succeed(
          error as {
            reason: string
            retryable: boolean
            status?: number
            requestId?: string
            retryAfter?: Duration.Duration
            message: string
          }
        ))
      const auth = yield* failure
      expect([auth.reason, auth.retryable, auth.status, auth.requestId]).toEqual(["auth", false, 401, "req_emu_1"])
      expect(auth.message).toContain("Incorrect API key provided")
      const quota = yield* failure
      expect([quota.reason, quota.retryable]).toEqual(["permission", false])
      const limited = yield* failure
      expect([limited.reason, limited.retryable, limited.retryAfter && Duration.toMillis(limited.retryAfter)]).toEqual([
        "rate_limit",
        true,
        1500
      ])
      const event = yield* failure
      expect([event.reason, event.retryable]).toEqual(["server", false])
      expect(event.message).toContain("upstream died")
    }))

  it.effect("options are checked when the layer is built, each naming the field and what is accepted", () =>
    Effect.gen(function*() {
      const bad = (options: OpenAIChatModel.Options) =>
        Effect.flip(OpenAIChatModel.make(options)).pipe(
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map()))
        )
      const noKey = yield* bad({})
      expect(noKey).toBeInstanceOf(ConfigurationError)
      expect(noKey.message).toContain("OPENAI_API_KEY")
      expect((yield* bad({ apiKey: "k", api: "grpc" as OpenAIChatModel.Api })).message).toContain(
        "api must be 'responses' or 'chat'; got 'grpc'"
      )
      expect((yield* bad({ apiKey: "k", reasoningEffort: "max" as OpenAIChatModel.ReasoningEffort })).message)
        .toContain("reasoningEffort must be one of none, minimal, low, medium, high, xhigh; got 'max'")
      expect((yield* bad({ apiKey: "k", baseURL: "localhost:11434" })).message).toContain(
        "baseURL must be an http(s) URL"
      )
      expect((yield* bad({ apiKey: "k", maxTokens: 0 })).message).toContain("maxTokens must be an integer >= 1")
      const fromConfig = yield* OpenAIChatModel.make().pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["OPENAI_API_KEY", "sk-from-config"]])))
      )
      expect(fromConfig.features).toEqual({ toolChoice: true, responseFormat: true })
    }))
})
