/**
 * Compares two runs of a dataset (before and after a prompt or model change): per case, how each
 * score moved and whether the answer or the tool calls changed; per scorer, how the mean moved.
 * `toText` prints the differences, regressions first; unchanged cases are only counted.
 *
 * @since 0.1.0
 */
import type * as Report from "./Report.js"

/**
 * How a case moved: `regressed` (some score went down), `improved` (some went up, none down),
 * `changed` (same scores, another answer or other tool calls), `unchanged`, or `added`/`removed`
 * (in one run only).
 *
 * @example
 * ```ts
 * import type { Comparison } from "@agentkit/evals"
 *
 * const kind: Comparison.Kind = "regressed"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Kind = "regressed" | "improved" | "changed" | "unchanged" | "added" | "removed"

/**
 * One case of a comparison: its kind, each scorer's value before and after, and both answers and
 * tool-call lists when they differ.
 *
 * @example
 * ```ts
 * import type { Comparison } from "@agentkit/evals"
 *
 * const names = (cases: ReadonlyArray<Comparison.CaseChange>) => cases.filter((c) => c.kind === "regressed").map((c) => c.name)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface CaseChange {
  readonly name: string
  readonly kind: Kind
  readonly scores: Readonly<Record<string, { readonly before: number | undefined; readonly after: number | undefined }>>
  readonly output?: { readonly before: string | undefined; readonly after: string | undefined } | undefined
  readonly toolCalls?:
    | { readonly before: ReadonlyArray<string> | undefined; readonly after: ReadonlyArray<string> | undefined }
    | undefined
}

/**
 * A comparison of two reports.
 *
 * @example
 * ```ts
 * import { Comparison, Report } from "@agentkit/evals"
 *
 * const comparison: Comparison.Comparison = Comparison.make(Report.make("support", [], []), Report.make("support", [], []))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Comparison {
  readonly dataset: string
  readonly means: Readonly<Record<string, { readonly before: number | undefined; readonly after: number | undefined }>>
  /** Every case of either run, in the order of `after` then the removed ones. */
  readonly cases: ReadonlyArray<CaseChange>
}

const sameList = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) =>
  a.length === b.length && a.every((item, index) => b[index] === item)

const changeOf = (
  scorers: ReadonlyArray<string>,
  name: string,
  before: Report.CaseResult | undefined,
  after: Report.CaseResult | undefined
): CaseChange => {
  const scores: Record<string, { before: number | undefined; after: number | undefined }> = {}
  let up = false
  let down = false
  for (const scorer of scorers) {
    const b = before?.scores[scorer]?.value
    const a = after?.scores[scorer]?.value
    scores[scorer] = { before: b, after: a }
    if (b !== undefined && a !== undefined) {
      if (a < b) down = true
      if (a > b) up = true
    }
  }
  const outputChanged = before?.output !== after?.output
  const toolsChanged = !sameList(before?.toolCalls ?? [], after?.toolCalls ?? [])
  const kind: Kind = before === undefined
    ? "added"
    : after === undefined
    ? "removed"
    : down
    ? "regressed"
    : up
    ? "improved"
    : outputChanged || toolsChanged
    ? "changed"
    : "unchanged"
  return {
    name,
    kind,
    scores,
    ...(outputChanged ? { output: { before: before?.output, after: after?.output } } : {}),
    ...(toolsChanged ? { toolCalls: { before: before?.toolCalls, after: after?.toolCalls } } : {})
  }
}

/**
 * Compares `before` with `after`, case by case (matched by name) and scorer by scorer.
 *
 * @example
 * ```ts
 * import { Comparison, Report } from "@agentkit/evals"
 *
 * const before = Report.make("support", ["exact"], [
 *   { name: "a", tags: [], status: "scored", output: "yes", toolCalls: [], costUsd: 0, durationMillis: 0, scores: { exact: { value: 1, pass: true } } }
 * ])
 * const after = Report.make("support", ["exact"], [
 *   { name: "a", tags: [], status: "scored", output: "no", toolCalls: [], costUsd: 0, durationMillis: 0, scores: { exact: { value: 0, pass: false } } }
 * ])
 * Comparison.make(before, after).cases[0]?.kind // "regressed"
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (before: Report.Report, after: Report.Report): Comparison => {
  const scorers = [...after.scorers, ...before.scorers.filter((name) => !after.scorers.includes(name))]
  const byName = new Map(before.cases.map((item) => [item.name, item]))
  const seen = new Set<string>()
  const cases: Array<CaseChange> = []
  for (const item of after.cases) {
    seen.add(item.name)
    cases.push(changeOf(scorers, item.name, byName.get(item.name), item))
  }
  for (const item of before.cases) if (!seen.has(item.name)) cases.push(changeOf(scorers, item.name, item, undefined))
  const means: Record<string, { before: number | undefined; after: number | undefined }> = {}
  for (const scorer of scorers) {
    means[scorer] = { before: before.summary.scorers[scorer]?.mean, after: after.summary.scorers[scorer]?.mean }
  }
  return { dataset: after.dataset, means, cases }
}

const number = (value: number | undefined): string => (value === undefined ? "-" : String(value))

const clip = (text: string | undefined): string =>
  text === undefined ? "-" : JSON.stringify(text.length > 100 ? `${text.slice(0, 97)}...` : text)

const ORDER: ReadonlyArray<Kind> = ["regressed", "improved", "changed", "added", "removed"]

/**
 * The comparison as text: each scorer's mean before and after, then each case that moved
 * (regressed first) with the scores that moved and the answers and tool calls that changed, then
 * how many cases did not change.
 *
 * @example
 * ```ts
 * import { Comparison, Report } from "@agentkit/evals"
 *
 * console.log(Comparison.toText(Comparison.make(Report.make("support", [], []), Report.make("support", [], []))))
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const toText = (comparison: Comparison): string => {
  const lines = [`eval '${comparison.dataset}': before -> after`]
  for (const [scorer, mean] of Object.entries(comparison.means)) {
    const delta = mean.before !== undefined && mean.after !== undefined
      ? ` (${mean.after >= mean.before ? "+" : ""}${Math.round((mean.after - mean.before) * 1e6) / 1e6})`
      : ""
    lines.push(`  ${scorer}: mean ${number(mean.before)} -> ${number(mean.after)}${delta}`)
  }
  for (const kind of ORDER) {
    for (const item of comparison.cases.filter((c) => c.kind === kind)) {
      const moved = Object.entries(item.scores)
        .filter(([, score]) => score.before !== score.after)
        .map(([scorer, score]) => `${scorer} ${number(score.before)} -> ${number(score.after)}`)
      lines.push(`${kind} '${item.name}'${moved.length === 0 ? "" : `: ${moved.join(", ")}`}`)
      if (item.output !== undefined) lines.push(`    output: ${clip(item.output.before)} -> ${clip(item.output.after)}`)
      if (item.toolCalls !== undefined) {
        lines.push(
          `    tool calls: [${(item.toolCalls.before ?? []).join(", ")}] -> [${
            (item.toolCalls.after ?? []).join(", ")
          }]`
        )
      }
    }
  }
  const unchanged = comparison.cases.filter((c) => c.kind === "unchanged").length
  lines.push(`${unchanged} case(s) unchanged`)
  return `${lines.join("\n")}\n`
}
