/**
 * Type-level tests (checked by `tsc -b packages/agents`): a tool handler's requirements flow into
 * `agent.run`'s requirements; tool errors never leak into the run's error type.
 */
import { Agent, Approval, ReActCognition } from "@agentkit/agents"
import type {
  AgentError,
  AgentEvent,
  AgentResult,
  GuardrailTripped,
  LifecycleError,
  PolicyDenied
} from "@agentkit/agents"
import type {
  BudgetExceeded,
  Cancelled,
  ChatModelError,
  DepthExceeded,
  Invoker,
  ModelCatalog,
  RunContext,
  StoreError
} from "@agentkit/core"
import { FakeLLM, makeTestCtx, Seed, Turn } from "@agentkit/testing"
import { asTool, Tool } from "@agentkit/tools"
import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import { Context, Data, Effect, Layer, Schema } from "effect"
import type { Stream } from "effect"

const { cancelOrder, lookupCall } = Seed

class OrderDb extends Context.Tag("test/OrderDb")<OrderDb, { readonly status: (id: string) => string }>() {}
class Clock extends Context.Tag("test/Clock")<Clock, { readonly today: string }>() {}
class NotFound extends Data.TaggedError("NotFound")<{ readonly message: string }> {}

const DESCRIPTION = "Look up an order by its id and return its status line."

const dbLookup = Tool.make("lookup_order", {
  description: DESCRIPTION,
  parameters: { order_id: Schema.String },
  sideEffecting: false,
  handler: ({ order_id }) =>
    Effect.flatMap(
      OrderDb,
      (db) => (order_id === "ZZZ"
        ? Effect.fail(new NotFound({ message: "no such order" }))
        : Effect.succeed(db.status(order_id)))
    )
})

const today = Tool.make("today", {
  description: "Return today's date in ISO format, from the app's clock.",
  parameters: {},
  sideEffecting: false,
  handler: () => Effect.map(Clock, (clock) => clock.today)
})

describe("types", () => {
  it("a tool whose handler fails with a plain value (not an Error) is accepted by ReActCognition", () => {
    const failing = Tool.make("failing", {
      description: "A tool that always fails, for checking the registry accepts it.",
      parameters: { q: Schema.String },
      sideEffecting: false,
      handler: () => Effect.fail("nope" as const)
    })
    const cognition = ReActCognition.make({ tools: [failing] })
    expect(cognition.tools.names()).toEqual(["failing"])
    expectTypeOf(failing.run).returns.toExtend<Effect.Effect<never, "nope" | Tool.ToolError, RunContext>>()
  })

  it("a tool's handler requirements appear in agent.run's and agent.stream's requirements", () => {
    const agent = Agent.make({
      name: "support",
      model: "m",
      cognition: ReActCognition.make({ tools: [dbLookup, cancelOrder] })
    })
    expectTypeOf(agent).toEqualTypeOf<Agent.Agent<OrderDb>>()
    type Run = ReturnType<typeof agent.run>
    expectTypeOf<Effect.Effect.Context<Run>>().toEqualTypeOf<RunContext | Invoker | OrderDb>()
    expectTypeOf<Effect.Effect.Success<Run>>().toEqualTypeOf<AgentResult.AgentResult>()
    // the tool's own NotFound is reflected to the model, never a failure of the run
    expectTypeOf<Effect.Effect.Error<Run>>().toEqualTypeOf<AgentError>()
    expectTypeOf<AgentError>().toEqualTypeOf<
      | ChatModelError
      | ModelCatalog.CapabilityMismatch
      | BudgetExceeded
      | Cancelled
      | PolicyDenied
      | DepthExceeded
      | StoreError
      | LifecycleError
      | GuardrailTripped
    >()
    expectTypeOf<Stream.Stream.Context<ReturnType<typeof agent.stream>>>().toEqualTypeOf<
      RunContext | Invoker | OrderDb
    >()
    expectTypeOf<Stream.Stream.Success<ReturnType<typeof agent.stream>>>().toEqualTypeOf<AgentEvent.AgentEvent>()
  })

  it("several tools' requirements are unioned; a tool-less agent needs only RunContext and Invoker", () => {
    const agent = Agent.make({
      name: "support",
      model: "m",
      cognition: ReActCognition.make({ tools: [dbLookup, today] })
    })
    expectTypeOf<Effect.Effect.Context<ReturnType<typeof agent.run>>>().toEqualTypeOf<
      RunContext | Invoker | OrderDb | Clock
    >()
    const single = Agent.make({ name: "single", model: "m" })
    expectTypeOf<Effect.Effect.Context<ReturnType<typeof single.run>>>().toEqualTypeOf<RunContext | Invoker>()
  })

  it("a sub-agent's requirements flow through asTool into the coordinator", () => {
    const researcher = Agent.make({
      name: "researcher",
      model: "m",
      cognition: ReActCognition.make({ tools: [dbLookup] })
    })
    const research = asTool(researcher, {
      name: "research",
      description: "Delegate a research sub-task to the researcher agent."
    })
    const coordinator = Agent.make({
      name: "support",
      model: "m",
      cognition: ReActCognition.make({ tools: [research, today] })
    })
    expectTypeOf<Effect.Effect.Context<ReturnType<typeof coordinator.run>>>().toEqualTypeOf<
      RunContext | Invoker | OrderDb | Clock
    >()
  })

  it.effect("the required service is really used at run time once provided", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ name: "support", model: "m", cognition: ReActCognition.make({ tools: [dbLookup] }) })
      const llm = FakeLLM.script([
        Turn({ toolCalls: [lookupCall("c1", "A-771"), lookupCall("c2", "ZZZ")] }),
        Turn({ content: "done" })
      ])
      const db = Layer.succeed(OrderDb, { status: (id) => `db says ${id} shipped` })
      const program = agent.run("?").pipe(Effect.provide(makeTestCtx({ llm })), Effect.provide(db))
      expectTypeOf<Effect.Effect.Context<typeof program>>().toEqualTypeOf<never>()
      const result = yield* program
      expect(result.transcript.slice(-3, -1).map((message) => message.content)).toEqual([
        "db says A-771 shipped",
        "ERROR: tool 'lookup_order' failed: NotFound: no such order"
      ])
    }))

  it("running without the tool's service does not compile", () => {
    const agent = Agent.make({ name: "support", model: "m", cognition: ReActCognition.make({ tools: [dbLookup] }) })
    const llm = FakeLLM.script([])
    const unprovided = () =>
      // @ts-expect-error OrderDb is still required
      Effect.runPromise(agent.run("?").pipe(Effect.provide(makeTestCtx({ llm }))))
    expect(typeof unprovided).toBe("function")
  })

  it("a tool whose handler can only fail (success type never) can be registered", () => {
    const failing = Tool.make("failing", {
      description: "A tool that always fails, for checking the registry accepts it.",
      parameters: { q: Schema.String },
      sideEffecting: false,
      handler: () => Effect.fail("nope" as const)
    })
    expectTypeOf(ReActCognition.make({ tools: [failing] }).tools.names()).toEqualTypeOf<ReadonlyArray<string>>()
  })
})

