#!/usr/bin/env node
// A plain Node 20 script imports every built agentkit package by its name, the way a user's app
// does: through node_modules and each package's `exports`, onto the built `dist/`.
import { readFileSync } from "node:fs"

const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"))
const names = Object.keys(manifest.dependencies).filter((name) => name.startsWith("@agentkit/"))
let failed = 0
for (const name of names) {
  try {
    const module = await import(name)
    const exports = Object.keys(module)
    if (exports.length === 0) throw new Error("no exports")
    console.log(`import ${name}: ok (${exports.length} exports)`)
  } catch (error) {
    failed++
    console.error(`import ${name} failed: ${error instanceof Error ? error.message : String(error)}`)
  }
}
process.exit(failed === 0 ? 0 : 1)
