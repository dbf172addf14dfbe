/**
 * `pnpm demo:multi`: the escalation graph (runAgents fan-out, a coordinator, a human gate)
 * suspends at the gate in one runtime and finishes in another, offline.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { escalation, program } from "../src/multi.js"

describe("support-desk multi-agent demo", () => {
  it.effect("suspends at the review gate, is approved, and finishes in a second runtime", () =>
    Effect.gen(function*() {
      expect(escalation.nodeIds).toEqual(["lookups", "draft", "review", "send"])
      const lines = yield* program
      expect(lines).toEqual([
        "suspended: lookups, draft done",
        "waiting: Gate on node 'review'",
        "complete:",
        "  lookups: order A-771: shipped 2026-08-14, arriving Tuesday; order B-102: processing, ships in 2 days",
        "  draft: Hi! A-771 has shipped and arrives Tuesday; B-102 ships in 2 days.",
        "  review: approved",
        "  send: sent: Hi! A-771 has shipped and arrives Tuesday; B-102 ships in 2 days."
      ])
    }))
})
