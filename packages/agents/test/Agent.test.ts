/**
 * `Agent.make`, `agent.run` / `agent.stream`, and `SingleCallCognition` (spec-runtime §7.1, §7.6,
 * §7.7).
 */
import { Agent, AgentDefinitionError, AgentEvent, ReActCognition, SingleCallCognition } from "@agentkit/agents"
import { Message, Usage } from "@agentkit/core"
import { failure, FakeLLM, Fixture, makeTestCtx, Seed, Turn } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import { support } from "./fixtures.js"

const { defectOf, failureOf } = Fixture
const { ANSWER, lookupCall, lookupOrder, MODEL, PROMPT, STATUS, TASK } = Seed

const collect = (stream: Stream.Stream<AgentEvent.AgentEvent, unknown, never>) =>
  Effect.map(Stream.runCollect(stream), Chunk.toReadonlyArray)

describe("Agent.make", () => {
  it("keeps the settings; the default cognition is SingleCallCognition", () => {
    const agent = Agent.make({ name: "summarizer", model: MODEL, prompt: "Summarize." })
    expect(agent.name).toBe("summarizer")
    expect(agent.model).toBe(MODEL)
    expect(agent.prompt).toBe("Summarize.")
    expect(agent.maxTokens).toBeUndefined()
    expect(agent.temperature).toBeUndefined()
    expect(agent.cognition).toBe(SingleCallCognition.make())
    expect(agent.cognition.name).toBe("single_call")
    expect(agent.cognition.tools.names()).toEqual([])
    expect(Object.isFrozen(agent)).toBe(true)
    expect(Agent.make({ name: "a", model: MODEL }).prompt).toBe("")
  })

  it("a bad name throws AgentDefinitionError synchronously", () => {
    for (const name of ["", "has space", "dots.not.allowed", "x".repeat(65), 7 as never, undefined as never]) {
      expect(() => Agent.make({ name, model: MODEL })).toThrow(AgentDefinitionError)
    }
    expect(() => Agent.make({ name: "has space", model: MODEL })).toThrow(
      "Agent.make: name \"has space\" must match ^[a-zA-Z0-9_-]{1,64}$"
    )
    expect(Agent.make({ name: "x".repeat(64), model: MODEL }).name).toHaveLength(64)
  })

  it("an empty or missing model throws AgentDefinitionError synchronously", () => {
    expect(() => Agent.make({ name: "support", model: "" })).toThrow(AgentDefinitionError)
    expect(() => Agent.make({ name: "support", model: "" })).toThrow(
      `Agent 'support': model must be a non-empty string (e.g. "claude-sonnet-4-6")`
    )
    expect(() => Agent.make({ name: "support" } as never)).toThrow(AgentDefinitionError)
  })

  it("bad maxTokens, temperature or prompt throw AgentDefinitionError", () => {
    expect(() => Agent.make({ name: "a", model: MODEL, maxTokens: 0 })).toThrow(AgentDefinitionError)
    expect(() => Agent.make({ name: "a", model: MODEL, maxTokens: 1.5 })).toThrow(AgentDefinitionError)
    expect(() => Agent.make({ name: "a", model: MODEL, temperature: -0.1 })).toThrow(AgentDefinitionError)
    expect(() => Agent.make({ name: "a", model: MODEL, temperature: Number.NaN })).toThrow(AgentDefinitionError)
    expect(() => Agent.make({ name: "a", model: MODEL, prompt: 42 as never })).toThrow(AgentDefinitionError)
    expect(() => Agent.make(null as never)).toThrow(AgentDefinitionError)
  })

  it("AgentDefinitionError is a tagged error with the message", () => {
    try {
      Agent.make({ name: "", model: MODEL })
      expect.unreachable()
    } catch (error) {
      expect(error).toBeInstanceOf(AgentDefinitionError)
      expect((error as AgentDefinitionError)._tag).toBe("AgentDefinitionError")
      expect((error as AgentDefinitionError).message).toBe("Agent.make: name \"\" must match ^[a-zA-Z0-9_-]{1,64}$")
    }
  })

  it("an agent is pipeable", () => {
    const agent = Agent.make({ name: "a", model: MODEL })
    expect(agent.pipe((self) => self.name)).toBe("a")
  })
})

