/**
 * Coordinators (spec-runtime §7.7 CoordinatorCognition; §9 policy.dispatch, llm_selector): children
 * run turn by turn on child runs, round-robin or picked by the model with the round-robin
 * fallback; each turn checks cancellation and adds a `policy.dispatch` event; under a store the
 * run is saved per turn, so it resumes after a crash without re-running a finished child, and a
 * child's gated call suspends it and resumes through the tree's decisions.
 */
import { Agent, Approval, Coordinator, ReActCognition } from "@agentkit/agents"
import type { AgentResult, Cognition } from "@agentkit/agents"
import { Cancellation, CheckpointStore, RunContext, StoreError, Tracing } from "@agentkit/core"
import { FakeLLM, Fixture, makeTestCtx, Turn } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer, Option, Schema, TestClock } from "effect"
import { call, DESCRIPTION, recordOf } from "./fixtures.js"

const { failureOf } = Fixture

const child = (name: string) => Agent.make({ name, model: `model-${name}` })

/** Each child answers with its name and the task it was given. */
const echoing = () =>
  FakeLLM.respond((request) => Turn({ content: `${request.model} saw <${request.messages.at(-1)!.content}>` }))

const desk = <R>(cognition: Cognition<R>) => Agent.make({ name: "desk", model: "model-desk", cognition })

/** A dead process's view of a store: from `kill()` on, every call fails. */
const killable = (inner: CheckpointStore.Service) => {
  let dead = false
  const guarded = Object.fromEntries(
    Object.entries(inner).map(([key, f]) => [
      key,
      (...args: Array<unknown>) =>
        Effect.suspend(() =>
          dead
            ? Effect.fail(new StoreError({ operation: key, message: "the process is dead", retryable: false }))
            : (f as (...a: Array<unknown>) => Effect.Effect<unknown>)(...args)
        )
    ])
  ) as unknown as CheckpointStore.Service
  return { store: guarded, kill: () => void (dead = true) }
}

const withStore = (llm: FakeLLM.FakeLLM, store: CheckpointStore.Service) =>
  Layer.merge(makeTestCtx({ llm }), CheckpointStore.layer(store))

