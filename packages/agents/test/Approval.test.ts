/**
 * Human approval: the decisions, the argument digest, fail-closed resolution (spec-runtime §6.4,
 * issue 6), and the autonomy tiers of the approval gate (spec-runtime §6.1, §9 `test_gate` and the
 * autonomy items of `test_agent_loop`).
 */
import { Agent, AgentEvent, Approval, ReActCognition } from "@agentkit/agents"
import { ConfigurationError } from "@agentkit/core"
import type { Autonomy } from "@agentkit/core"
import { FakeLLM, FakeTool, Fixture, makeTestCtx, Seed, Turn } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Schema, Stream } from "effect"
import { call, untyped } from "./fixtures.js"

const { failureOf } = Fixture
const { MODEL, TASK } = Seed

const orderCall = call("c1", "cancel_order", { order_id: "A-771", reason: "duplicate" })
const pendingOf = (c = orderCall, kind: Approval.PendingKind = "Approval") =>
  Approval.makeEntry({
    kind,
    path: "run-1",
    iteration: 0,
    index: 0,
    call: c,
    tool: Seed.cancelOrder,
    reasons: ["autonomy_gated"],
    createdAt: 0
  })

describe("pending ids, fingerprints and digests", () => {
  const digestOf = (fields: Partial<Parameters<typeof Approval.digest>[0]> = {}) =>
    Approval.digest({ path: "run-1", pendingId: "p-1", fingerprint: "f", arguments: orderCall.arguments, ...fields })

  it("the digest is 64 hex characters (SHA-256), stable, and ignores key order (canonical JSON, nested objects too)", () => {
    expect(digestOf()).toMatch(/^[0-9a-f]{64}$/)
    expect(digestOf()).toBe(digestOf())
    expect(digestOf({ arguments: { to: "x", meta: { b: 1, a: [{ y: 2, x: 1 }] } } })).toBe(
      digestOf({ arguments: { meta: { a: [{ x: 1, y: 2 }], b: 1 }, to: "x" } })
    )
  })

  it("the digest binds the run path, the pending id, the tool's fingerprint and every argument value (and array order)", () => {
    const base = digestOf({ arguments: { to: "x", items: [1, 2] } })
    expect(digestOf({ path: "run-2", arguments: { to: "x", items: [1, 2] } })).not.toBe(base)
    expect(digestOf({ pendingId: "p-2", arguments: { to: "x", items: [1, 2] } })).not.toBe(base)
    expect(digestOf({ fingerprint: "g", arguments: { to: "x", items: [1, 2] } })).not.toBe(base)
    expect(digestOf({ arguments: { to: "y", items: [1, 2] } })).not.toBe(base)
    expect(digestOf({ arguments: { to: "x", items: [2, 1] } })).not.toBe(base)
    expect(digestOf({ arguments: { to: "x", items: [1, 2], extra: true } })).not.toBe(base)
  })

  it("the fingerprint changes with the advertised schema bytes, each flag and the caps", () => {
    const fields = {
      schema: { parameters: { type: "object", properties: {}, required: [] } },
      sideEffecting: true,
      idempotent: false,
      requiresApproval: false,
      caps: [] as ReadonlyArray<"egress">
    }
    const base = Approval.fingerprint({ ...fields })
    expect(base).toMatch(/^[0-9a-f]{64}$/)
    expect(Approval.fingerprint({ ...fields })).toBe(base)
    expect(
      Approval.fingerprint({ ...fields, schema: { parameters: { type: "object", required: [], properties: {} } } })
    ).not.toBe(base)
    expect(Approval.fingerprint({ ...fields, sideEffecting: false })).not.toBe(base)
    expect(Approval.fingerprint({ ...fields, idempotent: true })).not.toBe(base)
    expect(Approval.fingerprint({ ...fields, requiresApproval: true })).not.toBe(base)
    expect(Approval.fingerprint({ ...fields, caps: ["egress"] })).not.toBe(base)
  })

  it("the pending id is p- + 16 hex, deterministic, and differs by path, turn, index, call id, kind and claim time", () => {
    const fields = { path: "run-1", iteration: 0, index: 0, callId: "c1", kind: "Approval" as const }
    const base = Approval.pendingId(fields)
    expect(base).toMatch(/^p-[0-9a-f]{16}$/)
    expect(Approval.pendingId({ ...fields })).toBe(base)
    const others = [
      { ...fields, path: "run-1/research#c1" },
      { ...fields, iteration: 1 },
      { ...fields, index: 1 },
      { ...fields, callId: "c2" },
      { ...fields, kind: "InDoubt" as const },
      { ...fields, kind: "InDoubt" as const, claimedAt: 5 }
    ].map(Approval.pendingId)
    expect(new Set([base, ...others]).size).toBe(7)
  })

  it("makeEntry: the entry's digest is the one its fields give", () => {
    const entry = pendingOf()
    expect(entry).toMatchObject({
      kind: "Approval",
      path: "run-1",
      call: orderCall,
      reasons: ["autonomy_gated"],
      createdAt: 0
    })
    expect(entry.tool).toMatchObject({
      name: "cancel_order",
      sideEffecting: true,
      idempotent: false,
      requiresApproval: false,
      caps: []
    })
    expect(entry.digest).toBe(
      Approval.digest({
        path: "run-1",
        pendingId: entry.id,
        fingerprint: entry.tool.fingerprint,
        arguments: orderCall.arguments
      })
    )
  })
})

