import { AnthropicChatModel } from "@agentkit/anthropic"
import { ChatModelError, ConfigurationError, Message } from "@agentkit/core"
import type { Chat, ChatModel } from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Redacted from "effect/Redacted"
import { apiError, emulator, errorEvent, messageEvents, sse } from "./emulator.js"
import type { Emulator } from "./emulator.js"

const lookupOrder: Chat.ToolSchema = {
  name: "lookup_order",
  description: "Look up an order by its id and return its status line.",
  parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] }
}
const cancelOrder: Chat.ToolSchema = {
  name: "cancel_order",
  description: "Cancel an order. This really cancels it; there is no undo.",
  parameters: {
    type: "object",
    properties: { order_id: { type: "string" }, reason: { type: "string" } },
    required: ["order_id"]
  }
}

const request = (overrides: Partial<Chat.ChatRequest> = {}): Chat.ChatRequest => ({
  model: "claude-sonnet-4-6",
  messages: [Message.system("Answer order questions."), Message.user("What happened to order A-771?")],
  tools: [cancelOrder, lookupOrder],
  ...overrides
})

const modelFor = (emu: Emulator, options: AnthropicChatModel.Options = {}) =>
  AnthropicChatModel.make({ apiKey: "test-key", baseURL: emu.url, ...options })

/** Runs one call, collecting the deltas passed to `emit`. */
const chatCollecting = (model: ChatModel.Service, req: Chat.ChatRequest) =>
  Effect.suspend(() => {
    const deltas: Array<string> = []
    return model.chat(req, { emit: (delta) => void deltas.push(delta.text) }).pipe(
      Effect.exit,
      Effect.map((exit) => ({ exit, deltas }))
    )
  })

const failure = <A>(exit: Exit.Exit<A, ChatModelError>): ChatModelError => {
  if (Exit.isSuccess(exit)) throw new Error(`expected a failure, got ${JSON.stringify(exit.value)}`)
  const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
  if (!(error instanceof ChatModelError)) throw new Error(`expected a ChatModelError, got ${String(exit.cause)}`)
  return error
}

/** Captures log messages at warning level. */
const captureWarnings = () => {
  const warnings: Array<string> = []
  const logger = Logger.make(({ logLevel, message }) => {
    if (logLevel._tag === "Warning") warnings.push(Array.isArray(message) ? message.join(" ") : String(message))
  })
  return { warnings, layer: Logger.replace(Logger.defaultLogger, logger) }
}