describe("Coordinator.roundRobin", () => {
  it.effect("runs the children in turn on child runs, each on the conversation so far; output is the last answer", () =>
    Effect.gen(function*() {
      const llm = echoing()
      const tracer = Tracing.recording()
      const result = yield* desk(Coordinator.roundRobin({ children: [child("a"), child("b")], maxTurns: 3 }))
        .run("plan the trip")
        .pipe(Effect.provide(makeTestCtx({ llm })), Effect.provide(tracer.layer))
      expect(llm.requests.map((request) => request.model)).toEqual(["model-a", "model-b", "model-a"])
      expect(llm.requests[0]!.messages.at(-1)!.content).toBe("plan the trip")
      expect(llm.requests[1]!.messages.at(-1)!.content).toBe("user: plan the trip\n\n[a]: model-a saw <plan the trip>")
      expect(result.stopReason).toBe("max_turns")
      expect(result.output).toBe(`model-a saw <${llm.requests[2]!.messages.at(-1)!.content}>`)
      expect(result.usage.inputTokens).toBe(30) // the three child runs
      expect(result.ownUsage.inputTokens).toBe(0) // round-robin calls no model itself
      const run = tracer.one("invoke_agent desk")
      expect(run.attributes.get("agentkit.agent.is_coordinator")).toBe(true)
      expect(run.attributes.get("agentkit.agent.policy")).toBe("RoundRobinPolicy")
      expect(run.events.filter((event) => event.name === "policy.dispatch").map((event) => event.attributes)).toEqual([
        { policy: "RoundRobinPolicy", selected_child: "a", selection_reason: "round-robin index 0" },
        { policy: "RoundRobinPolicy", selected_child: "b", selection_reason: "round-robin index 1" },
        { policy: "RoundRobinPolicy", selected_child: "a", selection_reason: "round-robin index 0" }
      ])
      // the children's spans are children of the coordinator's
      expect(tracer.named("invoke_agent a").every((span) => span.parentSpanId === run.spanId)).toBe(true)
    }))

  it.effect("each turn is its own child run: <runId>/<child>#<turn>", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const whoami = Tool.make("whoami", {
        description: DESCRIPTION,
        parameters: {},
        sideEffecting: false,
        handler: () => Effect.map(RunContext, (context) => (seen.push(context.runId), "ok"))
      })
      const worker = (name: string) =>
        Agent.make({ name, model: "m", cognition: ReActCognition.make({ tools: [whoami] }) })
      const llm = FakeLLM.respond((request) =>
        request.messages.at(-1)!.role === "tool"
          ? Turn({ content: "done" })
          : Turn({ toolCalls: [call("w", "whoami")] })
      )
      yield* desk(Coordinator.roundRobin({ children: [worker("a"), worker("b")], maxTurns: 3 }))
        .run("go")
        .pipe(Effect.provide(makeTestCtx({ llm })))
      expect(seen).toEqual(["test-run/a#0", "test-run/b#1", "test-run/a#2"])
    }))

  it.effect("stopWhen stops the run with `completed`", () =>
    Effect.gen(function*() {
      const llm = echoing()
      const result = yield* desk(
        Coordinator.roundRobin({
          children: [child("a"), child("b")],
          maxTurns: 10,
          stopWhen: (turn) => turn.child === "b"
        })
      )
        .run("x")
        .pipe(Effect.provide(makeTestCtx({ llm })))
      expect([result.stopReason, llm.calls]).toEqual(["completed", 2])
    }))

  it.effect("a cancelled run stops before the next turn", () =>
    Effect.gen(function*() {
      const llm = echoing()
      const cancellation = Cancellation.make()
      cancellation.cancel()
      const exit = yield* Effect.exit(
        desk(Coordinator.roundRobin({ children: [child("a")], maxTurns: 3 }))
          .run("x")
          .pipe(Effect.provide(makeTestCtx({ llm, cancellation })))
      )
      expect(failureOf(exit)._tag).toBe("Cancelled")
      expect(llm.calls).toBe(0)
    }))

  it("bad options throw AgentDefinitionError when the cognition is made", () => {
    expect(() => Coordinator.roundRobin({ children: [] })).toThrow("children must name at least one agent")
    expect(() => Coordinator.roundRobin({ children: [child("a"), child("a")] })).toThrow("two children are named 'a'")
    expect(() => Coordinator.roundRobin({ children: [child("a")], maxTurns: 0 })).toThrow(
      "maxTurns must be a positive integer; got 0"
    )
  })

  it("the run policy sees the children's tools (the static trifecta check)", () => {
    const tools = ["private_data", "untrusted_content", "egress"].map((cap) =>
      Tool.make(`t_${cap}`, {
        description: DESCRIPTION,
        parameters: {},
        sideEffecting: false,
        caps: [cap as "egress"],
        handler: () => "x"
      })
    )
    const reader = Agent.make({
      name: "reader",
      model: "m",
      cognition: ReActCognition.make({ tools: [tools[0]!, tools[1]!] })
    })
    const sender = Agent.make({
      name: "sender",
      model: "m",
      cognition: ReActCognition.make({ tools: [tools[2]!, tools[0]!] })
    })
    const cognition = Coordinator.roundRobin({ children: [reader, sender] })
    expect(cognition.tools.names()).toEqual(["t_egress", "t_private_data", "t_untrusted_content"])
  })
})

describe("Coordinator.selector", () => {
  it.effect("the model picks the child; an unknown name falls back to round-robin; DONE completes", () =>
    Effect.gen(function*() {
      const picks = ["b", "nobody", "DONE"]
      let asked = 0
      const llm = FakeLLM.respond((request) =>
        request.model === "model-desk"
          ? Turn({ content: ` ${picks[asked++]!}\n` })
          : Turn({ content: `${request.model} answered` })
      )
      const tracer = Tracing.recording()
      const result = yield* Agent.make({
        name: "desk",
        model: "model-desk",
        prompt: "Route it.",
        cognition: Coordinator.selector({ children: [child("a"), child("b")], maxTurns: 5 })
      })
        .run("help")
        .pipe(Effect.provide(makeTestCtx({ llm })), Effect.provide(tracer.layer))
      expect(llm.requests.map((request) => request.model)).toEqual([
        "model-desk",
        "model-b",
        "model-desk",
        "model-b",
        "model-desk"
      ])
      const selectorPrompt = llm.requests[0]!.messages[0]!.content
      expect(selectorPrompt).toContain("Route it.")
      expect(selectorPrompt).toContain("You coordinate these agents: a, b.")
      expect(llm.requests[0]!.tools).toEqual([])
      expect(result.stopReason).toBe("completed")
      expect(result.output).toBe("model-b answered")
      expect(result.usage.inputTokens).toBe(50) // three selector calls and two child runs
      expect(result.ownUsage.inputTokens).toBe(30) // its own: the three selector calls
      expect(
        tracer
          .one("invoke_agent desk")
          .events.filter((event) => event.name === "policy.dispatch")
          .map((event) => event.attributes["selection_reason"])
      ).toEqual(["selector returned 'b'", "selector returned 'nobody'; fallback round-robin index 1"])
    }))
})

