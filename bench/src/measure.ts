/**
 * The measurements. Each `Measure` takes one set-up case and returns its metrics for one round;
 * the harness runs every measure on every case of a workload, interleaved, for each round.
 *
 * Every run's answer is checked (and the case's own `verify`, such as the OpenTelemetry cases'
 * exported spans): a case that does not finish its workload fails the benchmark instead of
 * reporting the speed of doing nothing.
 */
import type { Runner } from "./Case.js"
import type { MockModel } from "./MockModel.js"

export type Unit = "µs" | "ms" | "MB" | "KB"

/** One reported figure. */
export interface Metric {
  readonly id: string
  readonly label: string
  readonly unit: Unit
}

/** How much each measure does (from the command line). */
export interface Sizes {
  /** Sequential runs per per-run measurement. */
  readonly runs: number
  /** Runs started at once in the concurrent measurement. */
  readonly concurrent: number
  /** Runs parked at once in the live-heap measurement. */
  readonly parked: number
}

/** What a measure gets: the case, its workload's mock model, the sizes. */
export interface Subject {
  readonly runner: Runner
  readonly model: MockModel
  readonly sizes: Sizes
}

export interface Measure {
  readonly id: string
  readonly metrics: (sizes: Sizes) => ReadonlyArray<Metric>
  /** One round's figures, by metric id. */
  readonly run: (subject: Subject) => Promise<Readonly<Record<string, number>>>
}

const collect = (): void => {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) throw new Error("the benchmark needs node --expose-gc (pnpm bench passes it)")
  gc()
  gc()
}

/** Lets pending callbacks finish, then collects garbage twice: a quiet heap to start from. */
const settle = async (): Promise<void> => {
  await new Promise((resolve) => setImmediate(resolve))
  collect()
}

/** Every run finished the workload, and the case's own check (if any) passes. */
const check = async (model: MockModel, runner: Runner, outputs: ReadonlyArray<string>): Promise<void> => {
  const wrong = outputs.filter((output) => output !== model.workload.answer)
  if (wrong.length > 0) {
    throw new Error(
      `${wrong.length} of ${outputs.length} runs did not finish the workload (first answer: ${
        JSON.stringify(wrong[0])
      })`
    )
  }
  await runner.verify?.()
}

const micros = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e3

/** Sequential runs, each its own `runPromise`, awaited one after another. */
export const perRun = async ({ model, runner, sizes }: Subject, tracing: boolean) => {
  await settle()
  const outputs: Array<string> = []
  const cpu = process.cpuUsage()
  const start = process.hrtime.bigint()
  for (let i = 0; i < sizes.runs; i++) outputs.push(await runner.run(tracing))
  const wall = micros(start)
  const used = process.cpuUsage(cpu)
  await check(model, runner, outputs)
  return { wall: wall / sizes.runs, cpu: (used.user + used.system) / sizes.runs }
}

/**
 * The traced runs, paired with as many untraced ones: `blocks` alternating blocks of each (the
 * order flipped from block to block), so that the machine's speed, which drifts from second to
 * second on a shared VM, falls on both alike. Their CPU per run traced, and traced over untraced.
 */
export const pairedRuns = async ({ model, runner, sizes }: Subject) => {
  await settle()
  const blocks = 10
  const per = Math.max(1, Math.floor(sizes.runs / blocks))
  const outputs: Array<string> = []
  let offCpu = 0
  let onCpu = 0
  let onWall = 0
  for (let block = 0; block < blocks; block++) {
    for (const tracing of block % 2 === 0 ? [false, true] : [true, false]) {
      const cpu = process.cpuUsage()
      const start = process.hrtime.bigint()
      for (let i = 0; i < per; i++) outputs.push(await runner.run(tracing))
      const wall = micros(start)
      const used = process.cpuUsage(cpu)
      if (tracing) {
        onCpu += used.user + used.system
        onWall += wall
      } else offCpu += used.user + used.system
    }
  }
  await check(model, runner, outputs)
  const runs = per * blocks
  return { wall: onWall / runs, cpu: onCpu / runs, overhead: onCpu / offCpu }
}

/**
 * `sizes.concurrent` runs started at once (each its own `runPromise`): the wall time until all
 * finished, and the peak heap and RSS above the settled heap before them. Memory is sampled by
 * the mock model every 256 calls, so the sample happens while the runs are in flight.
 */