describe("AnthropicChatModel over the SDK, against a local Messages API", () => {
  it.scopedLive("streams text and input_json_delta split across socket writes; parallel tool use", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([
        sse({
          id: "msg_01",
          blocks: [
            { text: ["Let me ", "check both ", "orders."] },
            { toolUse: { id: "toolu_01", name: "lookup_order", json: ["{\"order", "_id\": \"A-", "771\"}"] } },
            { toolUse: { id: "toolu_02", name: "lookup_order", json: ["", "{\"order_id\":", " \"B-9\"", "}"] } }
          ],
          stopReason: "tool_use",
          usage: { input_tokens: 120, output_tokens: 42 },
          chunkSize: 7
        })
      ])
      const model = yield* modelFor(emu)
      const { deltas, exit } = yield* chatCollecting(model, request())
      expect(Exit.isSuccess(exit)).toBe(true)
      if (!Exit.isSuccess(exit)) return
      const response = exit.value
      expect(deltas).toEqual(["Let me ", "check both ", "orders."])
      expect(response.content).toBe("Let me check both orders.")
      expect(response.toolCalls).toEqual([
        { id: "toolu_01", name: "lookup_order", arguments: { order_id: "A-771" } },
        { id: "toolu_02", name: "lookup_order", arguments: { order_id: "B-9" } }
      ])
      expect(response.finishReason).toBe("tool_use")
      expect(response.provider).toBe("anthropic")
      expect(response.model).toBe("claude-sonnet-4-6")
      expect(response.requestId).toBe("req_emu_1")
      expect(response.usage).toEqual({
        inputTokens: 120,
        outputTokens: 42,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        costUsd: 0.00099 // 120 * 3/1e6 + 42 * 15/1e6
      })

      // what went over the wire
      expect(emu.requests).toHaveLength(1)
      const sent = emu.requests[0]!
      expect(sent.method).toBe("POST")
      expect(sent.path).toBe("/v1/messages")
      expect(sent.headers["authorization"]).toBe("Bearer test-key")
      expect(sent.headers["anthropic-version"]).toBe("2026-10-21")
      expect(sent.headers["x-stainless-retry-count"]).toBe("0")
      expect(sent.headers["traceparent"]).toBeUndefined()
      expect(sent.body["stream"]).toBe(true)
      expect(sent.body["max_tokens"]).toBe(4096)
      expect(sent.body["model"]).toBe("claude-sonnet-4-6")
      expect(sent.body["temperature"]).toBeUndefined()
    }))

  it.scopedLive("maps the transcript: system, tools in registry order, tool_use, merged tool results with is_error", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([sse({ blocks: [{ text: ["Done."] }], stopReason: "end_turn" })])
      const model = yield* modelFor(emu, { cache: false })
      const transcript: Array<Message.Message> = [
        Message.system("Answer order questions."),
        Message.system("Relevant context:\nA-771 is a gift."),
        Message.user("Cancel A-771 and look up B-9."),
        Message.assistant("On it.", [
          { id: "toolu_1", name: "cancel_order", arguments: { order_id: "A-771" } },
          { id: "toolu_2", name: "lookup_order", arguments: { order_id: "B-9" } }
        ]),
        Message.toolResult({
          toolCallId: "toolu_1",
          name: "cancel_order",
          content: "ERROR: tool 'cancel_order' failed: ToolDenied: approval rejected",
          isError: true
        }),
        Message.toolResult({ toolCallId: "toolu_2", name: "lookup_order", content: "order B-9: shipped" })
      ]
      yield* model.chat(request({ messages: transcript, maxTokens: 512 }), { emit: () => {} })
      const body = emu.requests[0]!.body
      expect(body["max_tokens"]).toBe(512)
      expect(body["system"]).toEqual([
        { type: "text", text: "Answer order questions." },
        { type: "text", text: "Relevant context:\nA-771 is a gift." }
      ])
      expect(body["tools"]).toEqual([
        { name: "cancel_order", description: cancelOrder.description, input_schema: cancelOrder.parameters },
        { name: "lookup_order", description: lookupOrder.description, input_schema: lookupOrder.parameters }
      ])
      expect(body["messages"]).toEqual([
        { role: "user", content: [{ type: "text", text: "Cancel A-771 and look up B-9." }] },
        {
          role: "assistant",
          content: [
            { type: "text", text: "On it." },
            { type: "tool_use", id: "toolu_1", name: "cancel_order", input: { order_id: "A-771" } },
            { type: "tool_use", id: "toolu_2", name: "lookup_order", input: { order_id: "B-9" } }
          ]
        },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_1",
              content: "ERROR: tool 'cancel_order' failed: ToolDenied: approval rejected",
              is_error: true
            },
            { type: "tool_result", tool_use_id: "toolu_2", content: "order B-9: shipped", is_error: false }
          ]
        }
      ])
      expect(JSON.stringify(body)).not.toContain("cache_control")
    }))

  it.scopedLive("the agent's model is sent; the layer's model is only the default for requests without one", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([
        sse({ blocks: [{ text: ["a"] }], stopReason: "end_turn" }),
        sse({ blocks: [{ text: ["b"] }], stopReason: "end_turn", model: "claude-haiku-4-5-20251001" })
      ])
      const model = yield* modelFor(emu, { model: "claude-haiku-4-5" })
      yield* model.chat(request({ model: "claude-sonnet-4-6" }), { emit: () => {} })
      const second = yield* model.chat(request({ model: "" }), { emit: () => {} })
      expect(emu.requests.map((r) => r.body["model"])).toEqual(["claude-sonnet-4-6", "claude-haiku-4-5"])
      expect(second.model).toBe("claude-haiku-4-5-20251001")
    }))

  it.scopedLive("a request with no model and no layer default fails without a request", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([])
      const model = yield* modelFor(emu)
      const { exit } = yield* chatCollecting(model, request({ model: "" }))
      const error = failure(exit)
      expect(error.reason).toBe("configuration")
      expect(error.retryable).toBe(false)
      expect(emu.requests).toHaveLength(0)
    }))

  it.scopedLive("529 overloaded: ChatModelError{overloaded, retryable}, retryAfter and request id kept, the SDK did not retry", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([
        apiError(529, "overloaded_error", "Overloaded", { "retry-after": "3" }),
        sse({ blocks: [{ text: ["late"] }], stopReason: "end_turn" })
      ])
      const model = yield* modelFor(emu)
      const { deltas, exit } = yield* chatCollecting(model, request())
      const error = failure(exit)
      expect(error.reason).toBe("overloaded")
      expect(error.retryable).toBe(true)
      expect(error.status).toBe(529)
      expect(error.requestId).toBe("req_emu_1")
      expect(error.retryAfter).toEqual(Duration.seconds(3))
      expect(error.message).toContain("overloaded_error")
      expect(deltas).toEqual([])
      expect(emu.requests).toHaveLength(1)

      // a simple retry on `retryable` (the retry middleware's job) then succeeds
      const retried = yield* model.chat(request(), { emit: () => {} }).pipe(
        Effect.retry({ while: (e) => e.retryable, times: 2 })
      )
      expect(retried.content).toBe("late")
      expect(emu.requests).toHaveLength(2)
    }))

  it.scopedLive("400 invalid request: not retryable, one request", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([
        apiError(400, "invalid_request_error", "messages: at least one message is required")
      ])
      const model = yield* modelFor(emu)
      const { exit } = yield* chatCollecting(model, request())
      const error = failure(exit)
      expect(error.reason).toBe("invalid_request")
      expect(error.retryable).toBe(false)
      expect(error.status).toBe(400)
      expect(error.requestId).toBe("req_emu_1")
      expect(error.message).toContain("messages: at least one message is required")
      expect(emu.requests).toHaveLength(1)
    }))

  it.scopedLive("status classes map to reasons and retryable", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [number, string, string, boolean]> = [
        [401, "authentication_error", "auth", false],
        [403, "permission_error", "permission", false],
        [404, "not_found_error", "not_found", false],
        [408, "timeout_error", "timeout", true],
        [409, "conflict_error", "server", true],
        [413, "request_too_large", "too_large", false],
        [429, "rate_limit_error", "rate_limit", true],
        [500, "api_error", "server", true],
        [503, "api_error", "overloaded", true]
      ]
      const emu = yield* emulator(cases.map(([status, type]) => apiError(status, type, `status ${status}`)))
      const model = yield* modelFor(emu)
      for (const [status, , reason, retryable] of cases) {
        const error = failure((yield* chatCollecting(model, request())).exit)
        expect({ status: error.status, reason: error.reason, retryable: error.retryable }).toEqual({
          status,
          reason,
          retryable
        })
      }
      expect(emu.requests).toHaveLength(cases.length)
    }))

  it.scopedLive("x-should-retry from the server wins over the status table", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([apiError(500, "api_error", "do not retry this", { "x-should-retry": "false" })])
      const model = yield* modelFor(emu)
      const error = failure((yield* chatCollecting(model, request())).exit)
      expect(error.reason).toBe("server")
      expect(error.retryable).toBe(false)
    }))

  it.scopedLive("a connection error is a retryable network error", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([])
      const url = emu.url
      yield* Effect.promise(() => emu.close())
      const model = yield* AnthropicChatModel.make({ apiKey: "test-key", baseURL: url })
      const error = failure((yield* chatCollecting(model, request())).exit)
      expect(error.reason).toBe("network")
      expect(error.retryable).toBe(true)
    }))

  it.scopedLive("an error event after HTTP 200, before any text: typed, retryable, no partial answer", () =>
    Effect.gen(function*() {
      const start = messageEvents({ blocks: [], stopReason: null, truncate: true })
      const emu = yield* emulator([{ _tag: "sse", events: [...start, errorEvent("overloaded_error", "Overloaded")] }])
      const model = yield* modelFor(emu)
      const { deltas, exit } = yield* chatCollecting(model, request())
      const error = failure(exit)
      expect(error.reason).toBe("overloaded")
      expect(error.retryable).toBe(true)
      expect(error.status).toBeUndefined()
      expect(error.requestId).toBe("req_emu_1")
      expect(error.message).toContain("stream error")
      expect(deltas).toEqual([])
      expect(emu.requests).toHaveLength(1)
    }))

  it.scopedLive("an error event after text was streamed: typed, not retryable, no truncated answer returned", () =>
    Effect.gen(function*() {
      const start = messageEvents({ blocks: [{ text: ["Order A-771 ", "shipped"] }], stopReason: null, truncate: true })
      const emu = yield* emulator([{ _tag: "sse", events: [...start, errorEvent("overloaded_error", "Overloaded")] }])
      const model = yield* modelFor(emu)
      const { deltas, exit } = yield* chatCollecting(model, request())
      const error = failure(exit)
      expect(error.reason).toBe("overloaded")
      expect(error.retryable).toBe(false)
      expect(deltas).toEqual(["Order A-771 ", "shipped"])
    }))

  it.scopedLive("a stream that ends before message_stop is an error, never a silently truncated answer", () =>
    Effect.gen(function*() {
      const events = messageEvents({ blocks: [{ text: ["half an ans"] }], stopReason: null, truncate: true })
      const emu = yield* emulator([{ _tag: "sse", events }])
      const model = yield* modelFor(emu)
      const error = failure((yield* chatCollecting(model, request())).exit)
      expect(error.reason).toBe("stream")
      expect(error.retryable).toBe(false) // text was already passed on
      expect(error.requestId).toBe("req_emu_1")
    }))

  it.scopedLive("a connection reset mid-stream, before any text, is a retryable stream error", () =>
    Effect.gen(function*() {
      const events = messageEvents({ blocks: [], stopReason: null, truncate: true })
      const emu = yield* emulator([{ _tag: "sse", events, abruptEnd: true }])
      const model = yield* modelFor(emu)
      const error = failure((yield* chatCollecting(model, request())).exit)
      expect(error.reason).toBe("stream")
      expect(error.retryable).toBe(true)
      expect(error.requestId).toBe("req_emu_1")
    }))

  it.scopedLive("ping and unknown events are tolerated", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([
        sse({
          blocks: [{ text: ["fine"] }],
          stopReason: "end_turn",
          extra: [
            { event: "ping", data: { type: "ping" } },
            { event: "session_status", data: { type: "session_status", status: "warm" } },
            {
              event: "content_block_start",
              data: {
                type: "content_block_start",
                index: 9,
                content_block: { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} }
              }
            }
          ]
        })
      ])
      const model = yield* modelFor(emu)
      const response = yield* model.chat(request(), { emit: () => {} })
      expect(response.content).toBe("fine")
      expect(response.toolCalls).toEqual([])
    }))

  it.scopedLive("stop reasons are mapped; a max_tokens stop drops the incomplete tool_use", () =>
    Effect.gen(function*() {
      const reasons = [
        "end_turn",
        "stop_sequence",
        "pause_turn",
        "refusal",
        "model_context_window_exceeded",
        "something_new"
      ]
      const emu = yield* emulator([
        ...reasons.map((stopReason) => sse({ blocks: [{ text: ["x"] }], stopReason })),
        sse({
          blocks: [
            { text: ["Checking."] },
            { toolUse: { id: "toolu_ok", name: "lookup_order", json: ["{\"order_id\":\"A-1\"}"] } },
            { toolUse: { id: "toolu_cut", name: "cancel_order", json: ["{\"order_id\":\"A-"] } }
          ],
          stopReason: "max_tokens"
        })
      ])
      const model = yield* modelFor(emu)
      const { warnings, layer } = captureWarnings()
      const seen: Array<string> = []
      for (let i = 0; i < reasons.length; i++) {
        seen.push((yield* model.chat(request(), { emit: () => {} })).finishReason)
      }
      expect(seen).toEqual([
        "end_turn",
        "stop_sequence",
        "pause_turn",
        "refusal",
        "model_context_window_exceeded",
        "other"
      ])
      const cut = yield* model.chat(request(), { emit: () => {} }).pipe(Effect.provide(layer))
      expect(cut.finishReason).toBe("max_tokens")
      expect(cut.toolCalls).toEqual([{ id: "toolu_ok", name: "lookup_order", arguments: { order_id: "A-1" } }])
      expect(warnings.some((w) => w.includes("toolu_cut") && w.includes("dropped"))).toBe(true)
    }))

  it.scopedLive("unparsable tool input becomes { _raw } arguments (the tool's argument check rejects it), not a crash", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([
        sse({
          blocks: [
            { toolUse: { id: "toolu_bad", name: "lookup_order", json: ["{\"order_id\": \"A-7", "71\" oops"] } },
            { toolUse: { id: "toolu_arr", name: "lookup_order", json: ["[1, 2]"] } },
            { toolUse: { id: "toolu_none", name: "lookup_order", json: [] } }
          ],
          stopReason: "tool_use"
        })
      ])
      const model = yield* modelFor(emu)
      const { warnings, layer } = captureWarnings()
      const response = yield* model.chat(request(), { emit: () => {} }).pipe(Effect.provide(layer))
      expect(warnings.filter((w) => w.includes("not a JSON object"))).toHaveLength(2)
      expect(response.toolCalls).toEqual([
        { id: "toolu_bad", name: "lookup_order", arguments: { _raw: "{\"order_id\": \"A-771\" oops" } },
        { id: "toolu_arr", name: "lookup_order", arguments: { _raw: "[1, 2]" } },
        { id: "toolu_none", name: "lookup_order", arguments: {} }
      ])
    }))

  it.scopedLive("prompt caching: breakpoints on the last tool, the last system block and the newest message; the prefix bytes stay identical", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([
        sse({
          blocks: [{ toolUse: { id: "toolu_1", name: "lookup_order", json: ["{\"order_id\":\"A-771\"}"] } }],
          stopReason: "tool_use",
          usage: { input_tokens: 50, output_tokens: 20, cache_creation_input_tokens: 2048 }
        }),
        sse({
          blocks: [{ text: ["Order A-771 shipped."] }],
          stopReason: "end_turn",
          usage: {
            input_tokens: 1000,
            output_tokens: 500,
            cache_read_input_tokens: 2000,
            cache_creation_input_tokens: 100
          }
        })
      ])
      const model = yield* modelFor(emu)
      const first = request()
      const turn1 = yield* model.chat(first, { emit: () => {} })
      expect(turn1.usage.cacheWriteTokens).toBe(2048)
      const second = request({
        messages: [
          ...first.messages,
          Message.assistant(turn1.content, turn1.toolCalls),
          Message.toolResult({ toolCallId: "toolu_1", name: "lookup_order", content: "order A-771: shipped" })
        ]
      })
      const turn2 = yield* model.chat(second, { emit: () => {} })
      expect(turn2.usage).toEqual({
        inputTokens: 1000,
        outputTokens: 500,
        cacheReadTokens: 2000,
        cacheWriteTokens: 100,
        costUsd: 0.011475
      })

      const [one, two] = emu.requests.map((r) => r.body)
      const prefix = (body: Record<string, unknown> | undefined) => JSON.stringify([body?.["tools"], body?.["system"]])
      expect(prefix(two)).toBe(prefix(one))
      // the prefix bytes are a substring of the raw body too, exactly as sent
      const raw = (i: number) => emu.requests[i]!.rawBody
      const rawPrefix = (i: number) => raw(i).slice(raw(i).indexOf("\"system\""), raw(i).indexOf("\"messages\""))
      expect(rawPrefix(1)).toBe(rawPrefix(0))

      const ephemeral = { type: "ephemeral" }
      const tools = two!["tools"] as Array<Record<string, unknown>>
      expect(tools.map((t) => t["cache_control"])).toEqual([undefined, ephemeral])
      const system = two!["system"] as Array<Record<string, unknown>>
      expect(system[system.length - 1]!["cache_control"]).toEqual(ephemeral)
      const messages = two!["messages"] as Array<{ content: Array<Record<string, unknown>> }>
      const marked = messages.flatMap((m) => m.content).filter((block) => block["cache_control"] !== undefined)
      expect(marked).toEqual([
        {
          type: "tool_result",
          tool_use_id: "toolu_1",
          content: "order A-771: shipped",
          is_error: false,
          cache_control: ephemeral
        }
      ])
      // at most 4 breakpoints in a request
      for (const r of emu.requests) expect(r.rawBody.split("\"cache_control\"").length - 1).toBeLessThanOrEqual(4)
      // the first request's newest message was the user's question, marked then, plain in the second
      const firstMessages = one!["messages"] as Array<{ content: Array<Record<string, unknown>> }>
      expect(firstMessages[0]!.content[0]).toEqual({
        type: "text",
        text: "What happened to order A-771?",
        cache_control: ephemeral
      })
      expect(messages[0]!.content[0]).toEqual({ type: "text", text: "What happened to order A-771?" })
    }))

  it.scopedLive("the prefix is byte-identical across runs of the same agent (two layers, same tools and system)", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([
        sse({ blocks: [{ text: ["1"] }], stopReason: "end_turn" }),
        sse({ blocks: [{ text: ["2"] }], stopReason: "end_turn" })
      ])
      const a = yield* modelFor(emu)
      const b = yield* modelFor(emu)
      yield* a.chat(request({ messages: [Message.system("Answer order questions."), Message.user("first run")] }), {
        emit: () => {}
      })
      yield* b.chat(request({ messages: [Message.system("Answer order questions."), Message.user("second run")] }), {
        emit: () => {}
      })
      const raw = (i: number) => emu.requests[i]!.rawBody
      const prefix = (i: number) => raw(i).slice(0, raw(i).indexOf("\"messages\""))
      expect(prefix(1)).toBe(prefix(0))
    }))

  it.scopedLive("unknown models cost 0 and say so once; a price function replaces the table", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([
        sse({ blocks: [{ text: ["a"] }], stopReason: "end_turn", model: "claude-mystery-9" }),
        sse({ blocks: [{ text: ["b"] }], stopReason: "end_turn", model: "claude-mystery-9" }),
        sse({ blocks: [{ text: ["c"] }], stopReason: "end_turn", usage: { input_tokens: 100, output_tokens: 10 } })
      ])
      const { warnings, layer } = captureWarnings()
      const model = yield* modelFor(emu)
      const r1 = yield* model.chat(request({ model: "claude-mystery-9" }), { emit: () => {} }).pipe(
        Effect.provide(layer)
      )
      const r2 = yield* model.chat(request({ model: "claude-mystery-9" }), { emit: () => {} }).pipe(
        Effect.provide(layer)
      )
      expect([r1.usage.costUsd, r2.usage.costUsd]).toEqual([0, 0])
      expect(warnings.filter((w) => w.includes("no price for model 'claude-mystery-9'"))).toHaveLength(1)

      const priced = yield* modelFor(emu, {
        pricing: (name, tokens) => (name === "claude-sonnet-4-6" ? tokens.inputTokens * 1e-4 : 0)
      })
      const r3 = yield* priced.chat(request(), { emit: () => {} })
      expect(r3.usage.costUsd).toBe(0.01)
    }))

  it.scopedLive("interrupting a call during a slow response closes the request on the server", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([
        {
          _tag: "sse",
          events: messageEvents({ blocks: [{ text: ["Thinking about it"] }], stopReason: null, truncate: true }),
          hang: true
        }
      ])
      const model = yield* modelFor(emu)
      const firstDelta = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(
        model.chat(request(), { emit: () => void Deferred.unsafeDone(firstDelta, Exit.void) })
      )
      yield* Deferred.await(firstDelta)
      expect(emu.requests[0]!.closedEarly).toBe(false)
      const exit = yield* Fiber.interrupt(fiber)
      expect(Exit.isInterrupted(exit)).toBe(true)
      yield* Effect.promise(() => emu.closedEarly(0)).pipe(Effect.timeout("2 seconds"))
      expect(emu.requests[0]!.closedEarly).toBe(true)
    }))

  it.scopedLive("interrupting a call before the response headers closes the request on the server", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([{ _tag: "silent" }])
      const model = yield* modelFor(emu)
      const fiber = yield* Effect.fork(model.chat(request(), { emit: () => {} }))
      while (emu.requests.length === 0) yield* Effect.sleep("5 millis")
      yield* Fiber.interrupt(fiber)
      yield* Effect.promise(() => emu.closedEarly(0)).pipe(Effect.timeout("2 seconds"))
      expect(emu.requests[0]!.closedEarly).toBe(true)
    }))

  it.scopedLive("the timeout option bounds a request; a timeout is a retryable error", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([{ _tag: "silent" }])
      const model = yield* modelFor(emu, { timeout: "100 millis" })
      const error = failure((yield* chatCollecting(model, request())).exit)
      expect(error.reason).toBe("timeout")
      expect(error.retryable).toBe(true)
      expect(emu.requests).toHaveLength(1)
    }))

  it.scopedLive("multi-byte text split mid-character across socket writes arrives intact", () =>
    Effect.gen(function*() {
      const text = ["Café ☕ — naïve 日本語 ", "ok 🎉"]
      const emu = yield* emulator([sse({ blocks: [{ text }], stopReason: "end_turn", chunkSize: 5 })])
      const model = yield* modelFor(emu)
      const { deltas, exit } = yield* chatCollecting(model, request())
      expect(deltas).toEqual(text)
      expect(Exit.isSuccess(exit) && exit.value.content).toBe(text.join(""))
    }))

  it.effect("a missing API key fails the layer build with a clear ConfigurationError", () =>
    Effect.gen(function*() {
      const exit = yield* Layer.build(AnthropicChatModel.layer({ model: "claude-sonnet-4-6" })).pipe(
        Effect.scoped,
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map())),
        Effect.exit
      )
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") return
      const error = exit.cause.error
      expect(error).toBeInstanceOf(ConfigurationError)
      expect(error.field).toBe("apiKey")
      expect(error.message).toContain("ANTHROPIC_API_KEY")

      const blank = yield* AnthropicChatModel.make({ apiKey: Redacted.make("  ") }).pipe(Effect.flip)
      expect(blank.field).toBe("apiKey")
      const badTokens = yield* AnthropicChatModel.make({ apiKey: "k", maxTokens: 0 }).pipe(Effect.flip)
      expect(badTokens.field).toBe("maxTokens")
    }))

  it.scopedLive("the API key is read from ANTHROPIC_API_KEY through Effect Config", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([sse({ blocks: [{ text: ["ok"] }], stopReason: "end_turn" })])
      const model = yield* AnthropicChatModel.make({ baseURL: emu.url }).pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["ANTHROPIC_API_KEY", "key-from-config"]])))
      )
      yield* model.chat(request(), { emit: () => {} })
      expect(emu.requests[0]!.headers["authorization"]).toBe("Bearer key-from-config")
    }))
})
