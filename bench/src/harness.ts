/**
 * The harness: sets up every selected case, warms it up, then runs interleaved rounds (in each
 * round every measure runs on every case of the workload, the case order rotating from round to
 * round) so that a slow phase of a shared machine falls on all cases alike. All in this process.
 */
import type { Case, Runner } from "./Case.js"
import { type ImportCost, measureImportCost } from "./importCost.js"
import { measures, perRun, type Sizes } from "./measure.js"
import * as MockModel from "./MockModel.js"
import type { Workload } from "./Workload.js"

export interface Settings extends Sizes {
  readonly rounds: number
  /** Sequential runs per tracing mode before the first round (JIT warm-up). */
  readonly warmup: number
}

/** One case's figures: one record per round, by metric id. */
export interface CaseRounds {
  readonly case: Case
  readonly rounds: ReadonlyArray<Readonly<Record<string, number>>>
}

export interface WorkloadRounds {
  readonly workload: Workload
  /** The floor first. */
  readonly cases: ReadonlyArray<CaseRounds>
}

export interface Results {
  readonly workloads: ReadonlyArray<WorkloadRounds>
  readonly importCost: ReadonlyArray<ImportCost>
}

const rotate = <A>(items: ReadonlyArray<A>, by: number): ReadonlyArray<A> => {
  const k = by % items.length
  return [...items.slice(k), ...items.slice(0, k)]
}

const runWorkload = async (
  workload: Workload,
  cases: ReadonlyArray<Case>,
  settings: Settings,
  log: (line: string) => void
): Promise<WorkloadRounds> => {
  const model = MockModel.make(workload)
  const set: Array<{ readonly case: Case; readonly runner: Runner; readonly rounds: Array<Record<string, number>> }> =
    []
  try {
    for (const c of cases) set.push({ case: c, runner: await c.setup(model), rounds: [] })
    for (const s of set) {
      log(`${workload.id}/${s.case.id}: warm-up`)
      const warm = { runner: s.runner, model, sizes: { ...settings, runs: settings.warmup } }
      await perRun(warm, false)
      await perRun(warm, true)
    }
    for (let round = 0; round < settings.rounds; round++) {
      const figures = set.map(() => ({}) as Record<string, number>)
      for (const measure of measures) {
        for (const s of rotate(set, round)) {
          log(`${workload.id} round ${round + 1}/${settings.rounds}: ${measure.id} ${s.case.id}`)
          Object.assign(figures[set.indexOf(s)]!, await measure.run({ runner: s.runner, model, sizes: settings }))
        }
      }
      set.forEach((s, i) => s.rounds.push(figures[i]!))
    }
  } finally {
    for (const s of set) await s.runner.dispose()
  }
  return { workload, cases: set.map((s) => ({ case: s.case, rounds: s.rounds })) }
}

/**
 * Runs the selected cases, grouped by workload (each group must hold its workload's floor), and
 * measures the import cost once per round in a fresh process.
 */
export const run = async (
  cases: ReadonlyArray<Case>,
  settings: Settings,
  log: (line: string) => void
): Promise<Results> => {
  const workloads = [...new Set(cases.map((c) => c.workload))]
  const results: Array<WorkloadRounds> = []
  for (const workload of workloads) {
    const own = cases.filter((c) => c.workload === workload)
    const floors = own.filter((c) => c.floor)
    if (floors.length !== 1) {
      throw new Error(
        `workload '${workload.id}' needs exactly one floor case among the selected cases, has ${floors.length}`
      )
    }
    results.push(await runWorkload(workload, [...floors, ...own.filter((c) => !c.floor)], settings, log))
  }
  const importCost: Array<ImportCost> = []
  for (let round = 0; round < settings.rounds; round++) {
    log(`import cost ${round + 1}/${settings.rounds}`)
    importCost.push(measureImportCost())
  }
  return { workloads: results, importCost }
}
