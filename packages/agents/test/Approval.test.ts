/**
 * Human approval: the decisions, the argument digest, fail-closed resolution (spec-runtime §6.4,
 * issue 6), and the autonomy tiers of the approval gate (spec-runtime §6.1, §9 `test_gate` and the
 * autonomy items of `test_agent_loop`).
 */
import { Agent, AgentEvent, Approval, ReActCognition } from "@agentkit/agents"
import { ConfigurationError } from "@agentkit/core"
import type { Autonomy } from "@agentkit/core"
import { FakeLLM, FakeTool, makeTestCtx, Turn, Fixture, Seed } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Schema, Stream } from "effect"
import { call } from "./fixtures.js"

const { failureOf } = Fixture
const { MODEL, TASK } = Seed

const orderCall = call("c1", "cancel_order", { order_id: "A-771", reason: "duplicate" })
const pendingOf = (c = orderCall) => ({ call: c, digest: Approval.digest(c) })

describe("Approval.digest", () => {
  it("is 64 hex characters (SHA-256) and stable", () => {
    const digest = Approval.digest(orderCall)
    expect(digest).toMatch(/^[0-9a-f]{64}$/)
    expect(Approval.digest(orderCall)).toBe(digest)
  })

  it("ignores key order (canonical JSON, nested objects too) and the call id", () => {
    const a = call("c1", "send", { to: "x", meta: { b: 1, a: [{ y: 2, x: 1 }] } })
    const b = call("c9", "send", { meta: { a: [{ x: 1, y: 2 }], b: 1 }, to: "x" })
    expect(Approval.digest(a)).toBe(Approval.digest(b))
  })

  it("changes with the tool name, any argument value, and array order", () => {
    const base = Approval.digest(call("c1", "send", { to: "x", items: [1, 2] }))
    expect(Approval.digest(call("c1", "mail", { to: "x", items: [1, 2] }))).not.toBe(base)
    expect(Approval.digest(call("c1", "send", { to: "y", items: [1, 2] }))).not.toBe(base)
    expect(Approval.digest(call("c1", "send", { to: "x", items: [2, 1] }))).not.toBe(base)
    expect(Approval.digest(call("c1", "send", { to: "x", items: [1, 2], extra: true }))).not.toBe(base)
  })
})

describe("Approval constructors and the Decision schema", () => {
  it("approve, reject (with and without a reason), edit", () => {
    expect(Approval.approve("d")).toEqual({ _tag: "Approve", digest: "d" })
    expect(Approval.reject("d")).toEqual({ _tag: "Reject", digest: "d" })
    expect("reason" in Approval.reject("d")).toBe(false)
    expect(Approval.reject("d", "not confirmed")).toEqual({ _tag: "Reject", digest: "d", reason: "not confirmed" })
    expect(Approval.edit("d", { order_id: "B-102" })).toEqual({ _tag: "Edit", digest: "d", arguments: { order_id: "B-102" } })
  })

  it("every constructor's value decodes as a Decision; plain strings and half-built values do not", () => {
    const decode = Schema.decodeUnknownOption(Approval.Decision)
    for (const decision of [Approval.approve("d"), Approval.reject("d", "r"), Approval.edit("d", { a: 1 })]) {
      expect(decode(decision)._tag).toBe("Some")
    }
    for (const raw of ["approve", "approved", "yes", true, 1, null, {}, { _tag: "Approve" }, { _tag: "Edit", digest: "d", arguments: "x" }]) {
      expect(decode(raw)._tag).toBe("None")
    }
  })
})

