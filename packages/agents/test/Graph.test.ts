/**
 * Graph (spec-runtime §7.7 Workflow; §9 span hierarchy): typed nodes wired by `after`, ready nodes
 * run concurrently in waves on child runs, a human gate suspends durably with a `Gate` entry and
 * resumes (in another runtime) with the same decisions as any run; stop reasons complete,
 * suspended, max_steps, deadlock; a sibling's gated call under `runAgents` suspends the tree and
 * resumes; `asTool(graph)` shows its outputs as `k: v` lines.
 */
import { Agent, Approval, Graph, ReActCognition, runAgents } from "@agentkit/agents"
import { CheckpointStore, Tracing, Usage } from "@agentkit/core"
import { FakeLLM, FakeTool, Fixture, makeTestCtx, Turn } from "@agentkit/testing"
import { asTool, Tool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Layer, ManagedRuntime, Option, Schema } from "effect"
import { call, DESCRIPTION, expectedDigest, recordOf, untyped } from "./fixtures.js"

const { failureOf } = Fixture

const named = (name: string) => Agent.make({ name, model: `model-${name}` })

/** Every agent answers with its model and the task it got. */
const echoing = () =>
  FakeLLM.respond((request) => Turn({ content: `${request.model}<${request.messages.at(-1)!.content}>` }))

const withStore = (llm: FakeLLM.FakeLLM, store: CheckpointStore.Service) =>
  Layer.merge(makeTestCtx({ llm }), CheckpointStore.layer(store))

