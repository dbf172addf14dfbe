/**
 * Durable approval (issue 6; spec-runtime §6.3–§6.4, the approval items of §9 `test_agent_loop`):
 * a gated run suspends in one `Effect.runPromise`, and `agent.resume(runId, decisions)` continues
 * it in another, with a fresh agent value and the same checkpoint store. Decisions are keyed by
 * pending id and bound to the entry's digest; a resume whose decisions are not acceptable fails
 * with a typed error, runs nothing and leaves the run as it was (issue 11).
 */
import {
  Agent,
  Approval,
  DigestMismatch,
  InvalidDecision,
  InvalidDecisions,
  ReActCognition,
  RunNotResumable,
  RunStateCorrupt,
  RunStateVersionUnsupported,
  RunSuspended,
  UnknownPending
} from "@agentkit/agents"
import type { AgentResult } from "@agentkit/agents"
import { Cancellation, Cancelled, CheckpointStore, ToolArgumentError } from "@agentkit/core"
import type { Autonomy, Message, ToolCall } from "@agentkit/core"
import { FakeLLM, Fixture, makeTestCtx, Seed, Tracing, Turn } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Option, Schema } from "effect"
import { call, expectedDigest, recordOf, untyped } from "./fixtures.js"

const { failureOf } = Fixture
const { lookupCall, MODEL, PROMPT, STATUS } = Seed

const TASK = "Please cancel order A-771, I ordered it twice."
const CANCEL = call("c1", "cancel_order", { order_id: "A-771", reason: "duplicate order" })
const DENIED = "DENIED: tool call rejected by human approval"

/**
 * The outside world both "processes" share (an order system), and a fresh agent over it: a new
 * agent value, new tool values, the same side effects.
 */
const makeWorld = () => {
  const cancelled: Array<{ readonly order_id: string; readonly reason: string }> = []
  const looked: Array<string> = []
  const agent = (name = "support") => {
    const lookupOrder = Tool.make("lookup_order", {
      description: "Look up an order by its id and return its status line.",
      parameters: { order_id: Schema.String },
      sideEffecting: false,
      handler: ({ order_id }) => {
        looked.push(order_id)
        return `order ${order_id}: shipped 2026-08-14, arriving Tuesday`
      }
    })
    const cancelOrder = Tool.make("cancel_order", {
      description: "Cancel an order. This really cancels it — there is no undo.",
      parameters: {
        order_id: Schema.String,
        reason: Schema.String.pipe(Schema.optionalWith({ default: () => "customer request" }))
      },
      sideEffecting: true,
      handler: ({ order_id, reason }) => {
        cancelled.push({ order_id, reason })
        return `order ${order_id} cancelled (${reason})`
      }
    })
    return Agent.make({
      name,
      model: MODEL,
      prompt: PROMPT,
      cognition: ReActCognition.make({ tools: [lookupOrder, cancelOrder] })
    })
  }
  return { agent, cancelled, looked }
}

type World = ReturnType<typeof makeWorld>

const layerOf = (
  llm: FakeLLM.FakeLLM,
  store: CheckpointStore.Service,
  options: { readonly autonomy?: Autonomy; readonly cancellation?: Cancellation.CancellationToken } = {}
) =>
  Layer.mergeAll(
    makeTestCtx({ llm, autonomy: options.autonomy ?? "gated", cancellation: options.cancellation }),
    CheckpointStore.layer(store)
  )

/** Process 1: the model asks to cancel; the run suspends. */
const suspend = async (
  world: World,
  store: CheckpointStore.Service,
  calls: ReadonlyArray<ToolCall.ToolCall> = [CANCEL]
) => {
  const llm = FakeLLM.script([Turn({ content: "I will cancel it.", toolCalls: calls })])
  const result = await Effect.runPromise(world.agent().run(TASK).pipe(Effect.provide(layerOf(llm, store))))
  expect(result.stopReason).toBe("awaiting_approval")
  return result
}

