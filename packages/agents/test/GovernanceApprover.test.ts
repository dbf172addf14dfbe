/**
 * The in-process `Approver` (issue 6): asked and awaited, so the run goes on without a checkpoint
 * round trip; read with `Effect.serviceOption`, so it never appears in `agent.run`'s requirements.
 */
import { Agent, AgentEvent, Approval, ReActCognition } from "@agentkit/agents"
import type { AgentResult } from "@agentkit/agents"
import { Cancellation, Cancelled, CheckpointStore } from "@agentkit/core"
import type { Message } from "@agentkit/core"
import { FakeLLM, Fixture, makeTestCtx, Seed, Turn } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Layer, Schema, Stream } from "effect"
import { call, expectedDigest, recordingStore, recordOf, untyped } from "./fixtures.js"

const { failureOf } = Fixture
const { MODEL, PROMPT, TASK } = Seed

const CANCEL = call("c1", "cancel_order", { order_id: "A-771", reason: "duplicate order" })
const DENIED = "DENIED: tool call rejected by human approval"

const makeWorld = () => {
  const cancelled: Array<{ readonly order_id: string; readonly reason: string }> = []
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
  const agent = Agent.make({
    name: "support",
    model: MODEL,
    prompt: PROMPT,
    cognition: ReActCognition.make({ tools: [cancelOrder] })
  })
  return { agent, cancelled }
}

/** An approver answering every pending call with `answer`, recording what it was asked. */
const approverOf = (answer: (pending: AgentResult.PendingCall) => unknown) => {
  const requests: Array<Approval.ApprovalRequest> = []
  const layer = Layer.succeed(Approval.Approver, {
    decide: (request) =>
      Effect.sync(() => {
        requests.push(request)
        return untyped(Object.fromEntries(request.pending.map((p) => [p.id, answer(p)])))
      })
  })
  return { layer, requests }
}

const script = () => FakeLLM.script([Turn({ toolCalls: [CANCEL] }), Turn({ content: "All set." })])

const toolMessages = (messages: ReadonlyArray<Message.Message>) =>
  messages.flatMap((message) => (message.role === "tool" ? [message] : []))

