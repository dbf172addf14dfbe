import { AnthropicChatModel } from "@agentkit/anthropic"
import { ChatModel, Invoker, Message, RunContext, Tracing } from "@agentkit/core"
import type { Chat } from "@agentkit/core"
import Anthropic from "@anthropic-ai/sdk"
import { describe, expect, it } from "@effect/vitest"
import { trace } from "@opentelemetry/api"
import type { Span, SpanContext, Tracer, TracerProvider } from "@opentelemetry/api"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { emulator, sse } from "./emulator.js"

const lookupOrder: Chat.ToolSchema = {
  name: "lookup_order",
  description: "Look up an order by its id and return its status line.",
  parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] }
}

describe("AnthropicChatModel through core's Invoker", () => {
  it.scopedLive("two turns: chat -> parallel tool_use, then the follow-up with the tool results -> text", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([
        sse({
          id: "msg_turn1",
          blocks: [
            { toolUse: { id: "toolu_a", name: "lookup_order", json: ["{\"order_id\":", "\"A-771\"}"] } },
            { toolUse: { id: "toolu_b", name: "lookup_order", json: ["{\"order_id\":\"ZZZ\"}"] } }
          ],
          stopReason: "tool_use",
          usage: { input_tokens: 400, output_tokens: 60, cache_creation_input_tokens: 1200 }
        }),
        sse({
          id: "msg_turn2",
          blocks: [{ text: ["Order A-771 shipped on 14 August ", "and arrives Tuesday."] }],
          stopReason: "end_turn",
          usage: { input_tokens: 90, output_tokens: 30, cache_read_input_tokens: 1200 }
        })
      ])
      const tracer = Tracing.recording()
      const ModelLive = AnthropicChatModel.layer({ apiKey: "test-key", baseURL: emu.url })
      const InvokerLive = Invoker.layer({ chatMiddleware: [], toolMiddleware: [] }).pipe(Layer.provide(ModelLive))

      const program = Effect.gen(function*() {
        const invoker = yield* Invoker
        const run = yield* RunContext
        const transcript: Array<Message.Message> = [
          Message.system("Answer order questions. Use the tools; never guess a status."),
          Message.user("What happened to orders A-771 and ZZZ?")
        ]
        const first = yield* invoker.chat({ model: "claude-sonnet-4-6", messages: transcript, tools: [lookupOrder] })
        expect(first.finishReason).toBe("tool_use")
        expect(first.toolCalls.map((c) => c.id)).toEqual(["toolu_a", "toolu_b"])

        // what the agent loop does next: the assistant turn, then one tool message per call
        transcript.push(Message.assistant(first.content, first.toolCalls))
        transcript.push(
          Message.toolResult({
            toolCallId: "toolu_a",
            name: "lookup_order",
            content: "order A-771: shipped 2026-08-14, arriving Tuesday"
          })
        )
        transcript.push(
          Message.toolResult({
            toolCallId: "toolu_b",
            name: "lookup_order",
            content: "ERROR: tool 'lookup_order' failed: ToolExecutionError: no order 'ZZZ'",
            isError: true
          })
        )

        const deltas: Array<string> = []
        const second = yield* invoker.chat(
          { model: "claude-sonnet-4-6", messages: transcript, tools: [lookupOrder] },
          { emit: (delta) => void deltas.push(delta.text) }
        )
        expect(second.content).toBe("Order A-771 shipped on 14 August and arrives Tuesday.")
        expect(deltas).toEqual(["Order A-771 shipped on 14 August ", "and arrives Tuesday."])
        expect(run.budget.modelCalls).toBe(2)
        // 400*3 + 60*15 + 1200*3.75 = 6600 (e-6), then 90*3 + 30*15 + 1200*0.3 = 1080 (e-6)
        expect(first.usage.costUsd).toBe(0.0066)
        expect(second.usage.costUsd).toBe(0.00108)
        expect(run.budget.spentUsd).toBe(0.00768)
      })
      yield* program.pipe(
        RunContext.provide({ correlationId: "run-1" }),
        Effect.provide(InvokerLive),
        Effect.provide(tracer.layer)
      )

      expect(emu.requests).toHaveLength(2)
      const body = emu.requests[1]!.body
      expect(body["model"]).toBe("claude-sonnet-4-6")
      expect(body["system"]).toEqual([
        {
          type: "text",
          text: "Answer order questions. Use the tools; never guess a status.",
          cache_control: { type: "ephemeral" }
        }
      ])
      expect(body["tools"]).toEqual([{
        ...{ name: "lookup_order", description: lookupOrder.description, input_schema: lookupOrder.parameters },
        cache_control: { type: "ephemeral" }
      }])
      expect(body["messages"]).toEqual([
        { role: "user", content: [{ type: "text", text: "What happened to orders A-771 and ZZZ?" }] },
        {
          role: "assistant",
          content: [
            { type: "tool_use", id: "toolu_a", name: "lookup_order", input: { order_id: "A-771" } },
            { type: "tool_use", id: "toolu_b", name: "lookup_order", input: { order_id: "ZZZ" } }
          ]
        },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_a",
              content: "order A-771: shipped 2026-08-14, arriving Tuesday",
              is_error: false
            },
            {
              type: "tool_result",
              tool_use_id: "toolu_b",
              content: "ERROR: tool 'lookup_order' failed: ToolExecutionError: no order 'ZZZ'",
              is_error: true,
              cache_control: { type: "ephemeral" }
            }
          ]
        }
      ])
      expect(body["stream"]).toBe(true)

      // one span per model call, the Invoker's, annotated by the provider
      const spans = tracer.named("chat claude-sonnet-4-6")
      expect(spans).toHaveLength(2)
      expect(tracer.spans.map((s) => s.name)).toEqual(["chat claude-sonnet-4-6", "chat claude-sonnet-4-6"])
      const [span1, span2] = spans
      expect(span1!.attributes.get("gen_ai.provider.name")).toBe("anthropic")
      expect(span1!.attributes.get("gen_ai.response.id")).toBe("msg_turn1")
      expect(span1!.attributes.get("gen_ai.request.max_tokens")).toBe(4096)
      expect(span1!.attributes.get("gen_ai.usage.cache_creation_input_tokens")).toBe(1200)
      expect(span1!.attributes.get("anthropic.request.id")).toBe("req_emu_1")
      expect(span2!.attributes.get("gen_ai.usage.cache_read_input_tokens")).toBe(1200)
      expect(span2!.attributes.get("gen_ai.response.finish_reasons")).toEqual(["end_turn"])
    }))

  it.scopedLive("the provider never annotates a span that is not its call's chat span", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([sse({ blocks: [{ text: ["hi"] }], stopReason: "end_turn" })])
      const tracer = Tracing.recording()
      const model = yield* AnthropicChatModel.make({ apiKey: "test-key", baseURL: emu.url })
      yield* model
        .chat({ model: "claude-sonnet-4-6", messages: [Message.user("hi")], tools: [] }, { emit: () => {} })
        .pipe(Effect.withSpan("invoke_agent support"), Effect.provide(tracer.layer))
      expect(tracer.one("invoke_agent support").attributes.size).toBe(0)
    }))

  it.scopedLive("the provider returns its span attributes as the response's metadata, and touches no span", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([sse({ blocks: [{ text: ["hi"] }], stopReason: "end_turn" })])
      const tracer = Tracing.recording()
      const model = yield* AnthropicChatModel.make({ apiKey: "test-key", baseURL: emu.url })
      const response = yield* model
        .chat({ model: "claude-sonnet-4-6", messages: [Message.user("hi")], tools: [] }, { emit: () => {} })
        .pipe(Effect.withSpan("chat claude-sonnet-4-6"), Effect.provide(tracer.layer))
      expect(response.metadata?.responseId).toMatch(/^msg_/)
      expect(response.metadata?.attributes).toEqual({
        "gen_ai.request.max_tokens": 4096,
        "anthropic.request.id": response.requestId
      })
      // even a span named like the Invoker's is left alone: the Invoker annotates its own span
      expect(tracer.one("chat claude-sonnet-4-6").attributes.size).toBe(0)
    }))

  it.scopedLive("the SDK's own OpenTelemetry span is off: a registered tracer provider sees no span from our calls", () =>
    Effect.gen(function*() {
      const started: Array<string> = []
      const spanContext: SpanContext = {
        traceId: "0af7651916cd43dd8448eb211c80319c",
        spanId: "b7ad6b7169203331",
        traceFlags: 1
      }
      const span: Span = {
        spanContext: () => spanContext,
        setAttribute: () => span,
        setAttributes: () => span,
        addEvent: () => span,
        addLink: () => span,
        addLinks: () => span,
        setStatus: () => span,
        updateName: () => span,
        end: () => {},
        isRecording: () => true,
        recordException: () => {}
      }
      const tracerOtel = {
        startSpan: (name: string) => {
          started.push(name)
          return span
        },
        startActiveSpan: () => {
          throw new Error("not used")
        }
      } as unknown as Tracer
      const provider: TracerProvider = { getTracer: () => tracerOtel }
      yield* Effect.acquireRelease(
        Effect.sync(() => trace.setGlobalTracerProvider(provider)),
        () => Effect.sync(() => trace.disable())
      )
      const emu = yield* emulator([
        sse({ blocks: [{ text: ["sdk default"] }], stopReason: "end_turn" }),
        sse({ blocks: [{ text: ["ours"] }], stopReason: "end_turn" })
      ])
      const params = {
        model: "claude-sonnet-4-6",
        max_tokens: 16,
        messages: [{ role: "user" as const, content: "hi" }],
        stream: true as const
      }

      // control: an SDK client with default options traces itself into the global provider
      const sdk = new Anthropic({ apiKey: "test-key", baseURL: emu.url, maxRetries: 0 })
      yield* Effect.promise(async () => {
        for await (const _ of await sdk.messages.create(params)) {
          // drain
        }
      })
      expect(started).toEqual(["anthropic.messages.create"])
      expect(emu.requests[0]!.headers["traceparent"]).toBeUndefined() // no propagator registered

      // ours: no span
      const model = yield* AnthropicChatModel.make({ apiKey: "test-key", baseURL: emu.url })
      const response = yield* model.chat({ model: "claude-sonnet-4-6", messages: [Message.user("hi")], tools: [] }, {
        emit: () => {}
      })
      expect(response.content).toBe("ours")
      expect(started).toEqual(["anthropic.messages.create"])
    }))

  it.scopedLive("ChatModel.stream derives a Stream of deltas from the provider", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([sse({ blocks: [{ text: ["a", "b", "c"] }], stopReason: "end_turn" })])
      const ModelLive = AnthropicChatModel.layer({ apiKey: "test-key", baseURL: emu.url })
      const chunks = yield* ChatModel.stream({ model: "claude-sonnet-4-6", messages: [Message.user("abc")], tools: [] })
        .pipe(
          Stream.map((d) => d.text),
          Stream.runCollect,
          Effect.provide(ModelLive)
        )
      expect([...chunks]).toEqual(["a", "b", "c"])
    }))
})
