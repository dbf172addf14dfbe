// vitest globalSetup of the test projects that start `node` on built code (the crash suites' workers,
// the apps' processes): before any of their tests, core, tools and agents are built (`tsc -b`,
// incremental: a quarter of a second when nothing changed) and bundled (scripts/bundle.mjs), so
// those processes never load a bundle older than the sources. Without it, a test's own `tsc -b`
// (the crash suites build their workers) would rebuild dist/ after an edit and leave the bundles,
// which is what `node` loads, behind. Runs once per vitest run, however many projects list it.
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { bundledPackages, write } from "../bundle.mjs"

const done = Symbol.for("agentkit-ts/scripts/test/bundles.setup")

export default async function setup() {
  if (globalThis[done] === true) return
  const root = fileURLToPath(new URL("../..", import.meta.url))
  const tsc = fileURLToPath(new URL("../../node_modules/typescript/bin/tsc", import.meta.url))
  execFileSync(process.execPath, [tsc, "-b", ...bundledPackages.map((name) => `packages/${name}/tsconfig.src.json`)], {
    cwd: root,
    stdio: "inherit"
  })
  await write()
  globalThis[done] = true
}
