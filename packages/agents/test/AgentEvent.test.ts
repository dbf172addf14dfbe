/**
 * The events' types narrow with the agent's output (`$is` in `if`, `find`, `filter` and
 * `Stream.filter`), and the `Final` event carries the transcript only when asked.
 */
import { Agent, AgentEvent, ReActCognition } from "@agentkit/agents"
import type { AgentResult } from "@agentkit/agents"
import { FakeLLM, makeTestCtx, Seed, Turn } from "@agentkit/testing"
import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import { Chunk, Effect, Option, Schema, Stream } from "effect"

const { ANSWER, cancelOrder, lookupCall, lookupOrder, MODEL, PROMPT, STATUS, TASK } = Seed

const Verdict = Schema.Struct({ status: Schema.Literal("shipped", "lost"), days: Schema.Int })
type Verdict = typeof Verdict.Type

const typed = Agent.make({
  name: "support",
  model: MODEL,
  prompt: PROMPT,
  output: Verdict,
  cognition: ReActCognition.make({ tools: [lookupOrder, cancelOrder] })
})
const plain = Agent.make({
  name: "support",
  model: MODEL,
  prompt: PROMPT,
  cognition: ReActCognition.make({ tools: [lookupOrder, cancelOrder] })
})

const VALID = "{\"status\":\"shipped\",\"days\":3}"
const script = (answer: string) => FakeLLM.script([Turn({ toolCalls: [lookupCall()] }), Turn({ content: answer })])

describe("AgentEvent.$is narrows with the agent's output type", () => {
  it("in find, filter and if: Final's result.parsed is the output's Type; other tags keep their fields", () => {
    type Event = AgentEvent.AgentEvent<Verdict>
    const events: ReadonlyArray<Event> = [
      AgentEvent.ToolCall({ call: lookupCall() }),
      AgentEvent.Step({ iteration: 1 })
    ]
    const final = events.find(AgentEvent.$is("Final"))
    expectTypeOf(final).toEqualTypeOf<
      { readonly _tag: "Final"; readonly result: AgentResult.Summary<Verdict> } | undefined
    >()
    expectTypeOf<NonNullable<typeof final>["result"]["parsed"]>().toEqualTypeOf<Verdict | undefined>()
    expect(final).toBeUndefined()
    const calls = events.filter(AgentEvent.$is("ToolCall"))
    expect(calls.map((event) => event.call.name)).toEqual(["lookup_order"])
    const event = events[1]!
    if (AgentEvent.$is("Interrupt")(event)) expectTypeOf(event.digest).toEqualTypeOf<string>()
    if (AgentEvent.$is("Final")(event)) {
      expectTypeOf(event.result.parsed).toEqualTypeOf<Verdict | undefined>()
      // a Final without the transcript has none to read
      expectTypeOf(event.result).not.toHaveProperty("transcript")
    }
    // a tag that is not an event's is refused
    // @ts-expect-error: "Done" is not a tag of AgentEvent
    AgentEvent.$is("Done")
  })

  it("in Stream.filter: the stream's elements narrow, and transcript: true types the whole result", () => {
    const finals = typed.stream(TASK).pipe(Stream.filter(AgentEvent.$is("Final")))
    expectTypeOf<Stream.Stream.Success<typeof finals>>().toEqualTypeOf<
      { readonly _tag: "Final"; readonly result: AgentResult.Summary<Verdict> }
    >()
    const _parsed = finals.pipe(Stream.map((event) => event.result.parsed))
    expectTypeOf<Stream.Stream.Success<typeof _parsed>>().toEqualTypeOf<Verdict | undefined>()
    const _whole = typed.stream(TASK, { transcript: true }).pipe(Stream.filter(AgentEvent.$is("Final")))
    expectTypeOf<Stream.Stream.Success<typeof _whole>>().toEqualTypeOf<
      { readonly _tag: "Final"; readonly result: AgentResult.AgentResult<Verdict> }
    >()
    // an agent without output: parsed is never there
    const _untyped = plain.stream(TASK).pipe(Stream.filter(AgentEvent.$is("Final")))
    expectTypeOf<Stream.Stream.Success<typeof _untyped>["result"]["parsed"]>().toEqualTypeOf<undefined>()
    // a boolean not known to be true types the result without the transcript
    const _maybe = typed.stream(TASK, { transcript: Math.random() > 2 })
    expectTypeOf<Stream.Stream.Success<typeof _maybe>>().toEqualTypeOf<AgentEvent.AgentEvent<Verdict>>()
  })

  it.effect("at run time, Stream.filter($is) keeps exactly the events of that tag", () =>
    Effect.gen(function*() {
      const llm = script(VALID)
      const finals = yield* typed.stream(TASK).pipe(
        Stream.filter(AgentEvent.$is("Final")),
        Stream.runCollect,
        Effect.provide(makeTestCtx({ llm }))
      )
      expect(Chunk.size(finals)).toBe(1)
      expect(Option.getOrThrow(Chunk.head(finals)).result.parsed).toEqual({ status: "shipped", days: 3 })
      expect(AgentEvent.$is("Step")(AgentEvent.Step({ iteration: 1 }))).toBe(true)
      expect(AgentEvent.$is("Final")(AgentEvent.Step({ iteration: 1 }))).toBe(false)
    }))
})