describe("decisions are keyed by pending ids only", () => {
  const entry = Approval.makeEntry({
    kind: "Approval",
    path: "run-1",
    iteration: 0,
    index: 0,
    reasons: ["requires_approval"],
    createdAt: 0,
    call: { id: "c1", name: "cancel_order", arguments: { order_id: "A-771" } },
    tool: cancelOrder
  })
  const agent = Agent.make({ name: "support", model: "m", cognition: ReActCognition.make({ tools: [cancelOrder] }) })

  it("decisions built from pending ids compile, for resume and for an approver", () => {
    const decisions = Approval.decisions([[entry.id, Approval.approve(entry.digest)]])
    expectTypeOf(decisions).toEqualTypeOf<Approval.Decisions>()
    expectTypeOf(Approval.decideEach([entry], (e) => Approval.reject(e.digest))).toEqualTypeOf<Approval.Decisions>()
    expectTypeOf(Approval.decisions(new Map([[entry.id, Approval.approve(entry.digest)]]))).toEqualTypeOf<
      Approval.Decisions
    >()
    const resumed = () => agent.resume("run-1", decisions)
    const approver = Layer.succeed(Approval.Approver, {
      decide: (request) => Effect.succeed(Approval.decideEach(request.pending, (p) => Approval.approve(p.digest)))
    })
    expect([typeof resumed, typeof approver]).toEqual(["function", "object"])
    expect(decisions[entry.id]).toEqual(Approval.approve(entry.digest))
  })

  it("decisions keyed by tool-call ids, or any string-keyed record, do not compile", () => {
    const byCallId = () =>
      // @ts-expect-error a tool-call id is not a pending id
      agent.resume("run-1", { [entry.call.id]: Approval.approve(entry.digest) })
    const byCallIdPairs = () =>
      // @ts-expect-error a tool-call id is not a pending id
      Approval.decisions([[entry.call.id, Approval.approve(entry.digest)]])
    const fromEntries = () =>
      // @ts-expect-error Object.fromEntries makes a plain string-keyed record
      agent.resume("run-1", Object.fromEntries([[entry.id, Approval.approve(entry.digest)]]))
    const literal = () =>
      // @ts-expect-error a record literal keyed by the pending id is not built from pending ids either
      agent.resume("run-1", { [entry.id]: Approval.approve(entry.digest) })
    const computed: Record<string, Approval.Decision> = { [`p-${"0".repeat(16)}`]: Approval.approve(entry.digest) }
    const computedRecord = () =>
      // @ts-expect-error a computed-string record
      agent.resume("run-1", computed)
    const plainString = () =>
      // @ts-expect-error a plain string is not a pending id
      Approval.decisions([["p-0123456789abcdef", Approval.approve(entry.digest)]])
    const approver = () =>
      Layer.succeed(Approval.Approver, {
        decide: (request) =>
          // @ts-expect-error an approver answering by tool-call id does not compile
          Effect.succeed(Object.fromEntries(request.pending.map((p) => [p.call.id, Approval.approve(p.digest)])))
      })
    expect([byCallId, byCallIdPairs, fromEntries, literal, computedRecord, plainString, approver].length).toBe(7)
  })
})
