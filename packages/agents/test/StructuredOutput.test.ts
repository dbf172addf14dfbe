/**
 * Structured output (issue 15; spec-runtime §7.1, §7.3 step 6, §7.7): `Agent.make({ output,
 * maxRepairs })`, the schema block and the parse in a ReAct loop (one repair), the forced output
 * tool in a single call (`maxRepairs` repairs), `invalid_output` with the decode error, the output
 * tool outside every tool rule, hostile answers (never valid, smuggled fields, huge), a recorded
 * result that keeps `parsed`.
 */
import { Agent, AgentDefinitionError, AgentEvent, Approval, ReActCognition, StructuredOutput } from "@agentkit/agents"
import { Budget, CheckpointStore, FAILURE_TEXT_MAX_BYTES, Utf8 } from "@agentkit/core"
import type { Chat } from "@agentkit/core"
import { FakeLLM, makeTestCtx, Seed, Turn } from "@agentkit/testing"
import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import { Chunk, Effect, Either, Exit, Layer, Schema, Stream } from "effect"

const { cancelOrder, lookupCall, lookupOrder, MODEL, PROMPT, TASK } = Seed

const Verdict = Schema.Struct({
  status: Schema.Literal("shipped", "lost", "cancelled"),
  days: Schema.Int,
  note: Schema.optional(Schema.String)
})
type Verdict = typeof Verdict.Type

const VALID = "{\"status\":\"shipped\",\"days\":3}"
const SCHEMA_TEXT =
  "Respond with only JSON that matches this JSON Schema (no prose, no code fences):\n{\"type\":\"object\",\"properties\":{\"status\":{\"enum\":[\"shipped\",\"lost\",\"cancelled\"],\"type\":\"string\"},\"days\":{\"type\":\"integer\"},\"note\":{\"type\":\"string\"}},\"required\":[\"status\",\"days\"]}"

const reactAgent = (extra: { readonly maxIterations?: number } = {}) =>
  Agent.make({
    name: "support",
    model: MODEL,
    prompt: PROMPT,
    output: Verdict,
    cognition: ReActCognition.make({ tools: [lookupOrder, cancelOrder], maxIterations: extra.maxIterations })
  })

const singleAgent = (maxRepairs?: number) =>
  Agent.make({ name: "triage", model: MODEL, prompt: PROMPT, output: Verdict, maxRepairs })

/** A forced call of the output tool with `input`. */
const outputCall = (input: unknown, id = "o1") => ({
  id,
  name: StructuredOutput.toolName,
  arguments: input as Record<string, unknown>
})

const forcing = { features: { toolChoice: true } } as const

