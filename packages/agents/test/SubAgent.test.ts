/**
 * An agent as a tool (`asTool`, spec-tools-testing §4, DESIGN "No deadlock"): the sub-run executes
 * on `RunContext.child()`, its result is rendered back to text, and it never waits on a
 * concurrency permit its parent holds.
 */
import { Agent, ReActCognition } from "@agentkit/agents"
import type { AgentResult } from "@agentkit/agents"
import { Budget, BudgetExceeded, Cancellation, Cancelled, Message, RunContext, Usage } from "@agentkit/core"
import { failure, FakeLLM, FakeTool, Fixture, makeTestCtx, Seed, Turn } from "@agentkit/testing"
import type { ToolRegistry } from "@agentkit/tools"
import { asTool, renderRunResult, Tool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Schema } from "effect"
import { call, DESCRIPTION, forever } from "./fixtures.js"

const { failureOf } = Fixture
const { lookupCall, lookupOrder, MODEL, STATUS, TASK } = Seed

const SUB_MODEL = "claude-haiku-4-5"
const RESEARCH = "Delegate a research sub-task to the researcher agent."

const researcherWith = <T extends ToolRegistry.AnyTool>(tools: ReadonlyArray<T>) =>
  Agent.make({
    name: "researcher",
    model: SUB_MODEL,
    prompt: "Research briefly.",
    cognition: ReActCognition.make({ tools })
  })

const researcher = researcherWith([lookupOrder])

const research = asTool(researcher, { name: "research", description: RESEARCH })

const coordinator = Agent.make({
  name: "support",
  model: MODEL,
  prompt: "Delegate order research.",
  cognition: ReActCognition.make({ tools: [research, lookupOrder] })
})

const researchCall = (id = "r1", task = "look up A-771") => call(id, "research", { task })

/** The whole run's four model calls, in the order they happen. */
const delegationScript = () =>
  FakeLLM.script([
    Turn({ toolCalls: [researchCall()] }), // support
    Turn({ toolCalls: [lookupCall("s1")] }), // researcher
    Turn({ content: "A-771 shipped on 14 August." }), // researcher
    Turn({ content: "final: it shipped" }) // support
  ])

