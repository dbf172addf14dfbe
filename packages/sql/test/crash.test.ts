/**
 * The crash suite: real worker processes (compiled JS, `node`, long-lived per batch) drive runs
 * over the SQL stores and are killed with SIGKILL at random points (before, during and after
 * model calls and tool calls, while suspended, while resuming); later workers take the runs over
 * and finish them. Printed and required: the interrupted runs resumed or in doubt 100%, lost
 * approvals 0, double executions of the side-effecting non-idempotent tool 0, repeated model
 * calls whose response was committed 0. On Postgres two workers recover concurrently.
 *
 * The runs are real agent runs (test/crash/worker.ts: `Agent.make`, `ReActCognition`, a model from
 * `@agentkit/testing`, side-effecting tools claimed in the execution ledger by the Invoker); the
 * parent decides approvals and in-doubt calls through the agents `Operator` service.
 */
import { Approval, Operator, RunState } from "@agentkit/agents"
import { CheckpointStore } from "@agentkit/core"
import type { Message } from "@agentkit/core"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, ManagedRuntime } from "effect"
import { execFileSync } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { SqlStores } from "../src/index.js"
import { pgClient } from "../src/internal/stores.js"
import { count, describe as describeFigures, parseCalls, parseEffects } from "./crash/counting.js"
import type { FinalRun } from "./crash/counting.js"
import * as Harness from "./crash/harness.js"
import { toolKey } from "./crash/protocol.js"
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

/** The operator's seat: the agents `Operator` service over the parent's own stores on the same database. */
const operator = (layer: Layer.Layer<SqlStores.Stores, unknown>, approvalAt: number) => {
  const runtime = ManagedRuntime.make(Operator.Operator.layer.pipe(Layer.provideMerge(layer)))
  const services = runtime.runPromise(
    Effect.map(Effect.context<CheckpointStore | Operator.Operator>(), (context) => ({
      checkpoints: Context.get(context, CheckpointStore),
      operator: Context.get(context, Operator.Operator)
    }))
  )
  const run = <A, E>(use: (s: Awaited<typeof services>) => Effect.Effect<A, E>) =>
    services.then((s) => runtime.runPromise(use(s)))
  const everyRecord = (checkpoints: CheckpointStore.Service) =>
    Effect.gen(function*() {
      const all: Array<CheckpointStore.RunRecord> = []
      let cursor: string | undefined
      do {
        const page = yield* checkpoints.list({ cursor, limit: 500 })
        for (const record of page.records) all.push(record)
        cursor = page.cursor
      } while (cursor !== undefined)
      return all
    })
  const seat: Harness.Operator = {
    records: () =>
      run(({ checkpoints }) =>
        Effect.map(everyRecord(checkpoints), (all) =>
          all.map((record) => ({
            runId: record.runId,
            status: record.status,
            state: record.state,
            result: record.result,
            leaseExpiresAt: record.lease?.expiresAt,
            version: record.version
          })))
      ),
    settle: (record, effects) =>
      run(({ operator }) =>
        Effect.gen(function*() {
          const state = yield* Effect.orDie(RunState.decode(record.runId, record.state))
          let resolved = 0
          for (const entry of state.pending) {
            const by = `operator-for-${record.runId}`
            if (entry.kind !== "InDoubt") {
              yield* Effect.ignore(operator.decide(record.runId, entry.id, { ...Approval.approve(entry.digest), by }))
              continue
            }
            // in doubt: the side-effect log knows whether the charge happened
            const args = entry.call.arguments as { readonly run: string; readonly turn: number }
            const happened = effects.find((effect) => effect.key === toolKey(args.run, args.turn))
            const decided = yield* Effect.either(
              operator.resolve(
                record.runId,
                entry.id,
                happened === undefined
                  ? { verdict: "retry", digest: entry.digest, by }
                  : { verdict: "markDone", digest: entry.digest, by, outcome: `charged:${happened.nonce}` }
              )
            )
            if (decided._tag === "Right") resolved++
          }
          return resolved
        })
      ),
    finalRuns: () =>
      run(({ checkpoints }) =>
        Effect.gen(function*() {
          const runs: Array<FinalRun> = []
          for (const record of yield* everyRecord(checkpoints)) {
            const approvals = (yield* checkpoints.decisions(record.runId)).filter((d) =>
              (JSON.parse(d.decision) as { verdict: string }).verdict === "approve"
            )
            const approval = approvals[0] === undefined ? undefined : { by: approvals[0].by ?? "", at: approvals[0].at }
            let result: FinalRun["result"]
            if (record.status === "done" && record.result !== undefined) {
              const transcript =
                (JSON.parse(record.result) as { readonly transcript: ReadonlyArray<Message.Message> }).transcript
              const responses = transcript.flatMap((
                m
              ) => (m.role === "assistant" ? [m.content.split(" ").at(-1) ?? ""] : []))
              const gated = transcript.find((m) => m.role === "tool" && m.toolCallId === `c${approvalAt}`)
              const applied = gated?.role === "tool" && gated.content.startsWith("charged:") && approval !== undefined
              result = { responses, approvals: applied ? { [String(approvalAt)]: approval.by } : {} }
            }
            runs.push({ runId: record.runId, status: record.status, result, approval })
          }
          return runs
        })
      )
  }
  return { seat, dispose: () => runtime.dispose() }
}

const suite = (
  name: string,
  database: Database,
  layer: Layer.Layer<SqlStores.Stores, unknown>,
  options: { readonly kills: number; readonly workers: number; readonly runs: number }
) =>
  Effect.promise(async () => {
    const dir = mkdtempSync(join(tmpdir(), "agentkit-crash-"))
    const { dispose, seat } = operator(layer, 1)
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
        // a lease outlives the event-loop stalls of a loaded 2-core machine (libsql runs on the main thread)
        worker: { leaseTtlMs: 1500, heartbeatMs: 200, concurrency: 4, iterations: 3, approvalAt: 1 },
        killWithin: 40,
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
          `  drives ended: ${
            Object.entries(report.outcomes).sort(([a], [b]) => a.localeCompare(b)).map(([o, n]) => `${o} ${n}`).join(
              ", "
            )
          }`,
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
        {
          runId: "r1",
          status: "done",
          result: { responses: ["b", "c"], approvals: { "1": "alice" } },
          approval: { by: "alice", at: 20 }
        },
        // approved by bob, recorded as carol's; its gated call ran before any approval
        {
          runId: "r2",
          status: "done",
          result: { responses: ["e"], approvals: { "1": "carol" } },
          approval: { by: "bob", at: 3 }
        },
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
      Effect.gen(function*() {
        buildWorker()
        const dir = mkdtempSync(join(tmpdir(), "agentkit-crash-db-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
        const filename = join(dir, "crash.db")
        const kills = Number(process.env["CRASH_KILLS"] ?? 30)
        const report = yield* suite("sqlite", { kind: "sqlite", filename }, SqlStores.layerSqlite({ filename }), {
          kills,
          workers: 1,
          runs: 12
        })
        required(report, kills)
      }).pipe(Effect.scoped),
    600_000
  )

  if (postgresUrl !== undefined) {
    it.live(
      "Postgres: two workers recovering concurrently, one killed at random points; every run finishes exactly once",
      () =>
        Effect.gen(function*() {
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
          const report = yield* suite("postgres, 2 workers", { kind: "postgres", url: postgresUrl!, schema }, layer, {
            kills,
            workers: 2,
            runs: 12
          })
          required(report, kills)
        }).pipe(Effect.scoped),
      600_000
    )
  }
})