describe("Agent.make({ output })", () => {
  it("result.parsed is the schema's Type, typed end to end (run, stream, resume)", () => {
    const agent = reactAgent()
    expectTypeOf(agent).toEqualTypeOf<Agent.Agent<never, Verdict>>()
    type Result = Effect.Effect.Success<ReturnType<typeof agent.run>>
    expectTypeOf<Result["parsed"]>().toEqualTypeOf<Verdict | undefined>()
    expectTypeOf<Effect.Effect.Success<ReturnType<typeof agent.resume>>["parsed"]>().toEqualTypeOf<
      Verdict | undefined
    >()
    type Event = Stream.Stream.Success<ReturnType<typeof agent.stream>>
    expectTypeOf<Extract<Event, { _tag: "Final" }>["result"]["parsed"]>().toEqualTypeOf<Verdict | undefined>()
    // a transforming schema: parsed is the decoded side, not the JSON the model writes
    const Dated = Schema.Struct({ at: Schema.NumberFromString })
    const dated = Agent.make({ name: "dated", model: MODEL, output: Dated })
    expectTypeOf<Effect.Effect.Success<ReturnType<typeof dated.run>>["parsed"]>().toEqualTypeOf<
      { readonly at: number } | undefined
    >()
    // no output: parsed is never there
    const plain = Agent.make({ name: "plain", model: MODEL })
    expectTypeOf<Effect.Effect.Success<ReturnType<typeof plain.run>>["parsed"]>().toEqualTypeOf<undefined>()
    expect([dated.output?.maxRepairs, plain.output]).toEqual([1, undefined])
  })

  it("definition errors name the problem: maxRepairs without output, negative or fractional, ≠ 1 on ReAct, a schema without JSON", () => {
    const cognition = ReActCognition.make({ tools: [lookupOrder] })
    expect(() => Agent.make({ name: "a", model: MODEL, maxRepairs: 2 })).toThrow(
      new AgentDefinitionError({
        message: "Agent 'a': maxRepairs applies only with `output` (a structured output schema)"
      })
    )
    expect(() => Agent.make({ name: "a", model: MODEL, output: Verdict, maxRepairs: -1 })).toThrow(
      "Agent 'a': structured output: maxRepairs must be a non-negative integer; got -1"
    )
    expect(() => Agent.make({ name: "a", model: MODEL, output: Verdict, maxRepairs: 1.5 })).toThrow(
      /non-negative integer; got 1.5/
    )
    expect(() => Agent.make({ name: "a", model: MODEL, output: Verdict, maxRepairs: 3, cognition })).toThrow(
      "Agent 'a': ReActCognition repairs an answer that does not decode once; maxRepairs 3 applies only to SingleCallCognition"
    )
    expect(() => Agent.make({ name: "a", model: MODEL, output: Schema.Struct({ at: Schema.DateFromSelf }) })).toThrow(
      /Agent 'a': structured output: cannot derive a JSON Schema for 'at'/
    )
    expect(() => Agent.make({ name: "a", model: MODEL, output: { not: "a schema" } as never })).toThrow(
      /must be an Effect Schema/
    )
    expect(Agent.make({ name: "a", model: MODEL, output: Verdict, maxRepairs: 0 }).output?.maxRepairs).toBe(0)
    expect(Agent.make({ name: "a", model: MODEL, output: Verdict, maxRepairs: 1, cognition }).output?.maxRepairs).toBe(
      1
    )
  })
})

