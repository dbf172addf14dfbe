/**
 * Sub-runs inside a durable run, on `WorkflowEngine.layerMemory`: a sub-run's model and tool calls
 * are activities of their own, named under the sub-run's path below the root (the seams'
 * segments: `<tool>#<callId>` for `asTool`, `<agent>#<index>` for `runAgents`), so a body re-driven
 * after a crash inside a sub-run replays the sub-run's steps instead of calling its model again;
 * a sub-run that suspends on a gated call suspends the root, and a decision resumes the tree.
 */
import { Agent, Approval, Coordinator, Graph, ReActCognition, runAgents } from "@agentkit/agents"
import type { Capability, Chat } from "@agentkit/core"
import { CheckpointStore } from "@agentkit/core"
import { DurableAgent, DurableRuns } from "@agentkit/durable"
import type { DurableErrors } from "@agentkit/durable"
import { FakeLLM, Seed, Tracing, Turn } from "@agentkit/testing"
import { asTool, Tool } from "@agentkit/tools"
import type { ToolRegistry } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import type * as Workflow from "@effect/workflow/Workflow"
import { Effect, Exit, Schema } from "effect"
import { crashingStore, harness, settle } from "./support.js"

const DESCRIPTION = "Hand the task to a specialist agent and return its answer."

/** The system prompt a request was sent with: which agent asked. */
const who = (request: Chat.ChatRequest): string => {
  const system = request.messages.find((m) => m.role === "system")
  return system?.role === "system" ? system.content : ""
}
const lastTool = (request: Chat.ChatRequest): string | undefined => {
  const last = request.messages.at(-1)
  return last?.role === "tool" ? last.content : undefined
}

const tools = () => {
  const runs = { lookups: 0, charges: 0 }
  const lookup = Tool.make("lookup_order", {
    description: "Look up an order by its id and return its status line.",
    parameters: { order_id: Schema.String },
    sideEffecting: false,
    idempotent: true,
    handler: ({ order_id }) => Effect.sync(() => (runs.lookups += 1, `order ${order_id}: shipped`))
  })
  const charge = Tool.make("charge_card", {
    description: "Charge the customer card; this is not idempotent.",
    parameters: { amount: Schema.Number },
    sideEffecting: true,
    requiresApproval: true,
    handler: ({ amount }) => Effect.sync(() => (runs.charges += 1, `charged ${amount}`))
  })
  return { runs, lookup, charge }
}

/**
 * The scripted model of every agent: a specialist calls its tool once, then answers with the
 * tool's text; the desk delegates once, then answers with the specialist's words.
 */
const model = (selector?: (request: Chat.ChatRequest) => ReturnType<typeof Turn>) => {
  const calls: Record<string, number> = {}
  const llm = FakeLLM.respond((request) => {
    const agent = who(request)
    if (selector !== undefined && agent.startsWith("You coordinate")) return selector(request)
    calls[agent] = (calls[agent] ?? 0) + 1
    const result = lastTool(request)
    if (agent === "desk") {
      return result === undefined
        ? Turn({ toolCalls: [{ id: "c1", name: "delegate", arguments: { task: "Handle order A-771" } }] })
        : Turn({ content: `Desk: ${result}` })
    }
    if (result !== undefined) return Turn({ content: `${agent}: ${result}` })
    return agent === "payments"
      ? Turn({ toolCalls: [{ id: "k-pay", name: "charge_card", arguments: { amount: 12 } }] })
      : Turn({ toolCalls: [{ id: `k-${agent}`, name: "lookup_order", arguments: { order_id: "A-771" } }] })
  })
  return { llm, calls }
}

const specialist = (name: string, tool: ToolRegistry.AnyTool) =>
  Agent.make({ name, model: Seed.MODEL, prompt: name, cognition: ReActCognition.make({ tools: [tool] }) })

const delegateTo = <A, E, R>(
  runnable: {
    readonly run: (task: string) => Effect.Effect<A, E, R>
    readonly caps?: ReadonlyArray<Capability> | undefined
  }
): ToolRegistry.AnyTool => asTool(runnable, { name: "delegate", description: DESCRIPTION })

const desk = <T extends ToolRegistry.AnyTool>(delegate: T, context?: DurableAgent.Options["context"]) =>
  DurableAgent.make(
    Agent.make({
      name: "desk",
      model: Seed.MODEL,
      prompt: "desk",
      cognition: ReActCognition.make({ tools: [delegate] })
    }),
    {
      version: 1,
      approvalTimeout: "1 hour",
      context
    }
  )

const answer = (polled: Exit.Exit<Workflow.Result<DurableAgent.Result, DurableErrors.DurableRunFailed> | undefined>) =>
  Exit.isSuccess(polled) && polled.value?._tag === "Complete" && Exit.isSuccess(polled.value.exit)
    ? polled.value.exit.value.output
    : undefined

