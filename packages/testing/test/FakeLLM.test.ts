/**
 * `FakeLLM` and `Turn` (spec-tools-testing §5.2, DESIGN "Testing").
 */
import { ChatModel, ChatModelError, Message, Usage } from "@agentkit/core"
import type { Chat } from "@agentkit/core"
import { failure, FakeLLM, Turn } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Chunk, Effect, Exit, Option, Stream } from "effect"

const request = (text = "hi", model = "claude-sonnet-4-6"): Chat.ChatRequest => ({
  model,
  messages: [Message.user(text)],
  tools: []
})

/** Calls the fake's ChatModel once, collecting the deltas it emits. */
const chat = (llm: FakeLLM.FakeLLM, req: Chat.ChatRequest = request()) =>
  Effect.gen(function*() {
    const model = yield* ChatModel
    const deltas: Array<string> = []
    const exit = yield* Effect.exit(model.chat(req, { emit: (delta) => deltas.push(delta.text) }))
    return { exit, deltas }
  }).pipe(Effect.provide(llm.layer))

const ok = <A, E>(exit: Exit.Exit<A, E>): A => {
  if (Exit.isFailure(exit)) throw new Error(`expected success, got ${Cause.pretty(exit.cause)}`)
  return exit.value
}

describe("Turn", () => {
  it("defaults: no content, no tool calls, 10 in / 5 out / $0.0001, chunks of 8", () => {
    expect(Turn()).toEqual({
      content: "",
      toolCalls: [],
      usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.0001 },
      error: undefined,
      chunkSize: 8,
      finishReason: undefined
    })
    expect(FakeLLM.defaultUsage).toEqual(Usage.make({ inputTokens: 10, outputTokens: 5, costUsd: 0.0001 }))
  })

  it("a partial usage fills the rest with zeros (not with the defaults)", () => {
    expect(Turn({ usage: { costUsd: 0.01 } }).usage).toEqual(Usage.make({ costUsd: 0.01 }))
  })
})

describe("FakeLLM.script", () => {
  it.effect("plays the turns in order, one per call", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([
        Turn({ toolCalls: [{ id: "c1", name: "lookup_order", arguments: { order_id: "A-771" } }] }),
        Turn({ content: "done" })
      ])
      const first = ok((yield* chat(llm)).exit)
      expect(first).toEqual({
        content: "",
        toolCalls: [{ id: "c1", name: "lookup_order", arguments: { order_id: "A-771" } }],
        usage: FakeLLM.defaultUsage,
        finishReason: "tool_use",
        model: "claude-sonnet-4-6",
        provider: "fake"
      })
      const second = ok((yield* chat(llm, request("again", "claude-haiku-4-5"))).exit)
      expect(second).toMatchObject({
        content: "done",
        toolCalls: [],
        finishReason: "end_turn",
        model: "claude-haiku-4-5"
      })
      expect(llm.calls).toBe(2)
    }))

  it.effect("a call past the end dies with `FakeLLM: call 3 but the script has 2 turns`", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ content: "one" }), Turn({ content: "two" })])
      yield* chat(llm)
      yield* chat(llm)
      const { exit } = yield* chat(llm)
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isSuccess(exit)) return
      expect(Cause.isDie(exit.cause)).toBe(true)
      const defect = Option.getOrThrow(Cause.dieOption(exit.cause)) as Error
      expect(defect.message).toBe("FakeLLM: call 3 but the script has 2 turns")
      // the call is still recorded
      expect(llm.calls).toBe(3)
    }))

  it.effect("an empty script dies on the first call", () =>
    Effect.gen(function*() {
      const { exit } = yield* chat(FakeLLM.script([]))
      if (Exit.isSuccess(exit)) throw new Error("expected a defect")
      expect((Option.getOrThrow(Cause.dieOption(exit.cause)) as Error).message).toBe(
        "FakeLLM: call 1 but the script has 0 turns"
      )
    }))

  it.effect("assertConsumed throws while turns are left, and not once they are all played", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ content: "one" }), Turn({ content: "two" })])
      expect(() => llm.assertConsumed()).toThrow("FakeLLM: 2 scripted turn(s) were never played (0 call(s) made)")
      yield* chat(llm)
      expect(() => llm.assertConsumed()).toThrow("FakeLLM: 1 scripted turn(s) were never played (1 call(s) made)")
      yield* chat(llm)
      expect(() => llm.assertConsumed()).not.toThrow()
      expect(() => FakeLLM.script([]).assertConsumed()).not.toThrow()
    }))

  it.effect("records every request, in order, failed calls included", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([failure(), Turn({ content: "ok" })])
      const first = request("first")
      const second = {
        ...request("second", "claude-haiku-4-5"),
        tools: [{ name: "t", description: "d", parameters: {} }],
        maxTokens: 100
      }
      yield* chat(llm, first)
      yield* chat(llm, second)
      expect(llm.requests).toEqual([first, second])
      expect(llm.calls).toBe(2)
    }))

  it.effect("failure() fails with a retryable ChatModelError before any delta", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([{ ...failure(), content: "never streamed" }])
      const { exit, deltas } = yield* chat(llm)
      expect(deltas).toEqual([])
      if (Exit.isSuccess(exit)) throw new Error("expected a failure")
      const error = Option.getOrThrow(Cause.failureOption(exit.cause))
      expect(error).toBeInstanceOf(ChatModelError)
      expect(error).toMatchObject({
        _tag: "ChatModelError",
        reason: "timeout",
        retryable: true,
        message: "temporary upstream timeout"
      })
    }))

  it.effect("failure() takes a reason, a retryable flag and a message", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([failure({ reason: "auth", retryable: false, message: "invalid x-api-key" })])
      const { exit } = yield* chat(llm)
      if (Exit.isSuccess(exit)) throw new Error("expected a failure")
      expect(Option.getOrThrow(Cause.failureOption(exit.cause))).toMatchObject({
        reason: "auth",
        retryable: false,
        message: "invalid x-api-key"
      })
    }))

  it.effect("content is streamed in chunks of 8 characters by default", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ content: "Order A-771 shipped." })])
      const { exit, deltas } = yield* chat(llm)
      expect(deltas).toEqual(["Order A-", "771 ship", "ped."])
      expect(deltas.join("")).toBe(ok(exit).content)
    }))

  it.effect("chunkSize sets the delta size; empty content emits no delta", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([
        Turn({ content: "abcdefg", chunkSize: 3 }),
        Turn({ content: "abc", chunkSize: 100 }),
        Turn({ content: "ab", chunkSize: 1 }),
        Turn({ toolCalls: [{ id: "c1", name: "x", arguments: {} }] })
      ])
      expect((yield* chat(llm)).deltas).toEqual(["abc", "def", "g"])
      expect((yield* chat(llm)).deltas).toEqual(["abc"])
      expect((yield* chat(llm)).deltas).toEqual(["a", "b"])
      expect((yield* chat(llm)).deltas).toEqual([])
    }))

  it.effect("usage and finish reason come from the turn", () =>
    Effect.gen(function*() {
      const usage = { inputTokens: 100, outputTokens: 20, costUsd: 0.01 }
      const llm = FakeLLM.script([Turn({ content: "cut", usage, finishReason: "max_tokens" })])
      const response = ok((yield* chat(llm)).exit)
      expect(response.usage).toEqual(Usage.make(usage))
      expect(response.finishReason).toBe("max_tokens")
    }))

  it.effect("ChatModel.stream over the fake yields the same chunks", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ content: "abcdefghij", chunkSize: 4 })])
      const deltas = yield* Stream.runCollect(ChatModel.stream(request())).pipe(Effect.provide(llm.layer))
      expect(Chunk.toReadonlyArray(deltas).map((delta) => delta.text)).toEqual(["abcd", "efgh", "ij"])
    }))

  it.effect("each handle is independent: two scripts never share state", () =>
    Effect.gen(function*() {
      const a = FakeLLM.script([Turn({ content: "a" })])
      const b = FakeLLM.script([Turn({ content: "b" })])
      expect(ok((yield* chat(b)).exit).content).toBe("b")
      expect(ok((yield* chat(a)).exit).content).toBe("a")
      expect([a.calls, b.calls]).toEqual([1, 1])
    }))
})