/** Process 2: a fresh agent resumes with the decisions; the model then answers. */
const resume = (world: World, store: CheckpointStore.Service, decisions: unknown, llm = finalModel()) =>
  Effect.runPromise(
    world
      .agent()
      .resume("test-run", decisions as Approval.Decisions)
      .pipe(Effect.provide(layerOf(llm, store)), Effect.exit)
  ).then((exit) => ({ exit, llm }))

/** The run's record now (status, version, state text). */
const record = (store: CheckpointStore.Service) => Effect.runPromise(recordOf(store))

const finalModel = () => FakeLLM.script([Turn({ content: "All set." })])

const resultOf = (exit: Exit.Exit<AgentResult.AgentResult, unknown>): AgentResult.AgentResult => {
  if (Exit.isFailure(exit)) throw new Error(`expected a result, got a failure: ${String(exit.cause)}`)
  return exit.value
}

const toolMessages = (messages: ReadonlyArray<Message.Message>) =>
  messages.flatMap((message) => (message.role === "tool" ? [message] : []))

/** The one tool message the model received after the resume. */
const seenByModel = (llm: FakeLLM.FakeLLM) => {
  const messages = toolMessages(llm.requests[0]!.messages)
  expect(messages).toHaveLength(1)
  return messages[0]!
}

