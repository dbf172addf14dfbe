/**
 * The chat-model contract over `FakeLLM.replying`: the fake plays the contract's script at the
 * provider's level (deltas, tool calls, usage priced from the model catalog, failures with their
 * status, a hang that ends when interrupted, a cut stream), so a test written against the fake
 * sees what a real provider does.
 */
import { ChatModelError, ModelCatalog, Usage } from "@agentkit/core"
import type { Chat } from "@agentkit/core"
import { ChatModelContract, FakeLLM } from "@agentkit/testing"
import { describe, it } from "@effect/vitest"
import { Deferred, Effect, Option } from "effect"

const model = "gpt-4.1-mini"

const errorOf = (reply: ChatModelContract.Reply): ChatModelError | undefined => {
  switch (reply._tag) {
    case "Failure": {
      const [reason, retryable] = reply.status === 429
        ? (["rate_limit", true] as const)
        : reply.status >= 500
        ? (["server", true] as const)
        : (["invalid_request", false] as const)
      return new ChatModelError({
        reason,
        retryable,
        status: reply.status,
        message: `fake ${reply.status}: ${reply.message}`
      })
    }
    case "ContextLength":
      return new ChatModelError({ reason: "context_length", retryable: false, status: 400, message: reply.message })
    default:
      return undefined
  }
}

const harness = (script: ReadonlyArray<ChatModelContract.Reply>) =>
  Effect.gen(function*() {
    const closed = yield* Deferred.make<void>()
    const llm = FakeLLM.replying((call, request, emit) => {
      const reply = script[call - 1]
      if (reply === undefined) return Effect.dieMessage(`no reply scripted for call ${call}`)
      const error = errorOf(reply)
      if (error !== undefined) return Effect.fail(error)
      if (reply._tag === "Hang" || reply._tag === "Cut") {
        for (const text of reply.text) emit({ text })
        return reply._tag === "Hang"
          ? Effect.onInterrupt(Effect.never, () => Deferred.succeed(closed, undefined))
          : Effect.fail(new ChatModelError({ reason: "stream", retryable: false, message: "fake stream cut" }))
      }
      if (reply._tag !== "Answer") return Effect.dieMessage("unreachable")
      for (const text of reply.text) emit({ text })
      const tokens = { ...reply.usage, cacheWriteTokens: 0 }
      const toolCalls = reply.toolCalls.map((c) => ({
        id: c.id,
        name: c.name,
        arguments: JSON.parse(c.argumentFragments.join("")) as Record<string, unknown>
      }))
      const response: Chat.ChatResponse = {
        content: reply.text.join(""),
        toolCalls,
        usage: Usage.make({
          ...tokens,
          costUsd: Option.getOrElse(ModelCatalog.standard.cost(request.model, tokens), () => 0)
        }),
        finishReason: toolCalls.length > 0 ? "tool_use" : "end_turn",
        model: request.model,
        provider: "fake"
      }
      return Effect.succeed(response)
    })
    const service = { ...llm.service, features: { toolChoice: true, responseFormat: true } }
    return {
      model: service,
      requests: () => llm.requests.map(ChatModelContract.observe),
      closedEarly: (index: number) => (index === 0 ? Deferred.await(closed) : Effect.never)
    } satisfies ChatModelContract.Harness
  })

describe("FakeLLM", () => {
  ChatModelContract.register(it, { name: "FakeLLM.replying", model, make: harness })
})
