/**
 * Evals as vitest tests (this module imports `vitest`; the package's main entry does not):
 * `describeEval` registers a test that runs the eval and fails when the report misses its
 * thresholds, with the report's markdown table in the failure; `evaluate` is that test's body, for
 * a test of its own. With a `baseline` report, the per-case differences are printed.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import { describe, it } from "vitest"
import * as Comparison from "./Comparison.js"
import type * as Eval from "./Eval.js"
import { run } from "./Eval.js"
import type * as Report from "./Report.js"
import * as Threshold from "./Threshold.js"

/**
 * The options of `describeEval`: the eval's, its thresholds, the layer that provides what the task
 * and scorers need (required when they need something), an optional baseline report to compare
 * with (its differences are printed), a callback given the report, and the test's timeout
 * (default 60 s).
 *
 * @example
 * ```ts
 * import { Dataset, Scorer, type Vitest } from "@agentkit/evals"
 * import { Usage } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const options: Vitest.EvalTestOptions<string> = {
 *   dataset: Dataset.make("echo", [{ name: "hi", input: "hi", expected: "hi" }]),
 *   task: (input) => Effect.succeed({ output: input, toolCalls: [], usage: Usage.zero }),
 *   scorers: [Scorer.exact()],
 *   thresholds: { exact: 1 }
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type EvalTestOptions<I, E = never, R = never, SE = never, SR = never, LE = never> =
  & Eval.Options<I, E, R, SE, SR>
  & {
    readonly thresholds: Threshold.Thresholds
    readonly baseline?: Report.Report | undefined
    readonly onReport?: ((report: Report.Report) => void) | undefined
    readonly timeout?: number | undefined
  }
  & ([R | SR] extends [never] ? { readonly layer?: Layer.Layer<never, LE> | undefined }
    : { readonly layer: Layer.Layer<R | SR, LE> })

/**
 * Runs the eval, prints the comparison with `baseline` when given, and resolves with the report;
 * rejects with `ThresholdError` when it misses a threshold (or with the layer's error).
 *
 * @example
 * ```ts
 * import { Dataset, Scorer } from "@agentkit/evals"
 * import { evaluate } from "@agentkit/evals/Vitest"
 * import { Usage } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const report = evaluate({
 *   dataset: Dataset.make("echo", [{ name: "hi", input: "hi", expected: "hi" }]),
 *   task: (input) => Effect.succeed({ output: input, toolCalls: [], usage: Usage.zero }),
 *   scorers: [Scorer.exact()],
 *   thresholds: { exact: 1 }
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const evaluate = <I, E = never, R = never, SE = never, SR = never, LE = never>(
  options: EvalTestOptions<I, E, R, SE, SR, LE>
): Promise<Report.Report> => {
  const ran = run(options)
  const layer = (options as { readonly layer?: Layer.Layer<R | SR, LE> }).layer
  const provided = (layer === undefined ? ran : Effect.provide(ran, layer)) as Effect.Effect<Report.Report, LE>
  return Effect.runPromiseExit(
    Effect.flatMap(provided, (report) =>
      Effect.suspend(() => {
        // eslint-disable-next-line no-console -- printing the differences to the test log is this option's purpose
        if (options.baseline !== undefined) console.log(Comparison.toText(Comparison.make(options.baseline, report)))
        options.onReport?.(report)
        return Threshold.check(report, options.thresholds)
      }))
  ).then((exit) => {
    if (Exit.isSuccess(exit)) return exit.value
    throw Cause.squash(exit.cause) // the error itself (ThresholdError), not a FiberFailure around it
  })
}

/**
 * Registers a vitest suite named `name` with one test, `meets its thresholds`, that runs the eval
 * and fails (showing the report table) when it misses one.
 *
 * @example
 * ```ts
 * import { Dataset, Scorer, Task } from "@agentkit/evals"
 * import { describeEval } from "@agentkit/evals/Vitest"
 * import { FakeLLM, Turn, makeTestCtx } from "@agentkit/testing"
 *
 * describeEval("support answers", {
 *   dataset: Dataset.make("support", [{ name: "status", input: "What happened to order A-771?", expected: "shipped" }]),
 *   task: Task.agent(agent, () => makeTestCtx({ llm: FakeLLM.script([Turn({ content: "A-771 shipped." })]) })),
 *   scorers: [Scorer.contains()],
 *   thresholds: { contains: 0.9 }
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const describeEval = <I, E = never, R = never, SE = never, SR = never, LE = never>(
  name: string,
  options: EvalTestOptions<I, E, R, SE, SR, LE>
): void => {
  describe(name, () => {
    it("meets its thresholds", async () => {
      await evaluate(options)
    }, options.timeout ?? 60_000)
  })
}
