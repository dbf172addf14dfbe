/**
 * The typed errors of `@agentkit/evals`. Each carries core's `ErrorTypeId` and is a
 * `Schema.TaggedError`. A dataset or threshold that cannot work is thrown where it is made
 * (`EvalDefinitionError`); a report under its thresholds fails with `ThresholdError`.
 *
 * @since 0.1.0
 */
import { ErrorTypeId } from "@agentkit/core"
import * as Schema from "effect/Schema"

/**
 * A dataset, scorer list or threshold that cannot work (no cases, a duplicate case or scorer
 * name, a threshold outside 0..1, a concurrency that is not a positive integer). Thrown where it
 * is made; the message names the problem and what is accepted.
 *
 * @example
 * ```ts
 * import { EvalDefinitionError } from "@agentkit/evals"
 *
 * new EvalDefinitionError({ message: "Dataset 'support': case name 'a' appears twice; case names must be unique" }).message
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class EvalDefinitionError
  extends Schema.TaggedError<EvalDefinitionError>("@agentkit/evals/EvalDefinitionError")("EvalDefinitionError", {
    message: Schema.String
  })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * A report did not meet its thresholds. `violations` lists each (`exact: mean 0.4 < 0.8`);
 * `report` is the markdown table of the run, so a failing CI log shows every case.
 *
 * @example
 * ```ts
 * import { ThresholdError } from "@agentkit/evals"
 *
 * const error = new ThresholdError({ dataset: "support", violations: ["exact: mean 0.4 < 0.8"], report: "" })
 * error.message // "eval 'support' is under its thresholds: exact: mean 0.4 < 0.8"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ThresholdError
  extends Schema.TaggedError<ThresholdError>("@agentkit/evals/ThresholdError")("ThresholdError", {
    dataset: Schema.String,
    violations: Schema.Array(Schema.String),
    report: Schema.String
  })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    const head = `eval '${this.dataset}' is under its thresholds: ${this.violations.join("; ")}`
    return this.report === "" ? head : `${head}\n\n${this.report}`
  }
}
