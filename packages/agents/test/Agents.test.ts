/**
 * The agents service: `Agents.layer()` over a model layer, then one expression per call
 * (`Agents.run`, `Agents.parsed`, `Agents.stream`), each call on its own fresh run context.
 */
import { Agent, AgentEvent, Agents, NoParsedOutput, ReActCognition } from "@agentkit/agents"
import type { AgentError, AgentResult } from "@agentkit/agents"
import { BudgetExceeded, Cancelled, ConfigurationError, RunContext } from "@agentkit/core"
import type { Budget, Invoker, ToolMiddleware } from "@agentkit/core"
import { FakeLLM, Seed, Turn } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import { Chunk, Context, Effect, Layer, Schema, Stream } from "effect"

const { ANSWER, lookupCall, lookupOrder, MODEL, PROMPT, TASK } = Seed

/** A tool that records the run it was called in, and cancels that run when asked to. */
const recorder = () => {
  const seen: Array<{ readonly runId: string; readonly scope: string; readonly autonomy: string }> = []
  const tool = Tool.make("whoami", {
    description: "Report which run and which tenant this call belongs to.",
    parameters: { cancel: Schema.Boolean },
    sideEffecting: false,
    handler: ({ cancel }, { context }) => {
      seen.push({ runId: context.runId, scope: context.scope.key, autonomy: context.autonomy })
      if (cancel) context.cancellation.cancel()
      return "ok"
    }
  })
  const agent = Agent.make({
    name: "support",
    model: MODEL,
    prompt: PROMPT,
    cognition: ReActCognition.make({ tools: [tool, lookupOrder] })
  })
  return { agent, seen }
}

const whoami = (cancel: boolean, id = "w1") => ({ id, name: "whoami", arguments: { cancel } })
/** Two model calls: the tool, then the answer. */
const twoTurns = (answer: string, cancel = false) => [Turn({ toolCalls: [whoami(cancel)] }), Turn({ content: answer })]

const Verdict = Schema.Struct({ status: Schema.Literal("shipped", "lost"), days: Schema.Int })
const triage = Agent.make({ name: "triage", model: MODEL, prompt: "Classify the order's state.", output: Verdict })
const plain = Agent.make({ name: "plain", model: MODEL, prompt: PROMPT })

/** A forced call of the output tool (the single call's structured answer). */
const answerCall = (input: unknown) => ({
  id: "o1",
  name: "structured_output",
  arguments: input as Record<string, unknown>
})
const forcing = { features: { toolChoice: true } } as const