export const concurrent = async ({ model, runner, sizes }: Subject) => {
  await settle()
  const before = process.memoryUsage()
  let heap = before.heapUsed
  let rss = before.rss
  const sample = () => {
    const now = process.memoryUsage()
    heap = Math.max(heap, now.heapUsed)
    rss = Math.max(rss, now.rss)
  }
  let calls = 0
  model.probe = () => {
    if ((++calls & 255) === 0) sample()
  }
  try {
    const start = process.hrtime.bigint()
    const outputs = await Promise.all(Array.from({ length: sizes.concurrent }, () => runner.run(false)))
    const wall = micros(start)
    sample()
    await check(model, runner, outputs)
    return { wall: wall / 1e3, heap: (heap - before.heapUsed) / 1e6, rss: (rss - before.rss) / 1e6 }
  } finally {
    model.probe = undefined
  }
}

/**
 * The live heap of one in-flight run: `sizes.parked` runs held at model step `step` (a model call
 * that does not answer until released), heap used after a full collection with them parked
 * minus without, divided by their number.
 */
export const parked = async ({ model, runner, sizes }: Subject, step: number) => {
  await settle()
  const before = process.memoryUsage().heapUsed
  const park = model.park(step)
  try {
    const pending = Promise.all(Array.from({ length: sizes.parked }, () => runner.run(false)))
    // A case that fails, or finishes without reaching the step, must not leave this waiting.
    await Promise.race([
      park.arrived(sizes.parked),
      pending.then(() => Promise.reject(new Error(`the runs finished without reaching model step ${step}`)))
    ])
    await settle()
    const held = process.memoryUsage().heapUsed
    park.release()
    await check(model, runner, await pending)
    return (held - before) / sizes.parked / 1e3
  } finally {
    park.release()
  }
}

const thousands = (n: number) => n.toLocaleString("en-US")

/** The round's tracing overhead (traced CPU per run over untraced, paired blocks); not a table row. */
export const overheadId = "traced.overhead"

/** Every measure, in report order. A new measure is added here. */
export const measures: ReadonlyArray<Measure> = [
  {
    id: "run",
    metrics: () => [
      { id: "run.wall", label: "per run, wall", unit: "µs" },
      { id: "run.cpu", label: "per run, CPU", unit: "µs" }
    ],
    run: async (subject) => {
      const { wall, cpu } = await perRun(subject, false)
      return { "run.wall": wall, "run.cpu": cpu }
    }
  },
  {
    id: "traced",
    metrics: () => [
      { id: "traced.wall", label: "per run, tracing on (the column's tracer), wall", unit: "µs" },
      { id: "traced.cpu", label: "per run, tracing on (the column's tracer), CPU", unit: "µs" }
    ],
    // with the tracing overhead, traced over untraced runs in alternating blocks (not a row of
    // its own: the report's "tracing on ÷ off")
    run: async (subject) => {
      const { wall, cpu, overhead } = await pairedRuns(subject)
      return { "traced.wall": wall, "traced.cpu": cpu, [overheadId]: overhead }
    }
  },
  {
    id: "concurrent",
    metrics: ({ concurrent }) => [
      { id: "concurrent.wall", label: `${thousands(concurrent)} concurrent runs: wall`, unit: "ms" },
      { id: "concurrent.heap", label: `${thousands(concurrent)} concurrent runs: heap added (peak)`, unit: "MB" },
      { id: "concurrent.rss", label: `${thousands(concurrent)} concurrent runs: RSS added (peak)`, unit: "MB" }
    ],
    run: async (subject) => {
      const { wall, heap, rss } = await concurrent(subject)
      return { "concurrent.wall": wall, "concurrent.heap": heap, "concurrent.rss": rss }
    }
  },
  {
    id: "parked",
    metrics: () => [
      { id: "parked.first", label: "live heap per run parked at the first model call", unit: "KB" },
      { id: "parked.last", label: "live heap per run parked at the last model call", unit: "KB" }
    ],
    run: async (subject) => ({
      "parked.first": await parked(subject, 1),
      "parked.last": await parked(subject, subject.model.workload.toolRounds + 1)
    })
  }
]
