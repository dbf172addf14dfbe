/**
 * Budgets across crashes: a run is driven by real worker processes (compiled JS, `node`) over the
 * SQL stores, each killed with SIGKILL at a random point (before, during and after model calls,
 * tool calls and checkpoints), ten kills in all; the next worker takes the run over once the dead
 * one's lease expired. Counted at the fake provider (its calls log, written when a request reaches
 * it): under `maxModelCalls: N` a run sends at most N requests; under `maxCostUsd` it spends at most
 * the ceiling plus one reservation. When a run ends (its budget refused a call) and kills remain, a
 * new run starts.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { execFileSync, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { SqlStores } from "../src/index.js"
import { pgClient } from "../src/internal/stores.js"
import type { BudgetWorkerConfig } from "./crash/budgetWorker.js"
import { random } from "./crash/harness.js"
import type { Database } from "./crash/protocol.js"
import { lines } from "./crash/protocol.js"
import { postgresUrl } from "./databases.js"

const packageDir = fileURLToPath(new URL("..", import.meta.url))
const workerScript = join(packageDir, "build/crash/test/crash/budgetWorker.js")

const buildWorker = () => {
  const tsc = join(packageDir, "../../node_modules/typescript/bin/tsc")
  execFileSync(process.execPath, [tsc, "-b", join(packageDir, "tsconfig.crash.json")], { stdio: "inherit" })
  if (!existsSync(workerScript)) throw new Error(`the budget crash worker was not built at ${workerScript}`)
}

interface Call {
  readonly runId: string
  readonly billed: number
  readonly bound: number
}

interface Report {
  readonly kills: number
  readonly runs: ReadonlyArray<string>
  readonly calls: ReadonlyArray<Call>
  readonly outcomes: ReadonlyArray<string>
  readonly killedAfter: Record<string, number>
  readonly errors: ReadonlyArray<string>
}

/**
 * Drives runs one worker at a time until `kills` workers were killed, each after 1 to `killWithin`
 * reported points; the run a kill interrupted is then finished by a worker left alone.
 */
const campaign = async (options: {
  readonly database: Database
  readonly limits: BudgetWorkerConfig["limits"]
  readonly kills: number
  readonly killWithin: number
  readonly seed: number
  readonly dir: string
}): Promise<Report> => {
  const next = random(options.seed)
  const callsLog = join(options.dir, "calls.log")
  writeFileSync(callsLog, "")
  const runs: Array<string> = []
  const outcomes: Array<string> = []
  const errors: Array<string> = []
  const killedAfter: Record<string, number> = {}
  let kills = 0
  let workers = 0
  /** One worker on `runId`: killed after `killAt` points, or left to end the run. */
  const worker = (runId: string, killAt: number) =>
    new Promise<"killed" | "ended">((resolve) => {
      const config: BudgetWorkerConfig = {
        workerId: `w${workers}`,
        database: options.database,
        runId,
        callsLog,
        // a lease outlives the event-loop stalls of a loaded machine (libsql runs on the main thread)
        leaseTtlMs: 1500,
        heartbeatMs: 200,
        limits: options.limits,
        seed: options.seed * 1000 + workers++
      }
      const child = spawn(process.execPath, [workerScript, JSON.stringify(config)], {
        stdio: ["ignore", "pipe", "pipe"]
      })
      let points = 0
      let killed = false
      let stderr = ""
      child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
      child.stdout!.on(
        "data",
        lines((text) => {
          const report = JSON.parse(text) as { t: string; point?: string; outcome?: string }
          if (report.t === "end") outcomes.push(`${runId}: ${report.outcome}`)
          if (report.t !== "point" || killed) return
          points++
          if (points >= killAt && child.kill("SIGKILL")) {
            killed = true
            kills++
            killedAfter[report.point!] = (killedAfter[report.point!] ?? 0) + 1
          }
        })
      )
      child.on("exit", (code) => {
        if (!killed && code !== 0) errors.push(`${config.workerId} exited with ${code}: ${stderr.trim()}`)
        resolve(killed ? "killed" : "ended")
      })
    })
  while (kills < options.kills) {
    const runId = `run-${runs.length}`
    runs.push(runId)
    for (;;) {
      const ended = await worker(runId, kills < options.kills ? 1 + next(options.killWithin) : Infinity)
      if (ended === "ended") break
    }
    if (errors.length > 0) break
  }
  const calls = readFileSync(callsLog, "utf8").split("\n").filter((line) => line !== "").map((line) => {
    const [runId, , billed, bound] = line.split(" ")
    return { runId: runId!, billed: Number(billed), bound: Number(bound) }
  })
  return { kills, runs, calls, outcomes, killedAfter, errors }
}