describe("Agents.run", () => {
  it.effect("one expression over Agents.layer(): the seed's answer, the model's turns consumed", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ toolCalls: [lookupCall()] }), Turn({ content: ANSWER })])
      const support = Agent.make({
        name: "support",
        model: MODEL,
        prompt: PROMPT,
        cognition: ReActCognition.make({ tools: [lookupOrder] })
      })
      const result = yield* Agents.run(support, TASK).pipe(Effect.provide(Layer.provide(Agents.layer(), llm.layer)))
      expect(result.output).toBe(ANSWER)
      expect(result.transcript.map((message) => message.role)).toEqual([
        "system",
        "user",
        "assistant",
        "tool",
        "assistant"
      ])
      llm.assertConsumed()
      expectTypeOf(Agents.run(support, TASK)).toEqualTypeOf<
        Effect.Effect<AgentResult.AgentResult, AgentError, Agents>
      >()
    }))

  it.effect("every call has its own run id, budget and cancellation", () =>
    Effect.gen(function*() {
      const { agent, seen } = recorder()
      // 2 model calls each: one budget shared by the three calls would refuse the third call's first
      // the first run cancels itself in its tool: it never asks the model again
      const llm = FakeLLM.script([Turn({ toolCalls: [whoami(true)] }), ...twoTurns("second"), ...twoTurns("third")])
      const layer = Layer.provide(Agents.layer({ budget: { maxModelCalls: 2 } }), llm.layer)
      const [first, second, third] = yield* Effect.all([
        Effect.flip(Agents.run(agent, "a")),
        Agents.run(agent, "b"),
        Agents.run(agent, "c")
      ]).pipe(Effect.provide(layer))
      // the first cancelled its own run, and only its own
      expect(first).toBeInstanceOf(Cancelled)
      expect([second.output, third.output]).toEqual(["second", "third"])
      expect(seen.length).toBe(3)
      expect(new Set(seen.map((call) => call.runId)).size).toBe(3)
      llm.assertConsumed()
    }))

  it.effect("a call past its own budget fails with BudgetExceeded; the next call starts with a full one", () =>
    Effect.gen(function*() {
      const { agent } = recorder()
      // the first call wants 3 model calls (two tool rounds), the second 2
      const llm = FakeLLM.script([
        Turn({ toolCalls: [whoami(false, "w1")] }),
        Turn({ toolCalls: [whoami(false, "w2")] }),
        ...twoTurns("second")
      ])
      const layer = Layer.provide(Agents.layer({ budget: { maxModelCalls: 2 } }), llm.layer)
      const first = yield* Agents.run(agent, "a").pipe(Effect.flip, Effect.provide(layer))
      expect(first).toBeInstanceOf(BudgetExceeded)
      expect(llm.calls).toBe(2)
      // the same layer value, a new program: the budget is per call, not per layer
      const second = yield* Agents.run(agent, "b").pipe(Effect.provide(layer))
      expect(second.output).toBe("second")
    }))

  it.effect("the layer's scope and autonomy reach every call; the Invoker is provided for agent.run too", () =>
    Effect.gen(function*() {
      const { agent, seen } = recorder()
      const llm = FakeLLM.script([...twoTurns("one"), ...twoTurns("two")])
      const layer = Layer.provide(Agents.layer({ scope: { orgId: 7 }, autonomy: "gated" }), llm.layer)
      yield* Effect.gen(function*() {
        yield* Agents.run(agent, "a")
        // the uncommon case, in the same program: a context of the caller's own
        const own = yield* agent.run("b").pipe(RunContext.provide({ runId: "request-1", scope: { orgId: 9 } }))
        expect(own.output).toBe("two")
      }).pipe(Effect.provide(layer))
      expect(seen).toEqual([
        { runId: seen[0]!.runId, scope: "org7:domNone", autonomy: "gated" },
        { runId: "request-1", scope: "org9:domNone", autonomy: "auto" }
      ])
    }))

  it.effect("the layer's middleware wrap every call's tools", () =>
    Effect.gen(function*() {
      const names: Array<string> = []
      const counting: ToolMiddleware = (next) => (call) =>
        Effect.suspend(() => (names.push(call.call.name), next(call)))
      const { agent } = recorder()
      const llm = FakeLLM.script(twoTurns("done"))
      const result = yield* Agents.run(agent, "a").pipe(
        Effect.provide(Layer.provide(Agents.layer({ toolMiddleware: [counting] }), llm.layer))
      )
      expect([result.output, names]).toEqual(["done", ["whoami"]])
    }))

  it.effect("bad options fail the layer with a ConfigurationError naming the field; nothing is called", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ content: "never" })])
      const build = (options: Agents.Options) =>
        Agents.run(plain, "a").pipe(Effect.provide(Layer.provide(Agents.layer(options), llm.layer)), Effect.flip)
      const autonomy = yield* build({ autonomy: "yolo" as never })
      expect(autonomy).toBeInstanceOf(ConfigurationError)
      expect(autonomy).toMatchObject({ field: "autonomy" })
      const limit = yield* build({ budget: { maxModelCalls: -1 } })
      expect(limit).toMatchObject({ _tag: "ConfigurationError", field: "budget.maxModelCalls" })
      const shared = yield* build({ budget: (yield* RunContext.make()).budget as unknown as Budget.Limits })
      expect(shared).toMatchObject({ _tag: "ConfigurationError", field: "budget" })
      expect((shared as ConfigurationError).message).toMatch(/not a Budget: one Budget would be shared by every call/)
      expect(llm.calls).toBe(0)
    }))
})

