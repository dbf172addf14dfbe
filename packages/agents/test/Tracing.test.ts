/**
 * Spans through the recording tracer (DESIGN "Tracing follows the OpenTelemetry GenAI
 * conventions"; spec-runtime §9 "spans: invoke_agent, 2× chat, execute_tool").
 */
import { Agent, ReActCognition } from "@agentkit/agents"
import type { Tracing as CoreTracing } from "@agentkit/core"
import { failure, FakeLLM, Fixture, makeTestCtx, Seed, Tracing, Turn } from "@agentkit/testing"
import { asTool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { call, support } from "./fixtures.js"

const { failureOf } = Fixture
const { ANSWER, lookupCall, lookupOrder, MODEL, TASK } = Seed

const attrs = (span: CoreTracing.RecordedSpan) => Object.fromEntries(span.attributes)

describe("spans of a run", () => {
  it.effect("invoke_agent support → chat claude-sonnet-4-6, execute_tool lookup_order, chat claude-sonnet-4-6", () =>
    Effect.gen(function*() {
      const tracer = Tracing.recording()
      const llm = FakeLLM.script([Turn({ toolCalls: [lookupCall()] }), Turn({ content: ANSWER })])
      yield* support.run(TASK).pipe(Effect.provide(makeTestCtx({ llm })), Effect.provide(tracer.layer))

      expect(tracer.spans.map((span) => span.name)).toEqual([
        "invoke_agent support",
        "chat claude-sonnet-4-6",
        "execute_tool lookup_order",
        "chat claude-sonnet-4-6"
      ])
      const run = tracer.one("invoke_agent support")
      expect(run.parentSpanId).toBeUndefined()
      expect(tracer.childrenOf(run).map((span) => span.name)).toEqual([
        "chat claude-sonnet-4-6",
        "execute_tool lookup_order",
        "chat claude-sonnet-4-6"
      ])
      for (const span of tracer.spans) {
        expect(span.ended).toBe(true)
        expect(span.traceId).toBe(run.traceId)
        expect(span.exit !== undefined && Exit.isSuccess(span.exit)).toBe(true)
        expect(span.attributes.has("error.type")).toBe(false)
      }

      expect(attrs(run)).toMatchObject({
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "support",
        "gen_ai.request.model": MODEL,
        "gen_ai.conversation.id": "test-run",
        "gen_ai.usage.input_tokens": 20,
        "gen_ai.usage.output_tokens": 10
      })

      const [first, second] = tracer.named("chat claude-sonnet-4-6")
      expect(first!.kind).toBe("client")
      expect(attrs(first!)).toMatchObject({
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": MODEL,
        "gen_ai.response.model": MODEL,
        "gen_ai.provider.name": "fake",
        "gen_ai.response.finish_reasons": ["tool_use"],
        "gen_ai.usage.input_tokens": 10,
        "gen_ai.usage.output_tokens": 5
      })
      expect(attrs(second!)["gen_ai.response.finish_reasons"]).toEqual(["end_turn"])

      const tool = tracer.one("execute_tool lookup_order")
      expect(attrs(tool)).toMatchObject({
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "lookup_order",
        "gen_ai.tool.call.id": "c1",
        "gen_ai.tool.type": "function"
      })
    }))

  it.effect("two calls in one turn: two execute_tool spans under the agent, each with its call id", () =>
    Effect.gen(function*() {
      const tracer = Tracing.recording()
      const llm = FakeLLM.script([
        Turn({ toolCalls: [lookupCall("c1", "A-1"), lookupCall("c2", "A-2")] }),
        Turn({ content: "ok" })
      ])
      yield* support.run(TASK).pipe(Effect.provide(makeTestCtx({ llm })), Effect.provide(tracer.layer))
      const run = tracer.one("invoke_agent support")
      const tools = tracer.named("execute_tool lookup_order")
      expect(tools.map((span) => span.attributes.get("gen_ai.tool.call.id")).sort()).toEqual(["c1", "c2"])
      expect(tools.every((span) => span.parentSpanId === run.spanId)).toBe(true)
    }))

  it.effect("a failing tool: error.type on its execute_tool span only; the run succeeds", () =>
    Effect.gen(function*() {
      const tracer = Tracing.recording()
      const llm = FakeLLM.script([
        Turn({ toolCalls: [call("c1", "cancel_order", { order: "A-771" })] }),
        Turn({ content: "fixed" })
      ])
      yield* support.run(TASK).pipe(Effect.provide(makeTestCtx({ llm })), Effect.provide(tracer.layer))
      expect(tracer.one("execute_tool cancel_order").attributes.get("error.type")).toBe("ToolArgumentError")
      expect(tracer.one("invoke_agent support").attributes.has("error.type")).toBe(false)
    }))

  it.effect("an unknown tool opens no execute_tool span", () =>
    Effect.gen(function*() {
      const tracer = Tracing.recording()
      const llm = FakeLLM.script([Turn({ toolCalls: [call("c1", "ghost")] }), Turn({ content: "ok" })])
      yield* support.run(TASK).pipe(Effect.provide(makeTestCtx({ llm })), Effect.provide(tracer.layer))
      expect(tracer.spans.map((span) => span.name)).toEqual([
        "invoke_agent support",
        "chat claude-sonnet-4-6",
        "chat claude-sonnet-4-6"
      ])
    }))

  it.effect("a budget failure: error.type BudgetExceeded on the chat span and on invoke_agent", () =>
    Effect.gen(function*() {
      const tracer = Tracing.recording()
      const dime = { costUsd: 0.01 }
      const llm = FakeLLM.script([
        Turn({ toolCalls: [lookupCall()], usage: dime }),
        Turn({ toolCalls: [lookupCall("c2")], usage: dime })
      ])
      const exit = yield* support.run(TASK).pipe(
        // the fake bills what its script says: its model is free in the catalog (no money reserved)
        Effect.provide(
          Layer.merge(makeTestCtx({ llm, budget: { maxCostUsd: 0.015 } }), FakeLLM.freeCatalog(Seed.MODEL))
        ),
        Effect.provide(tracer.layer),
        Effect.exit
      )
      expect(failureOf(exit)).toMatchObject({ _tag: "BudgetExceeded" })
      const chats = tracer.named("chat claude-sonnet-4-6")
      expect(chats).toHaveLength(2)
      expect(chats[0]!.attributes.has("error.type")).toBe(false)
      expect(chats[1]!.attributes.get("error.type")).toBe("BudgetExceeded")
      const run = tracer.one("invoke_agent support")
      expect(run.attributes.get("error.type")).toBe("BudgetExceeded")
      expect(run.ended).toBe(true)
      expect(run.exit !== undefined && Exit.isFailure(run.exit)).toBe(true)
    }))

  it.effect("a model failure: error.type ChatModelError on chat and invoke_agent", () =>
    Effect.gen(function*() {
      const tracer = Tracing.recording()
      const llm = FakeLLM.script([failure({ reason: "overloaded", message: "529" })])
      yield* support.run(TASK).pipe(Effect.provide(makeTestCtx({ llm })), Effect.provide(tracer.layer), Effect.exit)
      expect(tracer.one("chat claude-sonnet-4-6").attributes.get("error.type")).toBe("ChatModelError")
      expect(tracer.one("invoke_agent support").attributes.get("error.type")).toBe("ChatModelError")
    }))

  it.effect("a sub-agent: invoke_agent researcher is a child of execute_tool research", () =>
    Effect.gen(function*() {
      const tracer = Tracing.recording()
      const researcher = Agent.make({
        name: "researcher",
        model: "claude-haiku-4-5",
        cognition: ReActCognition.make({ tools: [lookupOrder] })
      })
      const research = asTool(researcher, {
        name: "research",
        description: "Delegate a research sub-task to the researcher agent."
      })
      const agent = Agent.make({ name: "support", model: MODEL, cognition: ReActCognition.make({ tools: [research] }) })
      const llm = FakeLLM.script([
        Turn({ toolCalls: [call("r1", "research", { task: "A-771" })] }),
        Turn({ toolCalls: [lookupCall("s1")] }),
        Turn({ content: "shipped" }),
        Turn({ content: "final" })
      ])
      yield* agent.run(TASK).pipe(Effect.provide(makeTestCtx({ llm })), Effect.provide(tracer.layer))
      const run = tracer.one("invoke_agent support")
      const delegation = tracer.one("execute_tool research")
      const sub = tracer.one("invoke_agent researcher")
      expect(tracer.childrenOf(run).map((span) => span.name)).toEqual([
        "chat claude-sonnet-4-6",
        "execute_tool research",
        "chat claude-sonnet-4-6"
      ])
      expect(tracer.childrenOf(delegation).map((span) => span.name)).toEqual(["invoke_agent researcher"])
      expect(tracer.childrenOf(sub).map((span) => span.name)).toEqual([
        "chat claude-haiku-4-5",
        "execute_tool lookup_order",
        "chat claude-haiku-4-5"
      ])
      expect(sub.attributes.get("gen_ai.agent.name")).toBe("researcher")
      expect(sub.attributes.get("gen_ai.request.model")).toBe("claude-haiku-4-5")
      expect(new Set(tracer.spans.map((span) => span.traceId)).size).toBe(1)
    }))

  it.effect("invoke_agent usage sums the run; input tokens include cached ones, as on chat spans", () =>
    Effect.gen(function*() {
      const tracer = Tracing.recording()
      const llm = FakeLLM.script([
        Turn({ toolCalls: [lookupCall()], usage: { inputTokens: 100, outputTokens: 7, cacheReadTokens: 30 } }),
        Turn({ content: ANSWER, usage: { inputTokens: 40, outputTokens: 9, cacheWriteTokens: 2 } })
      ])
      yield* support.run(TASK).pipe(Effect.provide(makeTestCtx({ llm })), Effect.provide(tracer.layer))
      expect(attrs(tracer.one("invoke_agent support"))).toMatchObject({
        "gen_ai.usage.input_tokens": 172,
        "gen_ai.usage.output_tokens": 16,
        "gen_ai.usage.cache_read_input_tokens": 30,
        "gen_ai.usage.cache_creation_input_tokens": 2
      })
      const chats = tracer.named("chat claude-sonnet-4-6")
      const chatInput = chats.map((span) => span.attributes.get("gen_ai.usage.input_tokens") as number)
      expect(chatInput[0]! + chatInput[1]!).toBe(172)
    }))

  it.effect("a failed run's invoke_agent span still carries its conversation id", () =>
    Effect.gen(function*() {
      const tracer = Tracing.recording()
      const llm = FakeLLM.script([failure()])
      yield* support.run(TASK).pipe(
        Effect.provide(makeTestCtx({ llm, correlationId: "run-42" })),
        Effect.provide(tracer.layer),
        Effect.exit
      )
      expect(attrs(tracer.one("invoke_agent support"))).toMatchObject({
        "gen_ai.conversation.id": "run-42",
        "error.type": "ChatModelError"
      })
    }))

  it.effect("tracing: false opens no spans", () =>
    Effect.gen(function*() {
      const tracer = Tracing.recording()
      const llm = FakeLLM.script([Turn({ toolCalls: [lookupCall()] }), Turn({ content: ANSWER })])
      const result = yield* support.run(TASK).pipe(
        Effect.provide(makeTestCtx({ llm, tracing: false })),
        Effect.provide(tracer.layer)
      )
      expect(result.output).toBe(ANSWER)
      expect(tracer.spans).toEqual([])
    }))
})
