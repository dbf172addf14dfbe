/**
 * The crash tests: real runner processes (compiled JS, `node`) drive billing runs through the
 * durable engine over the SQL stores and are killed with SIGKILL while a non-idempotent charge
 * is in flight. The parent is the operator: it reads the checkpoint store (the source of truth)
 * and decides the calls a takeover found in doubt from the side-effect log (done there:
 * `markDone`; never finished: `retry`), through the store ports; only runners apply decisions.
 *
 * - SQLite (always): one runner, killed mid-charge and restarted on the same file; and one
 *   SIGTERMed mid-charge: it drains (stops by itself, exit code 0, no live run lease left behind)
 *   and a restarted runner finishes every run.
 * - Postgres (DATABASE_URL): two `NodeClusterSocket` runners, 50 gated runs of two charges each
 *   (every charge approved by the operator); one runner SIGKILLed mid-charge and restarted, later
 *   one paused by SIGSTOP for 9 s mid-charge (past its 3 s lease and 4 s shard locks): every run
 *   ends `done` with the scripted answer, each charge exactly once; and Postgres stopped for 30 s
 *   mid-run: every run `done`, no call in doubt.
 *
 * Required: every run finished `done` exactly once (one terminal record, one final answer
 * recorded), 0 double executions of the charge. Printed: runs, kills, completions, double
 * executions, in-doubt decisions, takeover time (kill to the survivor's first step on a run the
 * killed runner had touched).
 */
import { Approval } from "@agentkit/agents"
import type { RunState } from "@agentkit/agents"
import { CanonicalJson, CheckpointStore } from "@agentkit/core"
import { DurableRunner } from "@agentkit/durable"
import { SqlStores } from "@agentkit/sql"
import { PgClient } from "@effect/sql-pg"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, ManagedRuntime, Redacted } from "effect"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const packageDir = fileURLToPath(new URL("..", import.meta.url))
const runnerScript = join(packageDir, "build/crash/test/crash/runner.js")
const postgresUrl = process.env["DATABASE_URL"] === "" ? undefined : process.env["DATABASE_URL"]

const buildRunner = () => {
  const tsc = join(packageDir, "../../node_modules/typescript/bin/tsc")
  execFileSync(process.execPath, [tsc, "-b", join(packageDir, "tsconfig.crash.json")], { stdio: "inherit" })
  if (!existsSync(runnerScript)) throw new Error(`the crash runner was not built at ${runnerScript}`)
}

interface Line {
  readonly event: string
  readonly runner: string
  readonly runId: string
  readonly at: number
}

const readLog = (file: string): ReadonlyArray<Line> =>
  existsSync(file)
    ? readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => {
        const [event, runner, runId, at] = line.split(" ")
        return { event: event!, runner: runner!, runId: runId!, at: Number(at) }
      })
    : []

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Starts a runner; resolves once it printed `ready`. */
const startRunner = (vars: Record<string, string>): Promise<ChildProcess> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [runnerScript], {
      env: { ...process.env, ...vars },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let err = ""
    child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString()))
    child.stdout!.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("ready")) resolve(child)
    })
    child.on("exit", (code) =>
      reject(new Error(`runner ${vars["DURABLE_RUNNER"]} exited (${code}) before it was ready: ${err.slice(0, 2000)}`)))
  })

const stop = (child: ChildProcess | undefined) => {
  if (child !== undefined && child.exitCode === null && child.pid !== undefined) child.kill("SIGKILL")
}

/** Waits until a charge of `runner` is in flight (started, not done), then sends it `signal` (SIGKILL: waits for the exit). */
const killMidCharge = async (
  child: ChildProcess,
  runner: string,
  effects: string,
  timeoutMs = 300_000,
  signal: NodeJS.Signals = "SIGKILL"
) => {
  const until = Date.now() + timeoutMs
  while (Date.now() < until) {
    const lines = readLog(effects).filter((l) => l.runner === runner)
    const done = new Set(lines.filter((l) => l.event === "charge-done").map((l) => l.runId))
    const inFlight = lines.filter((l) => l.event === "charge-start" && !done.has(l.runId))
    if (inFlight.length > 0 && done.size >= 2) {
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
      child.kill(signal)
      const at = Date.now()
      const code = await exited
      return { at, exitedAfter: Date.now() - at, code, inFlight: inFlight.map((l) => l.runId) }
    }
    await sleep(10)
  }
  throw new Error(`runner ${runner} never had a charge in flight`)
}