describe("ReActCognition with output: the schema block and a parse", () => {
  it.effect("the model is told the shape by a schema block after the prompt; a valid answer is parsed", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([
        Turn({ toolCalls: [lookupCall()] }),
        Turn({ content: "```json\n" + VALID + "\n```" })
      ])
      const result = yield* reactAgent().run(TASK).pipe(Effect.provide(makeTestCtx({ llm })))
      expect(result.parsed).toEqual({ status: "shipped", days: 3 })
      expect([result.partial, result.stopReason, result.error]).toEqual([false, "end_turn", undefined])
      const first = llm.requests[0]!
      expect(first.messages.slice(0, 3)).toEqual([
        { role: "system", content: PROMPT },
        { role: "system", content: SCHEMA_TEXT },
        { role: "user", content: TASK }
      ])
      // ReAct never forces a tool: its real tools stay callable
      expect(first.toolChoice).toBeUndefined()
      expect(first.tools.map((tool) => tool.name)).toEqual(["cancel_order", "lookup_order"])
      // the block's bytes are the same in every request of the run
      expect(llm.requests[1]!.messages[1]).toEqual(first.messages[1])
    }))

  it.effect("a tool-call turn is never parsed (the Python hazard): the loop goes on to the answer", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([
        Turn({ content: "Let me check.", toolCalls: [lookupCall()] }),
        Turn({ content: VALID })
      ])
      const result = yield* reactAgent().run(TASK).pipe(Effect.provide(makeTestCtx({ llm })))
      expect(result.parsed).toEqual({ status: "shipped", days: 3 })
      expect(llm.calls).toBe(2)
    }))

  it.effect("repair then success: one repair with the spec's text, a Step { repair } event, 2 model calls, usage of both", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ content: "{\"status\":\"delayed\",\"days\":3}" }), Turn({ content: VALID })])
      const events = yield* reactAgent().stream(TASK).pipe(Stream.runCollect, Effect.provide(makeTestCtx({ llm })))
      const list = Chunk.toReadonlyArray(events)
      const final = list.at(-1)
      if (final === undefined || !AgentEvent.$is("Final")(final)) throw new Error("no Final event")
      expect(final.result.parsed).toEqual({ status: "shipped", days: 3 })
      expect(final.result.partial).toBe(false)
      expect(final.result.usage.inputTokens).toBe(20)
      expect(list.filter(AgentEvent.$is("Step"))).toEqual([AgentEvent.Step({ iteration: 1, repair: true })])
      expect(llm.calls).toBe(2)
      const repair = llm.requests[1]!.messages.slice(-2)
      expect(repair).toEqual([
        { role: "assistant", content: "{\"status\":\"delayed\",\"days\":3}", toolCalls: [] },
        {
          role: "user",
          content:
            // Effect's ArrayFormatter: one issue per member of the literal union
            "Your previous response was invalid (status: Expected \"shipped\", actual \"delayed\"; status: Expected \"lost\", actual \"delayed\"; status: Expected \"cancelled\", actual \"delayed\"). Return only output matching the required format."
        }
      ])
    }))

  it.effect("a model that never answers validly: exactly one repair, then partial invalid_output with the decode error", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.respond(() => Turn({ content: "I think it shipped." }))
      const result = yield* reactAgent().run(TASK).pipe(Effect.provide(makeTestCtx({ llm })))
      expect(llm.calls).toBe(2)
      expect(result.partial).toBe(true)
      expect(result.stopReason).toBe("invalid_output")
      expect(result.parsed).toBeUndefined()
      expect(result.output).toBe("I think it shipped.")
      expect(result.error).toMatch(/^\(root\): Unexpected token 'I', "I think it shipped\." is not valid JSON/)
    }))

  it.effect("a repair consumes an iteration: with maxIterations 1 the loop ends max_iterations after the repair is asked", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.respond(() => Turn({ content: "{}" }))
      const result = yield* reactAgent({ maxIterations: 1 }).run(TASK).pipe(Effect.provide(makeTestCtx({ llm })))
      expect(llm.calls).toBe(1)
      expect([result.partial, result.stopReason]).toEqual([true, "max_iterations"])
    }))

  it.effect("smuggled fields never reach parsed, the prototype is untouched, the text stays what the model said", () =>
    Effect.gen(function*() {
      const hostile =
        "{\"status\":\"lost\",\"days\":1,\"admin\":true,\"__proto__\":{\"polluted\":\"yes\"},\"constructor\":{\"prototype\":{\"polluted\":\"yes\"}}}"
      const llm = FakeLLM.script([Turn({ content: hostile })])
      const result = yield* reactAgent().run(TASK).pipe(Effect.provide(makeTestCtx({ llm })))
      expect(result.parsed).toStrictEqual({ status: "lost", days: 1 })
      expect(Object.keys(result.parsed!)).toEqual(["status", "days"])
      expect(Object.getPrototypeOf(result.parsed)).toBe(Object.prototype)
      expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
      expect(result.output).toBe(hostile)
    }))

  it.effect(
    "a huge answer: a 4 MB valid answer decodes; a 4 MB invalid one gets a capped error in the repair and on the result",
    () =>
      Effect.gen(function*() {
        const note = "n".repeat(4_000_000)
        const big = FakeLLM.script([Turn({ content: JSON.stringify({ status: "shipped", days: 2, note }) })])
        const ok = yield* reactAgent().run(TASK).pipe(Effect.provide(makeTestCtx({ llm: big })))
        expect(ok.parsed?.note?.length).toBe(4_000_000)

        // 5,000 wrong items in a 1 MB answer: issues past 20 are counted, the text cut at 8 KiB
        const items = Array.from({ length: 5_000 }, (_, i) => i)
        const many = Schema.Struct({ ids: Schema.Array(Schema.String) })
        const agent = Agent.make({
          name: "ids",
          model: MODEL,
          output: many,
          cognition: ReActCognition.make({ tools: [lookupOrder] })
        })
        const llm = FakeLLM.respond(() => Turn({ content: JSON.stringify({ ids: items }) + " ".repeat(1_000_000) }))
        const bad = yield* agent.run(TASK).pipe(Effect.provide(makeTestCtx({ llm })))
        expect(bad.stopReason).toBe("invalid_output")
        expect(Utf8.byteLength(bad.error!)).toBeLessThanOrEqual(FAILURE_TEXT_MAX_BYTES + 64)
        expect(bad.error).toMatch(/^ids\.0: Expected string, actual 0; ids\.1: Expected string, actual 1; /)
        expect(bad.error).toMatch(/and 4980 more issues$/)
        const repair = llm.requests[1]!.messages.at(-1)!.content
        expect(Utf8.byteLength(repair)).toBeLessThan(FAILURE_TEXT_MAX_BYTES + 200)

        // one gigantic wrong value: the text is cut with the marker
        const huge = FakeLLM.respond(() =>
          Turn({ content: JSON.stringify({ status: "x".repeat(1_000_000), days: 1 }) })
        )
        const cut = yield* reactAgent().run(TASK).pipe(Effect.provide(makeTestCtx({ llm: huge })))
        expect(Utf8.byteLength(cut.error!)).toBeLessThanOrEqual(FAILURE_TEXT_MAX_BYTES + 64)
        expect(cut.error).toMatch(/…\[truncated \d+ bytes\]$/)
      }),
    60_000
  )

  it.effect("a recorded result keeps parsed: a second drive of the finished run returns it decoded again, no model call", () =>
    Effect.gen(function*() {
      const Dated = Schema.Struct({ at: Schema.NumberFromString, status: Schema.String })
      const agent = Agent.make({
        name: "dated",
        model: MODEL,
        output: Dated,
        cognition: ReActCognition.make({ tools: [lookupOrder] })
      })
      const store = CheckpointStore.makeMemory()
      const first = FakeLLM.script([Turn({ content: "{\"at\":\"42\",\"status\":\"shipped\",\"extra\":1}" })])
      const layer = (llm: FakeLLM.FakeLLM) => Layer.mergeAll(makeTestCtx({ llm }), CheckpointStore.layer(store))
      const result = yield* agent.run(TASK).pipe(Effect.provide(layer(first)))
      expect(result.parsed).toEqual({ at: 42, status: "shipped" })
      const record = yield* store.load("test-run")
      if (record._tag === "None") throw new Error("no record")
      // stored encoded (the JSON the schema encodes to), without the smuggled field
      expect(JSON.parse(record.value.result!).parsed).toEqual({ at: "42", status: "shipped" })
      const second = FakeLLM.script([])
      const again = yield* agent.run(TASK).pipe(Effect.provide(layer(second)))
      expect(again.parsed).toEqual({ at: 42, status: "shipped" })
      expect(second.calls).toBe(0)
    }))

  it.effect("the one repair is part of the run state: a resumed run that already repaired ends invalid_output at the next bad answer", () =>
    Effect.gen(function*() {
      const store = CheckpointStore.makeMemory()
      const layer = (llm: FakeLLM.FakeLLM) =>
        Layer.mergeAll(makeTestCtx({ llm, autonomy: "gated" }), CheckpointStore.layer(store))
      const cancel = { id: "c2", name: "cancel_order", arguments: { order_id: "A-771" } }
      const before = FakeLLM.script([Turn({ content: "not json" }), Turn({ toolCalls: [cancel] })])
      const suspended = yield* reactAgent().run(TASK).pipe(Effect.provide(layer(before)))
      expect(suspended.stopReason).toBe("awaiting_approval")
      const record = yield* store.load("test-run")
      if (record._tag === "None") throw new Error("no record")
      expect(JSON.parse(record.value.state).cognitionState).toEqual({ output: { version: 1, repairs: 1 } })
      const decisions = Approval.decideEach(suspended.suspended!.pending, (entry) => Approval.approve(entry.digest))
      const after = FakeLLM.script([Turn({ content: "still not json" })])
      const result = yield* reactAgent().resume("test-run", decisions).pipe(Effect.provide(layer(after)))
      expect([result.stopReason, result.partial, after.calls]).toEqual(["invalid_output", true, 1])
    }))

  it.effect("an invalid_output run under a store records its error; a tampered recorded parsed is RunStateCorrupt", () =>
    Effect.gen(function*() {
      const store = CheckpointStore.makeMemory()
      const layer = (llm: FakeLLM.FakeLLM, runId: string) =>
        Layer.mergeAll(makeTestCtx({ llm, runId }), CheckpointStore.layer(store))
      const bad = yield* reactAgent()
        .run(TASK)
        .pipe(Effect.provide(layer(FakeLLM.respond(() => Turn({ content: "{}" })), "r-bad")))
      expect(bad.stopReason).toBe("invalid_output")
      const again = yield* reactAgent().run(TASK).pipe(Effect.provide(layer(FakeLLM.script([]), "r-bad")))
      expect([again.stopReason, again.error, again.partial]).toEqual(["invalid_output", bad.error, true])

      // another agent (another schema) reading a recorded result whose parsed does not decode with its schema
      yield* reactAgent().run(TASK).pipe(Effect.provide(layer(FakeLLM.script([Turn({ content: VALID })]), "r-ok")))
      const Other = Schema.Struct({ verdict: Schema.Boolean })
      const other = Agent.make({
        name: "support",
        model: MODEL,
        output: Other,
        cognition: ReActCognition.make({ tools: [lookupOrder] })
      })
      const exit = yield* Effect.exit(other.run(TASK).pipe(Effect.provide(layer(FakeLLM.script([]), "r-ok"))))
      expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error._tag).toBe("RunStateCorrupt")
    }))
})

