import { Message } from "@agentkit/core"
import type { Chat } from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"
import { messageParams, toParams } from "../src/internal/request.js"
import { Assembler, coerceToolInput } from "../src/internal/stream.js"

const settings = { defaultModel: undefined, maxTokens: 4096, cache: true }
const ephemeral = { type: "ephemeral" }

describe("request mapping", () => {
  it("tool results and a user message after them become one user message, tool_result blocks first", () => {
    const messages = messageParams(
      [
        Message.user("q"),
        Message.assistant("", [{ id: "t1", name: "a", arguments: {} }]),
        Message.toolResult({ toolCallId: "t1", name: "a", content: "r1" }),
        Message.user("also, hurry"),
        Message.toolResult({ toolCallId: "t1b", name: "a", content: "r2", isError: true })
      ],
      false
    )
    expect(messages).toEqual([
      { role: "user", content: [{ type: "text", text: "q" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "a", input: {} }] },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "t1", content: "r1", is_error: false },
          { type: "tool_result", tool_use_id: "t1b", content: "r2", is_error: true },
          { type: "text", text: "also, hurry" }
        ]
      }
    ])
  })

  it("system messages anywhere go to system; empty texts and empty turns are left out", () => {
    const params = toParams(
      {
        model: "m",
        messages: [
          Message.system("one"),
          Message.user("hi"),
          Message.system(""),
          Message.assistant(""),
          Message.user("again"),
          Message.system("two")
        ],
        tools: []
      },
      "m",
      settings
    )
    expect(params.system).toEqual([{ type: "text", text: "one" }, {
      type: "text",
      text: "two",
      cache_control: ephemeral
    }])
    expect(params.messages).toEqual([
      {
        role: "user",
        content: [{ type: "text", text: "hi" }, { type: "text", text: "again", cache_control: ephemeral }]
      }
    ])
    expect(params.tools).toBeUndefined()
    expect(Object.keys(params)).toEqual(["model", "max_tokens", "system", "messages", "stream"])
  })

  it("the body's keys are in a fixed order and temperature is not sent", () => {
    const tool: Chat.ToolSchema = {
      name: "t",
      description: "a tool that does a thing, described",
      parameters: { type: "object", properties: {} }
    }
    const params = toParams(
      { model: "m", messages: [Message.user("x")], tools: [tool], temperature: 0, maxTokens: 7 },
      "m",
      settings
    )
    expect(Object.keys(params)).toEqual(["model", "max_tokens", "tools", "messages", "stream"])
    expect(params.max_tokens).toBe(7)
    expect(params.tools).toEqual([{
      name: "t",
      description: tool.description,
      input_schema: tool.parameters,
      cache_control: ephemeral
    }])
  })

  it("caching places at most 3 breakpoints and never mutates the transcript", () => {
    const toolCalls = [{ id: "t1", name: "a", arguments: { x: 1 } }]
    const transcript = [Message.system("s"), Message.user("q"), Message.assistant("thinking", toolCalls)]
    const params = toParams(
      {
        model: "m",
        messages: transcript,
        tools: [{ name: "a", description: "d".repeat(30), parameters: { type: "object" } }]
      },
      "m",
      settings
    )
    expect(JSON.stringify(params).split("cache_control").length - 1).toBe(3)
    expect(params.messages[1]).toEqual({
      role: "assistant",
      content: [{ type: "text", text: "thinking" }, {
        type: "tool_use",
        id: "t1",
        name: "a",
        input: { x: 1 },
        cache_control: ephemeral
      }]
    })
    expect(transcript[2]).toEqual(Message.assistant("thinking", toolCalls))
  })
})

describe("stream assembly", () => {
  it("coerces tool input: {} for none, the object, else { _raw }", () => {
    expect(coerceToolInput("")).toEqual({ value: {}, invalid: false })
    expect(coerceToolInput("{\"a\":1}")).toEqual({ value: { a: 1 }, invalid: false })
    expect(coerceToolInput("\"str\"")).toEqual({ value: { _raw: "\"str\"" }, invalid: true })
    expect(coerceToolInput("null")).toEqual({ value: { _raw: "null" }, invalid: true })
    expect(coerceToolInput("{\"a\":")).toEqual({ value: { _raw: "{\"a\":" }, invalid: true })
  })

  it("a tool_use block that never stopped is dropped; usage from message_delta wins", () => {
    const deltas: Array<string> = []
    const assembler = new Assembler((d) => void deltas.push(d.text))
    const events: Array<{ readonly type: string }> = [
      {
        type: "message_start",
        message: { id: "msg", model: "m", usage: { input_tokens: 5, output_tokens: 1, cache_read_input_tokens: null } }
      },
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "Hel" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "lo" } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "hmm" } },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "t", name: "x", input: {} } },
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "{" } },
      { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 9, input_tokens: 6 } },
      { type: "message_stop" }
    ] as unknown as Array<{ readonly type: string }>
    for (const event of events) assembler.push(event)
    expect(assembler.complete).toBe(true)
    const result = assembler.finish()
    expect(deltas).toEqual(["Hel", "lo"])
    expect(result.content).toBe("Hello")
    expect(result.toolCalls).toEqual([])
    expect(result.droppedToolCalls).toEqual([{ id: "t", name: "x" }])
    expect(result.usage).toEqual({ input: 6, output: 9, cacheRead: 0, cacheWrite: 0 })
  })
})
