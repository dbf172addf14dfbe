#!/usr/bin/env node
// Checks every published package as npm would receive it: `pnpm pack` packs it (workspace:
// ranges replaced by versions, only its `files`), then `attw` (@arethetypeswrong/cli: do the
// types resolve, and to the right module kind, under TypeScript's module resolutions, node10
// included) and `publint --strict` (package.json fields, exports and files, warnings as errors)
// read the tarball. Needs the packages built (`pnpm run build`). Prints one line per package and
// tool with what failed in full; exits 1 when any check fails.
//
// Usage: node scripts/check-packages.mjs [name...]   (names as in packages/: core, sql...)
import { execFileSync, spawnSync } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const bin = (name) => join(root, "node_modules/.bin", name)
const only = process.argv.slice(2)
const packages = readdirSync(join(root, "packages"))
  .filter((dir) => only.length === 0 || only.includes(dir))
  .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(root, "packages", dir, "package.json"), "utf8")) }))
  .filter(({ manifest }) => manifest.private !== true)
if (packages.length === 0) {
  console.error(`no published package under packages/${only.length > 0 ? ` named ${only.join(", ")}` : ""}`)
  process.exit(2)
}

// Every resolution (node10, node16 from CJS and from ESM, bundler) must resolve the types, to the
// right module kind. One rule is off: the packages are ES modules only, and `require()` of them is
// Node 20.19+'s require of an ES module (their `engines`; apps/support-desk/scripts/check-imports.mjs
// requires each), which attw's TypeScript still reports under node16 from CJS as "dynamic import
// only" (CJSResolvesToESM).
const attwOptions = ["--profile", "strict", "--ignore-rules", "cjs-resolves-to-esm", "--format", "table-flipped"]

const out = mkdtempSync(join(tmpdir(), "agentkit-pack-"))
let failed = 0
const started = Date.now()
try {
  for (const { dir, manifest } of packages) {
    const cwd = join(root, "packages", dir)
    const tarball = execFileSync("pnpm", ["pack", "--pack-destination", out, "--json"], { cwd, encoding: "utf8" })
    const file = JSON.parse(tarball).filename
    const checks = [
      ["attw", bin("attw"), [file, ...attwOptions, "--no-color"]],
      ["publint --strict", bin("publint"), ["run", file, "--strict", "--pack", "false"]]
    ]
    for (const [label, command, args] of checks) {
      const result = spawnSync(command, args, { cwd: out, encoding: "utf8" })
      if (result.status === 0) {
        console.log(`${manifest.name}: ${label}: ok`)
      } else {
        failed++
        console.log(`${manifest.name}: ${label}: FAILED\n${result.stdout}${result.stderr}`)
      }
    }
  }
} finally {
  rmSync(out, { recursive: true, force: true })
}
console.log(
  `check-packages: ${packages.length} packages, ${packages.length * 2 - failed} of ${
    packages.length * 2
  } checks passed` +
    ` in ${((Date.now() - started) / 1000).toFixed(1)} s`
)
process.exit(failed === 0 ? 0 : 1)