describe("Graph", () => {
  it.effect("ready nodes run concurrently in waves; a node gets its task and its `after` outputs; output is `k: v` lines", () =>
    Effect.gen(function*() {
      const aStarted = yield* Deferred.make<void>()
      const bStarted = yield* Deferred.make<void>()
      // a and b each wait until the other has started: they finish only if they run at the same time
      const llm = FakeLLM.respond((request) => {
        const content = `${request.model}<${request.messages.at(-1)!.content}>`
        if (request.model === "model-a") {
          return Effect.as(
            Effect.zipRight(Deferred.succeed(aStarted, undefined), Deferred.await(bStarted)),
            Turn({ content })
          )
        }
        if (request.model === "model-b") {
          return Effect.as(
            Effect.zipRight(Deferred.succeed(bStarted, undefined), Deferred.await(aStarted)),
            Turn({ content })
          )
        }
        return Turn({ content })
      })
      const graph = Graph.make({
        name: "pipeline",
        nodes: {
          a: Graph.agent(named("a")),
          b: Graph.agent(named("b")),
          c: Graph.agent(named("c"), { after: ["a", "b"] })
        }
      })
      const tracer = Tracing.recording()
      const result = yield* graph.run("task").pipe(Effect.provide(makeTestCtx({ llm })), Effect.provide(tracer.layer))
      expect(result.stopReason).toBe("complete")
      expect(result.outputs).toEqual({
        a: "model-a<task>",
        b: "model-b<task>",
        c: "model-c<task\n\na: model-a<task>\nb: model-b<task>>"
      })
      expect(result.output.split("\n")[0]).toMatch(/^[ab]: model-[ab]<task>$/)
      expect(result.output.endsWith("c: model-c<task\n\na: model-a<task>\nb: model-b<task>>")).toBe(true)
      expect(result.usage.inputTokens).toBe(30)
      expect(result.ownUsage).toEqual(Usage.zero) // a graph calls no model itself
      const span = tracer.one("invoke_workflow pipeline")
      expect(span.attributes.get("gen_ai.operation.name")).toBe("invoke_workflow")
      expect(span.attributes.get("agentkit.workflow.nodes_count")).toBe(3)
      expect(span.attributes.get("agentkit.workflow.stop_reason")).toBe("complete")
      const agents = tracer.spans.filter((s) => s.name.startsWith("invoke_agent"))
      expect(agents).toHaveLength(3)
      expect(agents.every((s) => s.parentSpanId === span.spanId)).toBe(true)
    }))

  it.effect("fn and tool nodes see their inputs; a tool node goes through the tool pipeline", () =>
    Effect.gen(function*() {
      const lookup = FakeTool.make("lookup", { responses: (args) => `status of ${String(args["order_id"])}` })
      const graph = Graph.make({
        name: "mixed",
        nodes: {
          order: Graph.fn(({ task }) => task.toUpperCase(), { caps: [] }),
          status: Graph.tool(lookup, { after: ["order"], args: ({ outputs }) => ({ order_id: outputs["order"] }) }),
          answer: Graph.agent(named("writer"), {
            after: ["status"],
            input: ({ outputs }) => `write about ${outputs["status"]}`
          })
        }
      })
      const llm = echoing()
      const result = yield* graph.run("a-771").pipe(Effect.provide(makeTestCtx({ llm })))
      expect(result.outputs).toEqual({
        order: "A-771",
        status: "status of A-771",
        answer: "model-writer<write about status of A-771>"
      })
      expect(result.output).toBe(
        "order: A-771\nstatus: status of A-771\nanswer: model-writer<write about status of A-771>"
      )
      expect(lookup.calls).toEqual([{ order_id: "A-771" }])
    }))

  it.effect("deadlock: nodes left but none ready (a cycle of `after`); max_steps: more node runs than allowed", () =>
    Effect.gen(function*() {
      const cyclic = Graph.make({
        name: "cyclic",
        nodes: {
          start: Graph.fn(() => "go", { caps: [] }),
          x: Graph.fn(() => "x", { after: ["y", "start"], caps: [] }),
          y: Graph.fn(() => "y", { after: ["x"], caps: [] })
        }
      })
      const stuck = yield* cyclic.run("t").pipe(Effect.provide(makeTestCtx({ llm: FakeLLM.script([]) })))
      expect([stuck.stopReason, stuck.outputs, stuck.partial]).toEqual(["deadlock", { start: "go" }, true])

      const chain = Graph.make({
        name: "chain",
        maxSteps: 2,
        nodes: {
          one: Graph.fn(() => "1", { caps: [] }),
          two: Graph.fn(() => "2", { after: ["one"], caps: [] }),
          three: Graph.fn(() => "3", { after: ["two"], caps: [] })
        }
      })
      const cut = yield* chain.run("t").pipe(Effect.provide(makeTestCtx({ llm: FakeLLM.script([]) })))
      expect([cut.stopReason, cut.outputs]).toEqual(["max_steps", { one: "1", two: "2" }])
    }))

  it("bad definitions throw AgentDefinitionError when the graph is made", () => {
    expect(() => Graph.make({ name: "g", nodes: {} })).toThrow("nodes must name at least one node")
    expect(() => Graph.make({ name: "g", nodes: { a: Graph.gate({ after: ["ghost"] }) } })).toThrow(
      "node 'a' runs after 'ghost', which is not a node; nodes: a"
    )
    expect(() => Graph.make({ name: "g", nodes: { a: Graph.gate({ after: ["a"] }) } })).toThrow(
      "node 'a' runs after itself"
    )
    expect(() => Graph.make({ name: "g", nodes: { "a/b": Graph.gate() } })).toThrow("node id \"a/b\" must match")
    expect(() => Graph.make({ name: "g", maxSteps: 0, nodes: { a: Graph.gate() } })).toThrow(
      "maxSteps must be a positive integer; got 0"
    )
  })

  it("caps: what the graph can reach (agents' tools, tools; a function node counts as all three unless it declares)", () => {
    const reader = Tool.make("reader", {
      description: DESCRIPTION,
      parameters: {},
      sideEffecting: false,
      caps: ["private_data"],
      handler: () => "x"
    })
    const reading = Agent.make({ name: "r", model: "m", cognition: ReActCognition.make({ tools: [reader] }) })
    expect(Graph.make({ name: "g", nodes: { a: Graph.agent(reading), b: Graph.gate() } }).caps).toEqual([
      "private_data"
    ])
    expect(Graph.make({ name: "g", nodes: { f: Graph.fn(() => "x") } }).caps).toEqual([
      "egress",
      "private_data",
      "untrusted_content"
    ])
  })
})