describe("Approval.resolve fails closed", () => {
  const pending = pendingOf()

  it("a matching decision is returned as is", () => {
    expect(Approval.resolve(pending, { c1: Approval.approve(pending.digest) })).toEqual(Approval.approve(pending.digest))
    expect(Approval.resolve(pending, { c1: Approval.reject(pending.digest, "no") })).toEqual(Approval.reject(pending.digest, "no"))
    const edit = Approval.edit(pending.digest, { order_id: "B-102" })
    expect(Approval.resolve(pending, { c1: edit })).toEqual(edit)
  })

  it("a missing decision rejects (empty map, other ids only)", () => {
    const missing = Approval.reject(pending.digest, "no decision was given")
    expect(Approval.resolve(pending, {})).toEqual(missing)
    expect(Approval.resolve(pending, { c2: Approval.approve(pending.digest) })).toEqual(missing)
    expect(Approval.resolve(pending, { c1: undefined })).toEqual(missing)
  })

  it("a typo or any value that is not a decision rejects (Python would run the tool on 'approved')", () => {
    const invalid = Approval.reject(pending.digest, "the decision was not approve, reject or edit")
    for (const raw of ["approved", "approve", "yes", '{"order_id":"B-102"}', true, null, 42, { _tag: "Approve" }]) {
      expect(Approval.resolve(pending, { c1: raw })).toEqual(invalid)
    }
  })

  it("a decision for other arguments (digest mismatch) rejects", () => {
    const other = Approval.digest(call("c1", "cancel_order", { order_id: "B-102", reason: "duplicate" }))
    const mismatch = Approval.reject(pending.digest, "the decision was given for other arguments (digest mismatch)")
    expect(Approval.resolve(pending, { c1: Approval.approve(other) })).toEqual(mismatch)
    expect(Approval.resolve(pending, { c1: Approval.edit(other, { order_id: "B-102" }) })).toEqual(mismatch)
    expect(Approval.resolve(pending, { c1: Approval.reject(other, "mine") })).toEqual(mismatch)
  })

  it("an inherited property is not a decision", () => {
    const decisions = Object.create({ c1: Approval.approve(pending.digest) }) as Approval.Decisions
    expect(Approval.resolve(pending, decisions)._tag).toBe("Reject")
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
  Effect.gen(function* () {
    const t = tools()
    const agent = Agent.make({ name: "a", model: MODEL, cognition: ReActCognition.make({ tools: [t.read, t.write, t.ask] }) })
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
      Effect.gen(function* () {
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
      })
    )
  }

  it.effect("an unknown (hallucinated) tool never gates, even under manual: the model is told it does not exist", () =>
    Effect.gen(function* () {
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
    })
  )

  it.effect("an unknown tier is rejected when the context is built (ConfigurationError), before any model call", () =>
    Effect.gen(function* () {
      const llm = FakeLLM.script([Turn({ content: "never" })])
      const agent = Agent.make({ name: "a", model: MODEL, cognition: ReActCognition.make({ tools: [tools().read] }) })
      const exit = yield* agent.run(TASK).pipe(Effect.provide(makeTestCtx({ llm, autonomy: "yolo" as Autonomy })), Effect.exit)
      const error = failureOf(exit)
      expect(error).toBeInstanceOf(ConfigurationError)
      expect(error).toMatchObject({ field: "autonomy", message: "autonomy must be one of 'auto', 'gated', 'manual'; got 'yolo'" })
      expect(llm.calls).toBe(0)
    })
  )
})

describe("the gate suspends the whole turn (spec §6.3)", () => {
  it.effect("one gated call in a turn: none of its calls runs; all are pending, in call order, with frozen arguments", () =>
    Effect.gen(function* () {
      const t = tools()
      const agent = Agent.make({ name: "a", model: MODEL, cognition: ReActCognition.make({ tools: [t.read, t.write] }) })
      const calls = [call("c1", "read_only", { q: 1 }), call("c2", "side_effecting", { to: "x" }), call("c3", "read_only", { q: 2 })]
      const llm = FakeLLM.script([Turn({ toolCalls: calls })])
      const result = yield* agent.run(TASK).pipe(Effect.provide(makeTestCtx({ llm, autonomy: "gated" })))
      expect(t.read.calls).toEqual([])
      expect(t.write.calls).toEqual([])
      expect(result.suspended).toEqual({
        _tag: "Suspended",
        runId: "test-run",
        pending: calls.map((c) => ({ call: c, digest: Approval.digest(c) }))
      })
      // the transcript ends with the assistant turn: no tool results yet
      expect(result.transcript.at(-1)).toEqual({ role: "assistant", content: "", toolCalls: calls })
      expect(result.usage.inputTokens).toBe(10)
    })
  )

  it.effect("the stream: ToolCall per call, then one Interrupt per pending call, then Final with the suspension", () =>
    Effect.gen(function* () {
      const t = tools()
      const agent = Agent.make({ name: "a", model: MODEL, cognition: ReActCognition.make({ tools: [t.read, t.write] }) })
      const calls = [call("c1", "read_only"), call("c2", "side_effecting", { to: "x" })]
      const llm = FakeLLM.script([Turn({ toolCalls: calls })])
      const events = Chunk.toReadonlyArray(
        yield* agent.stream(TASK).pipe(Stream.provideLayer(makeTestCtx({ llm, autonomy: "gated" })), Stream.runCollect)
      )
      expect(events.map((event) => event._tag)).toEqual(["ToolCall", "ToolCall", "Interrupt", "Interrupt", "Final"])
      const interrupts = events.filter(AgentEvent.$is("Interrupt"))
      expect(interrupts.map((event) => ({ call: event.call, digest: event.digest }))).toEqual(
        calls.map((c) => ({ call: c, digest: Approval.digest(c) }))
      )
      const final = events.at(-1)
      if (final === undefined || !AgentEvent.$is("Final")(final)) throw new Error("expected Final")
      expect(final.result.stopReason).toBe("awaiting_approval")
      expect(final.result.suspended?.pending).toHaveLength(2)
      expect(t.write.calls).toEqual([])
    })
  )
})
