/**
 * The report: medians over the rounds, every figure of a case beside its ratio to the
 * workload's floor, as a markdown table (stdout) and as JSON (`--json file`).
 */
import type { Results } from "./harness.js"
import type { ImportCost } from "./importCost.js"
import { measures, type Metric, overheadId, type Sizes } from "./measure.js"

/** Where and how the figures were taken. */
export interface Environment {
  readonly date: string
  readonly node: string
  readonly platform: string
  readonly cpus: string
  readonly commit: string
  readonly loadBefore: ReadonlyArray<number>
  readonly loadAfter: ReadonlyArray<number>
  readonly rounds: number
  readonly sizes: Sizes
}

/** The tracer of a case that names none. */
const defaultTracer = "Effect's tracer"

export const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/**
 * The tracing overhead of a case: its traced CPU per run over its untraced one, each round's from
 * runs in alternating blocks (`pairedRuns`), the median over the rounds.
 */
const tracingOverhead = (rounds: ReadonlyArray<Readonly<Record<string, number>>>): number =>
  median(rounds.map((round) => round[overheadId]!))

interface CaseReport {
  readonly id: string
  readonly title: string
  readonly floor: boolean
  /** What opens the spans when tracing is on (the `traced.*` figures and the tracing overhead). */
  readonly tracer: string
  /** Medians by metric id. */
  readonly median: Readonly<Record<string, number>>
  /** Median over the floor's median, by metric id (absent for the floor). */
  readonly ratioToFloor?: Readonly<Record<string, number>>
  /** Traced CPU per run over untraced (paired blocks in each round; the median over the rounds). */
  readonly tracingOverhead: number
  /** Every round's figures, by metric id. */
  readonly rounds: ReadonlyArray<Readonly<Record<string, number>>>
}

export interface Report {
  readonly environment: Environment
  readonly metrics: ReadonlyArray<Metric>
  readonly workloads: ReadonlyArray<
    { readonly id: string; readonly title: string; readonly cases: ReadonlyArray<CaseReport> }
  >
  readonly importCost: {
    readonly medianEffectMs: number
    readonly medianAgentkitMs: number
    readonly rounds: ReadonlyArray<ImportCost>
  }
}

export const make = (results: Results, environment: Environment): Report => {
  const metrics = measures.flatMap((measure) => measure.metrics(environment.sizes))
  const workloads = results.workloads.map(({ workload, cases }) => {
    const medians = cases.map(({ rounds }) =>
      Object.fromEntries(metrics.map((metric) => [metric.id, median(rounds.map((round) => round[metric.id]!))]))
    )
    const floor = medians[0]!
    return {
      id: workload.id,
      title: workload.title,
      cases: cases.map(({ case: c, rounds }, i): CaseReport => {
        const own = medians[i]!
        const base = {
          id: c.id,
          title: c.title,
          floor: c.floor,
          tracer: c.tracer ?? defaultTracer,
          median: own,
          tracingOverhead: tracingOverhead(rounds),
          rounds
        }
        return c.floor
          ? base
          : {
            ...base,
            ratioToFloor: Object.fromEntries(metrics.map((metric) => [metric.id, own[metric.id]! / floor[metric.id]!]))
          }
      })
    }
  })
  return {
    environment,
    metrics,
    workloads,
    importCost: {
      medianEffectMs: median(results.importCost.map((cost) => cost.effectMs)),
      medianAgentkitMs: median(results.importCost.map((cost) => cost.agentkitMs)),
      rounds: results.importCost
    }
  }
}

const figure = (value: number): string =>
  Math.abs(value) >= 100 ? value.toFixed(0) : Math.abs(value) >= 10 ? value.toFixed(1) : value.toFixed(2)

const ratio = (
  value: number
): string => (Number.isFinite(value) ? `${Math.abs(value) >= 10 ? value.toFixed(1) : value.toFixed(2)}×` : "—")

const row = (cells: ReadonlyArray<string>): string => `| ${cells.join(" | ")} |`

/** The report as markdown: one table per workload, then the import cost. */
export const markdown = (report: Report): string => {
  const { environment: env } = report
  const lines = [
    `agentkit bench — ${env.date}, commit ${env.commit}`,
    `node ${env.node}, ${env.platform}, ${env.cpus}; load average before ${
      env.loadBefore.map((n) => n.toFixed(2)).join(" ")
    }, after ${env.loadAfter.map((n) => n.toFixed(2)).join(" ")}`,
    `medians of ${env.rounds} interleaved rounds; per run: ${
      env.sizes.runs.toLocaleString("en-US")
    } sequential runs, each its own runPromise; ` +
    `live heap: ${
      env.sizes.parked.toLocaleString("en-US")
    } parked runs; mock model and tool answer asynchronously; MB = 10^6 bytes, KB = 10^3`,
    ""
  ]
  for (const workload of report.workloads) {
    const [floor, ...others] = workload.cases
    lines.push(`### ${workload.id}: ${workload.title}`, "")
    lines.push(row(["", floor!.title, ...others.flatMap((c) => [c.title, "÷ floor"])]))
    lines.push(row(["---", "---:", ...others.flatMap(() => ["---:", "---:"])]))
    lines.push(row(["tracer, when tracing is on", floor!.tracer, ...others.flatMap((c) => [c.tracer, ""])]))
    for (const metric of report.metrics) {
      lines.push(
        row([
          `${metric.label} (${metric.unit})`,
          figure(floor!.median[metric.id]!),
          ...others.flatMap((c) => [figure(c.median[metric.id]!), ratio(c.ratioToFloor![metric.id]!)])
        ])
      )
    }
    lines.push(
      row([
        "tracing on ÷ off (CPU per run, the column's tracer, alternating blocks)",
        ratio(floor!.tracingOverhead),
        ...others.flatMap((c) => [ratio(c.tracingOverhead), ""])
      ]),
      ""
    )
  }
  const cost = report.importCost
  lines.push(
    `import of core+tools+agents on top of effect: ${cost.medianAgentkitMs.toFixed(1)} ms ` +
      `(effect itself: ${cost.medianEffectMs.toFixed(1)} ms; median of ${cost.rounds.length} fresh processes)`
  )
  return lines.join("\n")
}
