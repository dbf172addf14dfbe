/**
 * The runner: every case through the task, scored by every scorer, with bounded concurrency, a
 * budget, failures kept as failed cases, latency on the TestClock, and reports as JSON/markdown.
 */
import { Usage } from "@agentkit/core"
import { Dataset, Eval, EvalDefinitionError, Report, Scorer, Task, Threshold, ThresholdError } from "@agentkit/evals"
import { runWithClock } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit } from "effect"
import { agent, careful, careless, dataset, layerWith } from "./support.js"

const scorers = [Scorer.contains(), Scorer.trajectory(), Scorer.costCeiling(0.001)]

const output = (text: string, costUsd = 0): Task.Output => ({
  output: text,
  toolCalls: [],
  usage: Usage.make({ costUsd })
})

describe("Eval.run over an agent", () => {
  it.effect("a careful model scores 1 everywhere; a careless one fails contains and trajectory", () =>
    Effect.gen(function*() {
      const good = yield* Eval.run({ dataset, task: Task.agent(agent, layerWith(careful)), scorers })
      expect(good.summary).toMatchObject({ cases: 3, scored: 3, failed: 0, skipped: 0 })
      expect(good.summary.scorers).toEqual({
        contains: { mean: 1, passRate: 1, count: 3 },
        trajectory: { mean: 1, passRate: 1, count: 3 },
        cost: { mean: 1, passRate: 1, count: 3 }
      })
      expect(good.cases[0]).toMatchObject({
        name: "A-771",
        status: "scored",
        output: "Here is what I found: order A-771: shipped 2026-08-14, arriving Tuesday.",
        toolCalls: ["lookup_order"],
        costUsd: 0.0002
      })
      expect(Threshold.violations(good, { contains: 0.9, trajectory: { passRate: 1 } })).toEqual([])

      const bad = yield* Eval.run({ dataset, task: Task.agent(agent, layerWith(careless)), scorers })
      expect(bad.summary.scorers.contains).toEqual({ mean: 0, passRate: 0, count: 3 })
      expect(bad.cases[1]?.scores.trajectory).toEqual({
        value: 0,
        pass: false,
        reason: "expected exact [lookup_order], got []"
      })
      expect(Threshold.violations(bad, { contains: 0.9, trajectory: { passRate: 1 }, cost: 1 })).toEqual([
        "contains: mean 0 < 0.9",
        "trajectory: pass rate 0 < 1"
      ])
      const error = yield* Effect.flip(Threshold.check(bad, { contains: 0.9 }))
      expect(error).toBeInstanceOf(ThresholdError)
      expect(error.message).toContain("eval 'order status' is under its thresholds: contains: mean 0 < 0.9")
      expect(error.message).toContain("| B-9 | scored | FAIL 0 | FAIL 0 | pass 1 |")
    }))

  it.effect("runs at most `concurrency` cases at once, and keeps dataset order", () =>
    Effect.gen(function*() {
      let running = 0
      let most = 0
      const many = Dataset.make("many", Array.from({ length: 9 }, (_, i) => ({ name: `c${i}`, input: `${i}` })))
      const report = yield* Eval.run({
        dataset: many,
        concurrency: 3,
        scorers: [Scorer.make("one", () => 1)],
        task: (input) =>
          Effect.acquireUseRelease(
            Effect.sync(() => {
              running++
              most = Math.max(most, running)
            }),
            () => Effect.as(Effect.sleep(`${10 - Number(input)} millis`), output(input)),
            () => Effect.sync(() => void running--)
          )
      }).pipe(runWithClock, Effect.flatten)
      expect(most).toBe(3)
      expect(report.cases.map((c) => c.output)).toEqual(["0", "1", "2", "3", "4", "5", "6", "7", "8"])
    }))

  it.effect("the budget: no case starts once the cost ceiling is spent, or past maxCases; those are skipped", () =>
    Effect.gen(function*() {
      const five = Dataset.make("five", Array.from({ length: 5 }, (_, i) => ({ name: `c${i}`, input: `${i}` })))
      const byCost = yield* Eval.run({
        dataset: five,
        concurrency: 1,
        scorers: [Scorer.make("one", () => 1)],
        task: (input) => Effect.succeed(output(input, 0.004)),
        budget: { maxCostUsd: 0.01 }
      })
      expect(byCost.cases.map((c) => c.status)).toEqual(["scored", "scored", "scored", "skipped", "skipped"])
      expect(byCost.cases[3]?.error).toBe("budget: $0.012 spent of $0.01")
      expect(byCost.summary).toMatchObject({ scored: 3, skipped: 2, costUsd: 0.012 })
      expect(byCost.summary.scorers.one).toEqual({ mean: 1, passRate: 1, count: 3 })

      const byCount = yield* Eval.run({
        dataset: five,
        scorers: [Scorer.make("one", () => 1)],
        task: (input) => Effect.succeed(output(input)),
        budget: { maxCases: 2 }
      })
      expect(byCount.cases.map((c) => c.status)).toEqual(["scored", "scored", "skipped", "skipped", "skipped"])
    }))

  it.effect("a failing task is a failed case (every score 0); a failing or out-of-range scorer scores 0 with why", () =>
    Effect.gen(function*() {
      const two = Dataset.make("two", [{ name: "ok", input: "ok" }, { name: "boom", input: "boom" }])
      const report = yield* Eval.run({
        dataset: two,
        scorers: [
          Scorer.make("one", () => 1),
          Scorer.make("throws", () => Effect.fail(new Error("judge offline"))),
          Scorer.make("wild", () => 7)
        ],
        task: (input) => (input === "boom" ? Effect.fail(new Error("provider down")) : Effect.succeed(output(input)))
      })
      expect(report.cases[0]?.scores).toEqual({
        one: { value: 1, pass: true },
        throws: { value: 0, pass: false, reason: "the scorer failed: judge offline" },
        wild: { value: 0, pass: false, reason: "scorer 'wild' gave 7; a score is a number from 0 to 1" }
      })
      expect(report.cases[1]).toMatchObject({ status: "failed", error: "the task failed: provider down" })
      expect(report.cases[1]?.scores.one).toEqual({ value: 0, pass: false, reason: "the task failed: provider down" })
      expect(report.summary.scorers.one).toEqual({ mean: 0.5, passRate: 0.5, count: 2 })
    }))

  it.effect("latency is the Clock service's: under TestClock only the time the test moves counts", () =>
    Effect.gen(function*() {
      const slow = Dataset.make("slow", [{ name: "fast", input: "1" }, { name: "slow", input: "3" }])
      const exit = yield* runWithClock(
        Eval.run({
          dataset: slow,
          concurrency: 1,
          scorers: [Scorer.latencyCeiling("2 seconds")],
          task: (input) => Effect.as(Effect.sleep(Duration.seconds(Number(input))), output(input))
        }),
        "1 second"
      )
      expect(Exit.isSuccess(exit)).toBe(true)
      if (!Exit.isSuccess(exit)) return
      expect(exit.value.cases.map((c) => c.durationMillis)).toEqual([1000, 3000])
      expect(exit.value.cases[1]?.scores.latency).toEqual({ value: 0, pass: false, reason: "took 3000 ms > 2000 ms" })
    }))

  it("throws EvalDefinitionError for wiring that cannot work, before anything runs", () => {
    const task = () => Effect.succeed(output(""))
    expect(() => Eval.run({ dataset, task, scorers: [] })).toThrow("Eval 'order status': give at least one scorer")
    expect(() => Eval.run({ dataset, task, scorers: [Scorer.exact(), Scorer.exact()] })).toThrow(
      "two scorers are named 'exact'"
    )
    expect(() => Eval.run({ dataset, task, scorers: [Scorer.exact()], concurrency: 0 })).toThrow(
      "concurrency must be a positive integer; got 0"
    )
    expect(() => Eval.run({ dataset, task, scorers: [Scorer.exact()], budget: { maxCostUsd: -1 } })).toThrow(
      EvalDefinitionError
    )
  })
})

