/**
 * Termination conditions (issue 15; spec-runtime §7.2, §7.3 step 4 and the §9 `test_agent_loop`
 * items): evaluated on every model turn before its tools run; `functionCall` stops without
 * running the call (1 model call, 0 tool runs), `textMention`, `maxTokens`, `maxTurns`, `or`,
 * `and`, each with a stable stop reason; counters per run (never shared by concurrent runs of one
 * cognition), saved in the run state, so a resumed run goes on counting.
 */
import { Agent, AgentDefinitionError, AgentEvent, ReActCognition, Termination } from "@agentkit/agents"
import { CheckpointStore, Usage } from "@agentkit/core"
import type { Autonomy } from "@agentkit/core"
import { FakeLLM, makeTestCtx, Seed, Turn } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Exit, FastCheck as fc, Layer, Option, Schema, Stream } from "effect"
import { approveAll, call, recordOf } from "./fixtures.js"

const { lookupCall, MODEL, PROMPT, TASK } = Seed

/** Tools that count their runs. */
const world = () => {
  const ran = { lookup: 0, cancel: 0, submit: 0 }
  const lookupOrder = Tool.make("lookup_order", {
    description: "Look up an order by its id and return its status line.",
    parameters: { order_id: Schema.String },
    sideEffecting: false,
    handler: ({ order_id }) => {
      ran.lookup++
      return `order ${order_id}: shipped`
    }
  })
  const cancelOrder = Tool.make("cancel_order", {
    description: "Cancel an order. This really cancels it; there is no undo.",
    parameters: { order_id: Schema.String },
    sideEffecting: true,
    handler: ({ order_id }) => {
      ran.cancel++
      return `order ${order_id} cancelled`
    }
  })
  const submitAnswer = Tool.make("submit_answer", {
    description: "Submit the final answer; the run ends when this is called.",
    parameters: { answer: Schema.String },
    sideEffecting: true,
    handler: () => {
      ran.submit++
      return "submitted"
    }
  })
  const agent = (termination: Termination.Termination, maxIterations = 8) =>
    Agent.make({
      name: "support",
      model: MODEL,
      prompt: PROMPT,
      cognition: ReActCognition.make({ tools: [lookupOrder, cancelOrder, submitAnswer], termination, maxIterations })
    })
  return { ran, agent }
}

const submitCall = (id = "s1") => call(id, "submit_answer", { answer: "shipped" })
const turnUsage = { inputTokens: 10, outputTokens: 5 }