describe("a coordinator under a checkpoint store", () => {
  it.effect("crashes mid-turn and resumes: the finished turn's child is not run again; the crashed turn's child goes on", () =>
    Effect.gen(function*() {
      const inner = CheckpointStore.makeMemory()
      const dying = killable(inner)
      const coordinator = () =>
        desk(Coordinator.roundRobin({ children: [child("a"), child("b"), child("c")], maxTurns: 3 }))
      const first = FakeLLM.respond((
        request
      ) => (request.model === "model-b" ? Effect.never : Turn({ content: `${request.model} done` })))
      const fiber = yield* coordinator().run("work").pipe(Effect.provide(withStore(first, dying.store)), Effect.fork)
      for (let i = 0; i < 200 && first.calls < 2; i++) yield* Effect.yieldNow()
      expect(first.requests.map((request) => request.model)).toEqual(["model-a", "model-b"])
      const saved = yield* recordOf(inner)
      expect(saved.status).toBe("running")
      expect(Schema.decodeUnknownSync(Coordinator.StateV1)(saved.state.cognitionState)).toMatchObject({
        turn: 1,
        results: [{ child: "a", output: "model-a done" }]
      })
      dying.kill() // the process dies: its lease is never released
      yield* Fiber.interrupt(fiber)

      yield* TestClock.adjust(Duration.seconds(31))
      const second = FakeLLM.respond((request) => Turn({ content: `${request.model} done` }))
      const result = yield* coordinator().run("work").pipe(Effect.provide(withStore(second, inner)))
      expect(second.requests.map((request) => request.model)).toEqual(["model-b", "model-c"])
      expect(result.output).toBe("model-c done")
      expect(result.stopReason).toBe("max_turns")
      const done = yield* recordOf(inner)
      expect([done.status, done.state.recoveries]).toEqual(["done", 1])
      const childA = Option.getOrThrow(yield* inner.load("test-run/a#0"))
      expect(childA.status).toBe("done")
      // a finished run answers from its record
      const again = yield* coordinator().run("work").pipe(Effect.provide(withStore(FakeLLM.script([]), inner)))
      expect(again.output).toBe("model-c done")
    }))

  it.effect("a child's gated call suspends the coordinator; resume continues that child, then the next turns", () =>
    Effect.gen(function*() {
      const store = CheckpointStore.makeMemory()
      const refunds: Array<string> = []
      const refund = Tool.make("refund", {
        description: DESCRIPTION,
        parameters: { order_id: Schema.String },
        sideEffecting: true,
        requiresApproval: true,
        handler: ({ order_id }) => Effect.sync(() => (refunds.push(order_id), `refunded ${order_id}`))
      })
      const billing = Agent.make({
        name: "billing",
        model: "model-billing",
        cognition: ReActCognition.make({ tools: [refund] })
      })
      const coordinator = () =>
        desk(Coordinator.roundRobin({ children: [child("a"), billing, child("c")], maxTurns: 3 }))
      const script = () =>
        FakeLLM.respond((request) =>
          request.model !== "model-billing"
            ? Turn({ content: `${request.model} done` })
            : request.messages.at(-1)!.role === "tool"
            ? Turn({ content: `billing: ${request.messages.at(-1)!.content}` })
            : Turn({ toolCalls: [call("r1", "refund", { order_id: "A-1" })] })
        )
      const first = script()
      const suspended: AgentResult.AgentResult = yield* coordinator().run("refund A-1").pipe(
        Effect.provide(withStore(first, store))
      )
      expect(suspended.stopReason).toBe("awaiting_approval")
      expect(refunds).toEqual([])
      const pending = suspended.suspended!.pending
      expect(pending.map((entry) => [entry.kind, entry.path, entry.call.name])).toEqual([[
        "Approval",
        "test-run/billing#1",
        "refund"
      ]])
      expect((yield* recordOf(store)).status).toBe("suspended")

      const second = script()
      const result = yield* coordinator()
        .resume("test-run", Approval.decisions([[pending[0]!.id, Approval.approve(pending[0]!.digest)]]))
        .pipe(Effect.provide(withStore(second, store)))
      expect(refunds).toEqual(["A-1"])
      expect(second.requests.map((request) => request.model)).toEqual(["model-billing", "model-c"])
      expect(result.output).toBe("model-c done")
      expect((yield* recordOf(store)).status).toBe("done")
    }))
})