describe("Dataset", () => {
  it("refuses an empty dataset, a nameless case and a duplicate name; slices by tag", () => {
    expect(() => Dataset.make("d", [])).toThrow("Dataset 'd': give at least one case")
    expect(() => Dataset.make("d", [{ name: "", input: 1 }])).toThrow("Dataset 'd': case 0 needs a non-empty name")
    expect(() => Dataset.make("d", [{ name: "a", input: 1 }, { name: "a", input: 2 }])).toThrow(
      "case name 'a' appears twice"
    )
    expect(Dataset.withTags(dataset, ["b"]).cases.map((c) => c.name)).toEqual(["B-9", "C-3"])
    expect(() => Dataset.withTags(dataset, ["zzz"])).toThrow("no case carries any of the tags [\"zzz\"]")
  })
})

describe("Report", () => {
  it.effect("round-trips through JSON and renders a markdown table with the failing reasons", () =>
    Effect.gen(function*() {
      const report = yield* Eval.run({ dataset, task: Task.agent(agent, layerWith(careless)), scorers })
      expect(Report.fromJson(Report.toJson(report))).toEqual(report)
      expect(() => Report.fromJson("{\"dataset\":1}")).toThrow("Report.fromJson: not an eval report")
      const markdown = Report.toMarkdown(report)
      expect(markdown.split("\n").slice(0, 5)).toEqual([
        "### Eval `order status`: 3 cases (3 scored, 0 failed, 0 skipped), $0.0003",
        "",
        "| case | status | contains | trajectory | cost | cost | time |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        "| A-771 | scored | FAIL 0 | FAIL 0 | pass 1 | $0.0001 | 0 ms |"
      ])
      expect(markdown).toContain("| **mean** | | 0 (0/3 pass) | 0 (0/3 pass) | 1 (3/3 pass) | $0.0003 | |")
      expect(markdown).toContain("- A-771: contains: missing \"shipped\"")
    }))

  it("Threshold: an unknown scorer is a violation; a value outside 0..1 throws", () => {
    const report = Report.make("r", ["exact"], [])
    expect(Threshold.violations(report, { exactt: 0.5 })).toEqual([
      "exactt: no such scorer in this eval (scorers: exact)"
    ])
    expect(() => Threshold.violations(report, { exact: 80 })).toThrow(
      "threshold 'exact': mean must be a number from 0 to 1; got 80"
    )
  })
})
