/**
 * `runAgents` (spec-runtime §7.7 `run_agents`, its [HAZARD] fixed): each agent on its own child
 * run, concurrently within the tree's limit, results in input order, the first failure interrupts
 * the others, `bestEffort` gives an `Either` per slot, a shared budget stops them all.
 */
import { Agent, ReActCognition, runAgents } from "@agentkit/agents"
import { Budget, RunContext } from "@agentkit/core"
import { failure, FakeLLM, Fixture, makeTestCtx, Turn } from "@agentkit/testing"
import { Tool, type ToolRegistry } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Either, Ref } from "effect"
import { call, DESCRIPTION } from "./fixtures.js"

const { failureOf } = Fixture

/** A tool that records the run it ran in and the most calls in flight at once. */
const probe = () => {
  const state = { runIds: [] as Array<string>, inFlight: 0, maxInFlight: 0 }
  const tool = Tool.make("probe", {
    description: DESCRIPTION,
    parameters: {},
    sideEffecting: false,
    handler: () =>
      Effect.gen(function*() {
        const context = yield* RunContext
        state.runIds.push(context.runId)
        state.inFlight += 1
        state.maxInFlight = Math.max(state.maxInFlight, state.inFlight)
        yield* Effect.yieldNow()
        yield* Effect.yieldNow()
        state.inFlight -= 1
        return `ran in ${context.runId}`
      })
  })
  return { state, tool }
}

const reactAgent = (name: string, tools: ReadonlyArray<ToolRegistry.AnyTool>) =>
  Agent.make({ name, model: `model-${name}`, cognition: ReActCognition.make({ tools }) })

/** Every agent calls `probe` once, then answers with the tool's text. */
const probeScript = () =>
  FakeLLM.respond((request) => {
    const last = request.messages.at(-1)!
    return last.role === "tool"
      ? Turn({ content: `${request.model}: ${last.content}` })
      : Turn({ toolCalls: [call(`c-${request.model}`, "probe")] })
  })

