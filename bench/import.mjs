// Import cost of core+tools+agents on top of `effect` itself (run after `pnpm build`):
//   node bench/import.mjs
import { performance } from "node:perf_hooks"

const t0 = performance.now()
await import("effect")
const t1 = performance.now()
await import("@agentkit/core")
await import("@agentkit/tools")
await import("@agentkit/agents")
const t2 = performance.now()
console.log(`import effect: ${(t1 - t0).toFixed(0)} ms; core+tools+agents on top: ${(t2 - t1).toFixed(0)} ms`)
