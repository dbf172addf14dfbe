/**
 * The crash suite: real worker processes (compiled JS, `node`, long-lived per batch) drive runs
 * over the SQL stores and are killed with SIGKILL at random points (before, during and after
 * model calls and tool calls, while suspended, while resuming); later workers take the runs over
 * and finish them. Printed and required: the interrupted runs resumed or in doubt 100%, lost
 * approvals 0, double executions of the side-effecting non-idempotent tool 0, repeated model
 * calls whose response was committed 0. On Postgres two workers recover concurrently.
 *
 * The run the workers drive is a toy with the real shape (test/crash/worker.ts); the agent-level
 * suite plugs real agent runs into the same harness.
 */
import { CheckpointStore, ExecutionLedger } from "@agentkit/core"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, ManagedRuntime } from "effect"
import type { Layer } from "effect"
import { execFileSync } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { SqlStores } from "../src/index.js"
import { pgClient } from "../src/internal/stores.js"
import { count, describe as describeFigures, parseCalls, parseEffects } from "./crash/counting.js"
import * as Harness from "./crash/harness.js"
import type { Database } from "./crash/protocol.js"
import { postgresUrl } from "./databases.js"

const packageDir = fileURLToPath(new URL("..", import.meta.url))
const workerScript = join(packageDir, "build/crash/test/crash/worker.js")

/** The worker is compiled JS: build it (incrementally) before the suite runs. */
const buildWorker = () => {
  const tsc = join(packageDir, "../../node_modules/typescript/bin/tsc")
  execFileSync(process.execPath, [tsc, "-b", join(packageDir, "tsconfig.crash.json")], { stdio: "inherit" })
  if (!existsSync(workerScript)) throw new Error(`the crash worker was not built at ${workerScript}`)
}

/** The operator's seat: the parent's own stores on the same database. */
const operator = (layer: Layer.Layer<SqlStores.Stores, unknown>) => {
  const runtime = ManagedRuntime.make(layer)
  const stores = runtime.runPromise(
    Effect.map(Effect.context<CheckpointStore | ExecutionLedger>(), (context) => ({
      checkpoints: Context.get(context, CheckpointStore),
      ledger: Context.get(context, ExecutionLedger)
    }))
  )
  const run = <A, E>(use: (s: Awaited<typeof stores>) => Effect.Effect<A, E>) => stores.then((s) => runtime.runPromise(use(s)))
  const seat: Harness.Operator = {
    records: () =>
      run(({ checkpoints }) =>
        Effect.gen(function* () {
          const all: Array<CheckpointStore.RunRecord> = []
          let cursor: string | undefined
          do {
            const page = yield* checkpoints.list({ cursor, limit: 500 })
            for (const record of page.records) all.push(record)
            cursor = page.cursor
          } while (cursor !== undefined)
          return all.map((record) => ({
            runId: record.runId,
            status: record.status,
            state: record.state,
            result: record.result,
            leaseExpiresAt: record.lease?.expiresAt,
            version: record.version
          }))
        })
      ),
    decide: (runId, pendingId, by) => run(({ checkpoints }) => Effect.asVoid(checkpoints.decide(runId, pendingId, { decision: '{"verdict":"approve"}', by }))),
    decisions: (runId) =>
      run(({ checkpoints }) => Effect.map(checkpoints.decisions(runId), (all) => all.map((d) => ({ pendingId: d.pendingId, by: d.by, at: d.at })))),
    resolve: (key, resolution) =>
      run(({ ledger }) =>
        ledger.resolve(key, resolution === "retry" ? { _tag: "Retry" } : { _tag: "Done", outcome: { text: resolution.done, isError: false } })
      )
  }
  return { seat, dispose: () => runtime.dispose() }
}

const suite = (name: string, database: Database, layer: Layer.Layer<SqlStores.Stores, unknown>, options: { readonly kills: number; readonly workers: number; readonly runs: number }) =>
  Effect.promise(async () => {
    const dir = mkdtempSync(join(tmpdir(), "agentkit-crash-"))
    const { dispose, seat } = operator(layer)
    try {
      const seed = Number(process.env["CRASH_SEED"] ?? Date.now() % 1_000_000)
      const report = await Harness.run({
        name,
        workerScript,
        database,
        dir,
        runs: options.runs,
        kills: options.kills,
        workers: options.workers,
        seed,
        worker: { leaseTtlMs: 400, heartbeatMs: 100, concurrency: 4, iterations: 3, approvalAt: 1 },
        operator: seat,
        log: process.env["CRASH_LOG"] === undefined ? undefined : (line) => console.log(line)
      })
      const after = Object.entries(report.killedAfter)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([point, n]) => `${point} ${n}`)
        .join(", ")
      console.log(
        [
          describeFigures(name, report.figures),
          `  runs finished twice: ${report.finishedTwice}; takeovers of expired leases: ${report.takeovers}; drives that met another worker's lease: ${report.contended}`,
          `  kills landed after: ${after}`,
          `  (${report.generations} generations of ${options.runs} runs, ${report.workersStarted} workers started, seed ${seed})`
        ].join("\n")
      )
      return report
    } finally {
      await dispose()
      rmSync(dir, { recursive: true, force: true })
    }
  })

