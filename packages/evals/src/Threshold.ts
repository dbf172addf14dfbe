/**
 * Thresholds: the least a report must reach, per scorer (a mean score, a pass rate, or both), so
 * CI fails when answers get worse. A threshold naming a scorer the report does not have is a
 * violation (it fails closed rather than passing unchecked).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import { EvalDefinitionError, ThresholdError } from "./Errors.js"
import * as Report from "./Report.js"

/**
 * Per scorer name: the least mean score (a number), or `{ mean, passRate }`. Values are from 0 to 1.
 *
 * @example
 * ```ts
 * import type { Threshold } from "@agentkit/evals"
 *
 * const thresholds: Threshold.Thresholds = { contains: 0.9, trajectory: { passRate: 1 } }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Thresholds = Readonly<
  Record<string, number | { readonly mean?: number | undefined; readonly passRate?: number | undefined }>
>

const bound = (scorer: string, what: string, value: number | undefined): number | undefined => {
  if (value === undefined) return undefined
  if (!(typeof value === "number" && value >= 0 && value <= 1)) {
    throw new EvalDefinitionError({
      message: `threshold '${scorer}': ${what} must be a number from 0 to 1; got ${String(value)}`
    })
  }
  return value
}

/**
 * The thresholds a report misses, as text (`exact: mean 0.4 < 0.8`); empty when it meets them
 * all. Throws `EvalDefinitionError` for a value outside 0..1.
 *
 * @example
 * ```ts
 * import { Report, Threshold } from "@agentkit/evals"
 *
 * Threshold.violations(Report.make("support", ["exact"], []), { exact: 0.8 }) // ["exact: mean 0 < 0.8"]
 * ```
 *
 * @since 0.1.0
 * @category getters
 */
export const violations = (report: Report.Report, thresholds: Thresholds): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (const [scorer, threshold] of Object.entries(thresholds)) {
    const mean = bound(scorer, "mean", typeof threshold === "number" ? threshold : threshold.mean)
    const passRate = bound(scorer, "passRate", typeof threshold === "number" ? undefined : threshold.passRate)
    const summary = report.summary.scorers[scorer]
    if (summary === undefined) {
      out.push(`${scorer}: no such scorer in this eval (scorers: ${report.scorers.join(", ")})`)
      continue
    }
    if (mean !== undefined && summary.mean < mean) out.push(`${scorer}: mean ${summary.mean} < ${mean}`)
    if (passRate !== undefined && summary.passRate < passRate) {
      out.push(`${scorer}: pass rate ${summary.passRate} < ${passRate}`)
    }
  }
  return out
}

/**
 * Fails with `ThresholdError` (its violations, and the report's markdown table) when the report
 * misses a threshold.
 *
 * @example
 * ```ts
 * import { Report, Threshold } from "@agentkit/evals"
 *
 * const gate = Threshold.check(Report.make("support", ["exact"], []), { exact: 0.8 }) // fails
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const check = (report: Report.Report, thresholds: Thresholds): Effect.Effect<Report.Report, ThresholdError> =>
  Effect.suspend(() => {
    const found = violations(report, thresholds)
    return found.length === 0
      ? Effect.succeed(report)
      : Effect.fail(
        new ThresholdError({ dataset: report.dataset, violations: found, report: Report.toMarkdown(report) })
      )
  })

/**
 * Throws `ThresholdError` when the report misses a threshold (for a test body).
 *
 * @example
 * ```ts
 * import { Report, Threshold } from "@agentkit/evals"
 *
 * const report = Report.make("support", ["exact"], [])
 * // Threshold.assert(report, { exact: 0.8 }) throws: eval 'support' is under its thresholds: exact: mean 0 < 0.8
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const assert = (report: Report.Report, thresholds: Thresholds): void => {
  const found = violations(report, thresholds)
  if (found.length > 0) {
    throw new ThresholdError({ dataset: report.dataset, violations: found, report: Report.toMarkdown(report) })
  }
}
