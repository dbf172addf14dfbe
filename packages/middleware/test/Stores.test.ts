/**
 * The middleware read their stores from the context when none is passed (issue 11): `audit` the
 * `AuditStore`, `idempotent` the `IdempotencyStore` (whose outcomes an agent lets expire when its
 * run ends), `memoize` the `MemoStore`. And the audit vocabulary's `in_doubt`, written for a call
 * the execution ledger found claimed and never completed.
 */
import { Agent, Approval, ReActCognition } from "@agentkit/agents"
import { AuditStore, ExecutionLedger, IdempotencyStore, Invoker, MemoStore } from "@agentkit/core"
import { Audit, Idempotency, Memoize } from "@agentkit/middleware"
import { FakeLLM, Fixture, makeTestCtx, Turn } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Option, TestClock } from "effect"
import { call, countingTool, setup } from "./fixtures.js"

describe("stores from the context", () => {
  it.effect("audit() without a store writes to the AuditStore service; with one, only to it", () => {
    const charge = countingTool("charge", { sideEffecting: true })
    const provided = AuditStore.makeMemory()
    const passed = AuditStore.makeMemory()
    return Effect.gen(function*() {
      yield* Effect.flatMap(Invoker, (invoker) => invoker.tool(call("charge", { amount: 1 }), charge.tool)).pipe(
        Effect.provide(Layer.merge(setup({ toolMiddleware: [Audit.audit()] }), AuditStore.layer(provided)))
      )
      expect(provided.records.map((r) => [r.runId, r.tool, r.decision])).toEqual([["run-1", "charge", "executed"]])
      yield* Effect.flatMap(Invoker, (invoker) => invoker.tool(call("charge", { amount: 2 }, "c2"), charge.tool)).pipe(
        Effect.provide(
          Layer.merge(setup({ toolMiddleware: [Audit.audit({ store: passed })] }), AuditStore.layer(provided))
        )
      )
      expect([provided.records.length, passed.records.length]).toEqual([1, 1])
      const listed = yield* provided.list({ runId: "run-1" })
      expect(listed.records).toHaveLength(1)
    })
  })

  it.effect("a call a person approved is audited executed with the decider (the agent loop sets it on the call)", () => {
    const charge = countingTool("charge", { sideEffecting: true })
    const audit = AuditStore.makeMemory()
    const agent = Agent.make({ name: "billing", model: "m", cognition: ReActCognition.make({ tools: [charge.tool] }) })
    const approver = Layer.succeed(Approval.Approver, {
      decide: ({ pending }) =>
        Effect.succeed(Approval.decisions([[pending[0]!.id, Approval.approve(pending[0]!.digest, { by: "dana" })]]))
    })
    const llm = FakeLLM.script([
      Turn({ toolCalls: [call("charge", { amount: 5 }, "c1")] }),
      Turn({ content: "charged" })
    ])
    return Effect.gen(function*() {
      yield* agent.run("charge $5").pipe(
        Effect.provide(
          Layer.mergeAll(
            makeTestCtx({ llm, autonomy: "gated", toolMiddleware: [Audit.audit()] }),
            AuditStore.layer(audit),
            approver
          )
        )
      )
      expect(charge.count).toBe(1)
      expect(audit.records.map((r) => [r.tool, r.decision, r.by])).toEqual([["charge", "executed", "dana"]])
    })
  })

  it.effect("a call the ledger finds in doubt is audited in_doubt, and does not run", () => {
    const charge = countingTool("charge", { sideEffecting: true })
    const audit = AuditStore.makeMemory()
    const ledger = ExecutionLedger.makeMemory()
    return Effect.gen(function*() {
      yield* ledger.claim("run-1/c1", "the claim of a process that died")
      const error = yield* Effect.flip(
        Effect.flatMap(Invoker, (invoker) => invoker.tool(call("charge", { amount: 1 }), charge.tool)).pipe(
          Effect.provide(
            Layer.mergeAll(
              setup({ toolMiddleware: [Audit.audit()] }),
              AuditStore.layer(audit),
              ExecutionLedger.layer(ledger)
            )
          )
        )
      )
      expect(error._tag).toBe("ToolInDoubt")
      expect(charge.count).toBe(0)
      expect(audit.records.map((r) => r.decision)).toEqual(["in_doubt"])
    })
  })

  it.effect("idempotent() without a store uses the IdempotencyStore service; an agent ends its run there, so the outcomes expire", () => {
    const store = IdempotencyStore.makeMemory({ retention: "5 minutes" })
    const charge = countingTool("charge", { sideEffecting: true })
    const agent = Agent.make({ name: "billing", model: "m", cognition: ReActCognition.make({ tools: [charge.tool] }) })
    const script = () =>
      FakeLLM.script([
        Turn({ toolCalls: [call("charge", { amount: 5 }, "c1"), call("charge", { amount: 5 }, "c2")] }),
        Turn({ content: "charged once" })
      ])
    return Effect.gen(function*() {
      const result = yield* agent.run("charge $5").pipe(
        Effect.provide(
          Layer.merge(
            makeTestCtx({ llm: script(), toolMiddleware: [Idempotency.idempotent()] }),
            IdempotencyStore.layer(store)
          )
        )
      )
      expect(result.output).toBe("charged once")
      expect(charge.count).toBe(1) // the same call twice in one run: one execution
      expect(store.size).toBe(1)
      yield* TestClock.adjust(Duration.minutes(6))
      expect(Option.isNone(yield* store.get("anything"))).toBe(true)
      expect(store.size).toBe(0) // the run ended: its outcomes expired by age
    })
  })

  it.effect("memoize() without a store uses the MemoStore service", () => {
    const llm = FakeLLM.replying()
    const store = MemoStore.makeMemory({ maxEntries: 10 })
    const layer = Layer.merge(
      setup({ chatModel: llm.layer, chatMiddleware: [Memoize.memoize()] }),
      MemoStore.layer(store)
    )
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* invoker.chat(Fixture.request())
      yield* invoker.chat(Fixture.request())
      expect(llm.calls).toBe(1)
      expect(store.size).toBe(1)
    }).pipe(Effect.provide(layer))
  })
})