describe("an in-process Approver", () => {
  it.effect("approves → the run completes in one go, no suspension; it works without a checkpoint store", () =>
    Effect.gen(function*() {
      const { agent, cancelled } = makeWorld()
      const approver = approverOf((p) => Approval.approve(p.digest))
      const llm = script()
      const result = yield* agent.run(TASK).pipe(
        Effect.provide(makeTestCtx({ llm, autonomy: "gated" })),
        Effect.provide(approver.layer)
      )
      expect(result).toMatchObject({ output: "All set.", partial: false, stopReason: "end_turn" })
      expect(result.suspended).toBeUndefined()
      expect(cancelled).toEqual([{ order_id: "A-771", reason: "duplicate order" }])
      expect(approver.requests).toMatchObject([
        {
          runId: "test-run",
          agent: "support",
          pending: [{ call: CANCEL, kind: "Approval", path: "test-run", reasons: ["autonomy_gated"] }]
        }
      ])
      const [entry] = approver.requests[0]!.pending
      expect(entry!.digest).toBe(expectedDigest(entry!))
      expect(toolMessages(llm.requests[1]!.messages)[0]).toMatchObject({
        content: "order A-771 cancelled (duplicate order)",
        isError: false
      })
      llm.assertConsumed()
    }))

  it.effect("with a store too: no suspended checkpoint is ever written; the run ends with its terminal marker", () =>
    Effect.gen(function*() {
      const { agent } = makeWorld()
      const { saves, store } = recordingStore()
      const approver = approverOf((p) => Approval.approve(p.digest))
      const result = yield* agent
        .run(TASK)
        .pipe(
          Effect.provide(
            Layer.mergeAll(
              makeTestCtx({ llm: script(), autonomy: "gated" }),
              CheckpointStore.layer(store),
              approver.layer
            )
          )
        )
      expect(result.output).toBe("All set.")
      expect(saves.map((save) => save.status)).not.toContain("suspended")
      expect((yield* recordOf(store)).status).toBe("done")
    }))

  it.effect("the approver is handed frozen copies of the entries: changing the arguments it was shown throws", () =>
    Effect.gen(function*() {
      const { agent, cancelled } = makeWorld()
      const approver = approverOf((p) => {
        expect(Object.isFrozen(p) && Object.isFrozen(p.call.arguments)).toBe(true)
        expect(() => {
          ;(p.call.arguments as Record<string, unknown>).order_id = "ZZZ"
        }).toThrow(TypeError)
        return Approval.approve(p.digest)
      })
      yield* agent.run(TASK).pipe(
        Effect.provide(makeTestCtx({ llm: script(), autonomy: "gated" })),
        Effect.provide(approver.layer)
      )
      expect(cancelled).toEqual([{ order_id: "A-771", reason: "duplicate order" }])
    }))

  it.effect("is not asked when nothing needs approval", () =>
    Effect.gen(function*() {
      const { agent, cancelled } = makeWorld()
      const approver = approverOf((p) => Approval.approve(p.digest))
      yield* agent.run(TASK).pipe(
        Effect.provide(makeTestCtx({ llm: script(), autonomy: "auto" })),
        Effect.provide(approver.layer)
      )
      expect(approver.requests).toEqual([])
      expect(cancelled).toHaveLength(1)
    }))

  it.effect("rejects → the tool does not run; the model sees DENIED and the reason", () =>
    Effect.gen(function*() {
      const { agent, cancelled } = makeWorld()
      const approver = approverOf((p) => Approval.reject(p.digest, "ask the customer first"))
      const llm = script()
      const result = yield* agent.run(TASK).pipe(
        Effect.provide(makeTestCtx({ llm, autonomy: "gated" })),
        Effect.provide(approver.layer)
      )
      expect(result.output).toBe("All set.")
      expect(cancelled).toEqual([])
      expect(toolMessages(llm.requests[1]!.messages)).toEqual([
        {
          role: "tool",
          toolCallId: "c1",
          name: "cancel_order",
          content: `${DENIED}: ask the customer first`,
          isError: true
        }
      ])
    }))

  it.effect("edits → the call runs with the edited arguments", () =>
    Effect.gen(function*() {
      const { agent, cancelled } = makeWorld()
      const approver = approverOf((p) => Approval.edit(p.digest, { order_id: "B-102", reason: "wrong order" }))
      yield* agent.run(TASK).pipe(
        Effect.provide(makeTestCtx({ llm: script(), autonomy: "gated" })),
        Effect.provide(approver.layer)
      )
      expect(cancelled).toEqual([{ order_id: "B-102", reason: "wrong order" }])
    }))

  it.effect("an invalid edit rejects that call (never a ToolArgumentError): nothing runs, the model is told why", () =>
    Effect.gen(function*() {
      const { agent, cancelled } = makeWorld()
      const approver = approverOf((p) => Approval.edit(p.digest, { order: "A-771" }))
      const llm = script()
      const result = yield* agent.run(TASK).pipe(
        Effect.provide(makeTestCtx({ llm, autonomy: "gated" })),
        Effect.provide(approver.layer)
      )
      expect(result.output).toBe("All set.")
      expect(cancelled).toEqual([])
      expect(toolMessages(llm.requests[1]!.messages)[0]).toMatchObject({
        content:
          `${DENIED}: the edited arguments were invalid: tool 'cancel_order' call rejected: unexpected argument(s) ['order']; missing required argument(s) ['order_id']. Accepted arguments: ['order_id', 'reason']`,
        isError: true
      })
    }))

  it.effect("an invalid edit of one call does not stop its approved sibling", () =>
    Effect.gen(function*() {
      const { agent, cancelled } = makeWorld()
      const other = call("c2", "cancel_order", { order_id: "B-102" })
      const approver = approverOf((
        p
      ) => (p.call.id === "c1" ? Approval.edit(p.digest, { order_id: 1 }) : Approval.approve(p.digest)))
      const llm = FakeLLM.script([Turn({ toolCalls: [CANCEL, other] }), Turn({ content: "ok" })])
      yield* agent.run(TASK).pipe(
        Effect.provide(makeTestCtx({ llm, autonomy: "gated" })),
        Effect.provide(approver.layer)
      )
      expect(cancelled).toEqual([{ order_id: "B-102", reason: "customer request" }])
      expect(toolMessages(llm.requests[1]!.messages).map((m) => m.isError)).toEqual([true, false])
    }))

  it.effect("garbage from the approver fails closed: a typo, a missing answer, a wrong digest all reject", () =>
    Effect.gen(function*() {
      for (const answer of [() => "approved", () => undefined, () => Approval.approve("0".repeat(64))]) {
        const { agent, cancelled } = makeWorld()
        const llm = script()
        yield* agent
          .run(TASK)
          .pipe(Effect.provide(makeTestCtx({ llm, autonomy: "gated" })), Effect.provide(approverOf(answer).layer))
        expect(cancelled).toEqual([])
        expect(toolMessages(llm.requests[1]!.messages)[0]?.content.startsWith(`${DENIED}: `)).toBe(true)
      }
    }))

  it.effect("the stream still shows one Interrupt per pending call, then the result and the final answer", () =>
    Effect.gen(function*() {
      const { agent } = makeWorld()
      const approver = approverOf((p) => Approval.approve(p.digest))
      const events = Chunk.toReadonlyArray(
        yield* agent.stream(TASK).pipe(
          Stream.provideLayer(Layer.merge(makeTestCtx({ llm: script(), autonomy: "gated" }), approver.layer)),
          Stream.runCollect
        )
      )
      expect(events.map((event) => event._tag)).toEqual([
        "ToolCall",
        "Interrupt",
        "ToolResult",
        "Step",
        "MessageDelta",
        "Final"
      ])
      expect(events[1]).toMatchObject({
        _tag: "Interrupt",
        call: CANCEL,
        kind: "Approval",
        reasons: ["autonomy_gated"]
      })
      expect(AgentEvent.$is("Interrupt")(events[1]!)).toBe(true)
    }))

  it.effect("cancellation beats approval: the run is cancelled while the approver is deciding → nothing runs", () =>
    Effect.gen(function*() {
      const { agent, cancelled } = makeWorld()
      const token = Cancellation.make()
      const approver = approverOf((p) => {
        token.cancel()
        return Approval.approve(p.digest)
      })
      const llm = script()
      const exit = yield* agent
        .run(TASK)
        .pipe(
          Effect.provide(makeTestCtx({ llm, autonomy: "gated", cancellation: token })),
          Effect.provide(approver.layer),
          Effect.exit
        )
      expect(failureOf(exit)).toBeInstanceOf(Cancelled)
      expect(cancelled).toEqual([])
      expect(llm.calls).toBe(1)
    }))
})