describe("SingleCallCognition", () => {
  it.effect("one model call with no tools; the answer is the output", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ content: "A one-sentence summary." })])
      const agent = Agent.make({ name: "summarizer", model: MODEL, prompt: "Summarize in one sentence." })
      const result = yield* agent.run("a long text").pipe(Effect.provide(makeTestCtx({ llm })))
      expect(result).toEqual({
        output: "A one-sentence summary.",
        usage: Usage.make({ inputTokens: 10, outputTokens: 5, costUsd: 0.0001 }),
        ownUsage: Usage.make({ inputTokens: 10, outputTokens: 5, costUsd: 0.0001 }),
        partial: false,
        stopReason: "end_turn",
        transcript: [
          Message.system("Summarize in one sentence."),
          Message.user("a long text"),
          Message.assistant("A one-sentence summary.")
        ]
      })
      expect(llm.calls).toBe(1)
      expect(llm.requests[0]).toEqual({
        model: MODEL,
        messages: [Message.system("Summarize in one sentence."), Message.user("a long text")],
        tools: []
      })
    }))

  it.effect("sends no tools even when the model asks for one; the tool call is not run", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ content: "let me check", toolCalls: [lookupCall()] })])
      const agent = Agent.make({
        name: "single",
        model: MODEL,
        cognition: SingleCallCognition.make(),
        maxTokens: 100,
        temperature: 0.5
      })
      const result = yield* agent.run(TASK).pipe(Effect.provide(makeTestCtx({ llm })))
      expect(llm.requests[0]!.tools).toEqual([])
      expect(llm.requests[0]).toMatchObject({ maxTokens: 100, temperature: 0.5 })
      expect(result.output).toBe("let me check")
      expect(result.stopReason).toBe("end_turn")
      expect(llm.calls).toBe(1)
    }))

  it.effect("a conversation as input", () =>
    Effect.gen(function*() {
      const conversation = [Message.user("hi"), Message.assistant("hello"), Message.user("summarize our chat")]
      const llm = FakeLLM.script([Turn({ content: "We greeted each other." })])
      const agent = Agent.make({ name: "single", model: MODEL, prompt: PROMPT })
      yield* agent.run(conversation).pipe(Effect.provide(makeTestCtx({ llm })))
      expect(llm.requests[0]!.messages).toEqual([Message.system(PROMPT), ...conversation])
    }))

  it.effect("a model failure ends the run with the ChatModelError", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([failure({ reason: "auth", retryable: false, message: "invalid x-api-key" })])
      const agent = Agent.make({ name: "single", model: MODEL })
      const exit = yield* agent.run(TASK).pipe(Effect.provide(makeTestCtx({ llm })), Effect.exit)
      expect(failureOf(exit)).toMatchObject({ _tag: "ChatModelError", reason: "auth", message: "invalid x-api-key" })
    }))
})

describe("ReActCognition: model failures", () => {
  it.effect("a provider error from the chat pipeline ends the run (no retry without middleware)", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ toolCalls: [lookupCall()] }), failure()])
      const exit = yield* support.run(TASK).pipe(Effect.provide(makeTestCtx({ llm })), Effect.exit)
      expect(failureOf(exit)).toMatchObject({ _tag: "ChatModelError", reason: "timeout", retryable: true })
      expect(llm.calls).toBe(2)
    }))
})