describe("FakeLLM.respond", () => {
  it.effect("answers as a function of the request and the call number (from 1)", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.respond((req, n) =>
        Turn({ content: `#${n} ${req.model}: ${req.messages.length} message(s)` })
      )
      expect(ok((yield* chat(llm)).exit).content).toBe("#1 claude-sonnet-4-6: 1 message(s)")
      expect(ok((yield* chat(llm, request("x", "claude-haiku-4-5"))).exit).content).toBe(
        "#2 claude-haiku-4-5: 1 message(s)"
      )
      expect(llm.calls).toBe(2)
      expect(llm.requests.map((req) => req.model)).toEqual(["claude-sonnet-4-6", "claude-haiku-4-5"])
      // it never runs out, so assertConsumed never throws
      expect(() => llm.assertConsumed()).not.toThrow()
    }))

  it.effect("may return an Effect of a turn; failure turns and chunking still apply", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.respond((
        _req,
        n
      ) => (n === 1 ? Effect.succeed(failure()) : Effect.succeed(Turn({ content: "recovered", chunkSize: 5 }))))
      const first = yield* chat(llm)
      expect(Exit.isFailure(first.exit)).toBe(true)
      expect(first.deltas).toEqual([])
      const second = yield* chat(llm)
      expect(second.deltas).toEqual(["recov", "ered"])
    }))
})

describe("FakeLLM features (a forced tool choice)", () => {
  const forced = (tools: ReadonlyArray<Chat.ToolSchema>): Chat.ChatRequest => ({
    ...request(),
    tools,
    toolChoice: { type: "tool", name: "structured_output" }
  })
  const output: Chat.ToolSchema = {
    name: "structured_output",
    description: "the answer",
    parameters: { type: "object" }
  }

  it.effect("declared: the request is accepted and the model's features say so", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script(
        [Turn({ toolCalls: [{ id: "o1", name: "structured_output", arguments: { n: 1 } }] })],
        {
          features: { toolChoice: true }
        }
      )
      const { exit } = yield* chat(llm, forced([output]))
      expect(ok(exit).toolCalls).toEqual([{ id: "o1", name: "structured_output", arguments: { n: 1 } }])
      const features = yield* Effect.map(ChatModel, (model) => model.features).pipe(Effect.provide(llm.layer))
      expect(features).toEqual({ toolChoice: true })
    }))

  it.effect("not declared, or naming none of the tools: the call dies, naming the misuse", () =>
    Effect.gen(function*() {
      const plain = yield* chat(FakeLLM.script([Turn()]), forced([output]))
      expect(Exit.isFailure(plain.exit) && Cause.pretty(plain.exit.cause)).toContain(
        "FakeLLM: the request forces tool 'structured_output', but this model does not declare features.toolChoice"
      )
      const missing = yield* chat(FakeLLM.script([Turn()], { features: { toolChoice: true } }), forced([]))
      expect(Exit.isFailure(missing.exit) && Cause.pretty(missing.exit.cause)).toContain(
        "FakeLLM: the request forces tool 'structured_output', which is not one of its tools"
      )
    }))
})
