/**
 * The durable engine on `WorkflowEngine.layerMemory`: the step function's calls are activities
 * named after the step, replayed (not called again) when the body is re-driven after a crash; a
 * suspended run waits on a durable deferred that only a sweep over recorded decisions completes;
 * the approval timeout rejects as in-process; bad input is refused with typed errors and runs
 * nothing. A crash is an interruption in the checkpoint store's `save` (the body stops, the workflow is
 * not complete, `Workflow.resume` re-drives it, as the cluster does on another runner).
 */
import { Agent, Approval, ReActCognition } from "@agentkit/agents"
import { CheckpointStore, ExecutionLedger } from "@agentkit/core"
import { DurableAgent, DurableRuns } from "@agentkit/durable"
import { FakeLLM, Seed, Turn } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Metric, Schema, TestClock } from "effect"
import { crashingStore, harness, settle } from "./support.js"

const counted = () => {
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
    handler: ({ amount }) => Effect.sync(() => (runs.charges += 1, `charged ${amount}`))
  })
  return { runs, lookup, charge }
}

const setup = (options: {
  readonly llm: FakeLLM.FakeLLM
  readonly store?: CheckpointStore.Service
  readonly ledger?: ExecutionLedger.Service
  readonly versions?: ReadonlyArray<number>
  readonly context?: DurableAgent.Options["context"]
}) => {
  const { charge, lookup, runs } = counted()
  const agent = Agent.make({
    name: "billing",
    model: Seed.MODEL,
    prompt: "Bill the order.",
    cognition: ReActCognition.make({ tools: [lookup, charge] })
  })
  const durables = (options.versions ?? [1]).map((version) =>
    DurableAgent.make(agent, { version, approvalTimeout: "1 hour", context: options.context })
  )
  const durable = durables[0]!
  const { audit, layer, ledger, store } = harness(durables, options)
  return { durable, durables, runs, store, ledger, audit, layer }
}

const lookupThenAnswer = () =>
  FakeLLM.script([Turn({ toolCalls: [Seed.lookupCall("c1")] }), Turn({ content: "Order A-771 shipped." })])

describe("DurableAgent on WorkflowEngine.layerMemory", () => {
  it.effect("drives the step function to its answer, the record finished done", () => {
    const llm = lookupThenAnswer()
    const { durable, layer, runs, store } = setup({ llm })
    return Effect.gen(function*() {
      yield* durable.start({ runId: "r-1", input: "Where is A-771?" })
      const polled = yield* settle(durable, "r-1")
      expect(
        Exit.isSuccess(polled) && polled.value?._tag === "Complete" && Exit.isSuccess(polled.value.exit)
          ? polled.value.exit.value.output
          : undefined
      ).toBe(
        "Order A-771 shipped."
      )
      expect(llm.calls).toBe(2)
      expect(runs.lookups).toBe(1)
      const record = yield* store.load("r-1")
      expect(record._tag === "Some" ? record.value.status : undefined).toBe("done")
      // starting it again is idempotent: the same execution, nothing runs
      yield* durable.start({ runId: "r-1", input: "Where is A-771?" })
      yield* settle(durable, "r-1")
      expect(llm.calls).toBe(2)
    }).pipe(Effect.provide(layer))
  })

  for (
    const [label, when, expected] of [
      [
        "after turn-0 returned, before its checkpoint",
        (s: { phase: string; completed: number }) => s.phase === "tools" && s.completed === 0,
        "turn-0"
      ],
      [
        "after tool-c1 returned, before its checkpoint",
        (s: { phase: string; completed: number }) => s.phase === "tools" && s.completed === 1,
        "tool-c1"
      ]
    ] as const
  ) {
    it.effect(`a body re-driven after a crash ${label} replays ${expected} from the journal`, () => {
      const llm = lookupThenAnswer()
      const crashing = crashingStore(when)
      const { durable, layer, runs } = setup({ llm, store: crashing.store })
      return Effect.gen(function*() {
        yield* durable.start({ runId: "r-2", input: "Where is A-771?" })
        const first = yield* settle(durable, "r-2")
        expect(crashing.crashed()).toBe(true)
        expect(Exit.isFailure(first)).toBe(true) // the body stopped: not complete
        yield* durable.workflow.resume(yield* durable.executionId("r-2"))
        const second = yield* settle(durable, "r-2")
        expect(Exit.isSuccess(second) && second.value?._tag === "Complete").toBe(true)
        // the model was asked twice in all (turn-0 once, turn-1 once), the lookup ran once
        expect(llm.calls).toBe(2)
        expect(runs.lookups).toBe(1)
      }).pipe(Effect.provide(layer))
    })
  }
})