describe("a human gate", () => {
  const pipeline = () =>
    Graph.make({
      name: "refunds",
      nodes: {
        research: Graph.agent(named("research")),
        review: Graph.gate({ after: ["research"] }),
        answer: Graph.agent(named("answer"), { after: ["review", "research"] })
      }
    })

  it.effect("suspends with a Gate entry bound to the node and its inputs; resumes in a second runtime and finishes", () =>
    Effect.gen(function*() {
      const store = CheckpointStore.makeMemory()
      const first = echoing()
      const runtime1 = ManagedRuntime.make(withStore(first, store))
      const suspended = yield* Effect.promise(() => runtime1.runPromise(pipeline().run("refund A-771?")))
      yield* Effect.promise(() => runtime1.dispose())
      expect(suspended.stopReason).toBe("suspended")
      expect(suspended.outputs).toEqual({ research: "model-research<refund A-771?>" })
      const [entry] = suspended.suspended!.pending
      expect(suspended.suspended!.pending).toHaveLength(1)
      expect([entry!.kind, entry!.path, entry!.reasons, entry!.call.name]).toEqual([
        "Gate",
        "test-run",
        ["gate"],
        "human_gate"
      ])
      expect(entry!.call.arguments).toEqual({
        node: "review",
        task: "refund A-771?",
        inputs: { research: "model-research<refund A-771?>" }
      })
      expect(entry!.digest).toBe(expectedDigest(entry!))
      expect(first.requests.map((request) => request.model)).toEqual(["model-research"])
      const saved = yield* recordOf(store)
      expect([saved.status, saved.state.cognition, saved.state.pending.map((p) => p.id)]).toEqual([
        "suspended",
        "graph",
        [entry!.id]
      ])

      // a second runtime (a new process: new graph value, new model, the same store)
      const second = echoing()
      const runtime2 = ManagedRuntime.make(withStore(second, store))
      const bad = yield* Effect.promise(() =>
        runtime2.runPromiseExit(
          pipeline().resume("test-run", Approval.decisions([[entry!.id, Approval.edit(entry!.digest, { note: "x" })]]))
        )
      )
      expect(failureOf(bad)).toMatchObject({
        _tag: "InvalidDecision",
        pendingId: entry!.id,
        accepted: ["approve", "reject"]
      })
      const stale = yield* Effect.promise(() =>
        runtime2.runPromiseExit(
          pipeline().resume("test-run", Approval.decisions([[entry!.id, Approval.approve("sha256:other")]]))
        )
      )
      expect(failureOf(stale)._tag).toBe("DigestMismatch")
      const unknown = yield* Effect.promise(() =>
        runtime2.runPromiseExit(pipeline().resume("test-run", untyped({ "p-0000": Approval.approve(entry!.digest) })))
      )
      expect(failureOf(unknown)._tag).toBe("UnknownPending")
      expect(second.calls).toBe(0) // nothing ran
      expect((yield* recordOf(store)).status).toBe("suspended")

      const result = yield* Effect.promise(() =>
        runtime2.runPromise(
          pipeline().resume(
            "test-run",
            Approval.decisions([[entry!.id, Approval.approve(entry!.digest, { by: "ops@example.com" })]])
          )
        )
      )
      yield* Effect.promise(() => runtime2.dispose())
      expect(result.stopReason).toBe("complete")
      expect(second.requests.map((request) => request.model)).toEqual(["model-answer"]) // research is not run again
      expect(result.outputs).toEqual({
        research: "model-research<refund A-771?>",
        review: "approved",
        answer: "model-answer<refund A-771?\n\nreview: approved\nresearch: model-research<refund A-771?>>"
      })
      const done = yield* recordOf(store)
      expect(done.status).toBe("done")
      expect(Option.isSome(yield* store.load("test-run/research"))).toBe(true)
      // a finished graph answers from its record, outputs included
      const again = yield* pipeline().run("refund A-771?").pipe(Effect.provide(withStore(FakeLLM.script([]), store)))
      expect([again.stopReason, again.outputs]).toEqual(["complete", result.outputs])
    }))

  it.effect("a rejected gate: its output says so and its dependents are skipped", () =>
    Effect.gen(function*() {
      const store = CheckpointStore.makeMemory()
      const suspended = yield* pipeline().run("t").pipe(Effect.provide(withStore(echoing(), store)))
      const [entry] = suspended.suspended!.pending
      const llm = echoing()
      const result = yield* pipeline()
        .resume("test-run", Approval.decisions([[entry!.id, Approval.reject(entry!.digest, "not this week")]]))
        .pipe(Effect.provide(withStore(llm, store)))
      expect(result.stopReason).toBe("complete")
      expect(result.outputs).toEqual({ research: "model-research<t>", review: "rejected: not this week" })
      expect(llm.calls).toBe(0)
    }))

  it.effect("without a store a gate still suspends; resume has nothing to resume from", () =>
    Effect.gen(function*() {
      const suspended = yield* pipeline().run("t").pipe(Effect.provide(makeTestCtx({ llm: echoing() })))
      expect(suspended.stopReason).toBe("suspended")
      const exit = yield* Effect.exit(
        pipeline().resume("test-run", Approval.decisions([])).pipe(Effect.provide(makeTestCtx({ llm: echoing() })))
      )
      expect(failureOf(exit)._tag).toBe("RunNotResumable")
    }))
})

