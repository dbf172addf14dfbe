/**
 * The results of an eval run: one entry per case (its status, output, tool calls, cost, time and
 * scores) and a summary per scorer (mean value, pass rate). A report is an Effect Schema, so it
 * writes to JSON (`toJson`) and reads back (`fromJson`, for a baseline kept from an earlier run);
 * `toMarkdown` renders the table CI logs and pull requests show.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { EvalDefinitionError } from "./Errors.js"

/**
 * A score as reported.
 *
 * @example
 * ```ts
 * import { Report } from "@agentkit/evals"
 * import { Schema } from "effect"
 *
 * Schema.is(Report.Score)({ value: 1, pass: true }) // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Score = Schema.Struct({
  value: Schema.Number,
  pass: Schema.Boolean,
  reason: Schema.optional(Schema.String)
})

/**
 * One case's result. `status` is `scored` (the task answered and was scored), `failed` (the task
 * failed: every score is 0, `error` says why) or `skipped` (the budget ran out before it started).
 *
 * @example
 * ```ts
 * import { Report } from "@agentkit/evals"
 * import { Schema } from "effect"
 *
 * const decode = Schema.decodeUnknownSync(Report.CaseResult)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const CaseResult = Schema.Struct({
  name: Schema.String,
  tags: Schema.Array(Schema.String),
  status: Schema.Literal("scored", "failed", "skipped"),
  output: Schema.optional(Schema.String),
  toolCalls: Schema.Array(Schema.String),
  costUsd: Schema.Number,
  durationMillis: Schema.Number,
  scores: Schema.Record({ key: Schema.String, value: Score }),
  error: Schema.optional(Schema.String)
})

/**
 * One case's result.
 *
 * @example
 * ```ts
 * import type { Report } from "@agentkit/evals"
 *
 * const failing = (cases: ReadonlyArray<Report.CaseResult>) => cases.filter((c) => Object.values(c.scores).some((s) => !s.pass))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface CaseResult extends Schema.Schema.Type<typeof CaseResult> {}

/**
 * A scorer's summary over the cases that ran (skipped cases are left out): mean value, share that
 * passed, how many.
 *
 * @example
 * ```ts
 * import { Report } from "@agentkit/evals"
 * import { Schema } from "effect"
 *
 * Schema.is(Report.ScorerSummary)({ mean: 0.9, passRate: 0.9, count: 10 }) // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ScorerSummary = Schema.Struct({ mean: Schema.Number, passRate: Schema.Number, count: Schema.Number })

/**
 * A report: the dataset's name, the scorers in order, every case, and the summary.
 *
 * @example
 * ```ts
 * import { Report } from "@agentkit/evals"
 * import { Schema } from "effect"
 *
 * const decode = Schema.decodeUnknownSync(Report.Report)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Report = Schema.Struct({
  dataset: Schema.String,
  scorers: Schema.Array(Schema.String),
  cases: Schema.Array(CaseResult),
  summary: Schema.Struct({
    cases: Schema.Number,
    scored: Schema.Number,
    failed: Schema.Number,
    skipped: Schema.Number,
    costUsd: Schema.Number,
    scorers: Schema.Record({ key: Schema.String, value: ScorerSummary })
  })
})

/**
 * An eval run's report.
 *
 * @example
 * ```ts
 * import type { Report } from "@agentkit/evals"
 *
 * const meanOf = (report: Report.Report, scorer: string) => report.summary.scorers[scorer]?.mean ?? 0
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Report extends Schema.Schema.Type<typeof Report> {}

/**
 * Summarises case results: counts, total cost, and per scorer the mean and pass rate over the
 * cases that ran (0 when none did).
 *
 * @example
 * ```ts
 * import { Report } from "@agentkit/evals"
 *
 * const report = Report.make("support", ["exact"], [
 *   { name: "a", tags: [], status: "scored", output: "hi", toolCalls: [], costUsd: 0.001, durationMillis: 5, scores: { exact: { value: 1, pass: true } } }
 * ])
 * report.summary.scorers.exact // { mean: 1, passRate: 1, count: 1 }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (dataset: string, scorers: ReadonlyArray<string>, cases: ReadonlyArray<CaseResult>): Report => {
  const ran = cases.filter((item) => item.status !== "skipped")
  const summaries: Record<string, Schema.Schema.Type<typeof ScorerSummary>> = {}
  for (const scorer of scorers) {
    const scores = ran.flatMap((item) => {
      const score = item.scores[scorer]
      return score === undefined ? [] : [score]
    })
    const count = scores.length
    summaries[scorer] = {
      mean: count === 0 ? 0 : round(scores.reduce((sum, score) => sum + score.value, 0) / count),
      passRate: count === 0 ? 0 : round(scores.filter((score) => score.pass).length / count),
      count
    }
  }
  return {
    dataset,
    scorers: [...scorers],
    cases: [...cases],
    summary: {
      cases: cases.length,
      scored: cases.filter((item) => item.status === "scored").length,
      failed: cases.filter((item) => item.status === "failed").length,
      skipped: cases.filter((item) => item.status === "skipped").length,
      costUsd: Math.round(cases.reduce((sum, item) => sum + item.costUsd * 1e9, 0)) / 1e9,
      scorers: summaries
    }
  }
}

const round = (value: number): number => Math.round(value * 1e6) / 1e6

/**
 * The report as two-space indented JSON.
 *
 * @example
 * ```ts
 * import { Report } from "@agentkit/evals"
 *
 * const json = Report.toJson(Report.make("support", [], []))
 * ```
 *
 * @since 0.1.0
 * @category encoding
 */