describe("termination in the ReAct loop", () => {
  it.effect("functionCall: stops on the call without running it (1 model call, 0 tool runs, no ToolCall event)", () =>
    Effect.gen(function*() {
      const { agent, ran } = world()
      const llm = FakeLLM.script([Turn({ toolCalls: [lookupCall("c1"), submitCall()] })])
      const events = yield* agent(Termination.functionCall("submit_answer"))
        .stream(TASK, { transcript: true })
        .pipe(Stream.runCollect, Effect.provide(makeTestCtx({ llm })))
      const list = Chunk.toReadonlyArray(events)
      expect(list.map((event) => event._tag)).toEqual(["Final"])
      const final = list[0]!
      if (!AgentEvent.$is("Final")(final)) throw new Error("no Final")
      expect([final.result.stopReason, final.result.partial]).toEqual(["function_call", false])
      expect(llm.calls).toBe(1)
      expect(ran).toEqual({ lookup: 0, cancel: 0, submit: 0 })
      // the turn is the last message: its arguments are there for the caller
      expect(final.result.transcript.at(-1)).toEqual({
        role: "assistant",
        content: "",
        toolCalls: [lookupCall("c1"), submitCall()]
      })
    }))

  it.effect("functionCall: other calls run as usual until the named one comes", () =>
    Effect.gen(function*() {
      const { agent, ran } = world()
      const llm = FakeLLM.script([Turn({ toolCalls: [lookupCall()] }), Turn({ toolCalls: [submitCall()] })])
      const result = yield* agent(Termination.functionCall("submit_answer")).run(TASK).pipe(
        Effect.provide(makeTestCtx({ llm }))
      )
      expect(result.stopReason).toBe("function_call")
      expect([llm.calls, ran.lookup, ran.submit]).toEqual([2, 1, 0])
    }))

  it.effect("textMention: stops on a turn whose text has it, even one with tool calls (they do not run)", () =>
    Effect.gen(function*() {
      const { agent, ran } = world()
      const llm = FakeLLM.script([
        Turn({ content: "working", toolCalls: [lookupCall("c1")] }),
        Turn({ content: "All DONE.", toolCalls: [lookupCall("c2")] })
      ])
      const result = yield* agent(Termination.textMention("DONE")).run(TASK).pipe(Effect.provide(makeTestCtx({ llm })))
      expect([result.stopReason, result.partial, result.output]).toEqual(["text_mention", false, "All DONE."])
      expect([llm.calls, ran.lookup]).toEqual([2, 1])
    }))

  it.effect("textMention is case-sensitive; a final answer without it ends as usual", () =>
    Effect.gen(function*() {
      const { agent } = world()
      const llm = FakeLLM.script([Turn({ content: "all done" })])
      const result = yield* agent(Termination.textMention("DONE")).run(TASK).pipe(Effect.provide(makeTestCtx({ llm })))
      expect(result.stopReason).toBe("end_turn")
    }))

  it.effect("maxTokens: stops once the turns have used the ceiling (15 a turn, ceiling 40 → the third turn)", () =>
    Effect.gen(function*() {
      const { agent, ran } = world()
      const llm = FakeLLM.respond((_, n) => Turn({ toolCalls: [lookupCall(`c${n}`)], usage: turnUsage }))
      const result = yield* agent(Termination.maxTokens(40)).run(TASK).pipe(Effect.provide(makeTestCtx({ llm })))
      expect([result.stopReason, result.partial]).toEqual(["token_limit", false])
      expect([llm.calls, ran.lookup]).toEqual([3, 2])
      expect(Usage.totalTokens(result.usage)).toBe(45)
    }))

  it.effect("maxTurns: stops at the n-th turn before its tools", () =>
    Effect.gen(function*() {
      const { agent, ran } = world()
      const llm = FakeLLM.respond((_, n) => Turn({ toolCalls: [lookupCall(`c${n}`)] }))
      const result = yield* agent(Termination.maxTurns(3)).run(TASK).pipe(Effect.provide(makeTestCtx({ llm })))
      expect(result.stopReason).toBe("max_turns")
      expect([llm.calls, ran.lookup]).toEqual([3, 2])
    }))

  it.effect("or: the reason of the condition that holds; and: both, in any order across turns", () =>
    Effect.gen(function*() {
      const { agent, ran } = world()
      const either = Termination.functionCall("submit_answer").pipe(Termination.or(Termination.maxTurns(5)))
      const llm1 = FakeLLM.script([Turn({ toolCalls: [lookupCall()] }), Turn({ toolCalls: [submitCall()] })])
      expect((yield* agent(either).run(TASK).pipe(Effect.provide(makeTestCtx({ llm: llm1 })))).stopReason).toBe(
        "function_call"
      )
      const llm2 = FakeLLM.respond((_, n) => Turn({ toolCalls: [lookupCall(`c${n}`)] }))
      expect((yield* agent(either).run(TASK).pipe(Effect.provide(makeTestCtx({ llm: llm2 })))).stopReason).toBe(
        "max_turns"
      )
      expect(llm2.calls).toBe(5)

      ran.lookup = 0
      const both = Termination.and(Termination.textMention("DONE"), Termination.functionCall("submit_answer"))
      const llm3 = FakeLLM.script([
        Turn({ toolCalls: [submitCall("s0")] }), // the call alone does not stop it: it runs
        Turn({ content: "DONE", toolCalls: [lookupCall("c2")] }), // both have now held: stop (text_mention completed it)
        Turn({ content: "never asked" })
      ])
      const result = yield* agent(both).run(TASK).pipe(Effect.provide(makeTestCtx({ llm: llm3 })))
      expect([result.stopReason, llm3.calls, ran.submit, ran.lookup]).toEqual(["text_mention", 2, 1, 0])
    }))

  it.effect("two concurrent runs of one cognition never share counters; the condition value is unchanged", () =>
    Effect.gen(function*() {
      const { agent, ran } = world()
      const stop = Termination.maxTurns(3)
      const shared = agent(stop)
      const llm = FakeLLM.respond((_, n) => Turn({ toolCalls: [lookupCall(`c${n}`)] }))
      const results = yield* Effect.all(
        [1, 2].map((i) => shared.run(TASK).pipe(Effect.provide(makeTestCtx({ llm, runId: `r${i}` })))),
        { concurrency: "unbounded" }
      )
      expect(results.map((result) => result.stopReason)).toEqual(["max_turns", "max_turns"])
      expect([llm.calls, ran.lookup]).toEqual([6, 4])
      expect(Termination.describe(stop)).toBe("max_turns(3)")
    }))

  it("definition errors: a functionCall of a tool the cognition does not have, bad arguments, not a condition", () => {
    expect(() => ReActCognition.make({ tools: [Seed.lookupOrder], termination: Termination.functionCall("submit") }))
      .toThrow(
        new AgentDefinitionError({
          message:
            "ReActCognition: termination stops on a call of 'submit', which is not one of its tools (lookup_order)"
        })
      )
    expect(() =>
      ReActCognition.make({ tools: [Seed.lookupOrder], termination: { _tag: "MaxTurns", turns: 1 } as never })
    ).toThrow(
      /termination must be a Termination condition/
    )
    expect(() => Termination.maxTurns(0)).toThrow(/maxTurns: expected a positive integer; got 0/)
    expect(() => Termination.maxTokens(1.5)).toThrow(/maxTokens: expected a positive integer; got 1.5/)
    expect(() => Termination.textMention("")).toThrow(/textMention: expected a non-empty string/)
    expect(() => Termination.functionCall("no spaces")).toThrow(/functionCall: expected a tool name/)
    expect(() => Termination.or(Termination.maxTurns(1), "x" as never)).toThrow(
      /Termination.or: expected termination conditions/
    )
  })
})