describe("suspension, decisions and the sweep", () => {
  const chargeThenAnswer = () =>
    FakeLLM.script([
      Turn({ toolCalls: [{ id: "c9", name: "charge_card", arguments: { amount: 12 } }] }),
      Turn({ content: "Charged." })
    ])

  it.effect("a suspended run is woken only by a sweep once its entry is decided; bad decisions are refused and record nothing", () => {
    const llm = chargeThenAnswer()
    const { durable, layer, runs, store } = setup({ llm })
    return Effect.gen(function*() {
      const service = yield* DurableRuns.DurableRuns
      yield* durable.start({ runId: "r-3", input: "Charge 12", autonomy: "gated" })
      const suspended = yield* settle(durable, "r-3")
      expect(Exit.isSuccess(suspended) && suspended.value?._tag).toBe("Suspended")
      const record = yield* store.load("r-3")
      expect(record._tag === "Some" ? record.value.status : undefined).toBe("suspended")
      const state = JSON.parse(record._tag === "Some" ? record.value.state : "{}") as {
        pending: ReadonlyArray<Approval.PendingEntry>
      }
      const entry = state.pending[0]!
      expect(entry.kind).toBe("Approval")
      expect(yield* service.sweep).toEqual({
        woken: [],
        waiting: ["r-3"],
        unknownVersion: [],
        stuck: [],
        expiredLeases: [],
        resumed: [],
        diverged: []
      })

      const refused = yield* Effect.all(
        [
          Effect.flip(service.decide("nope", entry.id, Approval.approve(entry.digest), "ops")),
          Effect.flip(service.decide("r-3", "p-0000000000000000", Approval.approve(entry.digest), "ops")),
          Effect.flip(service.decide("r-3", entry.id, Approval.approve("0".repeat(64)), "ops")),
          Effect.flip(
            service.decide("r-3", entry.id, { verdict: "markDone", digest: entry.digest, outcome: "x" }, "ops")
          ),
          // not a decision at all (the Python form, JSON null)
          Effect.flip(service.decide("r-3", entry.id, "approve", "ops")),
          Effect.flip(service.decide("r-3", entry.id, null, "ops"))
        ],
        { concurrency: 1 }
      )
      expect(refused.map((e) => e._tag)).toEqual([
        "RunNotFound",
        "UnknownPending",
        "DigestMismatch",
        "InvalidDecision",
        "InvalidDecision",
        "InvalidDecision"
      ])
      expect(refused[4]!.message).toContain("must be one of approve, reject, edit")
      expect(yield* store.decisions("r-3")).toEqual([])
      expect(runs.charges).toBe(0)

      yield* service.decide("r-3", entry.id, Approval.approve(entry.digest), "ops")
      // recorded, not applied: the run waits until a runner's sweep wakes it
      const still = yield* settle(durable, "r-3")
      expect(Exit.isSuccess(still) && still.value?._tag).toBe("Suspended")
      expect(runs.charges).toBe(0)
      expect(yield* service.sweep).toEqual({
        woken: ["r-3"],
        waiting: [],
        unknownVersion: [],
        stuck: [],
        expiredLeases: [],
        resumed: [],
        diverged: []
      })
      const done = yield* settle(durable, "r-3")
      expect(Exit.isSuccess(done) && done.value?._tag).toBe("Complete")
      expect(runs.charges).toBe(1)
      expect(llm.calls).toBe(2)
      // a second sweep finds nothing to do
      expect(yield* service.sweep).toEqual({
        woken: [],
        waiting: [],
        unknownVersion: [],
        stuck: [],
        expiredLeases: [],
        resumed: [],
        diverged: []
      })
    }).pipe(Effect.provide(layer))
  })

  /** Suspends a gated charge run and gives its one pending entry. */
  const suspendedCharge = (durable: DurableAgent.DurableAgent<never>, store: CheckpointStore.Service, runId: string) =>
    Effect.gen(function*() {
      yield* durable.start({ runId, input: "Charge 12", autonomy: "gated" })
      yield* settle(durable, runId)
      const record = yield* store.load(runId)
      return (JSON.parse(record._tag === "Some" ? record.value.state : "{}") as {
        pending: ReadonlyArray<Approval.PendingEntry>
      }).pending[0]!
    })

  it.effect("a decision goes through the Operator: it is audited with who made it, and the sweep applies it", () => {
    const llm = chargeThenAnswer()
    const { audit, durable, layer, runs, store } = setup({ llm, context: { scope: { orgId: "acme" } } })
    return Effect.gen(function*() {
      const service = yield* DurableRuns.DurableRuns
      const entry = yield* suspendedCharge(durable, store, "r-11")
      const tenant = (yield* store.load("r-11")).pipe((r) => (r._tag === "Some" ? r.value.tenant : ""))
      const recorded = yield* service.decide("r-11", entry.id, Approval.approve(entry.digest), "alice", {
        tenants: [tenant]
      })
      expect(recorded).toMatchObject({
        rootRunId: "r-11",
        pendingId: entry.id,
        by: "alice",
        decision: { verdict: "approve", by: "alice" }
      })
      const trail = (yield* audit.list({ runId: "r-11" })).records
      expect(trail.map((r) => [r.decision, r.action, r.by, r.tool, r.callId, r.tenant])).toEqual([[
        "operator",
        "approve",
        "alice",
        "charge_card",
        "c9",
        tenant
      ]])
      expect((yield* service.sweep).woken).toEqual(["r-11"])
      const done = yield* settle(durable, "r-11")
      expect(Exit.isSuccess(done) && done.value?._tag).toBe("Complete")
      expect(runs.charges).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a decision on another tenant's run is refused before anything is written: no decision, no audit record, the run waits", () => {
    const llm = chargeThenAnswer()
    const { audit, durable, layer, runs, store } = setup({ llm, context: { scope: { orgId: "acme" } } })
    return Effect.gen(function*() {
      const service = yield* DurableRuns.DurableRuns
      const entry = yield* suspendedCharge(durable, store, "r-12")
      const error = yield* Effect.flip(
        service.decide("r-12", entry.id, Approval.approve(entry.digest), "mallory", { tenants: ["[9,null,null,null]"] })
      )
      expect(error._tag).toBe("OtherTenant")
      expect(yield* store.decisions("r-12")).toEqual([])
      expect((yield* audit.list({})).records).toEqual([])
      expect(yield* service.sweep).toMatchObject({ woken: [], waiting: ["r-12"] })
      expect(runs.charges).toBe(0)
    }).pipe(Effect.provide(layer))
  })

  it.effect("two concurrent decisions on one entry: the first wins, the second is AlreadyDecided naming the winner; one record, one audit", () => {
    const llm = chargeThenAnswer()
    const { audit, durable, layer, runs, store } = setup({ llm })
    return Effect.gen(function*() {
      const service = yield* DurableRuns.DurableRuns
      const entry = yield* suspendedCharge(durable, store, "r-13")
      const both = yield* Effect.all(
        [
          Effect.either(service.decide("r-13", entry.id, Approval.approve(entry.digest), "alice")),
          Effect.either(service.decide("r-13", entry.id, Approval.reject(entry.digest, "no"), "bob"))
        ],
        { concurrency: "unbounded" }
      )
      const winners = both.filter((r) => r._tag === "Right")
      const losers = both.flatMap((r) => (r._tag === "Left" ? [r.left] : []))
      expect(winners).toHaveLength(1)
      expect(losers).toHaveLength(1)
      const winner = winners[0]!._tag === "Right" ? winners[0]!.right : undefined
      const loser = losers[0]!
      expect(loser._tag).toBe("AlreadyDecided")
      expect(loser._tag === "AlreadyDecided" ? loser.by : undefined).toBe(winner?.by)
      expect((yield* store.decisions("r-13")).map((d) => d.by)).toEqual([winner?.by])
      expect((yield* audit.list({ runId: "r-13" })).records.map((r) => r.by)).toEqual([winner?.by])
      yield* service.sweep
      const done = yield* settle(durable, "r-13")
      expect(Exit.isSuccess(done) && done.value?._tag).toBe("Complete")
      expect(runs.charges).toBe(winner?.by === "alice" ? 1 : 0)
    }).pipe(Effect.provide(layer))
  })

  it.effect("the approval timeout (a durable timer) rejects the entry as in-process: no decision was given", () => {
    const llm = chargeThenAnswer()
    const { durable, layer, runs } = setup({ llm })
    return Effect.gen(function*() {
      yield* durable.start({ runId: "r-4", input: "Charge 12", autonomy: "gated" })
      yield* settle(durable, "r-4")
      yield* TestClock.adjust("59 minutes")
      const before = yield* settle(durable, "r-4")
      expect(Exit.isSuccess(before) && before.value?._tag).toBe("Suspended")
      yield* TestClock.adjust("2 minutes")
      const done = yield* settle(durable, "r-4")
      expect(Exit.isSuccess(done) && done.value?._tag).toBe("Complete")
      expect(runs.charges).toBe(0)
      const toolTurn = llm.requests[1]!.messages.at(-1)!
      expect(toolTurn.role === "tool" ? toolTurn.content : "").toContain("no decision was given")
    }).pipe(Effect.provide(layer))
  })

  it.effect("a call the ledger finds claimed (an activity re-run after a crash) is not run again: the run suspends in doubt", () => {
    const llm = chargeThenAnswer()
    const ledger = ExecutionLedger.makeMemory()
    const { durable, layer, runs, store } = setup({ llm, ledger })
    return Effect.gen(function*() {
      const service = yield* DurableRuns.DurableRuns
      // the claim a runner made just before it died mid-call
      yield* ledger.claim("r-5/t0/c0", "digest-of-the-first-attempt")
      yield* durable.start({ runId: "r-5", input: "Charge 12" })
      yield* settle(durable, "r-5")
      const record = yield* store.load("r-5")
      const state = JSON.parse(record._tag === "Some" ? record.value.state : "{}") as {
        pending: ReadonlyArray<Approval.PendingEntry>
      }
      const entry = state.pending[0]!
      expect(entry.kind).toBe("InDoubt")
      expect(runs.charges).toBe(0)
      yield* service.decide("r-5", entry.id, Approval.markDone(entry.digest, "charged 12 (checked by hand)"), "ops")
      yield* service.sweep
      const done = yield* settle(durable, "r-5")
      expect(Exit.isSuccess(done) && done.value?._tag).toBe("Complete")
      expect(runs.charges).toBe(0)
      const toolTurn = llm.requests[1]!.messages.at(-1)!
      expect(toolTurn.role === "tool" ? toolTurn.content : "").toBe("charged 12 (checked by hand)")
    }).pipe(Effect.provide(layer))
  })

  it.effect("a start on a workflow version this runner does not register is refused and runs nothing", () => {
    const llm = lookupThenAnswer()
    const { layer } = setup({ llm })
    return Effect.gen(function*() {
      const service = yield* DurableRuns.DurableRuns
      const error = yield* Effect.flip(service.start("billing", 2, { runId: "r-6", input: "x" }))
      expect(error._tag).toBe("UnknownWorkflowVersion")
      expect(error.message).toBe("agent 'billing' has no workflow version 2 on this runner; registered: 1")
      const unknownAgent = yield* Effect.flip(service.start("nobody", 1, { runId: "r-6", input: "x" }))
      expect(unknownAgent.message).toBe("agent 'nobody' has no workflow version 1 on this runner; registered: none")
      expect(llm.calls).toBe(0)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a stuck run (decided long ago, still suspended: the lost-wake state, constructed directly) is reported and woken by the sweep", () => {
    const llm = chargeThenAnswer()
    const { durable, layer, runs, store } = setup({ llm })
    return Effect.gen(function*() {
      const service = yield* DurableRuns.DurableRuns
      yield* durable.start({ runId: "r-7", input: "Charge 12", autonomy: "gated" })
      yield* settle(durable, "r-7")
      const record = yield* store.load("r-7")
      const entry = (JSON.parse(record._tag === "Some" ? record.value.state : "{}") as {
        pending: ReadonlyArray<Approval.PendingEntry>
      }).pending[0]!
      // the decision is in the store, written straight through the port; no runner applied it
      yield* store.decide("r-7", entry.id, { decision: JSON.stringify(Approval.approve(entry.digest)), by: "ops" })
      yield* TestClock.adjust("2 minutes")
      const stuck = yield* settle(durable, "r-7")
      expect(Exit.isSuccess(stuck) && stuck.value?._tag).toBe("Suspended")
      const report = yield* service.sweep
      expect(report.stuck).toEqual(["r-7"])
      expect(report.woken).toEqual(["r-7"])
      expect((yield* Metric.value(DurableRuns.metrics.stuck)).value).toBe(1)
      const done = yield* settle(durable, "r-7")
      expect(Exit.isSuccess(done) && done.value?._tag).toBe("Complete")
      expect(runs.charges).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a running record whose lease expired (its runner died, not taken over yet) is reported", () => {
    const llm = lookupThenAnswer()
    const { layer, store } = setup({ llm })
    return Effect.gen(function*() {
      const service = yield* DurableRuns.DurableRuns
      yield* store.create({ runId: "r-8", rootRunId: "r-8", agent: "billing", tenant: "", state: "{}" }, {
        owner: "a dead runner",
        ttlMs: 1000
      })
      expect((yield* service.sweep).expiredLeases).toEqual([])
      yield* TestClock.adjust("2 seconds")
      // no execution here knows it: reported, not resumed
      expect(yield* service.sweep).toMatchObject({ expiredLeases: ["r-8"], resumed: [] })
      expect((yield* Metric.value(DurableRuns.metrics.expiredLeases)).value).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a body stopped by a defect outside any activity (record running, lease released, no live execution) is resumed by the sweep and finishes once", () => {
    const llm = lookupThenAnswer()
    // the engine's storage failing under the body (the crash test saw SQLITE_BUSY): a defect, not a journaled failure
    const dying = crashingStore(
      (s) => s.phase === "tools" && s.completed === 1,
      Effect.die(new Error("SQLITE_BUSY: database is locked"))
    )
    const { durable, layer, runs, store } = setup({ llm, store: dying.store })
    return Effect.gen(function*() {
      const service = yield* DurableRuns.DurableRuns
      yield* durable.start({ runId: "r-13", input: "Where is A-771?" })
      const stopped = yield* settle(durable, "r-13")
      expect(dying.crashed()).toBe(true)
      const record = yield* store.load("r-13")
      // the lifecycle released the lease on the defect (it expires now, at TestClock 0)
      expect(record._tag === "Some" ? [record.value.status, record.value.lease?.expiresAt] : undefined).toEqual([
        "running",
        0
      ])
      // not complete: a completed execution is never driven again, and its record would stay running
      expect(Exit.isSuccess(stopped) && stopped.value?._tag).toBe("Suspended")
      const report = yield* service.sweep
      expect(report).toEqual({
        woken: [],
        waiting: [],
        unknownVersion: [],
        stuck: [],
        expiredLeases: ["r-13"],
        resumed: ["r-13"],
        diverged: []
      })
      const done = yield* settle(durable, "r-13")
      expect(
        Exit.isSuccess(done) && done.value?._tag === "Complete" && Exit.isSuccess(done.value.exit)
          ? done.value.exit.value.output
          : undefined
      ).toBe(
        "Order A-771 shipped."
      )
      const after = yield* store.load("r-13")
      expect(after._tag === "Some" ? after.value.status : undefined).toBe("done")
      // replayed, not called again: turn-0 and the lookup once, turn-1 once
      expect(llm.calls).toBe(2)
      expect(runs.lookups).toBe(1)
      expect(yield* service.sweep).toEqual({
        woken: [],
        waiting: [],
        unknownVersion: [],
        stuck: [],
        expiredLeases: [],
        resumed: [],
        diverged: []
      })
    }).pipe(Effect.provide(layer))
  })
})

describe("versioning", () => {
  const chargeThenAnswer = () =>
    FakeLLM.script([
      Turn({ toolCalls: [{ id: "c9", name: "charge_card", arguments: { amount: 12 } }] }),
      Turn({ content: "Charged." })
    ])

  it.effect("a run started on v1 finishes on v1 while v2 is registered beside it", () => {
    const llm = chargeThenAnswer()
    const { durables, layer, runs, store } = setup({ llm, versions: [1, 2] })
    const [v1, v2] = [durables[0]!, durables[1]!]
    return Effect.gen(function*() {
      const service = yield* DurableRuns.DurableRuns
      yield* service.start("billing", 1, { runId: "r-9", input: "Charge 12", autonomy: "gated" })
      yield* settle(v1, "r-9")
      expect(yield* v2.poll("r-9")).toBeUndefined()
      const record = yield* store.load("r-9")
      const entry = (JSON.parse(record._tag === "Some" ? record.value.state : "{}") as {
        pending: ReadonlyArray<Approval.PendingEntry>
      }).pending[0]!
      yield* service.decide("r-9", entry.id, Approval.approve(entry.digest), "ops")
      expect((yield* service.sweep).woken).toEqual(["r-9"])
      const done = yield* settle(v1, "r-9")
      expect(Exit.isSuccess(done) && done.value?._tag).toBe("Complete")
      expect(yield* v2.poll("r-9")).toBeUndefined()
      expect(runs.charges).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a runner lacking a run's version leaves it alone and reports it", () => {
    const store = CheckpointStore.makeMemory()
    const first = setup({ llm: chargeThenAnswer(), store, versions: [1] })
    const later = setup({ llm: chargeThenAnswer(), store, versions: [2] })
    return Effect.gen(function*() {
      // v1's runner suspends the run and goes away
      yield* Effect.provide(
        Effect.gen(function*() {
          yield* first.durable.start({ runId: "r-10", input: "Charge 12", autonomy: "gated" })
          yield* settle(first.durable, "r-10")
        }),
        first.layer
      )
      const record = yield* store.load("r-10")
      const before = record._tag === "Some" ? record.value : undefined
      const entry = (JSON.parse(before?.state ?? "{}") as { pending: ReadonlyArray<Approval.PendingEntry> }).pending[0]!
      yield* store.decide("r-10", entry.id, { decision: JSON.stringify(Approval.approve(entry.digest)), by: "ops" })
      // a runner with only v2: the decided run is reported, not touched
      const report = yield* Effect.provide(Effect.flatMap(DurableRuns.DurableRuns, (runs) => runs.sweep), later.layer)
      expect(report.unknownVersion).toEqual(["r-10"])
      expect(report.woken).toEqual([])
      const after = yield* store.load("r-10")
      expect(after._tag === "Some" ? after.value : undefined).toEqual(before)
      expect(later.runs.charges).toBe(0)
    })
  })
})