describe("agent.stream", () => {
  it.effect("[tool turn with no text, then the answer] → ToolCall, ToolResult, Step, MessageDelta…, Final", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ toolCalls: [lookupCall()] }), Turn({ content: ANSWER })])
      const events = yield* collect(support.stream(TASK).pipe(Stream.provideLayer(makeTestCtx({ llm }))))
      const tags = events.map((event) => event._tag)
      // ANSWER is 53 characters: 7 deltas of at most 8 characters
      expect(tags).toEqual(["ToolCall", "ToolResult", "Step", ...Array(7).fill("MessageDelta"), "Final"])
      expect(events[0]).toEqual(AgentEvent.ToolCall({ call: lookupCall() }))
      expect(events[1]).toEqual(AgentEvent.ToolResult({ call: lookupCall(), content: STATUS, isError: false }))
      expect(events[2]).toEqual(AgentEvent.Step({ iteration: 1 }))
      const deltas = events.filter(AgentEvent.$is("MessageDelta"))
      expect(deltas.map((delta) => delta.text).join("")).toBe(ANSWER)
      expect(deltas.every((delta) => delta.text.length <= 8)).toBe(true)
      const final = events.at(-1)!
      if (!AgentEvent.$is("Final")(final)) throw new Error("the last event must be Final")
      expect(final.result.output).toBe(ANSWER)
      expect(final.result.usage.inputTokens).toBe(20)
    }))

  it.effect("spec §7.3 exact order for a short answer: [ToolCall, ToolResult, Step, MessageDelta, Final]", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ toolCalls: [lookupCall()] }), Turn({ content: "done" })])
      const events = yield* collect(support.stream(TASK).pipe(Stream.provideLayer(makeTestCtx({ llm }))))
      expect(events.map((event) => event._tag)).toEqual(["ToolCall", "ToolResult", "Step", "MessageDelta", "Final"])
    }))

  it.effect("every ToolCall of a turn comes before any ToolResult; results in call order; one Step per round", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([
        Turn({ content: "checking", toolCalls: [lookupCall("c1", "A-1"), lookupCall("c2", "A-2")] }),
        Turn({ toolCalls: [lookupCall("c3", "A-3")] }),
        Turn({ content: "ok" })
      ])
      const agent = Agent.make({
        name: "support",
        model: MODEL,
        cognition: ReActCognition.make({ tools: [lookupOrder] })
      })
      const events = yield* collect(agent.stream(TASK).pipe(Stream.provideLayer(makeTestCtx({ llm }))))
      const summary = events.map((event) =>
        AgentEvent.$match(event, {
          MessageDelta: ({ text }) => `delta:${text}`,
          ToolCall: ({ call }) => `call:${call.id}`,
          ToolResult: ({ call }) => `result:${call.id}`,
          Step: ({ iteration }) => `step:${iteration}`,
          Interrupt: () => "interrupt",
          Final: ({ result }) => `final:${result.output}`
        })
      )
      expect(summary).toEqual([
        "delta:checking",
        "call:c1",
        "call:c2",
        "result:c1",
        "result:c2",
        "step:1",
        "call:c3",
        "result:c3",
        "step:2",
        "delta:ok",
        "final:ok"
      ])
    }))

  it.effect("a reflected tool error is a ToolResult with isError", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([
        Turn({ toolCalls: [{ id: "c1", name: "ghost", arguments: {} }] }),
        Turn({ content: "ok" })
      ])
      const events = yield* collect(support.stream(TASK).pipe(Stream.provideLayer(makeTestCtx({ llm }))))
      const result = events.find(AgentEvent.$is("ToolResult"))!
      expect(result.isError).toBe(true)
      expect(result.content).toBe("ERROR: no tool named 'ghost'. Available tools: cancel_order, lookup_order.")
    }))

  it.effect("a run's typed failure fails the stream after the events so far, with no Final", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ toolCalls: [lookupCall()] }), failure({ message: "upstream gone" })])
      const seen: Array<string> = []
      const exit = yield* support.stream(TASK).pipe(
        Stream.provideLayer(makeTestCtx({ llm })),
        Stream.runForEach((event) => Effect.sync(() => seen.push(event._tag))),
        Effect.exit
      )
      expect(failureOf(exit)).toMatchObject({ _tag: "ChatModelError", message: "upstream gone" })
      expect(seen).toEqual(["ToolCall", "ToolResult", "Step"])
    }))

  it.effect("a defect ends the stream with the defect (it does not hang)", () =>
    Effect.gen(function*() {
      // the script has no turns: the first model call dies
      const llm = FakeLLM.script([])
      const exit = yield* collect(support.stream(TASK).pipe(Stream.provideLayer(makeTestCtx({ llm })))).pipe(
        Effect.exit
      )
      expect(String((defectOf(exit) as Error).message)).toBe("FakeLLM: call 1 but the script has 0 turns")
    }))

  it.effect("run and stream({ transcript: true }) give the same result", () =>
    Effect.gen(function*() {
      const viaRun = yield* support.run(TASK).pipe(
        Effect.provide(
          makeTestCtx({ llm: FakeLLM.script([Turn({ toolCalls: [lookupCall()] }), Turn({ content: ANSWER })]) })
        )
      )
      const events = yield* collect(
        support.stream(TASK, { transcript: true }).pipe(
          Stream.provideLayer(
            makeTestCtx({ llm: FakeLLM.script([Turn({ toolCalls: [lookupCall()] }), Turn({ content: ANSWER })]) })
          )
        )
      )
      const final = events.at(-1)!
      if (!AgentEvent.$is("Final")(final)) throw new Error("the last event must be Final")
      expect(final.result).toEqual(viaRun)
    }))

  it.effect("SingleCallCognition streams its deltas, then Final", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ content: "abcdefghij", chunkSize: 4 })])
      const agent = Agent.make({ name: "single", model: MODEL })
      const events = yield* collect(agent.stream("x").pipe(Stream.provideLayer(makeTestCtx({ llm }))))
      expect(events.map((event) => (AgentEvent.$is("MessageDelta")(event) ? event.text : event._tag))).toEqual([
        "abcd",
        "efgh",
        "ij",
        "Final"
      ])
    }))
})