const N = 6
const ceilingNanos = 9_000_000 // $0.009: a call's bound is about $0.0013 (400 output tokens at $3 a million, and its input)

const check = (name: string, report: Report, mode: "calls" | "cost") => {
  const byRun = new Map<string, Array<Call>>()
  for (const call of report.calls) byRun.set(call.runId, [...(byRun.get(call.runId) ?? []), call])
  const lines = report.runs.map((runId) => {
    const calls = byRun.get(runId) ?? []
    const billed = calls.reduce((sum, call) => sum + call.billed, 0)
    const largest = calls.reduce((max, call) => Math.max(max, call.bound), 0)
    return { runId, requests: calls.length, billed, largest }
  })
  console.log(
    `${name}: ${report.kills} kills over ${report.runs.length} runs (after: ${
      Object.entries(report.killedAfter).map(([point, n]) => `${point} ${n}`).join(", ")
    }); per run: ${
      lines.map((l) =>
        mode === "calls"
          ? `${l.requests}/${N} requests`
          : `$${l.billed / 1e9} of $${ceilingNanos / 1e9} (+${l.largest / 1e9})`
      ).join(", ")
    }`
  )
  expect(report.errors).toEqual([])
  expect(report.kills).toBe(10)
  // every run ended: its budget refused a call (not an error, not a worker that never finished)
  expect(report.outcomes.length).toBeGreaterThanOrEqual(report.runs.length)
  for (const outcome of report.outcomes) {
    expect(outcome).toMatch(
      mode === "calls"
        ? /BudgetExceeded: calls \d+ > 6|is failed: BudgetExceeded/
        : /BudgetExceeded: cost|is failed: BudgetExceeded/
    )
  }
  for (const line of lines) {
    if (mode === "calls") expect(line.requests).toBeLessThanOrEqual(N)
    else expect(line.billed).toBeLessThanOrEqual(ceilingNanos + line.largest)
  }
  expect(report.calls.length).toBeGreaterThan(0)
}

const suite = (
  name: string,
  database: Database,
  layer: Layer.Layer<SqlStores.Stores, unknown>,
  mode: "calls" | "cost"
) =>
  Effect.gen(function*() {
    // the parent migrates the database before any worker opens it
    yield* Effect.scoped(Layer.build(layer))
    const dir = mkdtempSync(join(tmpdir(), "agentkit-budget-crash-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
    const seed = Number(process.env["CRASH_SEED"] ?? Date.now() % 1_000_000)
    const report = yield* Effect.promise(() =>
      campaign({
        database,
        limits: mode === "calls" ? { maxModelCalls: N } : { maxCostUsd: ceilingNanos / 1e9 },
        kills: 10,
        killWithin: 12,
        seed,
        dir
      })
    )
    check(
      `${name}, ${mode === "calls" ? `maxModelCalls ${N}` : `maxCostUsd $${ceilingNanos / 1e9}`} (seed ${seed})`,
      report,
      mode
    )
  })

describe("budgets across SIGKILL", () => {
  for (const mode of ["calls", "cost"] as const) {
    it.live(
      `SQLite: ten kills at random points; ${
        mode === "calls" ? "at most N requests a run" : "at most the ceiling plus one reservation a run"
      }`,
      () =>
        Effect.gen(function*() {
          buildWorker()
          const dir = mkdtempSync(join(tmpdir(), "agentkit-budget-crash-db-"))
          yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
          const filename = join(dir, "budget.db")
          yield* suite("sqlite", { kind: "sqlite", filename }, SqlStores.layerSqlite({ filename }), mode)
        }).pipe(Effect.scoped),
      600_000
    )

    if (postgresUrl !== undefined) {
      it.live(
        `Postgres: ten kills at random points; ${
          mode === "calls" ? "at most N requests a run" : "at most the ceiling plus one reservation a run"
        }`,
        () =>
          Effect.gen(function*() {
            buildWorker()
            const schema = `budget_${mode}_${process.pid}_${Date.now().toString(36)}`
            yield* Effect.addFinalizer(() =>
              Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`))
                .pipe(
                  Effect.provide(pgClient({ url: postgresUrl! })),
                  Effect.ignore
                )
            )
            yield* suite(
              "postgres",
              { kind: "postgres", url: postgresUrl!, schema },
              SqlStores.layerPg({ url: postgresUrl!, schema }),
              mode
            )
          }).pipe(Effect.scoped),
        600_000
      )
    }
  }
})