export const toJson = (report: Report): string => `${JSON.stringify(Schema.encodeSync(Report)(report), null, 2)}\n`

/**
 * Reads a report from its JSON text (a baseline saved by an earlier run). Throws
 * `EvalDefinitionError` naming the problem when the text is not a report.
 *
 * @example
 * ```ts
 * import { Report } from "@agentkit/evals"
 *
 * const baseline = Report.fromJson(Report.toJson(Report.make("support", [], [])))
 * ```
 *
 * @since 0.1.0
 * @category encoding
 */
export const fromJson = (text: string): Report => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new EvalDefinitionError({ message: `Report.fromJson: not JSON: ${String(error)}` })
  }
  const decoded = Schema.decodeUnknownEither(Report)(json)
  if (Either.isLeft(decoded)) {
    throw new EvalDefinitionError({
      message: `Report.fromJson: not an eval report: ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}`
    })
  }
  return decoded.right
}

const cell = (text: string): string => text.replace(/\|/g, "\\|").replace(/\r?\n/g, " ")

/**
 * A cost in dollars as reports show it: up to 6 significant digits (`$0.0012`).
 *
 * @example
 * ```ts
 * import { Report } from "@agentkit/evals"
 *
 * Report.dollars(0.00123456789) // "$0.00123457"
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const dollars = (usd: number): string => `$${Number(usd.toPrecision(6))}`

const scoreCell = (score: Schema.Schema.Type<typeof Score> | undefined): string =>
  score === undefined ? "" : `${score.pass ? "pass" : "FAIL"} ${round(score.value)}`

/**
 * The report as a markdown table: a heading with the counts and cost, a row per case (status,
 * each scorer's verdict and value, cost, time), a mean row, then why each failing score failed.
 *
 * @example
 * ```ts
 * import { Report } from "@agentkit/evals"
 *
 * console.log(Report.toMarkdown(Report.make("support", ["exact"], [])))
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const toMarkdown = (report: Report): string => {
  const { summary } = report
  const lines = [
    `### Eval \`${
      cell(report.dataset)
    }\`: ${summary.cases} cases (${summary.scored} scored, ${summary.failed} failed, ${summary.skipped} skipped), ${
      dollars(summary.costUsd)
    }`,
    "",
    `| case | status | ${report.scorers.map(cell).join(" | ")} | cost | time |`,
    `| --- | --- | ${report.scorers.map(() => "---").join(" | ")} | --- | --- |`
  ]
  for (const item of report.cases) {
    lines.push(
      `| ${cell(item.name)} | ${item.status} | ${
        report.scorers.map((scorer) => scoreCell(item.scores[scorer])).join(" | ")
      } | ${dollars(item.costUsd)} | ${item.durationMillis} ms |`
    )
  }
  lines.push(
    `| **mean** | | ${
      report.scorers.map((scorer) => {
        const s = summary.scorers[scorer]
        return s === undefined ? "" : `${s.mean} (${Math.round(s.passRate * s.count)}/${s.count} pass)`
      }).join(" | ")
    } | ${dollars(summary.costUsd)} | |`
  )
  const reasons = report.cases.flatMap((item) => [
    ...(item.error === undefined ? [] : [`- ${cell(item.name)}: ${item.status}: ${cell(item.error)}`]),
    ...report.scorers.flatMap((scorer) => {
      const score = item.scores[scorer]
      return score === undefined || score.pass || item.status !== "scored"
        ? []
        : [`- ${cell(item.name)}: ${scorer}: ${cell(score.reason ?? `scored ${score.value}`)}`]
    })
  ])
  const text = lines.join("\n")
  return reasons.length === 0 ? `${text}\n` : `${text}\n\n${reasons.join("\n")}\n`
}
