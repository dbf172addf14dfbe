/**
 * `pnpm bench`: agentkit measured against a hand-written Effect loop of the same workload, in
 * one process. The table goes to stdout, progress to stderr; `--json file` also writes every
 * figure (medians, ratios and each round). Figures are printed, never asserted.
 */
import { execFileSync } from "node:child_process"
import { writeFileSync } from "node:fs"
import * as os from "node:os"
import { resolve } from "node:path"
import { parseArgs } from "node:util"
import { cases } from "./cases/index.js"
import * as Harness from "./harness.js"
import * as Report from "./report.js"

const usage = `usage: pnpm bench [options]
  --rounds N        interleaved rounds, medians reported (default 3)
  --runs N          sequential runs per per-run figure (default 10000)
  --concurrent N    runs started at once (default 10000)
  --parked N        runs parked for the live-heap figure (default 10000)
  --warmup N        sequential runs per tracing mode before the first round (default 3000)
  --case ID[,ID]    only these cases (repeatable; a workload's floor is always kept): ${
  cases.map((c) => `${c.workload.id}/${c.id}`).join(", ")
}
  --json FILE       also write every figure as JSON
  --quiet           no progress on stderr`

const fail = (message: string): never => {
  console.error(`${message}\n${usage}`)
  process.exit(2)
}

const { values } = (() => {
  try {
    return parseArgs({
      options: {
        rounds: { type: "string", default: "3" },
        runs: { type: "string", default: "10000" },
        concurrent: { type: "string", default: "10000" },
        parked: { type: "string", default: "10000" },
        warmup: { type: "string", default: "3000" },
        case: { type: "string", multiple: true },
        json: { type: "string" },
        quiet: { type: "boolean", default: false },
        help: { type: "boolean", default: false }
      }
    })
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error))
  }
})()

if (values.help) {
  console.log(usage)
  process.exit(0)
}

const count = (name: string, text: string): number => {
  const n = Number(text)
  return Number.isSafeInteger(n) && n >= 1 ? n : fail(`--${name} must be a whole number ≥ 1, got '${text}'`)
}

const settings: Harness.Settings = {
  rounds: count("rounds", values.rounds),
  runs: count("runs", values.runs),
  concurrent: count("concurrent", values.concurrent),
  parked: count("parked", values.parked),
  warmup: count("warmup", values.warmup)
}

const selected = (() => {
  // repeatable, and each may list several: --case minimal/agentkit,minimal/otel
  const wanted = values.case?.flatMap((list) => list.split(",")).map((id) => id.trim()).filter((id) => id !== "")
  if (wanted === undefined) return cases.filter((c) => c.optIn !== true)
  if (wanted.length === 0) fail("--case needs at least one case id")
  const known = new Set(cases.flatMap((c) => [c.id, `${c.workload.id}/${c.id}`]))
  for (const id of wanted) if (!known.has(id)) fail(`unknown case '${id}'`)
  const chosen = cases.filter((c) => !c.floor && (wanted.includes(c.id) || wanted.includes(`${c.workload.id}/${c.id}`)))
  // a workload's floor is kept when any of its cases is chosen
  return cases.filter((c) => chosen.includes(c) || (c.floor && chosen.some((other) => other.workload === c.workload)))
})()

if ((globalThis as { gc?: unknown }).gc === undefined) fail("run with node --expose-gc (pnpm bench does)")

const commit = (() => {
  try {
    const git = (...args: Array<string>) =>
      execFileSync("git", args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim()
    return `${git("rev-parse", "--short", "HEAD")}${
      git("status", "--porcelain") === "" ? "" : " (uncommitted changes)"
    }`
  } catch {
    return "unknown"
  }
})()

const cpus = os.cpus()
const loadBefore = os.loadavg()
const log = values.quiet ? () => {} : (line: string) => console.error(line)
const results = await Harness.run(selected, settings, log)
const report = Report.make(results, {
  date: new Date().toISOString(),
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
  cpus: `${cpus.length} × ${cpus[0]?.model.trim() ?? "unknown CPU"}`,
  commit,
  loadBefore,
  loadAfter: os.loadavg(),
  rounds: settings.rounds,
  sizes: settings
})

console.log(Report.markdown(report))
if (values.json !== undefined) {
  // Relative to where `pnpm bench` was typed, not to the workspace root pnpm runs it in.
  const file = resolve(process.env["INIT_CWD"] ?? process.cwd(), values.json)
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
  log(`wrote ${file}`)
}