describe("SingleCallCognition with output", () => {
  it.effect("a provider with a native JSON-schema format: one request with responseFormat, its text is parsed", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ content: VALID })], {
        features: { toolChoice: true, responseFormat: true }
      })
      const result = yield* singleAgent().run(TASK).pipe(Effect.provide(makeTestCtx({ llm })))
      expect(result.parsed).toEqual({ status: "shipped", days: 3 })
      const request = llm.requests[0]!
      expect(request.responseFormat).toEqual({
        type: "json_schema",
        name: "structured_output",
        schema: JSON.parse(SCHEMA_TEXT.slice(SCHEMA_TEXT.indexOf("\n") + 1))
      })
      // the native format wins over a forced tool, and needs no schema block
      expect([request.toolChoice, request.tools]).toEqual([undefined, []])
      expect(request.messages).toEqual([
        { role: "system", content: PROMPT },
        { role: "user", content: TASK }
      ])
    }))

  it.effect("a non-object output is not asked for natively: the forced tool wraps it", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script(
        [Turn({ toolCalls: [{ id: "o1", name: "structured_output", arguments: { value: ["a", "b"] } }] })],
        { features: { toolChoice: true, responseFormat: true } }
      )
      const agent = Agent.make({ name: "lister", model: MODEL, output: Schema.Array(Schema.String) })
      const result = yield* agent.run(TASK).pipe(Effect.provide(makeTestCtx({ llm })))
      expect(result.parsed).toEqual(["a", "b"])
      expect(llm.requests[0]!.responseFormat).toBeUndefined()
    }))

  it.effect("a provider with a forced tool choice: one request forcing structured_output, its input is parsed", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ toolCalls: [outputCall({ status: "shipped", days: 3 })] })], forcing)
      const result = yield* singleAgent().run(TASK).pipe(Effect.provide(makeTestCtx({ llm })))
      expect(result.parsed).toEqual({ status: "shipped", days: 3 })
      expect([result.output, result.stopReason, result.partial]).toEqual([VALID, "end_turn", false])
      const request = llm.requests[0]!
      expect(request.toolChoice).toEqual({ type: "tool", name: "structured_output" })
      expect(request.tools).toEqual([
        {
          name: "structured_output",
          description: "Return the final answer as structured data: call this tool once, with the answer as its input.",
          parameters: JSON.parse(SCHEMA_TEXT.slice(SCHEMA_TEXT.indexOf("\n") + 1))
        }
      ])
      // no schema block when the tool carries the shape
      expect(request.messages).toEqual([
        { role: "system", content: PROMPT },
        { role: "user", content: TASK }
      ])
      // the answer is the assistant's text, not a tool call waiting for a result
      expect(result.transcript.at(-1)).toEqual({ role: "assistant", content: VALID, toolCalls: [] })
    }))

  it.effect("the output tool is never gated, never counted in maxToolCalls, never a ToolCall event", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ toolCalls: [outputCall({ status: "lost", days: 0 })] })], forcing)
      const budget = Budget.unsafeMake({ maxToolCalls: 0 })
      const events = yield* singleAgent()
        .stream(TASK)
        .pipe(Stream.runCollect, Effect.provide(makeTestCtx({ llm, budget, autonomy: "manual" })))
      const tags = Chunk.toReadonlyArray(events).map((event) => event._tag)
      expect(tags).toEqual(["Final"])
      const final = Chunk.unsafeLast(events)
      expect(AgentEvent.$is("Final")(final) && final.result.parsed).toEqual({ status: "lost", days: 0 })
      expect([budget.toolCalls, budget.modelCalls]).toEqual([0, 1])
    }))

  it.effect("a non-object output is wrapped as { value } in the tool and unwrapped in parsed", () =>
    Effect.gen(function*() {
      const Steps = Schema.Array(Schema.String)
      const agent = Agent.make({ name: "steps", model: MODEL, output: Steps })
      const llm = FakeLLM.script([Turn({ toolCalls: [outputCall({ value: ["a", "b"] })] })], forcing)
      const result = yield* agent.run(TASK).pipe(Effect.provide(makeTestCtx({ llm })))
      expect(result.parsed).toEqual(["a", "b"])
      expect(result.output).toBe("[\"a\",\"b\"]")
      expect(llm.requests[0]!.tools[0]!.parameters).toEqual({
        type: "object",
        properties: { value: { type: "array", items: { type: "string" } } },
        required: ["value"]
      })
    }))

  it.effect("forced: repair then success, the single call's text (ONLY), the forced tool on every attempt", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script(
        [
          Turn({ toolCalls: [outputCall({ status: "shipped" })] }),
          Turn({ toolCalls: [outputCall({ status: "shipped", days: 4 })] })
        ],
        forcing
      )
      const result = yield* singleAgent().run(TASK).pipe(Effect.provide(makeTestCtx({ llm })))
      expect(result.parsed).toEqual({ status: "shipped", days: 4 })
      expect(result.usage.inputTokens).toBe(20)
      expect(llm.requests.map((request) => request.toolChoice?.name)).toEqual([
        "structured_output",
        "structured_output"
      ])
      expect(llm.requests[1]!.messages.slice(-2)).toEqual([
        { role: "assistant", content: "{\"status\":\"shipped\"}", toolCalls: [] },
        {
          role: "user",
          content:
            "Your previous response was invalid (days: is missing). Return ONLY output matching the required format."
        }
      ])
    }))

  it.effect("forced, but the model answered in text: that is a failed answer, repaired", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([
        Turn({ content: VALID }),
        Turn({ toolCalls: [outputCall({ status: "shipped", days: 3 })] })
      ], forcing)
      const result = yield* singleAgent().run(TASK).pipe(Effect.provide(makeTestCtx({ llm })))
      expect(result.parsed).toEqual({ status: "shipped", days: 3 })
      expect(llm.requests[1]!.messages.at(-1)!.content).toBe(
        "Your previous response was invalid (expected a call of the output tool 'structured_output'; the reply had none). Return ONLY output matching the required format."
      )
    }))

  it.effect("forced, but the model called another tool with no text: the repair shows the model what it answered", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([
        Turn({ toolCalls: [{ id: "x1", name: "lookup_order", arguments: { order_id: "A-1" } }] }),
        Turn({ toolCalls: [outputCall({ status: "shipped", days: 3 })] })
      ], forcing)
      const result = yield* singleAgent().run(TASK).pipe(Effect.provide(makeTestCtx({ llm })))
      expect(result.parsed).toEqual({ status: "shipped", days: 3 })
      const repair = llm.requests[1]!.messages
      const answered = repair.at(-2)!
      expect(answered.role).toBe("assistant")
      expect(answered.content).toContain("lookup_order")
      expect(answered.content).toContain("A-1")
    }))

  it.effect("a model that never answers validly: maxRepairs + 1 calls (default 1 → 2; 3 → 4; 0 → 1), then invalid_output", () =>
    Effect.gen(function*() {
      for (const [maxRepairs, calls] of [[undefined, 2], [3, 4], [0, 1]] as const) {
        const llm = FakeLLM.respond(() => Turn({ toolCalls: [outputCall({ status: "gone", days: "soon" })] }), forcing)
        const events = yield* singleAgent(maxRepairs).stream(TASK).pipe(
          Stream.runCollect,
          Effect.provide(makeTestCtx({ llm }))
        )
        const list = Chunk.toReadonlyArray(events)
        const final = list.at(-1)!
        if (!AgentEvent.$is("Final")(final)) throw new Error("no Final")
        expect(llm.calls).toBe(calls)
        expect(list.filter(AgentEvent.$is("Step")).map((step) => step.iteration)).toEqual(
          Array.from({ length: calls - 1 }, (_, i) => i + 1)
        )
        expect(final.result).toMatchObject({
          partial: true,
          stopReason: "invalid_output",
          output: "{\"status\":\"gone\",\"days\":\"soon\"}"
        })
        expect(final.result.parsed).toBeUndefined()
        expect(final.result.error).toBe(
          "status: Expected \"shipped\", actual \"gone\"; status: Expected \"lost\", actual \"gone\"; status: Expected \"cancelled\", actual \"gone\"; days: Expected number, actual \"soon\""
        )
      }
    }))

  it.effect("a provider without a forced tool choice: the schema block, the text parsed, nothing forced", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ content: "not json" }), Turn({ content: VALID })])
      const result = yield* singleAgent().run(TASK).pipe(Effect.provide(makeTestCtx({ llm })))
      expect(result.parsed).toEqual({ status: "shipped", days: 3 })
      const [first, second] = llm.requests as ReadonlyArray<Chat.ChatRequest>
      expect([first!.toolChoice, first!.tools]).toEqual([undefined, []])
      expect(first!.messages.map((m) => m.content)).toEqual([PROMPT, SCHEMA_TEXT, TASK])
      expect(second!.messages.map((m) => m.role)).toEqual(["system", "system", "user", "assistant", "user"])
    }))

  it.effect("smuggled fields in the tool input never reach parsed", () =>
    Effect.gen(function*() {
      const input = JSON.parse(
        "{\"status\":\"cancelled\",\"days\":0,\"isAdmin\":true,\"__proto__\":{\"polluted\":1}}"
      ) as unknown
      const llm = FakeLLM.script([Turn({ toolCalls: [outputCall(input)] })], forcing)
      const result = yield* singleAgent().run(TASK).pipe(Effect.provide(makeTestCtx({ llm })))
      expect(result.parsed).toStrictEqual({ status: "cancelled", days: 0 })
      expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
    }))
})