describe("suspend, then resume in another runPromise", () => {
  it("the suspension: partial, awaiting_approval, pending with frozen arguments and digest; checkpointed as suspended", async () => {
    const world = makeWorld()
    const store = CheckpointStore.makeMemory()
    // a private copy of the call: this test mutates what the run returns
    const result = await suspend(world, store, [{ ...CANCEL, arguments: { ...CANCEL.arguments } }])
    expect(result).toMatchObject({ output: "", partial: true, stopReason: "awaiting_approval" })
    expect(result.suspended).toMatchObject({
      _tag: "Suspended",
      runId: "test-run",
      pending: [{ call: CANCEL, kind: "Approval", path: "test-run", reasons: ["autonomy_gated"] }]
    })
    const entry = result.suspended!.pending[0]!
    expect(entry.id).toBe(
      Approval.pendingId({ path: "test-run", iteration: 0, index: 0, callId: "c1", kind: "Approval" })
    )
    expect(entry.digest).toBe(expectedDigest(entry))
    expect(world.cancelled).toEqual([])
    const latest = await record(store)
    expect(latest.status).toBe("suspended")
    expect(latest.state.pending).toEqual(result.suspended!.pending)
    // the returned suspension is frozen, deeply: what a person approves is what was checkpointed
    expect(Object.isFrozen(result.suspended!.pending)).toBe(true)
    expect(() => {
      ;(result.suspended!.pending[0]!.call.arguments as Record<string, unknown>).order_id = "ZZZ"
    }).toThrow(TypeError)
    expect((await record(store)).state.pending[0]!.call.arguments).toEqual(CANCEL.arguments)
  })

  it("approve: the call runs once, with the model's arguments; the model sees the result; the run is recorded done", async () => {
    const world = makeWorld()
    const store = CheckpointStore.makeMemory()
    const suspended = await suspend(world, store)
    const pending = suspended.suspended!.pending[0]!
    const { exit, llm } = await resume(
      world,
      store,
      Approval.decisions([[pending.id, Approval.approve(pending.digest)]])
    )
    const result = resultOf(exit)
    expect(world.cancelled).toEqual([{ order_id: "A-771", reason: "duplicate order" }])
    expect(result).toMatchObject({ output: "All set.", partial: false, stopReason: "end_turn" })
    expect(result.suspended).toBeUndefined()
    expect(seenByModel(llm)).toMatchObject({
      toolCallId: "c1",
      content: "order A-771 cancelled (duplicate order)",
      isError: false
    })
    // the resumed transcript continues the suspended one (no new user turn, no repeated model call)
    expect(llm.calls).toBe(1)
    expect(llm.requests[0]!.messages.slice(0, 3)).toEqual(suspended.transcript)
    expect(result.usage.inputTokens).toBe(20)
    const done = await record(store)
    expect(done.status).toBe("done")
    expect(JSON.parse(done.record.result!)).toMatchObject({ output: "All set.", stopReason: "end_turn" })
  })

  it("edit: the call runs with the edited (validated, defaulted) arguments", async () => {
    const world = makeWorld()
    const store = CheckpointStore.makeMemory()
    const pending = (await suspend(world, store)).suspended!.pending[0]!
    const { exit, llm } = await resume(
      world,
      store,
      Approval.decisions([[pending.id, Approval.edit(pending.digest, { order_id: "B-102" })]])
    )
    expect(resultOf(exit).output).toBe("All set.")
    expect(world.cancelled).toEqual([{ order_id: "B-102", reason: "customer request" }])
    expect(seenByModel(llm).content).toBe("order B-102 cancelled (customer request)")
    // the transcript keeps the model's original call: the edit is what ran
    expect(llm.requests[0]!.messages[2]).toMatchObject({ role: "assistant", toolCalls: [CANCEL] })
  })

  it("a bad edit fails with ToolArgumentError, nothing runs, no model call; the run is still resumable", async () => {
    const world = makeWorld()
    const store = CheckpointStore.makeMemory()
    const pending = (await suspend(world, store)).suspended!.pending[0]!
    const before = await record(store)
    const bad = await resume(
      world,
      store,
      Approval.decisions([[pending.id, Approval.edit(pending.digest, { order: "A-771" })]])
    )
    const error = failureOf(bad.exit)
    expect(error).toBeInstanceOf(ToolArgumentError)
    expect(error.message).toBe(
      "tool 'cancel_order' call rejected: unexpected argument(s) ['order']; missing required argument(s) ['order_id']. Accepted arguments: ['order_id', 'reason']"
    )
    expect(world.cancelled).toEqual([])
    expect(bad.llm.calls).toBe(0)
    const after = await record(store)
    expect([after.status, after.record.version, after.record.state]).toEqual([
      "suspended",
      before.record.version,
      before.record.state
    ])

    const { exit } = await resume(world, store, Approval.decisions([[pending.id, Approval.approve(pending.digest)]]))
    expect(resultOf(exit).output).toBe("All set.")
    expect(world.cancelled).toEqual([{ order_id: "A-771", reason: "duplicate order" }])
  })

  it("a bad edit of one call stops the whole resume: its approved sibling does not run either", async () => {
    const world = makeWorld()
    const store = CheckpointStore.makeMemory()
    const other = call("c2", "cancel_order", { order_id: "B-102" })
    const [first, second] = (await suspend(world, store, [CANCEL, other])).suspended!.pending
    const bad = await resume(
      world,
      store,
      Approval.decisions([[first!.id, Approval.approve(first!.digest)], [
        second!.id,
        Approval.edit(second!.digest, { order_id: 102 })
      ]])
    )
    expect(failureOf(bad.exit)).toBeInstanceOf(ToolArgumentError)
    expect(world.cancelled).toEqual([])
  })

  it("reject with a reason: the tool does not run; the model sees DENIED and the reason", async () => {
    const world = makeWorld()
    const store = CheckpointStore.makeMemory()
    const pending = (await suspend(world, store)).suspended!.pending[0]!
    const { exit, llm } = await resume(
      world,
      store,
      Approval.decisions([[pending.id, Approval.reject(pending.digest, "the customer has not confirmed")]])
    )
    expect(resultOf(exit).output).toBe("All set.")
    expect(world.cancelled).toEqual([])
    expect(seenByModel(llm)).toEqual({
      role: "tool",
      toolCallId: "c1",
      name: "cancel_order",
      content: `${DENIED}: the customer has not confirmed`,
      isError: true
    })
    expect((await record(store)).status).toBe("done")
  })

  it("reject without a reason: exactly the DENIED text", async () => {
    const world = makeWorld()
    const store = CheckpointStore.makeMemory()
    const pending = (await suspend(world, store)).suspended!.pending[0]!
    const { llm } = await resume(world, store, Approval.decisions([[pending.id, Approval.reject(pending.digest)]]))
    expect(seenByModel(llm).content).toBe(DENIED)
  })

  it("a missing decision (empty map) → the call is rejected (fail closed): it does not run; the model sees why", async () => {
    const world = makeWorld()
    const store = CheckpointStore.makeMemory()
    await suspend(world, store)
    const { exit, llm } = await resume(world, store, {})
    expect(resultOf(exit).output).toBe("All set.")
    expect(world.cancelled).toEqual([])
    expect(seenByModel(llm)).toMatchObject({ content: `${DENIED}: no decision was given`, isError: true })
  })

  // Bad decisions on resume are typed errors that name what was expected: nothing runs, no model
  // call, the run stays suspended exactly as it was (version and state), and can be resumed again.
  const refused: ReadonlyArray<
    readonly [
      string,
      (pending: Approval.PendingEntry) => unknown,
      new(...args: never) => unknown,
      (pending: Approval.PendingEntry) => string
    ]
  > = [
    [
      "a typo ('approved')",
      (p) => untyped({ [p.id]: "approved" }),
      InvalidDecision,
      (p) =>
        `the decision for '${p.id}' of run 'test-run' (kind Approval) must be one of approve, reject, edit, with the entry's digest; got 'approved'`
    ],
    [
      "the Python form ('approve')",
      (p) => untyped({ [p.id]: "approve" }),
      InvalidDecision,
      (p) =>
        `the decision for '${p.id}' of run 'test-run' (kind Approval) must be one of approve, reject, edit, with the entry's digest; got 'approve'`
    ],
    [
      "JSON arguments as a string (Python's edit)",
      (p) => untyped({ [p.id]: "{\"order_id\":\"B-102\"}" }),
      InvalidDecision,
      (p) =>
        `the decision for '${p.id}' of run 'test-run' (kind Approval) must be one of approve, reject, edit, with the entry's digest; got '{"order_id":"B-102"}'`
    ],
    [
      "a verdict for a call in doubt (markDone) on an approval",
      (p) => (Approval.decisions([[p.id, Approval.markDone(p.digest, "done")]])),
      InvalidDecision,
      (p) =>
        `the decision for '${p.id}' of run 'test-run' (kind Approval) must be one of approve, reject, edit, with the entry's digest; got {"digest":"${p.digest}","outcome":"done","verdict":"markDone"}`
    ],
    [
      "decisions keyed by the tool call id",
      (p) => ({ c1: Approval.approve(p.digest) }),
      UnknownPending,
      (p) => `run 'test-run' has no pending entry 'c1'; its pending entries are ['${p.id}']`
    ],
    [
      "a decision for an unknown pending id",
      (p) => ({ "p-0000000000000000": Approval.approve(p.digest) }),
      UnknownPending,
      (p) => `run 'test-run' has no pending entry 'p-0000000000000000'; its pending entries are ['${p.id}']`
    ],
    [
      "a stale digest (the decision was given for other arguments)",
      (p) => (Approval.decisions([[p.id, Approval.approve("0".repeat(64))]])),
      DigestMismatch,
      (p) =>
        `the decision for '${p.id}' of run 'test-run' names digest '${
          "0".repeat(64)
        }', but the pending entry's digest is '${p.digest}': it was given for other arguments or another tool definition`
    ],
    [
      "a digest mismatch on an edit",
      (p) => (Approval.decisions([[p.id, Approval.edit("0".repeat(64), { order_id: "B-102" })]])),
      DigestMismatch,
      (p) =>
        `the decision for '${p.id}' of run 'test-run' names digest '${
          "0".repeat(64)
        }', but the pending entry's digest is '${p.digest}': it was given for other arguments or another tool definition`
    ],
    [
      "decisions that are not a record (an array)",
      (p) => [Approval.approve(p.digest)],
      InvalidDecisions,
      () =>
        "the decisions for run 'test-run' must be a record of pending id to decision (Approval.decisions([[pending.id, Approval.approve(pending.digest)]])); got an array"
    ],
    [
      "decisions that are not a record (a string)",
      () => "approve",
      InvalidDecisions,
      () =>
        "the decisions for run 'test-run' must be a record of pending id to decision (Approval.decisions([[pending.id, Approval.approve(pending.digest)]])); got string approve"
    ],
    [
      "decisions that are not a record (null)",
      () => null,
      InvalidDecisions,
      () =>
        "the decisions for run 'test-run' must be a record of pending id to decision (Approval.decisions([[pending.id, Approval.approve(pending.digest)]])); got null"
    ]
  ]
  for (const [what, decisions, type, text] of refused) {
    it(`${what} → a typed ${type.name}, nothing runs, the run stays suspended as it was`, async () => {
      const world = makeWorld()
      const store = CheckpointStore.makeMemory()
      const pending = (await suspend(world, store)).suspended!.pending[0]!
      const before = await record(store)
      const { exit, llm } = await resume(world, store, decisions(pending))
      const error = failureOf(exit)
      expect(error).toBeInstanceOf(type)
      expect(error.message).toBe(text(pending))
      expect(world.cancelled).toEqual([])
      expect(llm.calls).toBe(0)
      const after = await record(store)
      expect([after.status, after.record.version, after.record.state]).toEqual([
        "suspended",
        before.record.version,
        before.record.state
      ])
      expect(await Effect.runPromise(store.decisions("test-run"))).toEqual([])
      // still resumable with a good decision
      const { exit: again } = await resume(
        world,
        store,
        Approval.decisions([[pending.id, Approval.approve(pending.digest)]])
      )
      expect(resultOf(again).output).toBe("All set.")
      expect(world.cancelled).toHaveLength(1)
    })
  }

  it("a stored state of an unknown (newer) version or a corrupt state: typed errors, the record untouched, nothing runs", async () => {
    for (
      const [text, type] of [
        ["{\"version\":7,\"runId\":\"test-run\"}", RunStateVersionUnsupported],
        ["{\"version\":1,\"runId\":\"test-run\",\"phase\":\"nope\"}", RunStateCorrupt],
        ["not json", RunStateCorrupt]
      ] as const
    ) {
      const world = makeWorld()
      const inner = CheckpointStore.makeMemory()
      const pending = (await suspend(world, inner)).suspended!.pending[0]!
      const planted = await record(inner)
      inner.unsafePlant(
        "test-run",
        JSON.stringify({ ...planted.record, state: text, lease: planted.record.lease, result: undefined })
      )
      const before = Effect.runSync(Effect.orDie(inner.load("test-run")))
      const { exit, llm } = await resume(
        world,
        inner,
        Approval.decisions([[pending.id, Approval.approve(pending.digest)]])
      )
      expect(failureOf(exit)).toBeInstanceOf(type)
      expect(llm.calls).toBe(0)
      expect(world.cancelled).toEqual([])
      const after = Effect.runSync(Effect.orDie(inner.load("test-run")))
      expect(Option.getOrThrow(after).state).toBe(text)
      expect(Option.getOrThrow(after).version).toBe(Option.getOrThrow(before).version)
      // run() under the same id refuses too, and leaves it as it is
      const driven = await Effect.runPromiseExit(
        world.agent().run(TASK).pipe(Effect.provide(layerOf(FakeLLM.script([]), inner)))
      )
      expect(failureOf(driven)).toBeInstanceOf(type)
    }
  })

  it("the whole turn was pending: each call gets its own decision, results in call order", async () => {
    const world = makeWorld()
    const store = CheckpointStore.makeMemory()
    const other = call("c2", "cancel_order", { order_id: "B-102" })
    const pending = (await suspend(world, store, [lookupCall("c0"), CANCEL, other])).suspended!.pending
    expect(pending.map((p) => p.call.id)).toEqual(["c0", "c1", "c2"])
    expect(world.looked).toEqual([])
    const { exit, llm } = await resume(
      world,
      store,
      Approval.decisions([[pending[0]!.id, Approval.approve(pending[0]!.digest)], [
        pending[2]!.id,
        Approval.approve(pending[2]!.digest)
      ]]) // c1: missing → rejected
    )
    expect(resultOf(exit).output).toBe("All set.")
    expect(world.looked).toEqual(["A-771"])
    expect(world.cancelled).toEqual([{ order_id: "B-102", reason: "customer request" }])
    expect(toolMessages(llm.requests[0]!.messages).map((m) => [m.toolCallId, m.content, m.isError])).toEqual([
      ["c0", STATUS, false],
      ["c1", `${DENIED}: no decision was given`, true],
      ["c2", "order B-102 cancelled (customer request)", false]
    ])
  })

  it("a resumed run can suspend again, and be resumed again", async () => {
    const world = makeWorld()
    const store = CheckpointStore.makeMemory()
    const pending = (await suspend(world, store)).suspended!.pending[0]!
    const next = call("c2", "cancel_order", { order_id: "B-102" })
    const asksAgain = FakeLLM.script([Turn({ toolCalls: [next] })])
    const second = resultOf(
      (await resume(world, store, Approval.decisions([[pending.id, Approval.approve(pending.digest)]]), asksAgain)).exit
    )
    expect(second.stopReason).toBe("awaiting_approval")
    expect(second.suspended?.pending).toMatchObject([{ call: next, kind: "Approval" }])
    const nextEntry = second.suspended!.pending[0]!
    expect(nextEntry.id).not.toBe(pending.id)
    expect(world.cancelled).toHaveLength(1)
    const { exit } = await resume(
      world,
      store,
      Approval.decisions([[nextEntry.id, Approval.approve(nextEntry.digest)]])
    )
    const done = resultOf(exit)
    expect(done.output).toBe("All set.")
    expect(world.cancelled.map((c) => c.order_id)).toEqual(["A-771", "B-102"])
    expect(done.usage.inputTokens).toBe(30) // three model calls over three processes
  })

  it("a requiresApproval tool under auto (test_agent_loop): suspends, then resume approve runs it once", async () => {
    let ran = 0
    const refund = Tool.make("refund", {
      description: "Refund an order in full to the original payment method.",
      parameters: { order_id: Schema.String },
      sideEffecting: true,
      requiresApproval: true,
      handler: ({ order_id }) => {
        ran++
        return `refunded ${order_id}`
      }
    })
    const agent = () => Agent.make({ name: "a", model: MODEL, cognition: ReActCognition.make({ tools: [refund] }) })
    const store = CheckpointStore.makeMemory()
    const ask = FakeLLM.script([Turn({ toolCalls: [call("c1", "refund", { order_id: "A-771" })] })])
    const first = await Effect.runPromise(
      agent().run(TASK).pipe(Effect.provide(layerOf(ask, store, { autonomy: "auto" })))
    )
    expect(first).toMatchObject({ partial: true, stopReason: "awaiting_approval" })
    expect(first.suspended?.pending[0]?.call.id).toBe("c1")
    expect(ran).toBe(0)
    const llm = finalModel()
    const entry = first.suspended!.pending[0]!
    expect(entry.reasons).toEqual(["requires_approval"])
    const done = await Effect.runPromise(
      agent()
        .resume("test-run", Approval.decisions([[entry.id, Approval.approve(entry.digest)]]))
        .pipe(Effect.provide(layerOf(llm, store, { autonomy: "auto" })))
    )
    expect(done.output).toBe("All set.")
    expect(ran).toBe(1)
    expect((await record(store)).status).toBe("done")
  })

  it("resume opens its own invoke_agent span, with the run's conversation id", async () => {
    const world = makeWorld()
    const store = CheckpointStore.makeMemory()
    const pending = (await suspend(world, store)).suspended!.pending[0]!
    const tracer = Tracing.recording()
    await Effect.runPromise(
      world
        .agent()
        .resume("test-run", Approval.decisions([[pending.id, Approval.approve(pending.digest)]]))
        .pipe(Effect.provide(layerOf(finalModel(), store)), Effect.provide(tracer.layer))
    )
    const run = tracer.one("invoke_agent support")
    expect(run.attributes.get("gen_ai.conversation.id")).toBe("test-run")
    expect(tracer.childrenOf(run).map((span) => span.name)).toEqual([
      "execute_tool cancel_order",
      "chat claude-sonnet-4-6"
    ])
  })
})