describe("Agents.parsed", () => {
  it.effect("gives the decoded answer, typed", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ toolCalls: [answerCall({ status: "shipped", days: 3 })] })], forcing)
      const verdict = yield* Agents.parsed(triage, TASK).pipe(Effect.provide(Layer.provide(Agents.layer(), llm.layer)))
      expect(verdict).toEqual({ status: "shipped", days: 3 })
      expectTypeOf(verdict).toEqualTypeOf<typeof Verdict.Type>()
    }))

  it.effect("an answer that never decodes fails with NoParsedOutput: stop reason, decode error, last text", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script(
        [Turn({ toolCalls: [answerCall({ status: "late" })] }), Turn({ toolCalls: [answerCall({ status: "late" })] })],
        forcing
      )
      const error = yield* Agents.parsed(triage, TASK).pipe(
        Effect.flip,
        Effect.provide(Layer.provide(Agents.layer(), llm.layer))
      )
      expect(error).toBeInstanceOf(NoParsedOutput)
      expect(error).toMatchObject({ agent: "triage", stopReason: "invalid_output", output: "{\"status\":\"late\"}" })
      expect(error.message).toMatch(
        /^agent 'triage' ended without a structured answer \(stop reason invalid_output\): .*status/
      )
      expect(llm.calls).toBe(2)
    }))

  it.effect("an agent made without output is refused by the type, and at run time before any call", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ content: "never" })])
      // @ts-expect-error: plain has no output schema
      const refused = Agents.parsed(plain, TASK)
      const error = yield* refused.pipe(Effect.flip, Effect.provide(Layer.provide(Agents.layer(), llm.layer)))
      expect(error).toMatchObject({ _tag: "NoParsedOutput", agent: "plain" })
      expect((error as NoParsedOutput).message).toBe(
        "agent 'plain' has no structured answer to give: make it with Agent.make({ output: schema })"
      )
      expect(llm.calls).toBe(0)
    }))
})

describe("Agents.stream", () => {
  it.effect("streams the run's events on a fresh context per stream; Final without the transcript", () =>
    Effect.gen(function*() {
      const { agent, seen } = recorder()
      const llm = FakeLLM.script([...twoTurns(ANSWER), ...twoTurns(ANSWER)])
      const layer = Layer.provide(Agents.layer(), llm.layer)
      const events = yield* Agents.stream(agent, TASK).pipe(Stream.runCollect, Effect.provide(layer))
      const list = Chunk.toReadonlyArray(events)
      expect(list.slice(0, 3).map((event) => event._tag)).toEqual(["ToolCall", "ToolResult", "Step"])
      expect(list.filter(AgentEvent.$is("MessageDelta")).map((event) => event.text).join("")).toBe(ANSWER)
      const final = list.find(AgentEvent.$is("Final"))!
      expect(final.result.output).toBe(ANSWER)
      expect("transcript" in final.result).toBe(false)
      const whole = yield* Agents.stream(agent, TASK, { transcript: true }).pipe(
        Stream.filter(AgentEvent.$is("Final")),
        Stream.runCollect,
        Effect.provide(layer)
      )
      expect(Chunk.unsafeHead(whole).result.transcript.length).toBe(5)
      expect(seen.length).toBe(2)
      expect(seen[0]!.runId).not.toBe(seen[1]!.runId)
    }))
})

describe("types", () => {
  it("the calls need the service and the tools' own requirements, nothing per run", () => {
    class OrderDb extends Context.Tag("test/OrderDb")<OrderDb, { readonly status: (id: string) => string }>() {}
    const lookup = Tool.make("lookup_order", {
      description: "Look up an order by its id and return its status line.",
      parameters: { order_id: Schema.String },
      sideEffecting: false,
      handler: ({ order_id }) => Effect.map(OrderDb, (db) => db.status(order_id))
    })
    const agent = Agent.make({ name: "a", model: MODEL, cognition: ReActCognition.make({ tools: [lookup] }) })
    expectTypeOf<Effect.Effect.Context<ReturnType<typeof Agents.run<OrderDb, never>>>>().toEqualTypeOf<
      Agents | OrderDb
    >()
    expectTypeOf(Agents.stream(agent, TASK)).toEqualTypeOf<
      Stream.Stream<AgentEvent.AgentEvent, AgentError, Agents | OrderDb>
    >()
    expectTypeOf(Agents.parsed(triage, TASK)).toEqualTypeOf<
      Effect.Effect<typeof Verdict.Type, AgentError | NoParsedOutput, Agents>
    >()
    expectTypeOf(Agents.layer()).toEqualTypeOf<
      Layer.Layer<Agents | Invoker, ConfigurationError, import("@agentkit/core").ChatModel>
    >()
  })
})
