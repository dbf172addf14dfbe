/**
 * An in-process approver keyed by the wrong ids (tool-call ids, as before pending ids; or ids
 * from another run), from plain JavaScript: every call it answered is still rejected (fail
 * closed), and an audit record and a log line name the ids it gave and the ids expected, so the
 * mistake is visible instead of a silent "no decision was given".
 */
import { Agent, Approval, ReActCognition } from "@agentkit/agents"
import { AuditStore } from "@agentkit/core"
import { FakeLLM, makeTestCtx, Seed, Turn } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger, Schema } from "effect"
import { call, untyped } from "./fixtures.js"

const CANCEL = call("c1", "cancel_order", { order_id: "A-771" })

describe("an approver keyed by the wrong ids", () => {
  it.effect("decisions keyed by tool-call ids reject their calls; an audit record and a log line name the ids expected", () =>
    Effect.gen(function*() {
      const cancelled: Array<string> = []
      const agent = Agent.make({
        name: "support",
        model: Seed.MODEL,
        cognition: ReActCognition.make({
          tools: [
            Tool.make("cancel_order", {
              description: "Cancel an order. This really cancels it; there is no undo.",
              parameters: { order_id: Schema.String },
              sideEffecting: true,
              requiresApproval: true,
              handler: ({ order_id }) => {
                cancelled.push(order_id)
                return `cancelled ${order_id}`
              }
            })
          ]
        })
      })
      const expected: Array<string> = []
      // plain JavaScript: nothing checks the keys' type
      const approver = Layer.succeed(Approval.Approver, {
        decide: (request) =>
          Effect.sync(() => {
            for (const p of request.pending) expected.push(p.id)
            return untyped(Object.fromEntries(request.pending.map((p) => [p.call.id, Approval.approve(p.digest)])))
          })
      })
      const logs: Array<string> = []
      const logger = Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => logs.push(String(message))))
      const audit = AuditStore.makeMemory()
      const result = yield* agent.run("cancel A-771").pipe(
        Effect.provide(
          Layer.mergeAll(
            makeTestCtx({ llm: FakeLLM.script([Turn({ toolCalls: [CANCEL] }), Turn({ content: "ok" })]) }),
            approver,
            AuditStore.layer(audit),
            logger
          )
        )
      )
      expect(cancelled).toEqual([]) // fail closed
      expect(result.output).toBe("ok")
      const denied = (yield* audit.list({})).records.filter((r) => r.decision === "denied")
      expect(denied).toHaveLength(1)
      expect(denied[0]!.reason).toContain("c1")
      expect(denied[0]!.reason).toContain(expected[0]!)
      expect(logs.some((line) => line.includes("c1") && line.includes(expected[0]!))).toBe(true)
    }))
})
