/**
 * Attack suite, part 2 of 3: `tool.run` on random schemas (fixed seed, so a failure reproduces):
 * nested structs, arrays, tagged unions, records, nullable values, optional and defaulted
 * fields, refinements, transformations and rest records in random combinations, each attacked
 * with every class of call.
 */
import { RunContext } from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import { callArb, classes, Figures, judge, structArb, toolFor, verdict } from "./model.js"

const SCHEMAS = 40
const RUNS_PER_SCHEMA = 1100
const schemas = fc.sample(structArb, { numRuns: SCHEMAS, seed: 20261201 })
const context = Effect.runSync(RunContext.make({ correlationId: "fuzz-random" }))
const figures = new Figures()
let badArguments = 0

describe("attack suite: tool.run, random schemas", () => {
  schemas.forEach((schema, i) => {
    const { state, tool } = toolFor(`random_${i}`, schema)
    it.prop(
      `random schema ${i}: a typed error or a valid result, the handler only on valid input`,
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
      { timeout: 60_000, fastCheck: { numRuns: RUNS_PER_SCHEMA, seed: 1000 + i } }
    )
  })

  it("figures", () => {
    const result = verdict(figures, `tool.run, ${SCHEMAS} random schemas`, badArguments)
    expect(result).toEqual({
      crashes: 0,
      handlerRunsOnInvalid: 0,
      handlerSawBadArguments: 0,
      validRejected: 0,
      unnamed: 0,
      failures: []
    })
    expect(figures.calls).toBe(RUNS_PER_SCHEMA * SCHEMAS)
    for (const c of classes) expect(figures.byClass.get(c), c).toBeGreaterThanOrEqual(figures.calls * 0.04)
  })
})
