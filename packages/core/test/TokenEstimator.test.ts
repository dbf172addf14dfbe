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