describe("StructuredOutput", () => {
  it("decodeText: JSON, optionally in one code fence; anything else is an error, never a throw", () => {
    const output = StructuredOutput.make(Verdict)
    expect(output.decodeText("  " + VALID + "\n")).toEqual(Either.right({ status: "shipped", days: 3 }))
    expect(output.decodeText("```\n" + VALID + "\n```")).toEqual(Either.right({ status: "shipped", days: 3 }))
    expect(Either.isLeft(output.decodeText("Sure! " + VALID))).toBe(true)
    expect(Either.isLeft(output.decodeText(""))).toBe(true)
    expect(output.decodeText("null")).toEqual(
      Either.left(
        "(root): Expected { readonly status: \"shipped\" | \"lost\" | \"cancelled\"; readonly days: Int; readonly note?: string | undefined }, actual null"
      )
    )
  })

  it("the JSON Schema is the encoded side, byte-stable from one make to the next", () => {
    const a = StructuredOutput.make(Schema.Struct({ at: Schema.NumberFromString }))
    const b = StructuredOutput.make(Schema.Struct({ at: Schema.NumberFromString }))
    expect(a.jsonSchema).toEqual({ type: "object", properties: { at: { type: "string" } }, required: ["at"] })
    expect(JSON.stringify(a.tool)).toBe(JSON.stringify(b.tool))
    expect(a.schemaBlock.content).toBe(b.schemaBlock.content)
  })
})
