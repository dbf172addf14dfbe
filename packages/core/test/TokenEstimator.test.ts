import { Message, TokenEstimator } from "@agentkit/core"
import type { Chat } from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"

const request = (content: string): Chat.ChatRequest => ({
  model: "m",
  messages: [Message.system("be brief"), Message.user(content)],
  tools: [{ name: "lookup", description: "finds an order", parameters: { type: "object", properties: {} } }]
})

describe("TokenEstimator", () => {
  it("counts UTF-8 bytes, so multi-byte text counts more than its length", () => {
    const ascii = TokenEstimator.utf8Bytes.inputTokens(request("aaaa"))
    const accented = TokenEstimator.utf8Bytes.inputTokens(request("éééé"))
    const emoji = TokenEstimator.utf8Bytes.inputTokens(request("😀😀😀😀"))
    expect(accented - ascii).toBe(4)
    expect(emoji - ascii).toBe(12)
  })

  it("counts the advertised tools and the tool calls, not only message text", () => {
    const bare = TokenEstimator.utf8Bytes.inputTokens({ ...request("x"), tools: [] })
    const withTool = TokenEstimator.utf8Bytes.inputTokens(request("x"))
    expect(withTool).toBeGreaterThan(bare + "finds an order".length)
    const call = Message.assistant("", [{ id: "c1", name: "lookup", arguments: { order: "A-771" } }])
    const withCall = TokenEstimator.utf8Bytes.inputTokens({
      ...request("x"),
      messages: [...request("x").messages, call]
    })
    expect(withCall - withTool).toBeGreaterThan("A-771".length)
  })

  it.effect("current is utf8Bytes unless a layer provides another", () =>
    Effect.gen(function*() {
      expect((yield* TokenEstimator.current).name).toBe("utf8-bytes")
      const quarter: TokenEstimator.Service = { name: "quarter", inputTokens: () => 7 }
      const provided = yield* TokenEstimator.current.pipe(Effect.provide(TokenEstimator.layer(quarter)))
      expect(provided.inputTokens(request("x"))).toBe(7)
    }))
})

describe("TokenEstimator.utf8Bytes, part by part", () => {
  const json = (request: Chat.ChatRequest) =>
    new TextEncoder().encode(
      JSON.stringify({
        messages: request.messages,
        tools: request.tools,
        toolChoice: request.toolChoice,
        responseFormat: request.responseFormat
      })
    ).length

  it("is exactly the UTF-8 bytes of the request's JSON, whatever its parts", () => {
    const call = Message.assistant("", [{
      id: "c1",
      name: "lookup",
      arguments: { order: "A-771", note: "ünï\n\"😀\"" }
    }])
    const cases: Array<Chat.ChatRequest> = [
      { model: "m", messages: [], tools: [] },
      request("hi"),
      { ...request("é\u0000\t"), messages: [...request("x").messages, call] },
      { ...request("x"), toolChoice: { type: "tool", name: "lookup" } },
      {
        ...request("x"),
        responseFormat: { type: "json_schema", name: "answer", schema: { type: "object" } }
      }
    ]
    for (const each of cases) expect(TokenEstimator.utf8Bytes.inputTokens(each)).toBe(json(each))
  })

  it("a message shared by two requests counts the same in both (it is measured once)", () => {
    const first = request("order A-771")
    const grown: Chat.ChatRequest = { ...first, messages: [...first.messages, Message.assistant("it shipped")] }
    expect(TokenEstimator.utf8Bytes.inputTokens(first)).toBe(json(first))
    expect(TokenEstimator.utf8Bytes.inputTokens(grown)).toBe(json(grown))
    expect(TokenEstimator.utf8Bytes.inputTokens(first)).toBe(json(first))
  })
})
