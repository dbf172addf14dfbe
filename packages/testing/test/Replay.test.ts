/**
 * `Recorder` and `Replay` through the Invoker's two pipelines: a run is recorded (redacted),
 * written and read back, then replayed offline to the same answers; a run that asks something
 * else stops with `ReplayDivergence` naming the turn and the first difference.
 */
import { ChatModelError, Invoker, Message, RecordedFailure } from "@agentkit/core"
import type { Chat, ToolCall } from "@agentkit/core"
import { FakeLLM, FakeTool, Fixture, makeTestCtx, Recorder, Recording, Replay, Seed, Turn } from "@agentkit/testing"
import type { ToolRegistry } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123"

/** A two-turn loop over the Invoker: ask, run the tool calls, ask again with their results. */
const converse = (prompt: string, tools: ReadonlyArray<ToolRegistry.AnyTool>) =>
  Effect.gen(function*() {
    const invoker = yield* Invoker
    const messages: Array<Message.Message> = [Message.system(prompt), Message.user(Seed.TASK)]
    const request = (): Chat.ChatRequest => ({
      model: Seed.MODEL,
      messages: [...messages],
      tools: tools.map((tool) => tool.schema)
    })
    const deltas: Array<string> = []
    const first = yield* invoker.chat(request(), { emit: (delta) => void deltas.push(delta.text) })
    messages.push(Message.assistant(first.content, first.toolCalls))
    for (const call of first.toolCalls) {
      const tool = tools.find((t) => t.name === call.name)!
      const outcome = yield* Effect.either(invoker.tool(call, tool))
      messages.push(
        Message.toolResult({
          toolCallId: call.id,
          name: call.name,
          content: outcome._tag === "Right" ? outcome.right.text : (outcome.left as RecordedFailure).message,
          isError: outcome._tag === "Left"
        })
      )
    }
    const second = yield* invoker.chat(request())
    return { answer: second.content, deltas, messages }
  })

const lookupWithToken: ToolCall.ToolCall = {
  id: "c1",
  name: "lookup_order",
  arguments: { order_id: "A-771", token: TOKEN }
}

const script = () =>
  FakeLLM.script([
    Turn({ content: "Let me look.", toolCalls: [lookupWithToken], chunkSize: 4 }),
    Turn({ content: Seed.ANSWER })
  ])

const lookup = FakeTool.make("lookup_order", { responses: [`${Seed.STATUS} (served with ${TOKEN})`] })

const record = (prompt = Seed.PROMPT) =>
  Effect.gen(function*() {
    const recorder = Recorder.make({ secrets: ["tenant-secret-77"] })
    const result = yield* converse(prompt, [lookup]).pipe(
      Effect.provide(
        makeTestCtx({ llm: script(), chatMiddleware: [recorder.middleware], toolMiddleware: [recorder.middleware] })
      )
    )
    return { recorder, result }
  })

const replaying = (recording: Recording.Recording, prompt = Seed.PROMPT, options?: Replay.Options) =>
  Effect.gen(function*() {
    const replay = Replay.make(recording, options)
    const exit = yield* Effect.exit(
      Replay.orDivergence(
        converse(prompt, [lookup]).pipe(
          Effect.provide(makeTestCtx({ llm: replay.llm, toolMiddleware: [replay.toolMiddleware] }))
        )
      )
    )
    return { replay, exit }
  })

