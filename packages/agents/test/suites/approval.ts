/**
 * The approval suite's core, shared by every engine (`SuiteEngine`): a call that needs a person
 * suspends the run with nothing run; approve runs it once with the model's arguments, edit with
 * the edited ones, reject does not run it and the model is told why; a stale digest or an edit
 * the tool's schema refuses is a typed refusal, nothing runs, the run still waits.
 */
import { Agent, Approval, ReActCognition } from "@agentkit/agents"
import { AuditStore, CheckpointStore } from "@agentkit/core"
import type { Chat } from "@agentkit/core"
import { FakeLLM, Turn } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import type { SuiteEngine } from "./engine.js"

const DENIED = "DENIED: tool call rejected by human approval"

const world = () => {
  const cancelled: Array<{ readonly order_id: string; readonly reason: string }> = []
  const cancel = Tool.make("cancel_order", {
    description: "Cancel an order by its id; a person approves every cancellation.",
    parameters: {
      order_id: Schema.String,
      reason: Schema.String.pipe(Schema.optionalWith({ default: () => "customer request" }))
    },
    sideEffecting: true,
    requiresApproval: true,
    handler: (args) => Effect.sync(() => (cancelled.push(args), `order ${args.order_id} cancelled (${args.reason})`))
  })
  const agent = Agent.make({
    name: "support",
    model: "model-support",
    prompt: "Cancel orders.",
    cognition: ReActCognition.make({ tools: [cancel] })
  })
  const llm = FakeLLM.respond((request: Chat.ChatRequest) =>
    request.messages.at(-1)?.role === "tool"
      ? Turn({ content: "All set." })
      : Turn({
        content: "I will cancel it.",
        toolCalls: [{ id: "c1", name: "cancel_order", arguments: { order_id: "A-771", reason: "duplicate order" } }]
      })
  )
  return { agent: agent as Agent.Agent<never>, llm, cancelled }
}

/** What the model was shown for the call, on the request after it. */
const seenByModel = (llm: FakeLLM.FakeLLM) => llm.requests.at(-1)?.messages.at(-1)

/** The approval cases on `engine`. */
export const approvalMatrix = (engine: SuiteEngine) =>
  describe(`the approval suite (${engine.name})`, () => {
    const drive = (runId: string, decide: (entry: Approval.PendingEntry) => Approval.Decision | undefined) => {
      const w = world()
      const outcome = engine.drive({
        agent: w.agent,
        input: "Cancel order A-771, it is a duplicate.",
        runId,
        llm: w.llm,
        store: CheckpointStore.makeMemory(),
        audit: AuditStore.makeMemory(),
        maxResumes: 1,
        decide: (pending) => {
          const decision = decide(pending[0]!)
          return decision === undefined ? undefined : Approval.decisions([[pending[0]!.id, decision]])
        }
      })
      return outcome.then((o) => ({ ...o, ...w }))
    }

    it("no decision yet: the run waits on one Approval entry at its path, nothing ran", async () => {
      const { cancelled, pending, stopReason } = await drive("ap-1", () => undefined)
      expect(stopReason).toBe("awaiting_approval")
      expect(pending).toMatchObject([{
        kind: "Approval",
        path: "ap-1",
        reasons: ["requires_approval"],
        call: { id: "c1", name: "cancel_order" }
      }])
      expect(cancelled).toEqual([])
    })

    it("approve: the call runs once with the model's arguments; the model sees its result", async () => {
      const outcome = await drive("ap-2", (entry) => Approval.approve(entry.digest, { by: "alice" }))
      expect([outcome.output, outcome.stopReason, outcome.pending, outcome.resumes]).toEqual([
        "All set.",
        "end_turn",
        undefined,
        1
      ])
      expect(outcome.cancelled).toEqual([{ order_id: "A-771", reason: "duplicate order" }])
      expect(seenByModel(outcome.llm)).toMatchObject({
        role: "tool",
        toolCallId: "c1",
        content: "order A-771 cancelled (duplicate order)",
        isError: false
      })
    })

    it("edit: the call runs with the edited (validated, defaulted) arguments", async () => {
      const outcome = await drive(
        "ap-3",
        (entry) => ({ ...Approval.edit(entry.digest, { order_id: "B-102" }), by: "alice" })
      )
      expect(outcome.output).toBe("All set.")
      expect(outcome.cancelled).toEqual([{ order_id: "B-102", reason: "customer request" }])
      expect(seenByModel(outcome.llm)).toMatchObject({ content: "order B-102 cancelled (customer request)" })
    })

    it("reject with a reason: the call does not run; the model sees DENIED and the reason", async () => {
      const outcome = await drive(
        "ap-4",
        (entry) => ({ ...Approval.reject(entry.digest, "the customer has not confirmed"), by: "bob" })
      )
      expect(outcome.output).toBe("All set.")
      expect(outcome.cancelled).toEqual([])
      expect(seenByModel(outcome.llm)).toMatchObject({
        role: "tool",
        toolCallId: "c1",
        content: `${DENIED}: the customer has not confirmed`,
        isError: true
      })
    })

    for (
      const [label, decision, tag] of [
        ["a stale digest", () => Approval.approve("0".repeat(64), { by: "alice" }), "DigestMismatch"],
        [
          "an edit the tool's schema refuses",
          (entry: Approval.PendingEntry) => ({ ...Approval.edit(entry.digest, { order: "A-771" }), by: "alice" }),
          "ToolArgumentError"
        ],
        [
          "a verdict for a call in doubt on an approval",
          (entry: Approval.PendingEntry) => ({ ...Approval.markDone(entry.digest, "done"), by: "alice" }),
          "InvalidDecision"
        ]
      ] as const
    ) {
      it(`${label}: refused (${tag}), nothing runs, the run still waits`, async () => {
        const outcome = await drive(`ap-${tag}`, decision)
        expect(outcome.refused).toBe(tag)
        expect(outcome.cancelled).toEqual([])
        expect(outcome.llm.calls).toBe(1)
        expect(outcome.pending).toHaveLength(1)
      })
    }
  })