describe("a sibling's gated call under runAgents, in a graph node", () => {
  it.effect("suspends the tree (listing the entry with its path) and resumes: the gated sibling goes on, the others are not run again", () =>
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
      const graph = () =>
        Graph.make({
          name: "fan",
          nodes: {
            fan: Graph.fn(
              ({ task }) =>
                Effect.map(
                  runAgents([
                    [named("a"), task],
                    [billing, task],
                    [named("c"), task]
                  ]),
                  (results) => results.map((r) => r.output).join(" | ")
                ),
              { caps: [] }
            )
          }
        })
      const script = () =>
        FakeLLM.respond((request) =>
          request.model !== "model-billing"
            ? Turn({ content: `${request.model} done` })
            : request.messages.at(-1)!.role === "tool"
            ? Turn({ content: `billing: ${request.messages.at(-1)!.content}` })
            : Turn({ toolCalls: [call("r1", "refund", { order_id: "A-1" })] })
        )
      const first = script()
      const suspended = yield* graph().run("refund A-1").pipe(Effect.provide(withStore(first, store)))
      expect(suspended.stopReason).toBe("suspended")
      const pending = suspended.suspended!.pending
      expect(pending.map((entry) => [entry.kind, entry.path, entry.call.name])).toEqual([[
        "Approval",
        "test-run/fan/billing#1",
        "refund"
      ]])
      expect(refunds).toEqual([])
      expect(first.requests.map((r) => r.model).sort()).toEqual(["model-a", "model-billing", "model-c"])
      expect(Option.getOrThrow(yield* store.load("test-run/fan/a#0")).status).toBe("done")
      expect(Option.getOrThrow(yield* store.load("test-run/fan/billing#1")).status).toBe("suspended")

      const second = script()
      const result = yield* graph()
        .resume("test-run", Approval.decisions([[pending[0]!.id, Approval.approve(pending[0]!.digest)]]))
        .pipe(Effect.provide(withStore(second, store)))
      expect(refunds).toEqual(["A-1"])
      expect(second.requests.map((r) => r.model)).toEqual(["model-billing"]) // the siblings answer from their records
      expect(result.stopReason).toBe("complete")
      expect(result.outputs).toEqual({ fan: "model-a done | billing: refunded A-1 | model-c done" })
    }))
})

describe("asTool over a graph", () => {
  it.effect("a delegating agent calls the graph as a tool and sees its outputs as `k: v` lines", () =>
    Effect.gen(function*() {
      const graph = Graph.make({
        name: "research",
        nodes: { facts: Graph.agent(named("facts")), summary: Graph.agent(named("summary"), { after: ["facts"] }) }
      })
      const tool = asTool(graph, {
        name: "research",
        description: "Run the research graph on a sub-task and return its outputs."
      })
      const lead = Agent.make({ name: "lead", model: "model-lead", cognition: ReActCognition.make({ tools: [tool] }) })
      const llm = FakeLLM.respond((request) =>
        request.model === "model-lead"
          ? request.messages.at(-1)!.role === "tool"
            ? Turn({ content: `lead read: ${request.messages.at(-1)!.content}` })
            : Turn({ toolCalls: [call("g1", "research", { task: "A-771" })] })
          : Turn({ content: `${request.model} ok` })
      )
      const result = yield* lead.run("look into A-771").pipe(Effect.provide(makeTestCtx({ llm })))
      expect(result.output).toBe("lead read: facts: model-facts ok\nsummary: model-summary ok")
    }))
})