describe("termination state in the run state", () => {
  const layerOf = (store: CheckpointStore.Service, llm: FakeLLM.FakeLLM, autonomy: Autonomy = "gated") =>
    Layer.mergeAll(makeTestCtx({ llm, autonomy }), CheckpointStore.layer(store))

  it.effect("a resumed run keeps its counters: maxTurns(3), two turns before the suspension, one after", () =>
    Effect.gen(function*() {
      const { agent, ran } = world()
      const stop = Termination.maxTurns(3)
      const store = CheckpointStore.makeMemory()
      const before = FakeLLM.script([
        Turn({ toolCalls: [lookupCall("c1")] }),
        Turn({ toolCalls: [call("c2", "cancel_order", { order_id: "A-771" })] })
      ])
      const suspended = yield* agent(stop).run(TASK).pipe(Effect.provide(layerOf(store, before)))
      expect(suspended.stopReason).toBe("awaiting_approval")
      const { state } = yield* recordOf(store)
      expect(state.cognitionState).toEqual({ termination: { version: 1, condition: "max_turns(3)", slots: [2] } })

      // after the resume the approved call runs, and the third turn stops the run before its tools
      const after = FakeLLM.script([Turn({ toolCalls: [lookupCall("c3")] })])
      const result = yield* agent(stop).resume("test-run", approveAll(suspended.suspended!.pending)).pipe(
        Effect.provide(layerOf(store, after))
      )
      expect(result.stopReason).toBe("max_turns")
      expect([after.calls, ran.lookup, ran.cancel]).toEqual([1, 1, 1])
    }))

  it.effect("a saved termination state that does not decode is RunStateCorrupt; nothing runs, the record is untouched", () =>
    Effect.gen(function*() {
      const { agent, ran } = world()
      const inner = CheckpointStore.makeMemory()
      const before = FakeLLM.script([Turn({ toolCalls: [call("c1", "cancel_order", { order_id: "A-771" })] })])
      const suspended = yield* agent(Termination.maxTurns(3)).run(TASK).pipe(Effect.provide(layerOf(inner, before)))
      const original = yield* recordOf(inner)
      // a store that hands out the record with a tampered cognition state
      const tamper = (record: CheckpointStore.RunRecord): CheckpointStore.RunRecord => ({
        ...record,
        state: JSON.stringify({
          ...JSON.parse(record.state),
          cognitionState: { termination: { version: 1, condition: "max_turns(3)", slots: [-5] } }
        })
      })
      const tampered: CheckpointStore.MemoryStore = Object.assign(Object.create(inner) as CheckpointStore.MemoryStore, {
        load: (runId: string) => Effect.map(inner.load(runId), Option.map(tamper)),
        claim: (runId: string, request: Parameters<CheckpointStore.Service["claim"]>[1]) =>
          Effect.map(inner.claim(runId, request), (claimed) => ({ ...claimed, record: tamper(claimed.record) }))
      })
      const after = FakeLLM.script([])
      const exit = yield* Effect.exit(
        agent(Termination.maxTurns(3)).resume("test-run", approveAll(suspended.suspended!.pending)).pipe(
          Effect.provide(layerOf(tampered, after))
        )
      )
      expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error._tag : "none").toBe(
        "RunStateCorrupt"
      )
      expect([after.calls, ran.cancel]).toEqual([0, 0])
      const now = yield* recordOf(inner)
      expect([now.status, now.record.state]).toEqual(["suspended", original.record.state])
    }))
})