/** Waits until either runner has a charge in flight, then SIGKILLs that one (shards are assigned by the cluster). */
const killWhicheverMidCharge = async (runners: Record<string, ChildProcess>, effects: string, timeoutMs = 300_000) => {
  const until = Date.now() + timeoutMs
  while (Date.now() < until) {
    const lines = readLog(effects)
    const done = new Set(lines.filter((l) => l.event === "charge-done").map((l) => l.runId))
    const inFlight = lines.find((l) => l.event === "charge-start" && !done.has(l.runId) && l.runner in runners)
    if (inFlight !== undefined && done.size >= 2) {
      const child = runners[inFlight.runner]!
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.kill("SIGKILL")
      const at = Date.now()
      await exited
      return {
        killed: inFlight.runner,
        at,
        inFlight: lines.filter((l) =>
          l.runner === inFlight.runner && l.event === "charge-start" && !done.has(l.runId)
        ).length
      }
    }
    await sleep(10)
  }
  throw new Error("no runner ever had a charge in flight")
}

/** The operator's seat: the checkpoint store on the same database. */
const operatorOf = (stores: ReturnType<typeof SqlStores.layerSqlite>) => {
  const runtime = ManagedRuntime.make(stores)
  const use = <A, E>(f: (store: CheckpointStore.Service) => Effect.Effect<A, E>) =>
    runtime.runPromise(Effect.flatMap(Effect.map(Effect.context<CheckpointStore>(), Context.get(CheckpointStore)), f))
  const records = () =>
    use((store) =>
      Effect.gen(function*() {
        const all: Array<CheckpointStore.RunRecord> = []
        let cursor: string | undefined
        do {
          const page = yield* store.list({ rootOnly: true, limit: 500, ...(cursor === undefined ? {} : { cursor }) })
          for (const record of page.records) all.push(record)
          cursor = page.cursor
        } while (cursor !== undefined)
        return all
      })
    )
  /**
   * Decides the entries of suspended runs as an operator with the side-effect log: an approval is
   * approved; a call in doubt is `markDone` when its charge ended, `retry` when it was abandoned
   * (its fiber interrupted) or its runner was killed, and left for later while a live (or paused)
   * runner may still end it.
   */
  const decidePending = async (
    effects: string,
    decided: Set<string>,
    killed: ReadonlySet<string>,
    doubts: Set<string> = new Set()
  ) => {
    const lines = readLog(effects)
    for (const record of await records()) {
      if (record.status !== "suspended") continue
      const state = JSON.parse(record.state) as RunState.RunState
      for (const entry of state.pending) {
        if (decided.has(entry.id)) continue
        let decision: Approval.Decision
        if (entry.kind === "InDoubt") {
          const key = String((entry.call.arguments as { run?: unknown }).run)
          const last = lines.filter((l) => l.runId === key && l.event.startsWith("charge-")).at(-1)
          if (lines.some((l) => l.event === "charge-done" && l.runId === key)) {
            decision = Approval.markDone(entry.digest, `charged ${key}`)
          } else if (
            last === undefined || last.event === "charge-abandoned" || killed.has(last.runner) ||
            killed.has(`${last.runner}@${last.at}`)
          ) {
            decision = Approval.retry(entry.digest)
          } else {
            continue // started by a runner that may still end it: wait
          }
          doubts.add(entry.id)
        } else {
          decision = Approval.approve(entry.digest)
        }
        await use((store) =>
          Effect.either(
            store.decide(record.runId, entry.id, { decision: CanonicalJson.stringify(decision), by: "operator" })
          )
        )
        decided.add(entry.id)
      }
    }
  }
  /** Cluster messages due and not processed (any age). */
  const unconsumed = () => runtime.runPromise(DurableRunner.unconsumedMessages({ olderThan: 0 }))
  return { records, decidePending, unconsumed, dispose: () => runtime.dispose() }
}

