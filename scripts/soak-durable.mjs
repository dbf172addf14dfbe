// A soak campaign of the durable engine, larger than CI can afford: two runner processes (the
// crash-test runner, compiled JS) over a fresh Postgres database drive RUNS billing runs, each
// with two charges (side-effecting, not idempotent) that wait for an approval; while they run,
// a chaos loop SIGKILLs a runner (and restarts it) or pauses it with SIGSTOP for longer than its
// lease and its shard locks (then continues it), at random points. The operator approves every
// approval and decides every call in doubt from the side-effect log (`markDone` when the charge
// ended, `retry` when it was abandoned or its runner killed; a charge a paused runner may still
// end waits). At the end every run must be `done` with the scripted answer and every approved
// charge in the log exactly once; the script exits 1 otherwise.
//
//   eval "$(PGPORT=55432 scripts/pg-test-start.sh)"
//   node scripts/soak-durable.mjs [runs=50] [chaos events=6] [seed]
//
// Takes a few minutes (about 1 s of runner time a run, plus each pause); prints what it did. A
// failed campaign keeps its database and the runners' logs (SOAK_KEEP=1: always);
// SOAK_MAX_RECOVERIES (default 20) is the runs' `RunLease.maxRecoveries`, SOAK_FINISH_MS how long
// the runs get to finish after the last chaos event (default 10 minutes).
import { execFileSync, spawn } from "node:child_process"
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const durableDir = join(root, "packages/durable")
const [runsText = "50", eventsText = "6", seedText = String(Date.now())] = process.argv.slice(2)
const runs = Number(runsText)
const events = Number(eventsText)
let seed = Number(seedText) >>> 0
const random = () => ((seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32)
const postgresUrl = process.env["DATABASE_URL"]
if (!postgresUrl) {
  console.error("soak-durable: DATABASE_URL is not set (eval \"$(scripts/pg-test-start.sh)\")")
  process.exit(2)
}
const LEASE_MS = 3000
const LOCK_MS = 4000

execFileSync(process.execPath, [
  join(root, "node_modules/typescript/bin/tsc"),
  "-b",
  join(durableDir, "tsconfig.crash.json")
], {
  stdio: "inherit"
})
const runnerScript = join(durableDir, "build/crash/test/crash/runner.js")
if (!existsSync(runnerScript)) throw new Error(`the crash runner was not built at ${runnerScript}`)

const requireFrom = createRequire(join(durableDir, "package.json"))
const esm = (name, file) => import(pathToFileURL(join(dirname(requireFrom.resolve(`${name}/package.json`)), file)).href)
const { Context, Effect, ManagedRuntime, Redacted } = await esm("effect", "dist/esm/index.js")
const { PgClient } = await esm("@effect/sql-pg", "dist/esm/index.js")
const { SqlStores } = await import(pathToFileURL(join(root, "packages/sql/dist/index.js")).href)
const { CheckpointStore, CanonicalJson } = await import(
  pathToFileURL(join(root, "packages/core/dist/bundle/index.js")).href
)
const { Approval } = await import(pathToFileURL(join(root, "packages/agents/dist/bundle/index.js")).href)

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const SqlClient = Context.GenericTag("@effect/sql/SqlClient")
const name = `soak_${process.pid}_${Date.now().toString(36)}`
const admin = ManagedRuntime.make(PgClient.layer({ url: Redacted.make(postgresUrl) }))
await admin.runPromise(Effect.flatMap(SqlClient, (sql) => sql.unsafe(`CREATE DATABASE ${name}`)))
const url = new URL(postgresUrl)
url.pathname = `/${name}`
const dir = mkdtempSync(join(tmpdir(), "agentkit-soak-"))
const effects = join(dir, "effects.log")
writeFileSync(effects, "")

const readLog = () =>
  readFileSync(effects, "utf8").split("\n").filter((line) => line !== "").map((line) => {
    const [event, runner, key, at] = line.split(" ")
    return { event, runner, key, at: Number(at) }
  })

const base = {
  DURABLE_DB: `pg:${url.href}`,
  DURABLE_EFFECTS: effects,
  DURABLE_LOCK_MS: String(LOCK_MS),
  DURABLE_LEASE_MS: String(LEASE_MS),
  DURABLE_CHARGES: "2",
  DURABLE_GATED: "1",
  // every stall and kill is a takeover, and on a loaded machine a 3 s lease is also lost by a live
  // runner now and then: each counts one recovery of the run (`RunLease.maxRecoveries`)
  DURABLE_MAX_RECOVERIES: process.env["SOAK_MAX_RECOVERIES"] ?? "20",
  // the runners' logs are kept (with the database) when a campaign fails: every line, for the diagnosis
  DURABLE_LOG_LEVEL: "Info"
}
const ports = { A: String(36000 + (process.pid % 500) * 2), B: String(36001 + (process.pid % 500) * 2) }
const children = {}
const start = (runner, submit) =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [runnerScript], {
      env: {
        ...process.env,
        ...base,
        DURABLE_RUNNER: runner,
        DURABLE_PORT: ports[runner],
        DURABLE_SUBMIT: String(submit)
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let err = ""
    child.stderr.on("data", (chunk) => {
      err += chunk.toString()
      appendFileSync(join(dir, `runner-${runner}.log`), chunk)
    })
    child.stdout.on("data", (chunk) => {
      appendFileSync(join(dir, `runner-${runner}.log`), chunk)
      if (chunk.toString().includes("ready")) resolve(child)
    })
    child.on("exit", (code) =>
      reject(new Error(`runner ${runner} exited (${code}) before it was ready: ${err.slice(0, 2000)}`)))
    children[runner] = child
  })

const operator = ManagedRuntime.make(SqlStores.layerPg({ url: Redacted.make(url.href) }))
const use = (f) => operator.runPromise(Effect.flatMap(CheckpointStore, f))
const records = () =>
  use((store) =>
    Effect.gen(function*() {
      const all = []
      let cursor
      do {
        const page = yield* store.list({ rootOnly: true, limit: 500, ...(cursor === undefined ? {} : { cursor }) })
        for (const record of page.records) all.push(record)
        cursor = page.cursor
      } while (cursor !== undefined)
      return all
    })
  )
const killed = new Set()
const decided = new Set()
let inDoubt = 0
const decidePending = async () => {
  const lines = readLog()
  for (const record of await records()) {
    if (record.status !== "suspended") continue
    for (const entry of JSON.parse(record.state).pending) {
      if (decided.has(entry.id)) continue
      let decision
      if (entry.kind === "InDoubt") {
        const key = String(entry.call.arguments.run)
        const last = lines.filter((l) => l.key === key && l.event.startsWith("charge-")).at(-1)
        if (lines.some((l) => l.event === "charge-done" && l.key === key)) {
          decision = Approval.markDone(entry.digest, `charged ${key}`)
        } else if (last === undefined || last.event === "charge-abandoned" || killed.has(`${last.runner}@${last.at}`)) {
          decision = Approval.retry(entry.digest)
        } else continue
        inDoubt++
      } else decision = Approval.approve(entry.digest)
      await use((store) =>
        Effect.either(store.decide(record.runId, entry.id, { decision: CanonicalJson.stringify(decision), by: "soak" }))
      )
      decided.add(entry.id)
    }
  }
}

const chaos = []
let failed = false
try {
  await start("B", 0)
  await start("A", runs)
  const t0 = Date.now()
  let stop = false
  const operatorLoop = (async () => {
    while (!stop) {
      await decidePending()
      await sleep(200)
    }
  })()
  for (let i = 0; i < events; i++) {
    await sleep(1000 + random() * 4000)
    const runner = random() < 0.5 ? "A" : "B"
    const child = children[runner]
    if (random() < 0.5) {
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.kill("SIGKILL")
      await exited
      // every charge this runner started and did not end is abandoned with it
      const lines = readLog()
      for (const l of lines) if (l.runner === runner && l.event === "charge-start") killed.add(`${l.runner}@${l.at}`)
      chaos.push(`${((Date.now() - t0) / 1000).toFixed(1)} s: SIGKILL ${runner}`)
      await start(runner, 0)
    } else {
      const pause = LEASE_MS + LOCK_MS + Math.round(random() * 4000)
      child.kill("SIGSTOP")
      chaos.push(`${((Date.now() - t0) / 1000).toFixed(1)} s: SIGSTOP ${runner} for ${pause} ms`)
      await sleep(pause)
      child.kill("SIGCONT")
    }
  }
  const until = Date.now() + Number(process.env["SOAK_FINISH_MS"] ?? 10 * 60_000)
  let all = await records()
  while (Date.now() < until && !(all.length === runs && all.every((r) => r.status === "done"))) {
    await sleep(500)
    all = await records()
  }
  stop = true
  await operatorLoop
  const lines = readLog()
  const done = new Map()
  for (const l of lines) if (l.event === "charge-done") done.set(l.key, (done.get(l.key) ?? 0) + 1)
  const statuses = all.reduce((acc, r) => ((acc[r.status] = (acc[r.status] ?? 0) + 1), acc), {})
  const answers = all.filter((r) => r.status === "done" && (r.result ?? "").includes(`billed ${r.runId}`)).length
  const doubles = [...done.values()].filter((n) => n > 1).length
  console.log(`seed ${Number(seedText) >>> 0}; chaos:\n  ${chaos.join("\n  ")}`)
  console.log(
    `runs ${runs}: statuses ${JSON.stringify(statuses)}, scripted answers ${answers}, charges ${done.size} of ${
      runs * 2
    }, ` +
      `double executions ${doubles}, approvals and in-doubt calls decided ${decided.size} (in doubt ${inDoubt}), ${
        ((Date.now() - t0) / 1000).toFixed(0)
      } s`
  )
  failed = statuses.done !== runs || answers !== runs || done.size !== runs * 2 || doubles !== 0
  for (const record of all.filter((r) => r.status !== "done")) {
    const recorded = await use((store) => store.decisions(record.runId))
    console.log(
      `not done: ${record.runId} ${record.status}, lease ${JSON.stringify(record.lease)}, pending ${
        JSON.stringify(JSON.parse(record.state).pending.map((e) => [e.kind, e.id]))
      }, decisions ${JSON.stringify(recorded.map((d) => d.pendingId))}`
    )
  }
  if (failed) console.log(`kept for inspection (SOAK_KEEP=1 keeps them always): database ${name}, logs ${dir}`)
} finally {
  for (const child of Object.values(children)) if (child.exitCode === null) child.kill("SIGKILL")
  await operator.dispose()
  if (!failed && process.env["SOAK_KEEP"] !== "1") {
    rmSync(dir, { recursive: true, force: true })
    await admin.runPromise(
      Effect.flatMap(SqlClient, (sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
    )
      .catch(() => undefined)
  }
  await admin.dispose()
}
console.log(failed ? "soak: FAILED" : "soak: every run done, every approved charge exactly once")
process.exit(failed ? 1 : 0)