describe("asTool(agent)", () => {
  it("is a tool advertising one `task` string; sideEffecting defaults to false", () => {
    expect(Tool.isTool(research)).toBe(true)
    expect(research.delegating).toBe(true)
    expect(research.sideEffecting).toBe(false)
    expect(JSON.stringify(research.schema)).toBe(
      `{"name":"research","description":"${RESEARCH}","parameters":{"type":"object","properties":{"task":{"type":"string","description":"the sub-task / goal to run"}},"required":["task"]}}`
    )
  })

  it.effect("run directly, it renders the agent's result as its output text (render_result)", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ content: "hi" })])
      const single = asTool(Agent.make({ name: "greeter", model: SUB_MODEL }), { name: "greet", description: RESEARCH })
      const text = yield* single.run({ task: "say hi" }).pipe(Effect.provide(makeTestCtx({ llm })))
      expect(text).toBe("hi")
      expect(llm.requests[0]!.messages).toEqual([Message.user("say hi")])
      expect(renderRunResult({ output: "hi", partial: false })).toBe("hi")
    }))

  it.effect("a ReAct loop delegates once; the sub-agent calls its own tool; the answer comes back as text", () =>
    Effect.gen(function*() {
      const llm = delegationScript()
      const budget = Budget.unsafeMake()
      const result = yield* coordinator.run(TASK).pipe(Effect.provide(makeTestCtx({ llm, budget })))
      expect(result.output).toBe("final: it shipped")
      expect(llm.requests.map((request) => request.model)).toEqual([MODEL, SUB_MODEL, SUB_MODEL, MODEL])
      // the sub-agent got its own prompt, the task, and only its own tools
      expect(llm.requests[1]!.messages).toEqual([Message.system("Research briefly."), Message.user("look up A-771")])
      expect(llm.requests[1]!.tools.map((tool) => tool.name)).toEqual(["lookup_order"])
      expect(llm.requests[2]!.messages.at(-1)).toEqual(
        Message.toolResult({ toolCallId: "s1", name: "lookup_order", content: STATUS })
      )
      // the coordinator sees the sub-run's output as the tool result
      expect(llm.requests[3]!.messages.at(-1)).toEqual(
        Message.toolResult({ toolCallId: "r1", name: "research", content: "A-771 shipped on 14 August." })
      )
      // one budget for the whole tree
      expect(budget.modelCalls).toBe(4)
      expect(budget.toolCalls).toBe(2)
      expect(result.ownUsage.inputTokens).toBe(20) // the coordinator's own two calls
      expect(result.usage.inputTokens).toBe(40) // the whole tree: its two and the researcher's two
      expect(Usage.nanos(result.usage)).toBe(budget.spentNanos) // what the budget spent on the tree
      llm.assertConsumed()
    }))

  it.effect("render= replaces the default rendering", () =>
    Effect.gen(function*() {
      const rendered = asTool(researcher, {
        name: "research",
        description: RESEARCH,
        render: (result: AgentResult.AgentResult) =>
          `[${result.stopReason}] ${result.output} ($${result.usage.costUsd})`
      })
      const agent = Agent.make({ name: "support", model: MODEL, cognition: ReActCognition.make({ tools: [rendered] }) })
      const llm = delegationScript()
      yield* agent.run(TASK).pipe(Effect.provide(makeTestCtx({ llm })))
      expect(llm.requests[3]!.messages.at(-1)!.content).toBe("[end_turn] A-771 shipped on 14 August. ($0.0002)")
    }))

  it.effect("the sub-run executes on a child context: depth 1, same budget, same correlation id", () =>
    Effect.gen(function*() {
      const seen: Array<RunContext.Service> = []
      const whoami = Tool.make("whoami", {
        description: DESCRIPTION,
        parameters: {},
        sideEffecting: false,
        handler: () => Effect.map(RunContext, (context) => (seen.push(context), `depth ${context.depth}`))
      })
      const inner = asTool(researcherWith([whoami]), { name: "research", description: RESEARCH })
      const agent = Agent.make({
        name: "support",
        model: MODEL,
        cognition: ReActCognition.make({ tools: [inner, whoami] })
      })
      const llm = FakeLLM.respond((request, n) =>
        request.model === MODEL
          ? n === 1
            ? Turn({ toolCalls: [researchCall(), call("w0", "whoami")] })
            : Turn({ content: "done" })
          : request.messages.at(-1)!.role === "user"
          ? Turn({ toolCalls: [call("w1", "whoami")] })
          : Turn({ content: String(request.messages.at(-1)!.content) })
      )
      const result = yield* agent.run(TASK).pipe(Effect.provide(makeTestCtx({ llm, correlationId: "run-7" })))
      expect(result.output).toBe("done")
      const depths = seen.map((context) => context.depth).sort()
      expect(depths).toEqual([0, 1])
      expect(new Set(seen.map((context) => context.budget)).size).toBe(1)
      expect(seen.map((context) => context.correlationId)).toEqual(["run-7", "run-7"])
    }))
})

describe("no deadlock under a concurrency limit of 1", () => {
  it.effect("maxConcurrency 1: the coordinator's delegation completes and the sub-agent's own tool runs", () =>
    Effect.gen(function*() {
      const lookup = FakeTool.make("lookup_order", { responses: [STATUS] })
      const sub = asTool(researcherWith([lookup]), { name: "research", description: RESEARCH })
      const agent = Agent.make({ name: "support", model: MODEL, cognition: ReActCognition.make({ tools: [sub] }) })
      const llm = delegationScript()
      const budget = Budget.unsafeMake({ maxConcurrency: 1 })
      const result = yield* agent.run(TASK).pipe(Effect.provide(makeTestCtx({ llm, budget })))
      expect(budget.maxConcurrency).toBe(1)
      expect(result.output).toBe("final: it shipped")
      expect(lookup.calls).toEqual([{ order_id: "A-771" }])
      llm.assertConsumed()
    }))

  it.effect("maxConcurrency 1 with a sibling tool in the same turn (FakeLLM keyed on the request's model)", () =>
    Effect.gen(function*() {
      const lookup = FakeTool.make("lookup_order", { responses: (args) => `status of ${String(args["order_id"])}` })
      const sub = asTool(researcherWith([lookup]), { name: "research", description: RESEARCH })
      const agent = Agent.make({
        name: "support",
        model: MODEL,
        cognition: ReActCognition.make({ tools: [sub, lookup] })
      })
      let outer = 0
      let inner = 0
      const llm = FakeLLM.respond((request) => {
        if (request.model === MODEL) {
          outer += 1
          return outer === 1
            ? Turn({ toolCalls: [researchCall("r1", "check A-1"), lookupCall("c2", "A-2")] })
            : Turn({ content: "both checked" })
        }
        inner += 1
        return inner === 1 ? Turn({ toolCalls: [lookupCall("s1", "A-1")] }) : Turn({ content: "A-1 is fine" })
      })
      const result = yield* agent.run(TASK).pipe(Effect.provide(makeTestCtx({ llm, budget: { maxConcurrency: 1 } })))
      expect(result.output).toBe("both checked")
      expect([outer, inner]).toEqual([2, 2])
      expect(lookup.calls.map((args) => args["order_id"]).sort()).toEqual(["A-1", "A-2"])
      const last = llm.requests.at(-1)!
      expect(last.model).toBe(MODEL)
      expect(last.messages.slice(-2)).toEqual([
        Message.toolResult({ toolCallId: "r1", name: "research", content: "A-1 is fine" }),
        Message.toolResult({ toolCallId: "c2", name: "lookup_order", content: "status of A-2" })
      ])
    }))
})