/**
 * The cluster messages still due and unprocessed, once they had a moment to drain: a workflow's
 * final reply is written just after its body finished the record, so the count may lag the
 * records briefly; a message left behind for good stays counted. The moment is generous (a loaded
 * machine may lag by seconds): waiting longer changes no outcome, it only ends when none is left.
 */
const drained = async (operator: ReturnType<typeof operatorOf>) => {
  let left = await operator.unconsumed()
  const until = Date.now() + 120_000
  while (left > 0 && Date.now() < until) {
    await sleep(200)
    left = await operator.unconsumed()
  }
  return left
}

/**
 * Drives the operator until every run is done, however long a loaded machine takes; gives up only
 * when nothing moved (no run changed status, no side effect logged) for `stallMs`. Gives the
 * figures: the outcome (every run ended, nothing ran twice), not a count within a time window.
 */
const finish = async (
  operator: ReturnType<typeof operatorOf>,
  effects: string,
  runs: number,
  stallMs: number,
  killed: ReadonlySet<string> = new Set(),
  decided: Set<string> = new Set(),
  doubts: Set<string> = new Set()
) => {
  let records = await operator.records()
  let seen = ""
  let moved = Date.now()
  while (Date.now() - moved < stallMs) {
    await operator.decidePending(effects, decided, killed, doubts)
    records = await operator.records()
    if (records.length === runs && records.every((r) => r.status === "done")) break
    const now = `${records.map((r) => `${r.runId}:${r.status}`).sort().join()} ${
      readLog(effects).length
    } ${decided.size}`
    if (now !== seen) [seen, moved] = [now, Date.now()]
    await sleep(200)
  }
  const lines = readLog(effects)
  const per = (event: string) => {
    const counts = new Map<string, number>()
    for (const l of lines) if (l.event === event) counts.set(l.runId, (counts.get(l.runId) ?? 0) + 1)
    return counts
  }
  const charges = per("charge-done")
  return {
    records,
    completions: records.filter((r) => r.status === "done").length,
    doubleExecutions: [...charges.values()].filter((n) => n > 1).length,
    charged: charges.size,
    decided: decided.size,
    inDoubt: doubts.size,
    answers: records.filter((r) => r.status === "done" && (r.result ?? "").includes(`billed ${r.runId}`)).length,
    unconsumed: await drained(operator),
    statuses: records.reduce<Record<string, number>>((acc, r) => ((acc[r.status] = (acc[r.status] ?? 0) + 1), acc), {})
  }
}

const takeover = (effects: string, killed: string, killAt: number): number | undefined => {
  const lines = readLog(effects)
  const touched = new Set(lines.filter((l) => l.runner === killed && l.at <= killAt).map((l) => l.runId))
  const first = lines.find((l) => l.runner !== killed && l.at > killAt && touched.has(l.runId))
  return first === undefined ? undefined : first.at - killAt
}