const required = (report: Harness.Report, kills: number) => {
  const figures = report.figures
  expect(report.errors).toEqual([])
  expect(figures.kills).toBe(kills)
  expect(figures.finished).toBe(figures.runs)
  expect(figures.interrupted).toBeGreaterThan(0)
  expect(figures.resumedOrInDoubt).toBe(figures.interrupted)
  expect(figures.lostApprovals).toBe(0)
  expect(figures.unapprovedExecutions).toBe(0)
  expect(figures.doubleExecutions).toBe(0)
  expect(figures.repeatedCommittedModelCalls).toBe(0)
  expect(report.finishedTwice).toBe(0)
  expect(report.takeovers).toBeGreaterThan(0)
}

describe("crash suite", () => {
  it("the counting: what survives a kill tells each violation apart", () => {
    const calls = parseCalls(["r1 0 a", "r1 0 b", "r1 1 c", "r1 1 d", "r2 0 e"].join("\n"))
    const effects = parseEffects(["r1/t0/c0 x 10", "r1/t1/c0 y 5", "r1/t1/c0 z 30", "r2/t1/c0 w 1"].join("\n"))
    const figures = count({
      runs: [
        // turn 0's response b was committed after a lost a (fine); turn 1's c was committed, then d was asked again
        { runId: "r1", status: "done", result: { responses: ["b", "c"], results: [], approvals: { "1": "alice" } }, approval: { by: "alice", at: 20 } },
        // approved by bob, recorded as carol's; its gated call ran before any approval
        { runId: "r2", status: "done", result: { responses: ["e"], results: [], approvals: { "1": "carol" } }, approval: { by: "bob", at: 3 } },
        { runId: "r3", status: "running" }
      ],
      calls,
      effects,
      interrupted: new Set(["r1", "r3"]),
      inDoubtResolved: 1,
      kills: 2,
      approvalAt: 1
    })
    expect(figures).toEqual({
      runs: 3,
      finished: 2,
      interrupted: 2,
      resumedOrInDoubt: 1,
      inDoubtResolved: 1,
      kills: 2,
      lostApprovals: 1,
      unapprovedExecutions: 2, // r1's y ran at 5, before alice's approval at 20; r2's w at 1, before bob's at 3
      doubleExecutions: 1,
      repeatedCommittedModelCalls: 1
    })
  })

  it.live(
    "SQLite: one worker at a time, killed at random points; every interrupted run finishes, nothing runs twice, no approval is lost",
    () =>
      Effect.gen(function* () {
        buildWorker()
        const dir = mkdtempSync(join(tmpdir(), "agentkit-crash-db-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
        const filename = join(dir, "crash.db")
        const kills = Number(process.env["CRASH_KILLS"] ?? 30)
        const report = yield* suite("sqlite", { kind: "sqlite", filename }, SqlStores.layerSqlite({ filename }), { kills, workers: 1, runs: 12 })
        required(report, kills)
      }).pipe(Effect.scoped),
    300_000
  )

  if (postgresUrl !== undefined) {
    it.live(
      "Postgres: two workers recovering concurrently, one killed at random points; every run finishes exactly once",
      () =>
        Effect.gen(function* () {
          buildWorker()
          const schema = `crash_${process.pid}_${Date.now().toString(36)}`
          yield* Effect.addFinalizer(() =>
            Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)).pipe(
              Effect.provide(pgClient({ url: postgresUrl! })),
              Effect.ignore
            )
          )
          const layer = SqlStores.layerPg({ url: postgresUrl!, schema })
          const kills = Number(process.env["CRASH_KILLS_PG"] ?? 16)
          const report = yield* suite("postgres, 2 workers", { kind: "postgres", url: postgresUrl!, schema }, layer, { kills, workers: 2, runs: 12 })
          required(report, kills)
        }).pipe(Effect.scoped),
      300_000
    )
  }
})