describe("Recorder", () => {
  it.effect("records each model turn (request, deltas, response) and each tool result, by turn, redacted", () =>
    Effect.gen(function*() {
      const { recorder } = yield* record()
      const { exchanges } = recorder.recording()
      expect(exchanges.map((exchange) => `${exchange._tag}:${exchange.turn}`)).toEqual(["Chat:1", "Tool:1", "Chat:2"])
      const [first, tool, second] = exchanges as [
        Recording.ChatExchange,
        Recording.ToolExchange,
        Recording.ChatExchange
      ]
      expect(first.deltas).toEqual(["Let ", "me l", "ook."])
      expect(first.request.messages).toEqual([Message.system(Seed.PROMPT), Message.user(Seed.TASK)])
      expect(first.response?.toolCalls).toEqual([
        { id: "c1", name: "lookup_order", arguments: { order_id: "A-771", token: "[redacted]" } }
      ])
      expect(tool).toMatchObject({
        callId: "c1",
        name: "lookup_order",
        arguments: { order_id: "A-771", token: "[redacted]" },
        text: `${Seed.STATUS} (served with [redacted])`,
        isError: false
      })
      expect(second.response?.content).toBe(Seed.ANSWER)
      expect(JSON.stringify(recorder.recording())).not.toContain(TOKEN)
    }))

  it.effect("records a provider error (its text redacted) and a tool failure as the model saw it", () =>
    Effect.gen(function*() {
      const recorder = Recorder.make({ secrets: ["tenant-secret-77"] })
      const failing = FakeTool.make("lookup_order", {
        responses: () => Effect.fail(new ChatModelError({ reason: "server", retryable: false, message: "x" }))
      })
      const llm = FakeLLM.script([
        Turn({ toolCalls: [Seed.lookupCall()] }),
        {
          ...Turn(),
          error: new ChatModelError({
            reason: "auth",
            retryable: false,
            message: "401: key tenant-secret-77 is revoked",
            status: 401
          })
        }
      ])
      const exit = yield* Effect.exit(
        converse(Seed.PROMPT, [failing]).pipe(
          Effect.provide(makeTestCtx({ llm, chatMiddleware: [recorder.chat], toolMiddleware: [recorder.tool] }))
        )
      )
      expect(Exit.isFailure(exit)).toBe(true)
      const [, tool, second] = recorder.recording().exchanges as [
        Recording.ChatExchange,
        Recording.ToolExchange,
        Recording.ChatExchange
      ]
      expect(tool.isError).toBe(true)
      expect(tool.text).toBe("ERROR: tool 'lookup_order' failed: ChatModelError: x")
      expect(second.error).toEqual({
        reason: "auth",
        retryable: false,
        message: "401: key [redacted] is revoked",
        status: 401
      })
    }))

  it.effect("writes a file that reads back to the same recording; a bad file is a RecordingError naming the field", () =>
    Effect.gen(function*() {
      const { recorder } = yield* record()
      const dir = mkdtempSync(join(tmpdir(), "agentkit-recording-"))
      const path = join(dir, "nested", "run.recording.json")
      yield* recorder.write(path)
      expect(readFileSync(path, "utf8")).toBe(Recording.toText(recorder.recording()))
      expect(yield* Recording.read(path)).toEqual(recorder.recording())

      writeFileSync(join(dir, "bad.json"), JSON.stringify({ format: Recording.FORMAT, exchanges: [{ _tag: "Chat" }] }))
      const bad = yield* Effect.flip(Recording.read(join(dir, "bad.json")))
      expect(bad._tag).toBe("RecordingError")
      expect(bad.message).toContain("is not an agentkit.recording/1 file")
      expect(bad.message).toContain("turn")
      const missing = yield* Effect.flip(Recording.read(join(dir, "missing.json")))
      expect(missing.message).toContain("cannot read")
    }))
})

