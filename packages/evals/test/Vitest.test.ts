/**
 * The vitest helpers: `describeEval` registers a test that passes when the eval meets its
 * thresholds; its body (`evaluate`) rejects with `ThresholdError` when a scripted model answers
 * worse, and prints the per-case differences against a baseline. The package's main entry never
 * loads vitest.
 */
import type { ConfigurationError } from "@agentkit/core"
import { RunContext, Usage } from "@agentkit/core"
import { Eval, Report, Scorer, Task, ThresholdError } from "@agentkit/evals"
import type { Vitest } from "@agentkit/evals"
import { describeEval, evaluate } from "@agentkit/evals/Vitest"
import { afterEach, describe, expect, it, vi } from "@effect/vitest"
import { Effect } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { agent, careful, careless, dataset, layerWith } from "./support.js"

const scorers = [Scorer.contains(), Scorer.trajectory()]
const thresholds = { contains: 0.9, trajectory: { passRate: 1 } }

// a real registration: this suite passes because the careful model meets the thresholds
describeEval("the support agent (careful model)", {
  dataset,
  task: Task.agent(agent, layerWith(careful)),
  scorers,
  thresholds
})

describe("evaluate (describeEval's test body)", () => {
  afterEach(() => {
    vi.restoreAllMocks()
  })

  it("passes when the scripted model answers well", async () => {
    const report = await evaluate({ dataset, task: Task.agent(agent, layerWith(careful)), scorers, thresholds })
    expect(report.summary.scorers.contains?.mean).toBe(1)
  })

  it("fails with ThresholdError, the violations and the table, when the scripted model answers worse", async () => {
    const failure = await evaluate({ dataset, task: Task.agent(agent, layerWith(careless)), scorers, thresholds }).then(
      () => undefined,
      (error: unknown) => error
    )
    expect(failure).toBeInstanceOf(ThresholdError)
    const error = failure as ThresholdError
    expect(error.violations).toEqual(["contains: mean 0 < 0.9", "trajectory: pass rate 0 < 1"])
    expect(error.message).toContain("| A-771 | scored | FAIL 0 | FAIL 0 |")
    expect(error.message).toContain("- A-771: trajectory: expected exact [lookup_order], got []")
  })

  it("prints the per-case differences against a baseline, and hands the report over", async () => {
    const logged: Array<string> = []
    vi.spyOn(console, "log").mockImplementation((line: string) => void logged.push(line))
    const baseline = await Effect.runPromise(
      Eval.run({ dataset, task: Task.agent(agent, layerWith(careful)), scorers })
    )
    let seen: Report.Report | undefined
    await evaluate({
      dataset,
      task: Task.agent(agent, layerWith(careless)),
      scorers,
      thresholds: {},
      baseline: Report.fromJson(Report.toJson(baseline)),
      onReport: (report) => void (seen = report)
    })
    expect(seen?.summary.scorers.contains?.mean).toBe(0)
    expect(logged).toHaveLength(1)
    expect(logged[0]).toContain("regressed 'A-771': contains 1 -> 0, trajectory 1 -> 0")
    expect(logged[0]).toContain("    tool calls: [lookup_order] -> []")
  })
})

describe("the options' types", () => {
  it("a task or scorer that needs a service needs a layer that provides it", () => {
    const needsContext: Task.Task<string, never, RunContext> = (input) =>
      Effect.map(RunContext, (context) => ({ output: `${context.runId}: ${input}`, toolCalls: [], usage: Usage.zero }))
    // @ts-expect-error the layer is missing
    const missing: Vitest.EvalTestOptions<string, never, RunContext> = {
      dataset,
      task: needsContext,
      scorers,
      thresholds
    }
    const given: Vitest.EvalTestOptions<string, never, RunContext, never, never, ConfigurationError> = {
      dataset,
      task: needsContext,
      scorers,
      thresholds,
      layer: RunContext.layer({ runId: "eval" })
    }
    expect([missing.layer, given.layer !== undefined]).toEqual([undefined, true])
  })
})

describe("the main entry", () => {
  it("does not import vitest: only Vitest.ts does, and nothing imports Vitest.ts at run time", () => {
    const src = fileURLToPath(new URL("../src/", import.meta.url))
    const runtimeImports = (file: string) =>
      [...readFileSync(`${src}${file}`, "utf8").matchAll(/^(?:import|export)(?! type)[^"]*from "([^"]+)"/gm)].map((m) =>
        m[1] ?? ""
      )
    const importers = new Map<string, ReadonlyArray<string>>()
    for (const file of readdirSync(src).filter((name) => name.endsWith(".ts"))) {
      importers.set(file, runtimeImports(file))
    }
    expect(importers.get("Vitest.ts")).toContain("vitest")
    for (const [file, imports] of importers) {
      if (file === "Vitest.ts") continue
      expect(imports, file).not.toContain("vitest")
      expect(imports, file).not.toContain("./Vitest.js")
    }
  })
})