describe("Approval constructors and the Decision schema", () => {
  it("approve, reject (with and without a reason), edit, markDone, markFailed, retry", () => {
    expect(Approval.approve("d")).toEqual({ verdict: "approve", digest: "d" })
    expect(Approval.approve("d", { by: "alice" })).toEqual({ verdict: "approve", digest: "d", by: "alice" })
    expect(Approval.reject("d")).toEqual({ verdict: "reject", digest: "d" })
    expect("reason" in Approval.reject("d")).toBe(false)
    expect(Approval.reject("d", "not confirmed")).toEqual({ verdict: "reject", digest: "d", reason: "not confirmed" })
    expect(Approval.edit("d", { order_id: "B-102" })).toEqual({
      verdict: "edit",
      digest: "d",
      arguments: { order_id: "B-102" }
    })
    expect(Approval.markDone("d", "charged")).toEqual({ verdict: "markDone", digest: "d", outcome: "charged" })
    expect(Approval.markFailed("d", "no record")).toEqual({ verdict: "markFailed", digest: "d", reason: "no record" })
    expect(Approval.retry("d")).toEqual({ verdict: "retry", digest: "d" })
  })

  it("every constructor's value decodes as a Decision; plain strings and half-built values do not", () => {
    const decode = Schema.decodeUnknownOption(Approval.Decision)
    for (
      const decision of [
        Approval.approve("d"),
        Approval.reject("d", "r"),
        Approval.edit("d", { a: 1 }),
        Approval.markDone("d", "x"),
        Approval.markFailed("d", "y"),
        Approval.retry("d")
      ]
    ) {
      expect(decode(decision)._tag).toBe("Some")
    }
    for (
      const raw of [
        "approve",
        "approved",
        "yes",
        true,
        1,
        null,
        {},
        { verdict: "approve" },
        { verdict: "edit", digest: "d", arguments: "x" },
        { verdict: "markDone", digest: "d" },
        { verdict: "markFailed", digest: "d" },
        { _tag: "Approve", digest: "d" }
      ]
    ) {
      expect(decode(raw)._tag).toBe("None")
    }
  })

  it("verdicts by kind: approvals and gates approve, reject or edit; a call in doubt is markDone, markFailed or retry", () => {
    expect(Approval.verdictsFor("Approval")).toEqual(["approve", "reject", "edit"])
    expect(Approval.verdictsFor("Gate")).toEqual(["approve", "reject", "edit"])
    expect(Approval.verdictsFor("InDoubt")).toEqual(["markDone", "markFailed", "retry"])
  })
})

