/**
 * `pnpm demo:triage`: a typed ticket after one repair, through a forced output tool; a tool loop
 * that stops on `escalate` without running it.
 */
import { Invoker, RunContext } from "@agentkit/core"
import { FakeLLM, Turn } from "@agentkit/testing"
import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { makeEscalation, MESSAGE, program, triage } from "../src/triage.js"
import type { Ticket } from "../src/triage.js"

describe("support-desk triage demo", () => {
  it.effect("prints the ticket (after one repair) and the escalation the loop stopped on", () =>
    Effect.gen(function*() {
      expect(yield* program).toEqual([
        "ticket: billing for B-102, urgent",
        "triage: 1 repair, stop reason end_turn",
        "escalation stopped: function_call",
        "hand to a person: {\"order_id\":\"B-102\",\"summary\":\"refund the duplicate charge\"}"
      ])
    }))

  it("triage's parsed is a Ticket", () => {
    expectTypeOf<Effect.Effect.Success<ReturnType<typeof triage.run>>["parsed"]>().toEqualTypeOf<Ticket | undefined>()
  })

  it.effect("a model that never fills the ticket in: three calls (maxRepairs 2), then invalid_output, no ticket", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.respond(
        () => Turn({ toolCalls: [{ id: "o", name: "structured_output", arguments: { category: "refund" } }] }),
        {
          features: { toolChoice: true }
        }
      )
      const layer = Layer.mergeAll(RunContext.layer({ correlationId: "t" }), Layer.provide(Invoker.layer(), llm.layer))
      const result = yield* triage.run(MESSAGE).pipe(Effect.provide(layer))
      expect([llm.calls, result.stopReason, result.partial, result.parsed]).toEqual([
        3,
        "invalid_output",
        true,
        undefined
      ])
      expect(result.error).toContain("urgent: is missing")
    }))

  it.effect("the escalation loop is bounded by maxTurns(4) when the model never escalates", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.respond((_, n) =>
        Turn({ toolCalls: [{ id: `c${n}`, name: "lookup_order", arguments: { order_id: "A-771" } }] })
      )
      const layer = Layer.mergeAll(RunContext.layer({ correlationId: "t" }), Layer.provide(Invoker.layer(), llm.layer))
      const result = yield* makeEscalation().run("Where is A-771?").pipe(Effect.provide(layer))
      expect([result.stopReason, llm.calls]).toEqual(["max_turns", 4])
    }))
})
