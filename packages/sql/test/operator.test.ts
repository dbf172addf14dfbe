/**
 * The operator service (agents `Operator`) over the SQL stores, on every database here: a real
 * agent run suspends in one "process", operators in two other processes (each its own client on
 * the same database) race to decide it (exactly one wins, the rest get `AlreadyDecided` naming
 * the winner), and a fourth process applies the recorded decision with `RunRecovery`: the
 * side-effecting tool runs once and the run finishes; the audit trail and `changes` show it.
 */
import { Agent, Approval, Operator, ReActCognition, RunRecovery } from "@agentkit/agents"
import { FakeLLM, Fixture, makeTestCtx, Seed, Turn } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Either, Layer, Schema } from "effect"
import { targets } from "./databases.js"

const CANCEL = Fixture.toolCall("c1", "cancel_order", { order_id: "A-771" })

const world = () => {
  const cancelled: Array<string> = []
  const agent = Agent.make({
    name: "support",
    model: Seed.MODEL,
    prompt: Seed.PROMPT,
    cognition: ReActCognition.make({
      tools: [
        Tool.make("cancel_order", {
          description: "Cancel an order. This really cancels it; there is no undo.",
          parameters: { order_id: Schema.String },
          sideEffecting: true,
          requiresApproval: true,
          handler: ({ order_id }) => {
            cancelled.push(order_id)
            return `order ${order_id} cancelled`
          }
        })
      ]
    })
  })
  return { agent, cancelled }
}

for (const target of targets) {
  describe(`Operator on ${target.name}`, () => {
    it.live(
      "decisions recorded by any process, first one wins, applied by another; audited",
      () =>
        Effect.gen(function*() {
          const place = yield* target.fresh
          // each "process" opens its own client on the same database
          const process_ = () => place.stores()
          const first = world()
          const suspended = yield* first.agent.run("Cancel order A-771.").pipe(
            Effect.provide(
              Layer.merge(
                process_(),
                makeTestCtx({
                  llm: FakeLLM.script([Turn({ toolCalls: [CANCEL] })]),
                  runId: "run-1",
                  scope: { orgId: "acme", userId: "ann" }
                })
              )
            )
          )
          expect(suspended.stopReason).toBe("awaiting_approval")
          const entry = suspended.suspended!.pending[0]!

          const operators = yield* Effect.forEach([0, 1], () =>
            Effect.map(Layer.build(Operator.Operator.layer.pipe(Layer.provide(process_()))), (c) =>
              Context.get(c, Operator.Operator)))
          const listed = yield* operators[0]!.list({ status: ["suspended"], order: "desc" })
          expect(listed.runs.map((r) => [
            r.runId,
            r.requestedBy,
            r.pending.map((p) =>
              p.reasons
            )
          ])).toEqual([["run-1", "ann", [["requires_approval"]]]])
          const tenant = listed.runs[0]!.tenant
          expect(
            yield* Effect.flip(
              operators[1]!.decide("run-1", entry.id, { ...Approval.approve("f".repeat(64)), by: "eve" })
            )
          ).toMatchObject({ _tag: "DigestMismatch" })
          const start = yield* operators[1]!.changes(undefined)

          const outcomes = yield* Effect.forEach(
            Array.from({ length: 10 }, (_, i) => i),
            (i) =>
              Effect.either(
                operators[i % 2]!.decide("run-1", entry.id, { ...Approval.approve(entry.digest), by: `op-${i}` }, {
                  tenants: [tenant]
                })
              ),
            { concurrency: "unbounded" }
          )
          const winners = outcomes.filter(Either.isRight).map((o) => o.right)
          expect(winners).toHaveLength(1)
          for (const lost of outcomes.filter(Either.isLeft).map((o) => o.left)) {
            expect(lost).toMatchObject({ _tag: "AlreadyDecided", by: winners[0]!.by })
          }

          const second = world()
          const report = yield* RunRecovery.runOnce({ agents: [second.agent] }).pipe(
            Effect.provide(
              Layer.merge(
                process_(),
                makeTestCtx({ llm: FakeLLM.script([Turn({ content: "Order A-771 is cancelled." })]) })
              )
            )
          )
          expect(report.resumed).toEqual(["run-1"])
          expect(second.cancelled).toEqual(["A-771"])
          const done = yield* operators[0]!.show("run-1", { tenants: [tenant] })
          expect(done).toMatchObject({
            status: "done",
            requestedBy: "ann",
            result: { output: "Order A-771 is cancelled." }
          })
          expect(done.decided).toEqual([winners[0]])
          expect((yield* operators[1]!.changes(start.cursor)).runIds).toEqual(["run-1"])
          const trail = yield* operators[1]!.audit({ runId: "run-1", tenant: [tenant] })
          expect(trail.records.filter((r) => r.decision === "operator")).toEqual([
            expect.objectContaining({ action: "approve", by: winners[0]!.by, tool: "cancel_order", callId: "c1" })
          ])
          expect(yield* Effect.flip(operators[0]!.cancel("run-1", "carol"))).toMatchObject({ _tag: "RunFinished" })
        }).pipe(Effect.scoped),
      60_000
    )
  })
}