describe("Approval.resolve (an in-process approver's decisions) fails closed", () => {
  const pending = pendingOf()

  it("a matching decision (keyed by pending id) is returned as is", () => {
    expect(Approval.resolve(pending, Approval.decisions([[pending.id, Approval.approve(pending.digest)]]))).toEqual(
      Approval.approve(pending.digest)
    )
    expect(Approval.resolve(pending, Approval.decisions([[pending.id, Approval.reject(pending.digest, "no")]])))
      .toEqual(
        Approval.reject(pending.digest, "no")
      )
    const edit = Approval.edit(pending.digest, { order_id: "B-102" })
    expect(Approval.resolve(pending, Approval.decisions([[pending.id, edit]]))).toEqual(edit)
  })

  it("a missing decision rejects (empty map, other ids only, the call id instead of the pending id)", () => {
    const missing = Approval.reject(pending.digest, "no decision was given")
    expect(Approval.resolve(pending, Approval.decisions([]))).toEqual(missing)
    expect(Approval.resolve(pending, untyped({ "p-other": Approval.approve(pending.digest) }))).toEqual(missing)
    expect(Approval.resolve(pending, untyped({ c1: Approval.approve(pending.digest) }))).toEqual(missing)
    expect(Approval.resolve(pending, untyped({ [pending.id]: undefined }))).toEqual(missing)
  })

  it("a typo or any value that is not a decision rejects (Python would run the tool on 'approved')", () => {
    const invalid = Approval.reject(pending.digest, "the decision was not approve, reject or edit")
    for (
      const raw of [
        "approved",
        "approve",
        "yes",
        "{\"order_id\":\"B-102\"}",
        true,
        null,
        42,
        { verdict: "approve" },
        Approval.markDone(pending.digest, "x")
      ]
    ) {
      expect(Approval.resolve(pending, untyped({ [pending.id]: raw }))).toEqual(invalid)
    }
  })

  it("a decision for other arguments (digest mismatch) rejects", () => {
    const other = pendingOf(call("c1", "cancel_order", { order_id: "B-102", reason: "duplicate" })).digest
    const mismatch = Approval.reject(pending.digest, "the decision was given for other arguments (digest mismatch)")
    expect(Approval.resolve(pending, Approval.decisions([[pending.id, Approval.approve(other)]]))).toEqual(mismatch)
    expect(Approval.resolve(pending, Approval.decisions([[pending.id, Approval.edit(other, { order_id: "B-102" })]])))
      .toEqual(mismatch)
    expect(Approval.resolve(pending, Approval.decisions([[pending.id, Approval.reject(other, "mine")]]))).toEqual(
      mismatch
    )
  })

  it("an inherited property is not a decision", () => {
    const decisions = Object.create(
      Approval.decisions([[pending.id, Approval.approve(pending.digest)]])
    ) as Approval.Decisions
    expect(Approval.resolve(pending, decisions).verdict).toBe("reject")
  })
})

/** A read-only tool, a side-effecting one and one that always asks. */
const tools = () => ({
  read: FakeTool.make("read_only", { sideEffecting: false, responses: ["read ok"] }),
  write: FakeTool.make("side_effecting", { sideEffecting: true, responses: ["write ok"] }),
  ask: FakeTool.make("always_ask", { sideEffecting: false, requiresApproval: true, responses: ["asked ok"] })
})

/** Runs one turn calling `name` under `autonomy`: did the call suspend? did the tool run? */
const runTier = (autonomy: Autonomy, name: "read_only" | "side_effecting" | "always_ask") =>
  Effect.gen(function*() {
    const t = tools()
    const agent = Agent.make({
      name: "a",
      model: MODEL,
      cognition: ReActCognition.make({ tools: [t.read, t.write, t.ask] })
    })
    const llm = FakeLLM.script([Turn({ toolCalls: [call("c1", name)] }), Turn({ content: "done" })])
    const result = yield* agent.run(TASK).pipe(Effect.provide(makeTestCtx({ llm, autonomy })))
    const ran = t.read.calls.length + t.write.calls.length + t.ask.calls.length
    return { suspended: result.stopReason === "awaiting_approval", ran, result, llm }
  })

describe("autonomy tiers gate calls (spec §6.1, test_gate)", () => {
  const table: ReadonlyArray<readonly [Autonomy, "read_only" | "side_effecting" | "always_ask", boolean]> = [
    ["auto", "read_only", false],
    ["auto", "side_effecting", false],
    ["auto", "always_ask", true],
    ["gated", "read_only", false],
    ["gated", "side_effecting", true],
    ["gated", "always_ask", true],
    ["manual", "read_only", true],
    ["manual", "side_effecting", true],
    ["manual", "always_ask", true]
  ]
  for (const [autonomy, name, gated] of table) {
    it.effect(`${autonomy} + ${name} → ${gated ? "suspends, nothing runs" : "runs without approval"}`, () =>
      Effect.gen(function*() {
        const { llm, ran, result, suspended } = yield* runTier(autonomy, name)
        expect(suspended).toBe(gated)
        if (gated) {
          expect(ran).toBe(0)
          expect(llm.calls).toBe(1)
          expect(result).toMatchObject({ output: "", partial: true, stopReason: "awaiting_approval" })
          expect(result.suspended?.pending.map((p) => p.call.name)).toEqual([name])
        } else {
          expect(ran).toBe(1)
          expect(result).toMatchObject({ output: "done", partial: false, stopReason: "end_turn" })
          expect(result.suspended).toBeUndefined()
        }
      }))
  }

  it.effect("an unknown (hallucinated) tool never gates, even under manual: the model is told it does not exist", () =>
    Effect.gen(function*() {
      const t = tools()
      const agent = Agent.make({ name: "a", model: MODEL, cognition: ReActCognition.make({ tools: [t.read] }) })
      const llm = FakeLLM.script([Turn({ toolCalls: [call("c1", "ghost")] }), Turn({ content: "sorry" })])
      const result = yield* agent.run(TASK).pipe(Effect.provide(makeTestCtx({ llm, autonomy: "manual" })))
      expect(result.stopReason).toBe("end_turn")
      expect(result.transcript.at(-2)).toMatchObject({
        role: "tool",
        content: "ERROR: no tool named 'ghost'. Available tools: read_only.",
        isError: true
      })
    }))

  it.effect("an unknown tier is rejected when the context is built (ConfigurationError), before any model call", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ content: "never" })])
      const agent = Agent.make({ name: "a", model: MODEL, cognition: ReActCognition.make({ tools: [tools().read] }) })
      const exit = yield* agent.run(TASK).pipe(
        Effect.provide(makeTestCtx({ llm, autonomy: "yolo" as Autonomy })),
        Effect.exit
      )
      const error = failureOf(exit)
      expect(error).toBeInstanceOf(ConfigurationError)
      expect(error).toMatchObject({
        field: "autonomy",
        message: "autonomy must be one of 'auto', 'gated', 'manual'; got 'yolo'"
      })
      expect(llm.calls).toBe(0)
    }))
})

