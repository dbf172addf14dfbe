/**
 * A durable run that suspends more than once finishes: approvals in sequence, calls found in doubt
 * one after another, an approval whose call is then found in doubt, and a sub-run that asks twice.
 * Each suspension's decisions are recorded through `DurableRuns.decide` and applied by a sweep;
 * only the decisions of the entries the run waits on reach `agent.resume`, so an earlier
 * suspension's decisions never make it refuse the later one.
 */
import { Agent, Approval, DurableRunsPort, ReActCognition } from "@agentkit/agents"
import type { Chat } from "@agentkit/core"
import { CheckpointStore, ExecutionLedger, StaleLease } from "@agentkit/core"
import { DurableAgent, DurableRuns } from "@agentkit/durable"
import { FakeLLM, Seed, Turn } from "@agentkit/testing"
import { asTool, Tool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Option, Schema, TestClock } from "effect"
import { harness, settle } from "./support.js"

const charges = () => {
  const charged: Array<number> = []
  const charge = Tool.make("charge_card", {
    description: "Charge the customer card; this is not idempotent.",
    parameters: { amount: Schema.Number },
    sideEffecting: true,
    handler: ({ amount }) => Effect.sync(() => (charged.push(amount), `charged ${amount}`))
  })
  return { charged, charge }
}

/** A model that charges 12, then 30, then answers. */
const twoCharges = () =>
  FakeLLM.script([
    Turn({ toolCalls: [{ id: "c1", name: "charge_card", arguments: { amount: 12 } }] }),
    Turn({ toolCalls: [{ id: "c2", name: "charge_card", arguments: { amount: 30 } }] }),
    Turn({ content: "Charged twice." })
  ])

/** How the operator decides an entry: approvals approved, calls in doubt marked done (the charge went through). */
const operatorDecision = (entry: Approval.PendingEntry): Approval.Decision =>
  entry.kind === "InDoubt"
    ? Approval.markDone(entry.digest, `charged ${String((entry.call.arguments as { amount: number }).amount)}`)
    : Approval.approve(entry.digest)

/**
 * Drives a run to its end as an operator and a runner would: every suspension's entries decided
 * through `DurableRuns.decide`, then a sweep wakes the run. Gives the output and the kinds of the
 * suspensions met, in order.
 */
const driveToEnd = <R>(durable: DurableAgent.DurableAgent<R>, store: CheckpointStore.Service, runId: string) =>
  Effect.gen(function*() {
    const runs = yield* DurableRuns.DurableRuns
    const suspensions: Array<ReadonlyArray<string>> = []
    for (let i = 0; i < 10; i++) {
      const polled = yield* settle(durable, runId)
      if (Exit.isFailure(polled)) return yield* Effect.die(polled.cause)
      if (polled.value?._tag === "Complete") {
        const exit = polled.value.exit
        if (Exit.isFailure(exit)) return yield* Effect.die(`run ${runId} failed: ${String(exit.cause)}`)
        return { output: exit.value.output, suspensions }
      }
      const record = yield* store.load(runId)
      expect(record._tag === "Some" ? record.value.status : undefined).toBe("suspended")
      const pending = (JSON.parse(record._tag === "Some" ? record.value.state : "{}") as {
        pending: ReadonlyArray<Approval.PendingEntry>
      }).pending
      suspensions.push(pending.map((entry) => entry.kind))
      for (const entry of pending) yield* runs.decide(runId, entry.id, operatorDecision(entry), "ops")
      const swept = yield* runs.sweep
      expect(swept.woken).toEqual([runId])
    }
    return yield* Effect.die(`run ${runId} did not finish in 10 suspensions`)
  })

const setup = (llm: FakeLLM.FakeLLM, ledger?: ExecutionLedger.Service) => {
  const { charge, charged } = charges()
  const agent = Agent.make({
    name: "billing",
    model: Seed.MODEL,
    prompt: "Bill the order.",
    cognition: ReActCognition.make({ tools: [charge] })
  })
  const durable = DurableAgent.make(agent, { version: 1, approvalTimeout: "1 hour" })
  const { layer, store } = harness([durable], { llm, ...(ledger === undefined ? {} : { ledger }) })
  return { durable, layer, store, charged }
}

