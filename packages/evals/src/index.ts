/**
 * @agentkit/evals: test an agent like code. A dataset of cases, scorers (exact, contains,
 * schema-valid, tool-call trajectory, cost and latency ceilings, a model-graded judge that is
 * itself an agent), a runner with bounded concurrency and a budget, reports as JSON and markdown,
 * thresholds that fail CI, and comparisons of two runs. The vitest helpers (`describeEval`) live
 * in `@agentkit/evals/Vitest`, so this entry never loads vitest.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Comparison from "./Comparison.js"
/** @since 0.1.0 */
export * as Dataset from "./Dataset.js"
/** @since 0.1.0 */
export { EvalDefinitionError, ThresholdError } from "./Errors.js"
/** @since 0.1.0 */
export * as Eval from "./Eval.js"
/** @since 0.1.0 */
export * as Report from "./Report.js"
/** @since 0.1.0 */
export * as Scorer from "./Scorer.js"
/** @since 0.1.0 */
export * as Task from "./Task.js"
/** @since 0.1.0 */
export * as Threshold from "./Threshold.js"
/** @since 0.1.0 */
export type * as Vitest from "./Vitest.js"
