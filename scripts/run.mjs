#!/usr/bin/env node
// The README's quick-start commands (`npm run demo`, `npm test`) go through this script, so they
// work on a fresh machine with only Node 20 and npm: it gets pnpm 12.4.2 (the project's pinned
// package manager) through npx when it is not installed, installs the workspace when needed,
// builds it, and then runs the requested pnpm script.
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"

const PNPM = "12.4.2"
const root = fileURLToPath(new URL("..", import.meta.url))
const script = process.argv[2]
if (script === undefined) {
  console.error("usage: node scripts/run.mjs <pnpm script> [args...]")
  process.exit(2)
}

const pnpmCommand = () => {
  try {
    const version = execFileSync("pnpm", ["--version"], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"]
    }).trim()
    if (version === PNPM) return ["pnpm"]
  } catch {
    // not installed: fall through to npx
  }
  return ["npx", "--yes", `pnpm@${PNPM}`]
}

// What the run is doing goes to stderr, so a first run (an install, a half-minute build) is never
// silent while stdout stays exactly what the script prints.
const say = (text) => process.stderr.write(`agentkit: ${text}\n`)
const builds = (name) => name === "check" || name.endsWith(":run")
const built = existsSync(new URL("../apps/support-desk/dist/src/main.js", import.meta.url))

const [command, ...prefix] = pnpmCommand()
// Install and build chatter goes to stderr: stdout carries only what the script itself prints.
const run = (args, stdio = ["inherit", process.stderr, "inherit"]) => {
  const result = spawnSync(command, [...prefix, ...args], { cwd: root, stdio })
  if (result.status !== 0) process.exit(result.status ?? 1)
}

if (!existsSync(new URL("../node_modules/.modules.yaml", import.meta.url))) {
  say(`installing the workspace's dependencies (pnpm ${PNPM} install --frozen-lockfile)...`)
  run(["install", "--frozen-lockfile", "--reporter=append-only"])
}
if (builds(script)) {
  say(
    built
      ? "building (tsc -b, incremental, then the bundles)..."
      : "building every package with tsc -b, then bundling core, tools and agents (the first build takes about half a minute)..."
  )
}
run(["run", "--silent", script, ...process.argv.slice(3)], "inherit")