const statusOf = (store: CheckpointStore.Service, runId: string) =>
  Effect.map(store.load(runId), (record) => (record._tag === "Some" ? record.value.status : undefined))

describe("a durable run that suspends more than once finishes", () => {
  it.effect("two approvals in sequence: each charge runs once, the run ends done", () => {
    const llm = twoCharges()
    const { charged, durable, layer, store } = setup(llm)
    return Effect.gen(function*() {
      yield* durable.start({ runId: "s-1", input: "Charge 12 then 30", autonomy: "gated" })
      const { output, suspensions } = yield* driveToEnd(durable, store, "s-1")
      expect(output).toBe("Charged twice.")
      expect(suspensions).toEqual([["Approval"], ["Approval"]])
      expect(charged).toEqual([12, 30])
      expect(yield* statusOf(store, "s-1")).toBe("done")
      expect(llm.calls).toBe(3)
    }).pipe(Effect.provide(layer))
  })

  it.effect("two calls found in doubt one after the other: neither runs again, the run ends done", () => {
    const llm = twoCharges()
    const ledger = ExecutionLedger.makeMemory()
    const { charged, durable, layer, store } = setup(llm, ledger)
    return Effect.gen(function*() {
      // the claims a runner made just before it died in each call
      yield* ledger.claim("s-2/t0/c0", "digest-of-the-first-attempt")
      yield* ledger.claim("s-2/t1/c0", "digest-of-the-first-attempt")
      yield* durable.start({ runId: "s-2", input: "Charge 12 then 30" })
      const { output, suspensions } = yield* driveToEnd(durable, store, "s-2")
      expect(output).toBe("Charged twice.")
      expect(suspensions).toEqual([["InDoubt"], ["InDoubt"]])
      expect(charged).toEqual([])
      expect(yield* statusOf(store, "s-2")).toBe("done")
      const toolTurns = llm.requests.flatMap((request) => {
        const last = request.messages.at(-1)
        return last?.role === "tool" ? [last.content] : []
      })
      expect(toolTurns).toEqual([
        "charged 12",
        "charged 30"
      ])
    }).pipe(Effect.provide(layer))
  })

  it.effect("an approval, then the approved call found in doubt, then a second approval: the run ends done", () => {
    const llm = twoCharges()
    const ledger = ExecutionLedger.makeMemory()
    const { charged, durable, layer, store } = setup(llm, ledger)
    return Effect.gen(function*() {
      yield* ledger.claim("s-3/t0/c0", "digest-of-the-first-attempt")
      yield* durable.start({ runId: "s-3", input: "Charge 12 then 30", autonomy: "gated" })
      const { output, suspensions } = yield* driveToEnd(durable, store, "s-3")
      expect(output).toBe("Charged twice.")
      expect(suspensions).toEqual([["Approval"], ["InDoubt"], ["Approval"]])
      // the first charge was marked done by hand, the second ran once
      expect(charged).toEqual([30])
      expect(yield* statusOf(store, "s-3")).toBe("done")
    }).pipe(Effect.provide(layer))
  })

  it.effect("a sub-run that asks twice (through asTool) suspends the root twice; the tree ends done", () => {
    const { charge, charged } = charges()
    const payments = Agent.make({
      name: "payments",
      model: Seed.MODEL,
      prompt: "payments",
      cognition: ReActCognition.make({ tools: [charge] })
    })
    const delegate = asTool(payments, {
      name: "delegate",
      description: "Hand the task to the payments agent and return its answer."
    })
    const desk = Agent.make({
      name: "desk",
      model: Seed.MODEL,
      prompt: "desk",
      cognition: ReActCognition.make({ tools: [delegate] })
    })
    const llm = FakeLLM.respond((request: Chat.ChatRequest) => {
      const system = request.messages.find((m) => m.role === "system")
      const agent = system?.role === "system" ? system.content : ""
      const tools = request.messages.filter((m) => m.role === "tool").length
      if (agent === "desk") {
        return tools === 0
          ? Turn({ toolCalls: [{ id: "d1", name: "delegate", arguments: { task: "Charge 12 then 30" } }] })
          : Turn({ content: "Desk: done" })
      }
      return tools === 0
        ? Turn({ toolCalls: [{ id: "k1", name: "charge_card", arguments: { amount: 12 } }] })
        : tools === 1
        ? Turn({ toolCalls: [{ id: "k2", name: "charge_card", arguments: { amount: 30 } }] })
        : Turn({ content: "payments: charged twice" })
    })
    const durable = DurableAgent.make(desk, { version: 1, approvalTimeout: "1 hour" })
    const { layer, store } = harness([durable], { llm })
    return Effect.gen(function*() {
      yield* durable.start({ runId: "s-4", input: "Bill A-771", autonomy: "gated" })
      const { output, suspensions } = yield* driveToEnd(durable, store, "s-4")
      expect(output).toBe("Desk: done")
      expect(suspensions).toEqual([["Approval"], ["Approval"]])
      expect(charged).toEqual([12, 30])
      expect(yield* statusOf(store, "s-4")).toBe("done")
    }).pipe(Effect.provide(layer))
  })
})