/** The activities the engine ran (their spans), in order. */
const activities = (tracer: ReturnType<typeof Tracing.recording>) =>
  tracer.spans.map((span) => span.name).filter((name) => /(^|\/)(turn|tool|select)-/.test(name))

describe("sub-runs inside a durable run", () => {
  it.effect("asTool(child): the child's steps are activities under its path; a crash after the child's turn-0 replays it, its model is not called again", () => {
    const { llm, calls } = model()
    const { lookup, runs } = tools()
    const delegate = asTool(specialist("billing", lookup), { name: "delegate", description: DESCRIPTION })
    const durable = desk(delegate)
    const crashing = crashingStore((s) => s.runId === "r-1/delegate#c1" && s.phase === "tools" && s.completed === 0)
    const { layer } = harness([durable], { llm, store: crashing.store })
    const tracer = Tracing.recording()
    return Effect.gen(function*() {
      yield* durable.start({ runId: "r-1", input: "Where is A-771?" })
      const first = yield* settle(durable, "r-1")
      expect(crashing.crashed()).toBe(true)
      expect(Exit.isFailure(first)).toBe(true)
      expect(calls).toEqual({ desk: 1, billing: 1 })
      yield* durable.workflow.resume(yield* durable.executionId("r-1"))
      const second = yield* settle(durable, "r-1")
      expect(answer(second)).toBe("Desk: billing: order A-771: shipped")
      // the child's turn-0 replayed from the journal: each agent asked twice in all
      expect(calls).toEqual({ desk: 2, billing: 2 })
      expect(runs.lookups).toBe(1)
      const names = activities(tracer)
      expect(new Set(names)).toEqual(
        new Set(["turn-0", "delegate#c1/turn-0", "delegate#c1/tool-k-billing", "delegate#c1/turn-1", "turn-1"])
      )
      // the delegating call itself is not an activity: its sub-run's steps are
      expect(names).not.toContain("tool-c1")
    }).pipe(Effect.provide(layer), Effect.provide(tracer.layer))
  })

  it.effect("runAgents with two children: each child's steps are journaled under its own segment; a crash inside one replays both", () => {
    const { llm, calls } = model()
    const { lookup, runs } = tools()
    const team = {
      run: (task: string) =>
        Effect.map(
          runAgents([[specialist("alpha", lookup), task], [specialist("beta", lookup), task]]),
          (results) => results.map((r) => r.output).join(" | ")
        ),
      caps: []
    }
    // one child at a time, so the crash interrupts no sibling's activity in flight (the memory
    // engine journals an interrupted activity as interrupted; a dead runner's is run again)
    const durable = desk(asTool(team, { name: "delegate", description: DESCRIPTION }), {
      budget: { maxConcurrency: 1 }
    })
    const crashing = crashingStore((s) =>
      s.runId === "r-2/delegate#c1/beta#1" && s.phase === "tools" && s.completed === 0
    )
    const { layer } = harness([durable], { llm, store: crashing.store })
    const tracer = Tracing.recording()
    return Effect.gen(function*() {
      yield* durable.start({ runId: "r-2", input: "Where is A-771?" })
      yield* settle(durable, "r-2")
      expect(crashing.crashed()).toBe(true)
      yield* durable.workflow.resume(yield* durable.executionId("r-2"))
      const done = yield* settle(durable, "r-2")
      expect(answer(done)).toBe("Desk: alpha: order A-771: shipped | beta: order A-771: shipped")
      expect(calls).toEqual({ desk: 2, alpha: 2, beta: 2 })
      expect(runs.lookups).toBe(2)
      expect(new Set(activities(tracer))).toEqual(
        new Set([
          "turn-0",
          "delegate#c1/alpha#0/turn-0",
          "delegate#c1/alpha#0/tool-k-alpha",
          "delegate#c1/alpha#0/turn-1",
          "delegate#c1/beta#1/turn-0",
          "delegate#c1/beta#1/tool-k-beta",
          "delegate#c1/beta#1/turn-1",
          "turn-1"
        ])
      )
    }).pipe(Effect.provide(layer), Effect.provide(tracer.layer))
  })

  for (
    const [label, runnable, expected] of [
      [
        "a round-robin coordinator: each child's turn under <child>#<turn>",
        (lookup: ToolRegistry.AnyTool) =>
          delegateTo(
            Agent.make({
              name: "crew",
              model: Seed.MODEL,
              cognition: Coordinator.roundRobin({
                children: [specialist("alpha", lookup), specialist("beta", lookup)],
                maxTurns: 2
              })
            })
          ),
        [
          "delegate#c1/alpha#0/turn-0",
          "delegate#c1/alpha#0/tool-k-alpha",
          "delegate#c1/alpha#0/turn-1",
          "delegate#c1/beta#1/turn-0",
          "delegate#c1/beta#1/tool-k-beta",
          "delegate#c1/beta#1/turn-1"
        ]
      ],
      [
        "a graph: each node's steps under its node id",
        (lookup: ToolRegistry.AnyTool) =>
          delegateTo(
            Graph.make({
              name: "pipeline",
              nodes: {
                first: Graph.agent(specialist("alpha", lookup)),
                second: Graph.agent(specialist("beta", lookup), { after: ["first"] })
              }
            })
          ),
        [
          "delegate#c1/first/turn-0",
          "delegate#c1/first/tool-k-alpha",
          "delegate#c1/first/turn-1",
          "delegate#c1/second/turn-0",
          "delegate#c1/second/tool-k-beta",
          "delegate#c1/second/turn-1"
        ]
      ]
    ] as const
  ) {
    it.effect(`${label}, each step once`, () => {
      const { llm } = model()
      const { lookup, runs } = tools()
      const durable = desk(runnable(lookup))
      const { layer } = harness([durable], { llm })
      const tracer = Tracing.recording()
      return Effect.gen(function*() {
        yield* durable.start({ runId: "r-4", input: "Where is A-771?" })
        const done = yield* settle(durable, "r-4")
        expect(answer(done)).toMatch(/^Desk: /)
        expect(runs.lookups).toBe(2)
        const names = activities(tracer)
        expect(names.filter((name) => name.startsWith("delegate#c1/")).sort()).toEqual([...expected].sort())
        expect(names.filter((name) => !name.includes("/"))).toEqual(["turn-0", "turn-1"])
      }).pipe(Effect.provide(layer), Effect.provide(tracer.layer))
    })
  }

  it.effect("a selector coordinator: its model's pick of each turn is a step of its own (select-<turn>), asked once per turn", () => {
    const picks: Array<string> = []
    const { llm, calls } = model(() => {
      picks.push(picks.length === 0 ? "alpha" : "DONE")
      return Turn({ content: picks.at(-1)! })
    })
    const { lookup, runs } = tools()
    const durable = desk(
      delegateTo(
        Agent.make({
          name: "crew",
          model: Seed.MODEL,
          cognition: Coordinator.selector({
            children: [specialist("alpha", lookup), specialist("beta", lookup)],
            maxTurns: 3
          })
        })
      )
    )
    const { layer } = harness([durable], { llm })
    const tracer = Tracing.recording()
    return Effect.gen(function*() {
      yield* durable.start({ runId: "r-5", input: "Where is A-771?" })
      expect(answer(yield* settle(durable, "r-5"))).toBe("Desk: alpha: order A-771: shipped")
      expect(picks).toEqual(["alpha", "DONE"])
      expect(calls).toEqual({ desk: 2, alpha: 2 })
      expect(runs.lookups).toBe(1)
      expect(activities(tracer).filter((name) => name.startsWith("delegate#c1/")).sort()).toEqual(
        [
          "delegate#c1/select-0",
          "delegate#c1/alpha#0/turn-0",
          "delegate#c1/alpha#0/tool-k-alpha",
          "delegate#c1/alpha#0/turn-1",
          "delegate#c1/select-1"
        ].sort()
      )
    }).pipe(Effect.provide(layer), Effect.provide(tracer.layer))
  })

  it.effect("a gated call inside the child suspends the root; a decision through DurableRuns resumes the tree and the charge runs once", () => {
    const { llm, calls } = model()
    const { charge, runs } = tools()
    const durable = desk(asTool(specialist("payments", charge), { name: "delegate", description: DESCRIPTION }))
    const store = CheckpointStore.makeMemory()
    const { audit, layer } = harness([durable], { llm, store })
    return Effect.gen(function*() {
      const service = yield* DurableRuns.DurableRuns
      yield* durable.start({ runId: "r-3", input: "Charge 12" })
      const suspended = yield* settle(durable, "r-3")
      expect(Exit.isSuccess(suspended) && suspended.value?._tag).toBe("Suspended")
      const root = yield* store.load("r-3")
      expect(root._tag === "Some" ? root.value.status : undefined).toBe("suspended")
      const entry = (JSON.parse(root._tag === "Some" ? root.value.state : "{}") as {
        pending: ReadonlyArray<Approval.PendingEntry>
      }).pending[0]!
      expect([entry.kind, entry.path, entry.call.name]).toEqual(["Approval", "r-3/delegate#c1", "charge_card"])
      expect(runs.charges).toBe(0)
      expect((yield* service.sweep).waiting).toEqual(["r-3"])
      yield* service.decide("r-3", entry.id, Approval.approve(entry.digest), "ops")
      expect((yield* audit.list({ runId: "r-3/delegate#c1" })).records.map((r) => [r.decision, r.action, r.by]))
        .toEqual([["operator", "approve", "ops"]])
      expect((yield* service.sweep).woken).toEqual(["r-3"])
      const done = yield* settle(durable, "r-3")
      expect(answer(done)).toBe("Desk: payments: charged 12")
      expect(runs.charges).toBe(1)
      // the child's turn-0 was not asked again on resume (its record kept it)
      expect(calls).toEqual({ desk: 2, payments: 2 })
    }).pipe(Effect.provide(layer))
  })
})
