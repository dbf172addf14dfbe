/**
 * Attack suite, part 1 of 3: `tool.run` on the hand-written schemas. Every class of call (valid,
 * nested unknown keys, missing keys, wrong types, non-objects, deep nesting, proxies that throw,
 * prototype keys, non-JSON values) is generated against every schema; the figures are printed
 * and checked at the end, with a minimum count per class.
 */
import { RunContext } from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { callArb, classes, Figures, handWritten, judge, toolFor, verdict } from "./model.js"

const RUNS_PER_SCHEMA = 5000
const context = Effect.runSync(RunContext.make({ correlationId: "fuzz-run" }))
const figures = new Figures()
let badArguments = 0

describe("attack suite: tool.run, hand-written schemas", () => {
  for (const [name, schema] of handWritten) {
    const { state, tool } = toolFor(name, schema)
    it.prop(
      `${name}: a typed error or a valid result, the handler only on valid input`,
      [callArb(schema)],
      ([call]) => {
        const before = state.runs
        let exit
        try {
          exit = Effect.runSyncExit(Effect.provideService(tool.run(call.input), RunContext, context))
        } catch (thrown) {
          exit = { thrown }
        }
        expect(judge(figures, call, exit, state.runs - before)).toBeUndefined()
        badArguments += state.bad
        state.bad = 0
      },
      { timeout: 60_000, fastCheck: { numRuns: RUNS_PER_SCHEMA } }
    )
  }

  it("figures", () => {
    const result = verdict(figures, "tool.run, hand-written schemas", badArguments)
    expect(result).toEqual({
      crashes: 0,
      handlerRunsOnInvalid: 0,
      handlerSawBadArguments: 0,
      validRejected: 0,
      unnamed: 0,
      failures: []
    })
    expect(figures.calls).toBe(RUNS_PER_SCHEMA * handWritten.length)
    for (const c of classes) expect(figures.byClass.get(c), c).toBeGreaterThanOrEqual(figures.calls * 0.04)
  })
})