describe("a lost lease, the sweep's reconciliation and the operator's view", () => {
  it.effect("a body that lost its lease (StaleLease: it stalled, the lease expired) takes the run over once the lease expired and finishes it done", () => {
    const llm = twoCharges()
    const inner = CheckpointStore.makeMemory()
    let stale = false
    // the first checkpoint after the first charge finds its lease taken: a runner that stalled past it
    const store: CheckpointStore.Service = {
      ...inner,
      save: (lease, request) => {
        const state = JSON.parse(request.state) as { phase: string; turn: { completed: ReadonlyArray<unknown> } }
        if (!stale && state.phase === "tools" && state.turn.completed.length === 1) {
          stale = true
          return Effect.fail(new StaleLease({ runId: request.runId, token: lease.token }))
        }
        return inner.save(lease, request)
      }
    }
    const { charge, charged } = charges()
    const agent = Agent.make({
      name: "billing",
      model: Seed.MODEL,
      prompt: "Bill the order.",
      cognition: ReActCognition.make({ tools: [charge] })
    })
    const durable = DurableAgent.make(agent, { version: 1 })
    const { layer } = harness([durable], { llm, store })
    return Effect.gen(function*() {
      yield* durable.start({ runId: "s-5", input: "Charge 12 then 30" })
      for (let i = 0; i < 500 && !stale; i++) yield* Effect.yieldNow()
      for (let i = 0; i < 200; i++) yield* Effect.yieldNow()
      expect(stale).toBe(true)
      // not ended: the body waits for the lease (30 s by default) to expire
      expect(yield* durable.poll("s-5")).toBe(undefined)
      yield* TestClock.adjust("31 seconds")
      const polled = yield* settle(durable, "s-5")
      expect(
        Exit.isSuccess(polled) && polled.value?._tag === "Complete" && Exit.isSuccess(polled.value.exit)
          ? polled.value.exit.value.output
          : undefined
      ).toBe("Charged twice.")
      expect(yield* statusOf(store, "s-5")).toBe("done")
      // the first charge's result was journaled: replayed, not charged again
      expect(charged).toEqual([12, 30])
      const record = yield* store.load("s-5")
      expect(record._tag === "Some" ? (JSON.parse(record.value.state) as { recoveries: number }).recoveries : -1).toBe(
        1
      )
    }).pipe(Effect.provide(layer))
  })

  it.effect("list and inspect show the store's record beside the engine's execution; reconcile is empty when they agree", () => {
    const llm = twoCharges()
    const { durable, layer, store } = setup(llm)
    return Effect.gen(function*() {
      const runs = yield* DurableRuns.DurableRuns
      yield* durable.start({ runId: "s-6", input: "Charge 12 then 30", autonomy: "gated" })
      yield* settle(durable, "s-6")
      const waiting = yield* runs.inspect("s-6")
      expect(Option.getOrUndefined(waiting)).toMatchObject({
        runId: "s-6",
        agent: "billing",
        store: { status: "suspended", decided: 0 },
        engine: "suspended",
        version: 1,
        problem: undefined
      })
      expect(Option.getOrThrow(waiting).store.pending.map((entry) => entry.kind)).toEqual(["Approval"])
      expect(yield* runs.reconcile).toEqual([])
      yield* driveToEnd(durable, store, "s-6")
      const page = yield* runs.list({ status: "done" })
      expect(page.runs.map((run) => [run.runId, run.store.status, run.engine, run.problem])).toEqual([
        ["s-6", "done", "done", undefined]
      ])
      expect(yield* runs.inspect("nope")).toEqual(Option.none())
      expect(yield* runs.reconcile).toEqual([])
      // the same through the agents package's port
      const port = yield* Effect.provide(
        DurableRunsPort.DurableRunsPort,
        DurableRuns.portLayer.pipe(Layer.provide(Layer.succeed(DurableRuns.DurableRuns, runs)))
      )
      expect(Option.getOrThrow(yield* port.inspect("s-6")).engine).toBe("done")
    }).pipe(Effect.provide(layer))
  })

  it.effect("a record the engine ended but the store holds running (constructed directly) is reported by the sweep and by reconcile, never woken", () => {
    const llm = FakeLLM.script([Turn({ content: "Nothing to charge." })])
    const inner = CheckpointStore.makeMemory()
    const { durable, layer } = (() => {
      const { charge } = charges()
      const agent = Agent.make({
        name: "billing",
        model: Seed.MODEL,
        prompt: "Bill the order.",
        cognition: ReActCognition.make({ tools: [charge] })
      })
      const durable = DurableAgent.make(agent, { version: 1 })
      return { durable, ...harness([durable], { llm, store: inner }) }
    })()
    return Effect.gen(function*() {
      const runs = yield* DurableRuns.DurableRuns
      yield* durable.start({ runId: "s-7", input: "Anything?" })
      yield* settle(durable, "s-7")
      const record = Option.getOrThrow(yield* inner.load("s-7"))
      // the store says running, its lease long expired; the engine's execution is complete
      inner.unsafePlant(
        "s-7",
        JSON.stringify({
          ...record,
          status: "running",
          result: undefined,
          lease: { owner: "gone", token: 9, expiresAt: 0 }
        })
      )
      yield* TestClock.adjust("1 second")
      const report = yield* runs.sweep
      expect(report.diverged).toEqual(["s-7"])
      expect(report.resumed).toEqual([])
      const problems = yield* runs.reconcile
      expect(problems.map((run) => [run.runId, run.store.status, run.engine])).toEqual([["s-7", "running", "done"]])
      expect(problems[0]!.problem).toContain(
        "the engine ended its execution done while the store holds the run running"
      )
      expect(llm.calls).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a page read before the run finished (running, its lease expired) while the engine is done: not reported, the record is read again", () => {
    const llm = FakeLLM.script([Turn({ content: "Nothing to charge." })])
    const inner = CheckpointStore.makeMemory()
    let stale: CheckpointStore.RunRecord | undefined
    // the store's list pages still show the run as it was before its end; a load reads it as it is now
    const store: CheckpointStore.Service = {
      ...inner,
      list: (query) =>
        stale !== undefined && query?.status === "running"
          ? Effect.succeed({ records: [stale], cursor: undefined })
          : inner.list(query)
    }
    const { durable, layer } = (() => {
      const { charge } = charges()
      const agent = Agent.make({
        name: "billing",
        model: Seed.MODEL,
        prompt: "Bill the order.",
        cognition: ReActCognition.make({ tools: [charge] })
      })
      const durable = DurableAgent.make(agent, { version: 1 })
      return { durable, ...harness([durable], { llm, store }) }
    })()
    return Effect.gen(function*() {
      const runs = yield* DurableRuns.DurableRuns
      yield* durable.start({ runId: "s-8", input: "Anything?" })
      yield* settle(durable, "s-8")
      const record = Option.getOrThrow(yield* inner.load("s-8"))
      expect(record.status).toBe("done")
      stale = { ...record, status: "running", result: undefined, lease: { owner: "a", token: 1, expiresAt: 0 } }
      yield* TestClock.adjust("1 second")
      const report = yield* runs.sweep
      expect(report.expiredLeases).toEqual(["s-8"])
      expect(report.diverged).toEqual([])
      expect(yield* runs.reconcile).toEqual([])
    }).pipe(Effect.provide(layer))
  })
})
