// Import cost of core+tools+agents on top of `effect` itself, in a fresh process (run after the
// packages are built: `pnpm bench` builds them and runs this once per round).
//   node bench/import.mjs           prints one line
//   node bench/import.mjs --json    prints {"effectMs": …, "agentkitMs": …}
import { performance } from "node:perf_hooks"

const t0 = performance.now()
await import("effect")
const t1 = performance.now()
await import("@agentkit/core")
await import("@agentkit/tools")
await import("@agentkit/agents")
const t2 = performance.now()
if (process.argv.includes("--json")) {
  console.log(JSON.stringify({ effectMs: t1 - t0, agentkitMs: t2 - t1 }))
} else {
  console.log(`import effect: ${(t1 - t0).toFixed(0)} ms; core+tools+agents on top: ${(t2 - t1).toFixed(0)} ms`)
}
