// The tracing overhead of one case (traced CPU per run over untraced) in a process of its own:
// pairs of alternating blocks of untraced and traced runs, the median of the pairs' ratios. The
// comparator (`pnpm bench`) measures it too, in one process with every other case and measure,
// where each run costs about twice as much as here and the ratio is noisier; this is the figure
// of a process that runs nothing else. Run after `pnpm bench` (or `tsc -b bench`) has built it.
//   node bench/tracing.mjs [case] [pairs] [runs per block]
//   case: agentkit (default), floor, otel, floor-otel; workload: minimal
const [which = "agentkit", pairsText = "40", blockText = "1000"] = process.argv.slice(2)
const { minimal } = await import("./dist/Workload.js")
const MockModel = await import("./dist/MockModel.js")
const { agentkitCase } = await import("./dist/cases/agentkit.js")
const { floorCase } = await import("./dist/cases/floor.js")
const { otelCase, otelFloorCase } = await import("./dist/cases/otel.js")
const make = { agentkit: agentkitCase, floor: floorCase, otel: otelCase, "floor-otel": otelFloorCase }[which]
if (make === undefined) throw new Error(`unknown case '${which}': agentkit, floor, otel or floor-otel`)
const pairs = Number(pairsText)
const block = Number(blockText)
const runner = await make(minimal).setup(MockModel.make(minimal))

const cpuPerRun = async (tracing) => {
  const start = process.cpuUsage()
  for (let i = 0; i < block; i++) {
    if ((await runner.run(tracing)) !== minimal.answer) throw new Error("a run did not finish the workload")
  }
  const used = process.cpuUsage(start)
  return (used.user + used.system) / block
}

for (let i = 0; i < 3000; i++) {
  await runner.run(false)
  await runner.run(true)
}
const off = []
const on = []
const ratios = []
for (let pair = 0; pair < pairs; pair++) {
  // the order flips from pair to pair
  let untraced
  let traced
  if (pair % 2 === 0) {
    untraced = await cpuPerRun(false)
    traced = await cpuPerRun(true)
  } else {
    traced = await cpuPerRun(true)
    untraced = await cpuPerRun(false)
  }
  off.push(untraced)
  on.push(traced)
  ratios.push(traced / untraced)
}
await runner.verify?.()
await runner.dispose()
const median = (values) => {
  const sorted = [...values].sort((x, y) => x - y)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}
console.log(
  `${which}: untraced ${median(off).toFixed(1)} µs, traced ${median(on).toFixed(1)} µs per run (CPU, medians); ` +
    `tracing on ÷ off ${median(ratios).toFixed(2)}× (median of ${pairs} pairs of ${block} runs each)`
)
