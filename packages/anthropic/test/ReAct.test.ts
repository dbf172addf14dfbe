/**
 * End to end: an Agent on ReActCognition, the real @anthropic-ai/sdk, and the local Messages API
 * emulator. The model asks for the tool, the loop runs it, the results go back in one user message.
 */
import { Agent, ReActCognition } from "@agentkit/agents"
import { AnthropicChatModel } from "@agentkit/anthropic"
import { Invoker, RunContext } from "@agentkit/core"
import { Tool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { emulator, sse } from "./emulator.js"

class NoSuchOrder extends Schema.TaggedError<NoSuchOrder>()("NoSuchOrder", { orderId: Schema.String }) {
  override get message() {
    return `no order '${this.orderId}'`
  }
}

const looked: Array<string> = []
const lookupOrder = Tool.make("lookup_order", {
  description: "Look up an order by its id and return its status line.",
  parameters: { order_id: Schema.String },
  sideEffecting: false,
  idempotent: true,
  handler: ({ order_id }) =>
    Effect.suspend(() => {
      looked.push(order_id)
      return order_id === "A-771"
        ? Effect.succeed(`order ${order_id}: shipped 2026-08-14, arriving Tuesday`)
        : Effect.fail(new NoSuchOrder({ orderId: order_id }))
    })
})

describe("AnthropicChatModel under ReActCognition", () => {
  it.scopedLive("a two-turn tool loop: tool_use (two calls), then text; the second request carries both results", () =>
    Effect.gen(function*() {
      looked.length = 0
      const emu = yield* emulator([
        sse({
          id: "msg_1",
          blocks: [
            { text: ["Let me check."] },
            { toolUse: { id: "toolu_a", name: "lookup_order", json: ["{\"order_", "id\":\"A-771\"}"] } },
            { toolUse: { id: "toolu_b", name: "lookup_order", json: ["{\"order_id\":\"ZZZ\"}"] } }
          ],
          stopReason: "tool_use",
          usage: { input_tokens: 100, output_tokens: 40 }
        }),
        sse({
          id: "msg_2",
          blocks: [{ text: ["Order A-771 shipped on 14 August and arrives Tuesday; ", "ZZZ does not exist."] }],
          stopReason: "end_turn",
          usage: { input_tokens: 200, output_tokens: 20 }
        })
      ])
      const agent = Agent.make({
        name: "support",
        model: "claude-sonnet-4-6",
        prompt: "Answer order questions. Use the tools; never guess a status.",
        cognition: ReActCognition.make({ tools: [lookupOrder] })
      })
      const Live = Invoker.layer().pipe(
        Layer.provide(AnthropicChatModel.layer({ apiKey: "test-key", baseURL: emu.url }))
      )
      const result = yield* agent
        .run("What happened to orders A-771 and ZZZ?")
        .pipe(RunContext.provide({ correlationId: "run-e2e" }), Effect.provide(Live))

      expect(result.output).toBe("Order A-771 shipped on 14 August and arrives Tuesday; ZZZ does not exist.")
      expect(result.stopReason).toBe("end_turn")
      expect(result.usage.inputTokens).toBe(300)
      expect(result.usage.outputTokens).toBe(60)
      expect(looked).toEqual(["A-771", "ZZZ"])

      expect(emu.requests).toHaveLength(2)
      const [first, second] = emu.requests.map((request) => request.body)
      expect(first!["model"]).toBe("claude-sonnet-4-6")
      expect(first!["messages"]).toEqual([
        {
          role: "user",
          content: [{
            type: "text",
            text: "What happened to orders A-771 and ZZZ?",
            cache_control: { type: "ephemeral" }
          }]
        }
      ])
      expect(second!["messages"]).toEqual([
        { role: "user", content: [{ type: "text", text: "What happened to orders A-771 and ZZZ?" }] },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Let me check." },
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
              content: "ERROR: tool 'lookup_order' failed: NoSuchOrder: no order 'ZZZ'",
              is_error: true,
              cache_control: { type: "ephemeral" }
            }
          ]
        }
      ])
      // the cache-stable prefix (tools + system) is byte-identical across the turns of the run
      const prefix = (body: Record<string, unknown>) => JSON.stringify([body["tools"], body["system"]])
      expect(prefix(second!)).toBe(prefix(first!))
    }))
})