// no deadline on the outcome: a run either ends or stalls (`finish`); the timeout only bounds a hang
describe("durable runs survive SIGKILL", { timeout: 900_000 }, () => {
  it("SQLite: one runner killed mid-charge and restarted; every run completes once, 0 double charges", async () => {
    buildRunner()
    const dir = mkdtempSync(join(tmpdir(), "agentkit-durable-"))
    const effects = join(dir, "effects.log")
    writeFileSync(effects, "")
    const db = join(dir, "runs.db")
    const base = {
      DURABLE_DB: `sqlite:${db}`,
      DURABLE_EFFECTS: effects,
      DURABLE_LOCK_MS: "4000",
      DURABLE_LEASE_MS: "3000"
    }
    const runs = 20
    let first: ChildProcess | undefined
    let second: ChildProcess | undefined
    const operator = operatorOf(SqlStores.layerSqlite({ filename: db }))
    try {
      first = await startRunner({ ...base, DURABLE_RUNNER: "A", DURABLE_SUBMIT: String(runs) })
      const kill = await killMidCharge(first, "A", effects)
      second = await startRunner({ ...base, DURABLE_RUNNER: "B", DURABLE_SUBMIT: "0" })
      const figures = await finish(operator, effects, runs, 60_000, new Set(["A"]))
      const taken = takeover(effects, "A", kill.at)
      console.log(
        `durable crash (sqlite): runs ${runs}, kills 1, completions ${figures.completions}, double executions ${figures.doubleExecutions}, ` +
          `charged ${figures.charged}, decided ${figures.decided}, unconsumed messages ${figures.unconsumed}, takeover ${
            taken ?? "none"
          } ms (restart included), statuses ${JSON.stringify(figures.statuses)}`
      )
      expect(figures.completions).toBe(runs)
      expect(figures.doubleExecutions).toBe(0)
      expect(figures.charged).toBe(runs)
      expect(figures.unconsumed).toBe(0)
      expect(taken).toBeDefined()
    } finally {
      stop(first)
      stop(second)
      await operator.dispose()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("SQLite: SIGTERM drains a runner (it stops by itself, its runs' leases released); a restarted runner finishes every run once", async () => {
    buildRunner()
    const dir = mkdtempSync(join(tmpdir(), "agentkit-durable-"))
    const effects = join(dir, "effects.log")
    writeFileSync(effects, "")
    const db = join(dir, "runs.db")
    // a run lease far longer than the test: a takeover can only be prompt if the drain released it
    const base = {
      DURABLE_DB: `sqlite:${db}`,
      DURABLE_EFFECTS: effects,
      DURABLE_LOCK_MS: "4000",
      DURABLE_LEASE_MS: "600000",
      DURABLE_DRAIN_MS: "3000"
    }
    const runs = 10
    let first: ChildProcess | undefined
    let second: ChildProcess | undefined
    const operator = operatorOf(SqlStores.layerSqlite({ filename: db }))
    try {
      first = await startRunner({ ...base, DURABLE_RUNNER: "A", DURABLE_SUBMIT: String(runs) })
      const term = await killMidCharge(first, "A", effects, 300_000, "SIGTERM")
      const released = (await operator.records()).filter((r) =>
        r.status === "running" && r.lease !== undefined && r.lease.expiresAt > Date.now()
      )
      second = await startRunner({ ...base, DURABLE_RUNNER: "B", DURABLE_SUBMIT: "0" })
      const figures = await finish(operator, effects, runs, 60_000, new Set(["A"]))
      console.log(
        `durable drain (sqlite): runs ${runs}, SIGTERM 1 (exit code ${term.code}, stopped after ${term.exitedAfter} ms), live leases left ${released.length}, ` +
          `completions ${figures.completions}, double executions ${figures.doubleExecutions}, decided ${figures.decided}, takeover ${
            takeover(effects, "A", term.at) ?? "none"
          } ms (restart included)`
      )
      expect(term.code).toBe(0)
      expect(released).toEqual([])
      expect(figures.completions).toBe(runs)
      expect(figures.doubleExecutions).toBe(0)
      expect(figures.charged).toBe(runs)
    } finally {
      stop(first)
      stop(second)
      await operator.dispose()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it.skipIf(postgresUrl === undefined)(
    "Postgres: two runners, 50 runs of two approved charges each; one SIGKILLed mid-charge and restarted, one paused by SIGSTOP past its lease: every run done with the scripted answer, each charge exactly once",
    async () => {
      if (postgresUrl === undefined) {
        return console.log("skipped: the Postgres crash test needs DATABASE_URL (eval \"$(scripts/pg-test-start.sh)\")")
      }
      await withPostgres(async ({ effects, operator, url }) => {
        buildRunner()
        const base = {
          DURABLE_DB: `pg:${url}`,
          DURABLE_EFFECTS: effects,
          DURABLE_LOCK_MS: "4000",
          DURABLE_LEASE_MS: "3000",
          DURABLE_CHARGES: "2",
          DURABLE_GATED: "1",
          // two takeovers per run at most here, more when a loaded machine also loses a live lease
          DURABLE_MAX_RECOVERIES: "20"
        }
        const runs = 50
        const ports = { A: port(0), B: port(1) }
        const runners: Record<string, ChildProcess> = {}
        const launch = async (name: "A" | "B", submit: number) => {
          runners[name] = await startRunner({
            ...base,
            DURABLE_RUNNER: name,
            DURABLE_PORT: ports[name],
            DURABLE_SUBMIT: String(submit)
          })
        }
        // a charge a killed runner started and never ended was abandoned with it (`runner@at`)
        const killed = new Set<string>()
        const decided = new Set<string>()
        const doubts = new Set<string>()
        let operating = true
        try {
          // B first, so that the submitted runs spread over both runners' shards
          await launch("B", 0)
          await launch("A", runs)
          // the operator approves as the runs ask, and decides calls in doubt from the side-effect log
          const operatorLoop = (async () => {
            while (operating) {
              await operator.decidePending(effects, decided, killed, doubts)
              await sleep(250)
            }
          })()
          const kill = await killWhicheverMidCharge(runners, effects)
          for (const l of readLog(effects)) {
            if (l.runner === kill.killed && l.event === "charge-start" && l.at <= kill.at) {
              killed.add(`${l.runner}@${l.at}`)
            }
          }
          await launch(kill.killed as "A" | "B", 0)
          // later, a runner paused past its 3 s lease and its 4 s shard locks while a charge is in flight
          const pause = await pauseWhicheverMidCharge(runners, effects, 9_000)
          operating = false
          await operatorLoop
          const figures = await finish(operator, effects, runs, 120_000, killed, decided, doubts)
          const taken = takeover(effects, kill.killed, kill.at)
          const byRunner = readLog(effects).reduce<Record<string, number>>(
            (acc, l) => (l.event === "charge-done" ? ((acc[l.runner] = (acc[l.runner] ?? 0) + 1), acc) : acc),
            {}
          )
          console.log(
            `durable crash (postgres, 2 runners): runs ${runs} of 2 approved charges, SIGKILL ${kill.killed} (${kill.inFlight} charge(s) in flight, restarted), ` +
              `SIGSTOP ${pause.paused} 9000 ms (lease 3000 ms, locks 4000 ms); completions ${figures.completions}, answers ${figures.answers}, ` +
              `double executions ${figures.doubleExecutions}, charged ${figures.charged} (by runner ${
                JSON.stringify(byRunner)
              }), ` +
              `decided ${figures.decided} (in doubt ${figures.inDoubt}), unconsumed messages ${figures.unconsumed}, takeover after the kill ${
                taken ?? "none"
              } ms, statuses ${JSON.stringify(figures.statuses)}`
          )
          expect(figures.statuses).toEqual({ done: runs })
          expect(figures.answers).toBe(runs)
          expect(figures.doubleExecutions).toBe(0)
          expect(figures.charged).toBe(runs * 2)
          expect(figures.unconsumed).toBe(0)
          expect(taken).toBeDefined()
        } finally {
          operating = false
          for (const child of Object.values(runners)) stop(child)
        }
      })
    }
  )
})

/** A fresh database on the test server, a side-effect log and the operator's seat; all removed after `body`. */
const withPostgres = async (
  body: (setup: {
    readonly url: string
    readonly effects: string
    readonly operator: ReturnType<typeof operatorOf>
  }) => Promise<void>
) => {
  const name = `durable_${process.pid}_${Date.now().toString(36)}`
  const admin = ManagedRuntime.make(PgClient.layer({ url: Redacted.make(postgresUrl!) }))
  await admin.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`CREATE DATABASE ${name}`)))
  const url = new URL(postgresUrl!)
  url.pathname = `/${name}`
  const dir = mkdtempSync(join(tmpdir(), "agentkit-durable-"))
  const effects = join(dir, "effects.log")
  writeFileSync(effects, "")
  const operator = operatorOf(SqlStores.layerPg({ url: Redacted.make(url.href) }) as never)
  try {
    await body({ url: url.href, effects, operator })
  } finally {
    await operator.dispose()
    rmSync(dir, { recursive: true, force: true })
    await admin.runPromise(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
    ).catch(() => undefined)
    await admin.dispose()
  }
}

/** Waits until either runner has a charge in flight, then pauses it with SIGSTOP for `ms` and continues it. */
const pauseWhicheverMidCharge = async (runners: Record<string, ChildProcess>, effects: string, ms: number) => {
  const until = Date.now() + 60_000
  while (Date.now() < until) {
    const lines = readLog(effects)
    const ended = new Set(lines.filter((l) => l.event !== "charge-start").map((l) => l.runId))
    const inFlight = lines.find((l) => l.event === "charge-start" && !ended.has(l.runId) && l.runner in runners)
    if (inFlight !== undefined) {
      const child = runners[inFlight.runner]!
      child.kill("SIGSTOP")
      const at = Date.now()
      await sleep(ms)
      child.kill("SIGCONT")
      return { paused: inFlight.runner, at }
    }
    await sleep(10)
  }
  throw new Error("no runner ever had a charge in flight")
}

const port = (offset: number) => String(34000 + (process.pid % 250) * 4 + offset)

describe("durable runs survive a database restart", { timeout: 180_000 }, () => {
  const pgtmp = process.env["PGTMP"]
  it.skipIf(postgresUrl === undefined || pgtmp === undefined)(
    "Postgres stopped for 30 s mid-run (pg_ctl): every run ends done, no call in doubt",
    () =>
      withPostgres(async ({ effects, operator, url }) => {
        buildRunner()
        const bin = execFileSync("bash", ["-c", "ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1"]).toString()
          .trim()
        const asPg = (args: ReadonlyArray<string>) =>
          process.getuid?.() === 0
            ? execFileSync("runuser", ["-u", "postgres", "--", ...args], { cwd: "/", stdio: "ignore" })
            : execFileSync(args[0]!, args.slice(1), { stdio: "ignore" })
        const pgPort = new URL(postgresUrl!).port
        const base = {
          DURABLE_DB: `pg:${url}`,
          DURABLE_EFFECTS: effects,
          // locks and leases outlive the outage: nothing is taken over, the stores' retry rides it out
          DURABLE_LOCK_MS: "60000",
          DURABLE_LEASE_MS: "60000"
        }
        const runs = 10
        let a: ChildProcess | undefined
        try {
          a = await startRunner({ ...base, DURABLE_RUNNER: "A", DURABLE_PORT: port(2), DURABLE_SUBMIT: String(runs) })
          // mid-run: a charge has ended and another is in flight
          const until = Date.now() + 60_000
          while (Date.now() < until && !readLog(effects).some((l) => l.event === "charge-done")) await sleep(10)
          asPg([`${bin}/pg_ctl`, "-D", `${pgtmp}/data`, "-m", "fast", "-w", "stop"])
          await sleep(30_000)
          asPg([
            `${bin}/pg_ctl`,
            "-D",
            `${pgtmp}/data`,
            "-l",
            `${pgtmp}/pg.log`,
            "-w",
            "-t",
            "20",
            "-o",
            `-k ${pgtmp} -p ${pgPort} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`,
            "start"
          ])
          const figures = await finish(operator, effects, runs, 120_000)
          const inDoubt = figures.records.filter((r) => r.state.includes("\"InDoubt\"")).length
          console.log(
            `durable outage (postgres stopped 30 s): runs ${runs}, completions ${figures.completions}, answers ${figures.answers}, ` +
              `double executions ${figures.doubleExecutions}, charged ${figures.charged}, decided ${figures.decided}, statuses ${
                JSON.stringify(figures.statuses)
              }`
          )
          expect(figures.statuses).toEqual({ done: runs })
          expect(figures.decided).toBe(0) // no call was found in doubt
          expect(inDoubt).toBe(0)
          expect(figures.doubleExecutions).toBe(0)
          expect(figures.charged).toBe(runs)
        } finally {
          stop(a)
        }
      })
  )
})
