/**
 * Structured output end to end (issue 15): an Agent with `output` on the default single call, the
 * real @anthropic-ai/sdk and the local Messages API emulator. The provider declares a forced tool
 * choice, so the request carries the output tool and `tool_choice: { type: "tool", name }`; the
 * answer is the tool's input; an invalid one is repaired in a second request.
 */
import { Agent, ReActCognition } from "@agentkit/agents"
import { AnthropicChatModel } from "@agentkit/anthropic"
import { Invoker, Message, RunContext } from "@agentkit/core"
import { Tool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { emulator, sse } from "./emulator.js"
import type { Emulator } from "./emulator.js"

const Verdict = Schema.Struct({ status: Schema.Literal("shipped", "lost"), days: Schema.Int })
const INPUT_SCHEMA = {
  type: "object",
  properties: { status: { enum: ["shipped", "lost"], type: "string" }, days: { type: "integer" } },
  required: ["status", "days"]
}
const TOOL_DESCRIPTION =
  "Return the final answer as structured data: call this tool once, with the answer as its input."

const liveOf = (emu: Emulator, cache = false) =>
  Invoker.layer().pipe(Layer.provide(AnthropicChatModel.layer({ apiKey: "test-key", baseURL: emu.url, cache })))

const triage = Agent.make({
  name: "triage",
  model: "claude-sonnet-4-6",
  prompt: "Classify the order.",
  output: Verdict,
  maxTokens: 256
})

const outputUse = (json: ReadonlyArray<string>, id = "toolu_o1") => ({
  toolUse: { id, name: "structured_output", json }
})

describe("AnthropicChatModel: structured output through a forced tool", () => {
  it.scopedLive("the request bytes: the output tool and tool_choice { type: tool, name }; the tool input is parsed", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([
        sse({
          blocks: [outputUse(["{\"status\":", "\"shipped\",\"da", "ys\":3}"])],
          stopReason: "tool_use",
          usage: { input_tokens: 120, output_tokens: 30 }
        })
      ])
      const result = yield* triage.run("Where is A-771?").pipe(
        RunContext.provide({ correlationId: "so-1" }),
        Effect.provide(liveOf(emu))
      )
      expect(result.parsed).toEqual({ status: "shipped", days: 3 })
      expect([result.output, result.stopReason, result.partial]).toEqual([
        "{\"status\":\"shipped\",\"days\":3}",
        "end_turn",
        false
      ])
      expect([result.usage.inputTokens, result.usage.outputTokens]).toEqual([120, 30])

      expect(emu.requests).toHaveLength(1)
      expect(emu.requests[0]!.rawBody).toBe(
        JSON.stringify({
          model: "claude-sonnet-4-6",
          max_tokens: 256,
          system: [{ type: "text", text: "Classify the order." }],
          tools: [{ name: "structured_output", description: TOOL_DESCRIPTION, input_schema: INPUT_SCHEMA }],
          tool_choice: { type: "tool", name: "structured_output" },
          messages: [{ role: "user", content: [{ type: "text", text: "Where is A-771?" }] }],
          stream: true
        })
      )
    }))

  it.scopedLive("an invalid tool input is repaired: the second request holds the answer as text and the repair message, forced again", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([
        sse({ blocks: [outputUse(["{\"status\":\"delayed\",\"days\":3,\"admin\":true}"])], stopReason: "tool_use" }),
        sse({
          id: "msg_2",
          blocks: [outputUse(["{\"status\":\"lost\",\"days\":0}"], "toolu_o2")],
          stopReason: "tool_use"
        })
      ])
      const result = yield* triage.run("Where is A-771?").pipe(
        RunContext.provide({ correlationId: "so-2" }),
        Effect.provide(liveOf(emu, true))
      )
      expect(result.parsed).toEqual({ status: "lost", days: 0 })
      expect(result.usage.inputTokens).toBe(20)
      const second = emu.requests[1]!.body
      expect(second["tool_choice"]).toEqual({ type: "tool", name: "structured_output" })
      expect(second["messages"]).toEqual([
        { role: "user", content: [{ type: "text", text: "Where is A-771?" }] },
        { role: "assistant", content: [{ type: "text", text: "{\"status\":\"delayed\",\"days\":3,\"admin\":true}" }] },
        {
          role: "user",
          content: [
            {
              type: "text",
              text:
                "Your previous response was invalid (status: Expected \"shipped\", actual \"delayed\"; status: Expected \"lost\", actual \"delayed\"). Return ONLY output matching the required format.",
              cache_control: { type: "ephemeral" }
            }
          ]
        }
      ])
      // the cache-stable prefix (the output tool and the system) is byte-identical across the attempts
      const prefix = (i: number) => JSON.stringify([emu.requests[i]!.body["tools"], emu.requests[i]!.body["system"]])
      expect(prefix(1)).toBe(prefix(0))
    }))

  it.scopedLive("a model that never gives a valid input: maxRepairs + 1 requests, then invalid_output", () =>
    Effect.gen(function*() {
      const emu = yield* emulator(() =>
        sse({ blocks: [outputUse(["{\"status\":\"shipped\"}"])], stopReason: "tool_use" })
      )
      const agent = Agent.make({ name: "triage", model: "claude-sonnet-4-6", output: Verdict, maxRepairs: 2 })
      const result = yield* agent.run("Where is A-771?").pipe(
        RunContext.provide({ correlationId: "so-3" }),
        Effect.provide(liveOf(emu))
      )
      expect(emu.requests).toHaveLength(3)
      expect(result).toMatchObject({
        partial: true,
        stopReason: "invalid_output",
        error: "days: is missing",
        output: "{\"status\":\"shipped\"}"
      })
      expect(result.parsed).toBeUndefined()
    }))

  it.scopedLive("ReAct never forces: its tools stay callable, the shape is a schema block in the system text", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([
        sse({ blocks: [{ text: ["{\"status\":\"lost\",\"days\":1}"] }], stopReason: "end_turn" })
      ])
      const lookup = Tool.make("lookup_order", {
        description: "Look up an order by its id and return its status line.",
        parameters: { order_id: Schema.String },
        sideEffecting: false,
        handler: ({ order_id }) => `order ${order_id}: lost`
      })
      const agent = Agent.make({
        name: "support",
        model: "claude-sonnet-4-6",
        prompt: "Answer order questions.",
        output: Verdict,
        cognition: ReActCognition.make({ tools: [lookup] })
      })
      const result = yield* agent.run("Where is A-771?").pipe(
        RunContext.provide({ correlationId: "so-4" }),
        Effect.provide(liveOf(emu))
      )
      expect(result.parsed).toEqual({ status: "lost", days: 1 })
      const body = emu.requests[0]!.body
      expect(body["tool_choice"]).toBeUndefined()
      expect((body["tools"] as Array<{ name: string }>).map((t) => t.name)).toEqual(["lookup_order"])
      expect(body["system"]).toEqual([
        { type: "text", text: "Answer order questions." },
        {
          type: "text",
          text: `Respond with only JSON that matches this JSON Schema (no prose, no code fences):\n${
            JSON.stringify(INPUT_SCHEMA)
          }`
        }
      ])
    }))

  it.scopedLive("a tool choice naming none of the request's tools fails as invalid_request; nothing is sent", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([])
      const model = yield* AnthropicChatModel.make({ apiKey: "test-key", baseURL: emu.url })
      expect(model.features?.toolChoice).toBe(true)
      const exit = yield* Effect.exit(
        model.chat(
          {
            model: "claude-sonnet-4-6",
            messages: [Message.user("hi")],
            tools: [],
            toolChoice: { type: "tool", name: "structured_output" }
          },
          { emit: () => {} }
        )
      )
      expect(
        Exit.isFailure(exit) && exit.cause._tag === "Fail" ? [exit.cause.error.reason, exit.cause.error.message] : []
      ).toEqual([
        "invalid_request",
        "AnthropicChatModel: toolChoice names 'structured_output', which is not one of the request's tools (none)"
      ])
      expect(emu.requests).toHaveLength(0)
    }))
})