describe("the gate suspends the whole turn (spec §6.3)", () => {
  it.effect("one gated call in a turn: none of its calls runs; all are pending, in call order, with frozen arguments", () =>
    Effect.gen(function*() {
      const t = tools()
      const agent = Agent.make({
        name: "a",
        model: MODEL,
        cognition: ReActCognition.make({ tools: [t.read, t.write] })
      })
      const calls = [
        call("c1", "read_only", { q: 1 }),
        call("c2", "side_effecting", { to: "x" }),
        call("c3", "read_only", { q: 2 })
      ]
      const llm = FakeLLM.script([Turn({ toolCalls: calls })])
      const result = yield* agent.run(TASK).pipe(Effect.provide(makeTestCtx({ llm, autonomy: "gated" })))
      expect(t.read.calls).toEqual([])
      expect(t.write.calls).toEqual([])
      expect(result.suspended?._tag).toBe("Suspended")
      expect(result.suspended?.runId).toBe("test-run")
      const pending = result.suspended!.pending
      expect(pending.map((p) => [p.call, p.kind, p.reasons, p.path])).toEqual([
        [calls[0], "Approval", [], "test-run"],
        [calls[1], "Approval", ["autonomy_gated"], "test-run"],
        [calls[2], "Approval", [], "test-run"]
      ])
      expect(pending.map((p) => p.id)).toEqual(
        calls.map((c, index) =>
          Approval.pendingId({ path: "test-run", iteration: 0, index, callId: c.id, kind: "Approval" })
        )
      )
      for (const p of pending) {
        expect(p.digest).toBe(
          Approval.digest({
            path: "test-run",
            pendingId: p.id,
            fingerprint: p.tool.fingerprint,
            arguments: p.call.arguments
          })
        )
      }
      // the transcript ends with the assistant turn: no tool results yet
      expect(result.transcript.at(-1)).toEqual({ role: "assistant", content: "", toolCalls: calls })
      expect(result.usage.inputTokens).toBe(10)
    }))

  it.effect("the stream: ToolCall per call, then one Interrupt per pending call, then Final with the suspension", () =>
    Effect.gen(function*() {
      const t = tools()
      const agent = Agent.make({
        name: "a",
        model: MODEL,
        cognition: ReActCognition.make({ tools: [t.read, t.write] })
      })
      const calls = [call("c1", "read_only"), call("c2", "side_effecting", { to: "x" })]
      const llm = FakeLLM.script([Turn({ toolCalls: calls })])
      const events = Chunk.toReadonlyArray(
        yield* agent.stream(TASK).pipe(Stream.provideLayer(makeTestCtx({ llm, autonomy: "gated" })), Stream.runCollect)
      )
      expect(events.map((event) => event._tag)).toEqual(["ToolCall", "ToolCall", "Interrupt", "Interrupt", "Final"])
      const interrupts = events.filter(AgentEvent.$is("Interrupt"))
      const final_ = events.at(-1)
      if (final_ === undefined || !AgentEvent.$is("Final")(final_)) throw new Error("expected Final")
      expect(interrupts.map((event) => ({ id: event.id, call: event.call, digest: event.digest }))).toEqual(
        final_.result.suspended!.pending.map((p) => ({ id: p.id, call: p.call, digest: p.digest }))
      )
      expect(interrupts.map((event) => event.call)).toEqual(calls)
      const final = events.at(-1)
      if (final === undefined || !AgentEvent.$is("Final")(final)) throw new Error("expected Final")
      expect(final.result.stopReason).toBe("awaiting_approval")
      expect(final.result.suspended?.pending).toHaveLength(2)
      expect(t.write.calls).toEqual([])
    }))
})