describe("the Final event", () => {
  it.effect("carries the result without the transcript by default; the rest is the run's result", () =>
    Effect.gen(function*() {
      const ctx = makeTestCtx({ llm: script(ANSWER) })
      const events = Chunk.toReadonlyArray(yield* plain.stream(TASK).pipe(Stream.runCollect, Effect.provide(ctx)))
      const final = events.find(AgentEvent.$is("Final"))!
      expect("transcript" in final.result).toBe(false)
      expect(final.result).toEqual({
        output: ANSWER,
        usage: expect.objectContaining({ inputTokens: 20, outputTokens: 10 }),
        ownUsage: expect.objectContaining({ inputTokens: 20, outputTokens: 10 }),
        partial: false,
        stopReason: "end_turn"
      })
      // the same run by `run` has the transcript, and otherwise the same fields
      const result = yield* plain.run(TASK).pipe(Effect.provide(makeTestCtx({ llm: script(ANSWER) })))
      const { transcript, ...rest } = result
      expect(transcript.length).toBe(5)
      expect(rest).toEqual(final.result)
    }))

  it.effect("with { transcript: true } carries the whole conversation, tool result included", () =>
    Effect.gen(function*() {
      const ctx = makeTestCtx({ llm: script(ANSWER) })
      const events = yield* plain.stream(TASK, { transcript: true }).pipe(Stream.runCollect, Effect.provide(ctx))
      const final = Chunk.toReadonlyArray(events).find(AgentEvent.$is("Final"))!
      expect(final.result.transcript.map((message) => message.role)).toEqual([
        "system",
        "user",
        "assistant",
        "tool",
        "assistant"
      ])
      expect(final.result.transcript[3]!.content).toBe(STATUS)
      expect(final.result.output).toBe(ANSWER)
    }))
})

describe("AgentEvent.$is on any value", () => {
  it("narrows an unknown value to the event of that tag; a value that is not an event is not one", () => {
    const fromWire: unknown = JSON.parse("{\"_tag\":\"Step\",\"iteration\":2}")
    if (!AgentEvent.$is("Step")(fromWire)) throw new Error("a Step from the wire is a Step")
    expectTypeOf(fromWire.iteration).toEqualTypeOf<number>()
    expect(fromWire.iteration).toBe(2)
    expect([null, undefined, "Step", 1, {}, { _tag: "Final" }].map(AgentEvent.$is("Step"))).toEqual([
      false,
      false,
      false,
      false,
      false,
      false
    ])
  })
})