describe("Replay", () => {
  it.effect("replays a recording offline to the same answers, deltas and transcript, and uses it up", () =>
    Effect.gen(function*() {
      const { recorder, result } = yield* record()
      const calls = lookup.calls.length
      const { exit, replay } = yield* replaying(recorder.recording())
      expect(exit).toEqual(Exit.succeed({ ...result, messages: result.messages.map(redactedArgs) }))
      expect(lookup.calls.length).toBe(calls) // the tool did not run again
      expect(replay.llm.calls).toBe(2)
      replay.assertConsumed()
    }))

  it.effect("replay.tool: a double of the real tool answers from the recording, by call id, with no middleware", () =>
    Effect.gen(function*() {
      const { recorder, result } = yield* record()
      const calls = lookup.calls.length
      const replay = Replay.make(recorder.recording())
      const double = replay.tool(lookup)
      expect([double.name, double.schema, double.sideEffecting]).toEqual([
        lookup.name,
        lookup.schema,
        lookup.sideEffecting
      ])
      const replayed = yield* converse(Seed.PROMPT, [double]).pipe(Effect.provide(makeTestCtx({ llm: replay.llm })))
      expect(replayed).toEqual({ ...result, messages: result.messages.map(redactedArgs) })
      expect(lookup.calls.length).toBe(calls)
      replay.assertConsumed()

      const other = Replay.make(recorder.recording()).tool(FakeTool.make("search"))
      const diverged = yield* Effect.flip(
        Replay.orDivergence(
          Effect.flatMap(Invoker, (invoker) => invoker.tool({ id: "c1", name: "search", arguments: {} }, other)).pipe(
            Effect.provide(makeTestCtx({ llm: FakeLLM.script([]) }))
          )
        )
      )
      expect(diverged).toMatchObject({
        exchange: "tool call",
        path: "name",
        expected: "\"lookup_order\"",
        actual: "\"search\""
      })
    }))

  it.effect("a replayed tool call still goes through the Invoker: the budget counts it and refuses one too many", () =>
    Effect.gen(function*() {
      const { recorder } = yield* record()
      const replay = Replay.make(recorder.recording())
      const refused = yield* Effect.flip(
        Replay.orDivergence(
          converse(Seed.PROMPT, [lookup]).pipe(
            Effect.provide(
              makeTestCtx({ llm: replay.llm, toolMiddleware: [replay.toolMiddleware], budget: { maxToolCalls: 0 } })
            )
          )
        )
      )
      // the refusal is what the model is shown next, so the replay stops there
      expect(refused).toMatchObject({ turn: 2, path: "messages[3].content", actual: "\"tool calls 1 > 0\"" })
    }))

  it.effect("a changed prompt fails at turn 1, naming the field and both texts", () =>
    Effect.gen(function*() {
      const { recorder } = yield* record()
      const { exit } = yield* replaying(recorder.recording(), "Answer order questions briefly.")
      const error = Fixture.failureOf(exit)
      expect(error).toBeInstanceOf(Replay.ReplayDivergence)
      expect(error).toMatchObject({ turn: 1, exchange: "model request", path: "messages[0].content" })
      expect(error.message).toBe(
        "replay diverged at turn 1 (model request): messages[0].content: the recording has \"Answer order questions. Use the tools; never guess a status.\", the run has \"Answer order questions briefly.\""
      )
    }))

  it.effect("a changed tool result (real tools) fails at the turn that first reads it", () =>
    Effect.gen(function*() {
      const { recorder } = yield* record()
      const { exit } = yield* replaying(recorder.recording(), Seed.PROMPT, { tools: "real" })
      // the real fake tool answers its last scripted response again: the same text, so the replay holds
      expect(Exit.isSuccess(exit)).toBe(true)
      const other = FakeTool.make("lookup_order", { responses: ["order A-771: lost"] })
      const replay = Replay.make(recorder.recording(), { tools: "real" })
      const diverged = yield* Effect.flip(
        Replay.orDivergence(
          converse(Seed.PROMPT, [other]).pipe(
            Effect.provide(makeTestCtx({ llm: replay.llm, toolMiddleware: [replay.toolMiddleware] }))
          )
        )
      )
      expect(other.calls).toEqual([{ order_id: "A-771", token: "[redacted]" }])
      expect(diverged).toMatchObject({ turn: 2, exchange: "model request", path: "messages[3].content" })
    }))

  it.effect("a tool call with other arguments, or one not recorded, fails naming it", () =>
    Effect.gen(function*() {
      const { recorder } = yield* record()
      const recording = recorder.recording()
      const edited: Recording.Recording = {
        ...recording,
        exchanges: recording.exchanges.map((exchange) =>
          exchange._tag === "Tool" ? { ...exchange, arguments: { order_id: "B-102", token: "[redacted]" } } : exchange
        )
      }
      const { exit } = yield* replaying(edited)
      expect(Fixture.failureOf(exit)).toMatchObject({
        turn: 1,
        exchange: "tool call",
        path: "arguments.order_id",
        expected: "\"B-102\"",
        actual: "\"A-771\""
      })
      const withoutTool: Recording.Recording = {
        ...recording,
        exchanges: recording.exchanges.filter((exchange) => exchange._tag !== "Tool")
      }
      const missing = Fixture.failureOf((yield* replaying(withoutTool)).exit)
      expect(missing.message).toBe(
        "replay diverged at turn 1 (tool call): call 'c1': the recording has no such call, the run has lookup_order {\"order_id\":\"A-771\",\"token\":\"[redacted]\"}"
      )
    }))

  it.effect("one model turn more than recorded fails naming the turn; a turn never asked for fails assertConsumed", () =>
    Effect.gen(function*() {
      const { recorder } = yield* record()
      const recording = recorder.recording()
      const short: Recording.Recording = { ...recording, exchanges: recording.exchanges.slice(0, 2) }
      const { exit } = yield* replaying(short)
      expect(Fixture.failureOf(exit).message).toBe(
        "replay diverged at turn 2 (model request): (the whole request): the recording has no model turn 2 (it has 1), the run has another model request"
      )
      const replay = Replay.make(recording)
      expect(() => replay.assertConsumed()).toThrow("Replay: the recording's model turn 1 was never asked for")
    }))

  it.effect("replays a provider error as the same ChatModelError, and a tool failure as the text the model saw", () =>
    Effect.gen(function*() {
      const recording: Recording.Recording = {
        format: Recording.FORMAT,
        exchanges: [
          {
            _tag: "Chat",
            turn: 1,
            request: { model: "m", messages: [Message.user("hi")], tools: [] },
            deltas: [],
            error: { reason: "overloaded", retryable: true, message: "529 overloaded" }
          },
          {
            _tag: "Tool",
            turn: 1,
            callId: "c1",
            name: "lookup_order",
            arguments: { order_id: "A-771" },
            text: "ERROR: tool 'lookup_order' failed: OrderNotFound: no order",
            isError: true
          }
        ]
      }
      const replay = Replay.make(recording)
      const program = Effect.gen(function*() {
        const invoker = yield* Invoker
        const chat = yield* Effect.flip(invoker.chat(Fixture.request("m", "hi")))
        const tool = yield* Effect.flip(invoker.tool(Seed.lookupCall(), Seed.lookupOrder))
        return { chat, tool }
      })
      const { chat, tool } = yield* program.pipe(
        Effect.provide(makeTestCtx({ llm: replay.llm, toolMiddleware: [replay.toolMiddleware] }))
      )
      expect(chat).toBeInstanceOf(ChatModelError)
      expect(chat).toMatchObject({ reason: "overloaded", retryable: true, message: "529 overloaded" })
      expect(tool).toBeInstanceOf(RecordedFailure)
      expect(tool.message).toBe("ERROR: tool 'lookup_order' failed: OrderNotFound: no order")
      replay.assertConsumed()
    }))
})

/** The transcript a replay sees: the recorded (redacted) tool-call arguments and tool results. */
const redactedArgs = (message: Message.Message): Message.Message =>
  message.role === "assistant"
    ? Message.assistant(
      message.content,
      message.toolCalls.map((call) => ({ ...call, arguments: { ...call.arguments, token: "[redacted]" } }))
    )
    : message.role === "tool"
    ? { ...message, content: message.content.replace(TOKEN, "[redacted]") }
    : message
