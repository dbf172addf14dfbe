#!/usr/bin/env node
// A plain Node 20 script loads every built agentkit package by its name, the way a user's app
// does: through node_modules and each package's `exports`, onto the built `dist/`. Each package
// is loaded twice, with `import` and with `require` (Node 20.19+ loads ES modules through
// `require`, via the `default` export condition). Every package under packages/ is checked: one
// that the app does not depend on fails the check rather than being skipped. First, the bundles
// that core, tools and agents load from (scripts/bundle.mjs) must be those of the current tsc
// output: a stale bundle fails here instead of passing with old code.
import { readdirSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { check } from "../../../scripts/bundle.mjs"

const stale = await check()
if (stale.length > 0) {
  console.error(
    `the bundles are not those of the current tsc output (run \`pnpm run build\`):\n  ${stale.join("\n  ")}`
  )
  process.exit(1)
}

const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"))
const packagesDir = new URL("../../../packages/", import.meta.url)
const names = readdirSync(packagesDir)
  .map((dir) => JSON.parse(readFileSync(new URL(`${dir}/package.json`, packagesDir), "utf8")))
  .filter((pkg) => pkg.private !== true)
  .map((pkg) => pkg.name)
  .sort()
const require = createRequire(new URL("../package.json", import.meta.url))
let failed = 0
for (const name of names) {
  try {
    if (!(name in (manifest.dependencies ?? {}))) {
      throw new Error(`not a dependency of ${manifest.name}: add it to check it`)
    }
    const imported = Object.keys(await import(name)).sort()
    if (imported.length === 0) throw new Error("no exports")
    const required = Object.keys(require(name)).filter((key) => key !== "__esModule" && key !== "module.exports").sort()
    if (required.join() !== imported.join()) {
      throw new Error(`require() gives other exports than import: [${required.join(", ")}] vs [${imported.join(", ")}]`)
    }
    console.log(`import and require ${name}: ok (${imported.length} exports)`)
  } catch (error) {
    failed++
    console.error(`${name} failed: ${error instanceof Error ? error.message : String(error)}`)
  }
}
process.exit(failed === 0 ? 0 : 1)