describe("what cannot be resumed", () => {
  it.effect("a single-call agent → RunNotResumable with the spec's text", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ name: "a", model: MODEL })
      const exit = yield* agent
        .resume("r", Approval.decisions([]))
        .pipe(
          Effect.provide(Layer.mergeAll(makeTestCtx({ llm: FakeLLM.script([]) }), CheckpointStore.memory())),
          Effect.exit
        )
      const error = failureOf(exit)
      expect(error).toBeInstanceOf(RunNotResumable)
      expect(error).toMatchObject({
        runId: "r",
        message:
          "agent 'a' cognition 'single_call' does not support resume — only tool-loop (ReAct) agents can be resumed"
      })
    }))

  it.effect("an unknown run → RunNotResumable `no suspended run 'r' to resume`", () =>
    Effect.gen(function*() {
      const exit = yield* makeWorld()
        .agent()
        .resume("r", Approval.decisions([]))
        .pipe(
          Effect.provide(Layer.mergeAll(makeTestCtx({ llm: FakeLLM.script([]) }), CheckpointStore.memory())),
          Effect.exit
        )
      expect(failureOf(exit)).toMatchObject({
        _tag: "RunNotResumable",
        runId: "r",
        message: "no suspended run 'r' to resume"
      })
    }))

  it.effect("no checkpoint store → RunNotResumable (the suspension could not be saved)", () =>
    Effect.gen(function*() {
      const world = makeWorld()
      const llm = FakeLLM.script([Turn({ toolCalls: [CANCEL] })])
      const result = yield* world.agent().run(TASK).pipe(Effect.provide(makeTestCtx({ llm, autonomy: "gated" })))
      expect(result.stopReason).toBe("awaiting_approval")
      const pending = result.suspended!.pending[0]!
      const exit = yield* world
        .agent()
        .resume("test-run", Approval.decisions([[pending.id, Approval.approve(pending.digest)]]))
        .pipe(Effect.provide(makeTestCtx({ llm: FakeLLM.script([]) })), Effect.exit)
      expect(failureOf(exit)).toMatchObject({
        _tag: "RunNotResumable",
        message: "no suspended run 'test-run' to resume"
      })
      expect(world.cancelled).toEqual([])
    }))

  it("a finished run (resumed once already) → RunNotResumable; the tool ran once", async () => {
    const world = makeWorld()
    const store = CheckpointStore.makeMemory()
    const pending = (await suspend(world, store)).suspended!.pending[0]!
    const decisions = Approval.decisions([[pending.id, Approval.approve(pending.digest)]])
    resultOf((await resume(world, store, decisions)).exit)
    const { exit, llm } = await resume(world, store, decisions)
    expect(failureOf(exit)).toMatchObject({ _tag: "RunNotResumable", message: "no suspended run 'test-run' to resume" })
    expect(llm.calls).toBe(0)
    expect(world.cancelled).toHaveLength(1)
  })

  it.effect("a completed run leaves its terminal marker: driving its id again returns the recorded result, no model call", () =>
    Effect.gen(function*() {
      const store = CheckpointStore.makeMemory()
      const llm = FakeLLM.script([Turn({ toolCalls: [lookupCall()] }), Turn({ content: "done" })])
      const world = makeWorld()
      const result = yield* world.agent().run(TASK).pipe(Effect.provide(layerOf(llm, store, { autonomy: "auto" })))
      expect(result.output).toBe("done")
      expect((yield* recordOf(store)).status).toBe("done")
      const again = FakeLLM.script([])
      const replay = yield* world.agent().run("another task").pipe(
        Effect.provide(layerOf(again, store, { autonomy: "auto" }))
      )
      expect(replay).toEqual(result)
      expect(again.calls).toBe(0)
      expect(world.looked).toEqual(["A-771"])
    }))

  it.effect("a run that ran out of iterations is recorded done too, with that stop reason", () =>
    Effect.gen(function*() {
      const store = CheckpointStore.makeMemory()
      const tool = Tool.make("lookup_order", {
        description: "Look up an order by its id and return its status line.",
        parameters: { order_id: Schema.String },
        sideEffecting: false,
        handler: () => "status"
      })
      const agent = Agent.make({
        name: "a",
        model: MODEL,
        cognition: ReActCognition.make({ tools: [tool], maxIterations: 2 })
      })
      const llm = FakeLLM.respond((_request, n) => Turn({ toolCalls: [lookupCall(`c${n}`)] }))
      const result = yield* agent.run(TASK).pipe(Effect.provide(layerOf(llm, store, { autonomy: "auto" })))
      expect(result.stopReason).toBe("max_iterations")
      const { record: done, status } = yield* recordOf(store)
      expect(status).toBe("done")
      expect(JSON.parse(done.result!)).toMatchObject({ stopReason: "max_iterations", partial: true })
    }))

  it("a cancelled token + approve → Cancelled; the tool does not run; no model call; the run stays suspended", async () => {
    const world = makeWorld()
    const store = CheckpointStore.makeMemory()
    const pending = (await suspend(world, store)).suspended!.pending[0]!
    const token = Cancellation.make()
    token.cancel()
    const llm = finalModel()
    const exit = await Effect.runPromise(
      world
        .agent()
        .resume("test-run", Approval.decisions([[pending.id, Approval.approve(pending.digest)]]))
        .pipe(Effect.provide(layerOf(llm, store, { cancellation: token })), Effect.exit)
    )
    expect(failureOf(exit)).toBeInstanceOf(Cancelled)
    expect(world.cancelled).toEqual([])
    expect(llm.calls).toBe(0)
    expect((await record(store)).status).toBe("suspended")
  })

  it("cancelled between two approved calls: the first ran, the second does not; the run is recorded cancelled, never driven again", async () => {
    const world = makeWorld()
    const store = CheckpointStore.makeMemory()
    const token = Cancellation.make()
    const other = call("c2", "cancel_order", { order_id: "B-102" })
    const pending = (await suspend(world, store, [CANCEL, other])).suspended!.pending
    // the order system cancels the run when it sees the first cancellation go through
    const original = world.cancelled.push.bind(world.cancelled)
    world.cancelled.push = (...items) => {
      const n = original(...items)
      token.cancel()
      return n
    }
    const exit = await Effect.runPromise(
      world
        .agent()
        .resume(
          "test-run",
          Approval.decisions([[pending[0]!.id, Approval.approve(pending[0]!.digest)], [
            pending[1]!.id,
            Approval.approve(pending[1]!.digest)
          ]])
        )
        .pipe(Effect.provide(layerOf(finalModel(), store, { cancellation: token })), Effect.exit)
    )
    expect(failureOf(exit)).toBeInstanceOf(Cancelled)
    expect(world.cancelled.map((c) => c.order_id)).toEqual(["A-771"])
    const cancelled = await record(store)
    expect(cancelled.status).toBe("cancelled")
    // cancellation is final: driving the same id again runs nothing
    world.cancelled.push = Array.prototype.push
    const llm = finalModel()
    const again = await Effect.runPromiseExit(world.agent().run(TASK).pipe(Effect.provide(layerOf(llm, store))))
    expect(failureOf(again)).toMatchObject({
      _tag: "RunNotResumable",
      message: "run 'test-run' is cancelled: Cancelled: run cancelled; it is never driven again"
    })
    const resumed = await resume(
      world,
      store,
      Approval.decisions([[pending[1]!.id, Approval.approve(pending[1]!.digest)]])
    )
    expect(failureOf(resumed.exit)).toBeInstanceOf(RunNotResumable)
    expect([llm.calls, resumed.llm.calls]).toEqual([0, 0])
    expect(world.cancelled.map((c) => c.order_id)).toEqual(["A-771"])
  })

  it("run() on the id of a suspended run fails RunSuspended with its pending entries; nothing runs (only resume continues it)", async () => {
    const world = makeWorld()
    const store = CheckpointStore.makeMemory()
    const suspended = await suspend(world, store)
    const llm = FakeLLM.script([Turn({ content: "hello again" })])
    const exit = await Effect.runPromiseExit(world.agent().run("new task").pipe(Effect.provide(layerOf(llm, store))))
    const error = failureOf(exit)
    expect(error).toBeInstanceOf(RunSuspended)
    expect(error).toMatchObject({ runId: "test-run", pending: suspended.suspended!.pending })
    expect(error.message).toBe(
      "run 'test-run' is suspended, waiting for 1 decision(s): continue it with agent.resume(runId, decisions)"
    )
    expect(llm.calls).toBe(0)
    expect(world.cancelled).toEqual([])
  })
})