describe("runAgents", () => {
  it.effect("runs each agent on its own child run; results in input order", () =>
    Effect.gen(function*() {
      const { state, tool } = probe()
      const agents = ["a", "b", "c"].map((name) => reactAgent(name, [tool]))
      const llm = probeScript()
      const results = yield* runAgents([
        [agents[0]!, "task a"],
        [agents[1]!, "task b"],
        [agents[2]!, "task c"]
      ]).pipe(Effect.provide(makeTestCtx({ llm })))
      expect(results.map((result) => result.output)).toEqual([
        "model-a: ran in test-run/a#0",
        "model-b: ran in test-run/b#1",
        "model-c: ran in test-run/c#2"
      ])
      expect(state.runIds.sort()).toEqual(["test-run/a#0", "test-run/b#1", "test-run/c#2"])
      // each child got its own task
      expect(llm.requests.filter((r) => r.messages.length === 1).map((r) => [r.model, r.messages[0]!.content]).sort())
        .toEqual([
          ["model-a", "task a"],
          ["model-b", "task b"],
          ["model-c", "task c"]
        ])
    }))

  it.effect("results keep input order when a later slot finishes first", () =>
    Effect.gen(function*() {
      const slowDone = yield* Deferred.make<void>()
      const llm = FakeLLM.respond((request) =>
        request.model === "model-slow"
          ? Effect.as(
            Effect.zipRight(Effect.repeatN(Effect.yieldNow(), 20), Deferred.succeed(slowDone, undefined)),
            Turn({ content: "slow" })
          )
          : Turn({ content: "fast" })
      )
      const slow = Agent.make({ name: "slow", model: "model-slow" })
      const fast = Agent.make({ name: "fast", model: "model-fast" })
      const results = yield* runAgents([
        [slow, "x"],
        [fast, "y"]
      ]).pipe(Effect.provide(makeTestCtx({ llm })))
      expect(results.map((r) => r.output)).toEqual(["slow", "fast"])
      expect(yield* Deferred.isDone(slowDone)).toBe(true)
    }))

  it.effect("20 ReAct agents with tool calls under maxConcurrency 1 all finish (no deadlock), one tool at a time", () =>
    Effect.gen(function*() {
      const { state, tool } = probe()
      const agents = Array.from({ length: 20 }, (_, i) => reactAgent(`agent${i}`, [tool]))
      const budget = Budget.unsafeMake({ maxConcurrency: 1 })
      const results = yield* runAgents(agents.map((agent, i) => [agent, `task ${i}`] as const)).pipe(
        Effect.provide(makeTestCtx({ llm: probeScript(), budget }))
      )
      expect(results).toHaveLength(20)
      expect(results.map((r) => r.output)).toEqual(
        agents.map((_, i) => `model-agent${i}: ran in test-run/agent${i}#${i}`)
      )
      expect(state.runIds).toHaveLength(20)
      expect(state.maxInFlight).toBe(1)
      expect(budget.modelCalls).toBe(40)
      expect(budget.toolCalls).toBe(20)
    }))

  it.effect("runs at most maxConcurrency agents at once, and more than one", () =>
    Effect.gen(function*() {
      const counters = { inFlight: 0, max: 0 }
      const llm = FakeLLM.respond(() =>
        Effect.gen(function*() {
          counters.inFlight += 1
          counters.max = Math.max(counters.max, counters.inFlight)
          yield* Effect.repeatN(Effect.yieldNow(), 5)
          counters.inFlight -= 1
          return Turn({ content: "ok" })
        })
      )
      const agents = Array.from({ length: 9 }, (_, i) => [Agent.make({ name: `a${i}`, model: "m" }), "go"] as const)
      const results = yield* runAgents(agents).pipe(Effect.provide(makeTestCtx({ llm, budget: { maxConcurrency: 3 } })))
      expect(results).toHaveLength(9)
      expect(counters.max).toBe(3)
    }))

  it.effect("the first failure interrupts the siblings: their slow tools see the interruption", () =>
    Effect.gen(function*() {
      const started = yield* Ref.make(0)
      const bothStarted = yield* Deferred.make<void>()
      const interrupted: Array<string> = []
      const slow = Tool.make("slow", {
        description: DESCRIPTION,
        parameters: {},
        sideEffecting: false,
        handler: () =>
          Effect.gen(function*() {
            const context = yield* RunContext
            const n = yield* Ref.updateAndGet(started, (k) => k + 1)
            if (n === 2) yield* Deferred.succeed(bothStarted, undefined)
            return yield* Effect.never.pipe(
              Effect.onInterrupt(() => Effect.sync(() => interrupted.push(context.runId)))
            )
          }).pipe(Effect.as("never"))
      })
      const waiting = (name: string) =>
        Agent.make({ name, model: `model-${name}`, cognition: ReActCognition.make({ tools: [slow] }) })
      const failing = Agent.make({ name: "failing", model: "model-failing" })
      const llm = FakeLLM.respond((request) =>
        request.model === "model-failing"
          ? Effect.as(
            Deferred.await(bothStarted),
            failure({ reason: "invalid_request", retryable: false, message: "bad request" })
          )
          : Turn({ toolCalls: [call(`s-${request.model}`, "slow")] })
      )
      const exit = yield* Effect.exit(
        runAgents([
          [waiting("b"), "wait"],
          [failing, "fail"],
          [waiting("c"), "wait"]
        ]).pipe(Effect.provide(makeTestCtx({ llm })))
      )
      expect(failureOf(exit)._tag).toBe("ChatModelError")
      expect(interrupted.sort()).toEqual(["test-run/b#0", "test-run/c#2"])
    }))

  it.effect("bestEffort: a failing slot is a Left, the others are Rights, in input order", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.respond((request) =>
        request.model === "model-bad"
          ? failure({ reason: "invalid_request", retryable: false, message: "no" })
          : Turn({ content: `ok ${request.model}` })
      )
      const slots = yield* runAgents(
        [
          [Agent.make({ name: "good1", model: "model-good1" }), "x"],
          [Agent.make({ name: "bad", model: "model-bad" }), "x"],
          [Agent.make({ name: "good2", model: "model-good2" }), "x"]
        ],
        { bestEffort: true }
      ).pipe(Effect.provide(makeTestCtx({ llm })))
      expect(slots.map((slot) => (Either.isRight(slot) ? slot.right.output : `failed: ${slot.left._tag}`))).toEqual([
        "ok model-good1",
        "failed: ChatModelError",
        "ok model-good2"
      ])
    }))

  it.effect("a shared budget stops them all, even with bestEffort; the refused calls never reach the model", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.respond(() => Turn({ content: "ok" }))
      const agents = Array.from({ length: 5 }, (_, i) => [Agent.make({ name: `a${i}`, model: "m" }), "go"] as const)
      const budget = Budget.unsafeMake({ maxModelCalls: 2, maxConcurrency: 1 })
      const exit = yield* Effect.exit(
        runAgents(agents, { bestEffort: true }).pipe(Effect.provide(makeTestCtx({ llm, budget })))
      )
      expect(failureOf(exit)._tag).toBe("BudgetExceeded")
      expect(llm.calls).toBe(2)
      expect(budget.modelCalls).toBe(2)
    }))

  it.effect("a sibling's gated call (no approver, no store): the others finish, then RunSuspended lists its entry with its path", () =>
    Effect.gen(function*() {
      const { state, tool } = probe()
      const refund = Tool.make("refund", {
        description: DESCRIPTION,
        parameters: {},
        sideEffecting: true,
        requiresApproval: true,
        handler: () => Effect.succeed("refunded")
      })
      const gated = Agent.make({
        name: "gated",
        model: "model-gated",
        cognition: ReActCognition.make({ tools: [refund] })
      })
      const llm = FakeLLM.respond((request) =>
        request.model === "model-gated"
          ? Turn({ toolCalls: [call("r1", "refund")] })
          : request.messages.at(-1)!.role === "tool"
          ? Turn({ content: "done" })
          : Turn({ toolCalls: [call(`c-${request.model}`, "probe")] })
      )
      const exit = yield* Effect.exit(
        runAgents([
          [reactAgent("a", [tool]), "x"],
          [gated, "refund it"],
          [reactAgent("c", [tool]), "x"]
        ]).pipe(Effect.provide(makeTestCtx({ llm })))
      )
      expect(state.runIds.sort()).toEqual(["test-run/a#0", "test-run/c#2"])
      const error = failureOf(exit)
      expect(error._tag).toBe("RunSuspended")
      if (error._tag === "RunSuspended") {
        expect(error.runId).toBe("test-run")
        expect(error.pending.map((entry) => [entry.kind, entry.path, entry.call.name])).toEqual([[
          "Approval",
          "test-run/gated#1",
          "refund"
        ]])
      }
    }))
})