describe("sub-agent failures", () => {
  it.effect("a depth overflow is shown to the model as a tool error, and the run goes on", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ toolCalls: [researchCall()] }), Turn({ content: "could not delegate" })])
      const result = yield* coordinator.run(TASK).pipe(Effect.provide(makeTestCtx({ llm, budget: { maxDepth: 0 } })))
      expect(result.output).toBe("could not delegate")
      expect(llm.requests[1]!.messages.at(-1)).toEqual(
        Message.toolResult({
          toolCallId: "r1",
          name: "research",
          content: "ERROR: tool 'research' failed: DepthExceeded: agent depth 1 > max_depth 0",
          isError: true
        })
      )
      expect(llm.calls).toBe(2)
    }))

  it.effect("cost exhaustion inside the sub-agent ends the whole run", () =>
    Effect.gen(function*() {
      const dime = { costUsd: 0.01 }
      const llm = FakeLLM.script([
        Turn({ toolCalls: [researchCall()], usage: dime }),
        Turn({ toolCalls: [lookupCall("s1")], usage: dime }),
        Turn({ content: "never", usage: dime })
      ])
      const exit = yield* coordinator.run(TASK).pipe(
        // the fake bills what its script says: its models are free in the catalog (no money reserved)
        Effect.provide(
          Layer.merge(makeTestCtx({ llm, budget: { maxCostUsd: 0.015 } }), FakeLLM.freeCatalog(MODEL, SUB_MODEL))
        ),
        Effect.exit
      )
      const error = failureOf(exit)
      expect(error).toBeInstanceOf(BudgetExceeded)
      expect(error).toMatchObject({ limit: "cost", message: "cost $0.02 > $0.015" })
      expect(llm.calls).toBe(2)
    }))

  it.effect("a sub-agent's model failure is a ToolExecutionError the model sees", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([
        Turn({ toolCalls: [researchCall()] }),
        failure({ reason: "invalid_request", retryable: false, message: "prompt too long" }),
        Turn({ content: "delegation failed, sorry" })
      ])
      const result = yield* coordinator.run(TASK).pipe(Effect.provide(makeTestCtx({ llm })))
      expect(result.output).toBe("delegation failed, sorry")
      expect(llm.requests[2]!.messages.at(-1)).toMatchObject({
        role: "tool",
        content: "ERROR: tool 'research' failed: ToolExecutionError: prompt too long",
        isError: true
      })
    }))

  it.effect("cancelling while the sub-agent's tool runs stops it and the whole run ends Cancelled", () =>
    Effect.gen(function*() {
      const token = Cancellation.make()
      const started = yield* Deferred.make<void>()
      let finalized = false
      const slow = Tool.make("slow", {
        description: DESCRIPTION,
        parameters: { q: Schema.String },
        sideEffecting: false,
        handler: () =>
          Deferred.succeed(started, undefined).pipe(
            Effect.zipRight(forever),
            Effect.ensuring(Effect.sync(() => (finalized = true)))
          )
      })
      const sub = asTool(researcherWith([slow]), { name: "research", description: RESEARCH })
      const agent = Agent.make({ name: "support", model: MODEL, cognition: ReActCognition.make({ tools: [sub] }) })
      const llm = FakeLLM.script([
        Turn({ toolCalls: [researchCall()] }),
        Turn({ toolCalls: [call("s1", "slow", { q: "x" })] })
      ])
      const fiber = yield* Effect.fork(agent.run(TASK).pipe(Effect.provide(makeTestCtx({ llm, cancellation: token }))))
      yield* Deferred.await(started)
      token.cancel()
      const exit = yield* Fiber.await(fiber)
      expect(failureOf(exit)).toBeInstanceOf(Cancelled)
      expect(finalized).toBe(true)
      expect(llm.calls).toBe(2)
    }))
})