describe("Termination.evaluate", () => {
  const turn = (fields: Partial<Termination.Turn> = {}): Termination.Turn => ({
    content: "",
    toolCalls: [],
    usage: Usage.zero,
    ...fields
  })

  it("is pure: the given state is not changed; counters advance in the returned one", () => {
    const stop = Termination.maxTurns(2)
    const start = Termination.initial(stop)
    const first = Termination.evaluate(stop, start, turn())
    expect(start.slots).toEqual([0])
    expect(first).toEqual({ state: { version: 1, condition: "max_turns(2)", slots: [1] }, stop: undefined })
    expect(Termination.evaluate(stop, first.state, turn()).stop).toBe("max_turns")
  })

  it("a state of another condition starts over from initial (a changed cognition never misreads old slots)", () => {
    const stop = Termination.maxTurns(2)
    const foreign = { version: 1 as const, condition: "max_tokens(5)", slots: [999] }
    expect(Termination.evaluate(stop, foreign, turn()).state).toEqual({
      version: 1,
      condition: "max_turns(2)",
      slots: [1]
    })
  })

  it("or evaluates every branch (no short cut): the counters of both go on", () => {
    const stop = Termination.or(Termination.textMention("DONE"), Termination.maxTurns(3))
    const once = Termination.evaluate(stop, Termination.initial(stop), turn({ content: "DONE" }))
    expect(once).toEqual({
      state: { version: 1, condition: "or(text_mention(\"DONE\"), max_turns(3))", slots: [1, 1, 1] },
      stop: "text_mention"
    })
  })

  it("describe is stable text; or/and flatten", () => {
    const nested = Termination.or(
      Termination.or(Termination.functionCall("a"), Termination.maxTokens(9)),
      Termination.maxTurns(2)
    )
    expect(Termination.describe(nested)).toBe("or(function_call(\"a\"), max_tokens(9), max_turns(2))")
    expect(Termination.functionNames(nested)).toEqual(["a"])
  })
})

describe("Termination.evaluate (property)", () => {
  const arbitraryTurn = fc.record({
    mention: fc.boolean(),
    call: fc.boolean(),
    tokens: fc.integer({ min: 0, max: 30 })
  })
  const asTurn = (t: { mention: boolean; call: boolean; tokens: number }): Termination.Turn => ({
    content: t.mention ? "DONE" : "working",
    toolCalls: t.call ? [{ id: "x", name: "submit", arguments: {} }] : [],
    usage: Usage.make({ inputTokens: t.tokens })
  })
  const leaves = [
    Termination.textMention("DONE"),
    Termination.functionCall("submit"),
    Termination.maxTurns(3),
    Termination.maxTokens(40)
  ]
  /** The index of the first turn at which a condition stops, or undefined. */
  const firstStop = (condition: Termination.Termination, turns: ReadonlyArray<Termination.Turn>) => {
    let state = Termination.initial(condition)
    for (let i = 0; i < turns.length; i++) {
      const next = Termination.evaluate(condition, state, turns[i]!)
      if (next.stop !== undefined) return i
      state = next.state
    }
    return undefined
  }

  it("or stops at the earliest of its parts; and at the latest (once each has held)", () => {
    fc.assert(
      fc.property(
        fc.array(arbitraryTurn, { maxLength: 8 }).map((ts) => ts.map(asTurn)),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 0, max: 3 }),
        (turns, i, j) => {
          const a = leaves[i]!
          const b = leaves[j]!
          const sa = firstStop(a, turns)
          const sb = firstStop(b, turns)
          const earliest = sa === undefined ? sb : sb === undefined ? sa : Math.min(sa, sb)
          const latest = sa === undefined || sb === undefined ? undefined : Math.max(sa, sb)
          expect(firstStop(Termination.or(a, b), turns)).toBe(earliest)
          expect(firstStop(Termination.and(a, b), turns)).toBe(latest)
        }
      )
    )
  })

  it("a run split anywhere (saved, encoded, decoded, resumed) stops where an unbroken run does", () => {
    const decode = Schema.decodeUnknownSync(Termination.State)
    fc.assert(
      fc.property(
        fc.array(arbitraryTurn, { minLength: 1, maxLength: 8 }).map((ts) => ts.map(asTurn)),
        fc.nat(8),
        (turns, split) => {
          const condition = Termination.or(Termination.and(leaves[0]!, leaves[1]!), Termination.maxTokens(60))
          let state = Termination.initial(condition)
          let stoppedAt: number | undefined
          for (let i = 0; i < turns.length && stoppedAt === undefined; i++) {
            if (i === split) state = decode(JSON.parse(JSON.stringify(state)))
            const next = Termination.evaluate(condition, state, turns[i]!)
            state = next.state
            if (next.stop !== undefined) stoppedAt = i
          }
          expect(stoppedAt).toBe(firstStop(condition, turns))
        }
      )
    )
  })
})
