// The durable engine against the same agent run in process over the same SQL stores: runs per
// second and milliseconds per step, in one process, one case after the other on fresh databases.
// Each run is three steps (a model call that asks for a side-effecting tool, the tool call, a
// model call that answers); the model and the tool answer at once, so what is measured is what
// the run costs around them (checkpoints, the ledger, and for the durable case the engine's
// journal and cluster messages). Run after building (`pnpm exec tsc -b packages/durable bench`):
//   node bench/durable.mjs [runs=60] [concurrency=10] [rounds=3]   SQLite files in a temp directory
//   DATABASE_URL=postgres://… node bench/durable.mjs                 Postgres (a fresh database per case)
// Rounds alternate the cases (the machine's speed drifts); the medians and the ratio of each round
// are printed. BENCH_WAIT=poll waits for a durable run by polling it every 5 ms, BENCH_WAIT=both
// measures both ways in each round.
import { Context, Duration, Effect, Layer, ManagedRuntime, Redacted, Schema } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"

const [runsText = "60", concurrencyText = "10", roundsText = "3"] = process.argv.slice(2)
const runs = Number(runsText)
const concurrency = Number(concurrencyText)
const rounds = Number(roundsText)
/**
 * How the durable case waits for a run's answer: the engine's reply to the run's request
 * (default), polling `poll` every 5 ms (`BENCH_WAIT=poll`, how this bench waited before), or both
 * in each round (`BENCH_WAIT=both`).
 */
const modes = process.env["BENCH_WAIT"] === "both"
  ? ["reply", "poll"]
  : [process.env["BENCH_WAIT"] === "poll" ? "poll" : "reply"]
const STEPS = 3
const pgUrl = process.env["DATABASE_URL"] || undefined

const pkg = (name) => import(new URL(`../packages/${name}/dist/index.js`, import.meta.url).href)
const { Agent, ReActCognition, RunLease, Operator } = await import("@agentkit/agents")
const { CheckpointStore, RunContext } = await import("@agentkit/core")
const { SqlStores } = await import("@agentkit/sql")
const { Tool } = await import("@agentkit/tools")
const { FakeLLM, makeTestCtx, Turn } = await pkg("testing")
const { DurableAgent, DurableRunner, DurableRuns } = await pkg("durable")

const charge = Tool.make("charge_card", {
  description: "Charge the customer's card; not idempotent.",
  parameters: { run: Schema.String },
  sideEffecting: true,
  handler: ({ run }) => Effect.succeed(`charged ${run}`)
})
const model = FakeLLM.respond((request) => {
  const user = request.messages.find((m) => m.role === "user")
  const runId = user?.content.replace("bill ", "") ?? "?"
  return request.messages.some((m) => m.role === "tool")
    ? Turn({ content: `billed ${runId}` })
    : Turn({ toolCalls: [{ id: `c-${runId}`, name: "charge_card", arguments: { run: runId } }] })
})
const agent = Agent.make({ name: "billing", model: "fake", cognition: ReActCognition.make({ tools: [charge] }) })

/** Fresh stores: a SQLite file in a temp directory, or a fresh Postgres database. */
const freshStores = async (label) => {
  if (pgUrl === undefined) {
    const dir = mkdtempSync(join(tmpdir(), `agentkit-bench-${label}-`))
    return {
      layer: SqlStores.layerSqlite({ filename: join(dir, "runs.db") }),
      cleanup: async () => rmSync(dir, { recursive: true, force: true })
    }
  }
  // the driver the durable package depends on (its ES module build), for CREATE and DROP DATABASE
  const driver = dirname(
    createRequire(new URL("../packages/durable/package.json", import.meta.url)).resolve("@effect/sql-pg/package.json")
  )
  const { PgClient } = await import(pathToFileURL(join(driver, "dist/esm/index.js")).href)
  const SqlClient = { SqlClient: Context.GenericTag("@effect/sql/SqlClient") }
  const admin = ManagedRuntime.make(PgClient.layer({ url: Redacted.make(pgUrl) }))
  const name = `bench_${label}_${process.pid}_${Date.now().toString(36)}`
  await admin.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`CREATE DATABASE ${name}`)))
  const url = new URL(pgUrl)
  url.pathname = `/${name}`
  return {
    layer: SqlStores.layerPg({ url: Redacted.make(url.href) }),
    cleanup: async () => {
      await admin.runPromise(
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
      ).catch(() => undefined)
      await admin.dispose()
    }
  }
}

/** Per run: the record's finish time minus its creation time. */
const latencies = (store, ids) =>
  Effect.forEach(ids, (id) =>
    Effect.map(store.load(id), (found) => {
      if (found._tag !== "Some" || found.value.status !== "done") throw new Error(`run ${id} did not end done`)
      return found.value.updatedAt - found.value.createdAt
    }))

const summary = (label, wallMs, perRun) => {
  const sorted = [...perRun].sort((a, b) => a - b)
  const mean = perRun.reduce((a, b) => a + b, 0) / perRun.length
  return {
    case: label,
    runs,
    concurrency,
    "runs/s": +(runs / (wallMs / 1000)).toFixed(1),
    "ms/step (mean run latency ÷ 3)": +(mean / STEPS).toFixed(1),
    "p50 run ms": sorted[Math.floor(sorted.length / 2)],
    "p95 run ms": sorted[Math.floor(sorted.length * 0.95)]
  }
}

const ids = (prefix) => Array.from({ length: runs }, (_, i) => `${prefix}-${i}`)

const inProcess = async () => {
  const stores = await freshStores("inproc")
  const runtime = ManagedRuntime.make(Layer.merge(stores.layer, makeTestCtx({ llm: model })))
  try {
    const runIds = ids("p")
    const one = (runId) =>
      Effect.flatMap(
        RunContext.make({ runId }),
        (context) => Effect.provideService(agent.run(`bill ${runId}`), RunContext, context)
      )
    await runtime.runPromise(one("warm"))
    const t0 = performance.now()
    await runtime.runPromise(Effect.forEach(runIds, one, { concurrency, discard: true }))
    const wall = performance.now() - t0
    const store = await runtime.runPromise(CheckpointStore)
    return summary("in process on SQL", wall, await runtime.runPromise(latencies(store, runIds)))
  } finally {
    await runtime.dispose()
    await stores.cleanup()
  }
}

const durable = async (mode) => {
  const stores = await freshStores("durable")
  const billing = DurableAgent.make(agent, { version: 1, leaseRetry: "100 millis" })
  const live = Layer.mergeAll(billing.layer, DurableRunner.sweeper("1 second")).pipe(
    Layer.provideMerge(DurableRuns.layer([billing]).pipe(Layer.provideMerge(Operator.Operator.layer))),
    Layer.provideMerge(
      DurableRunner.layerSingle({ shardingConfig: { entityMailboxCapacity: 10_000 } })
    ),
    Layer.provideMerge(
      Layer.mergeAll(stores.layer, makeTestCtx({ llm: model }), RunLease.layer({ ttl: Duration.seconds(30) }))
    )
  )
  const runtime = ManagedRuntime.make(live)
  try {
    // a run started and its answer awaited: the engine's reply to the run's request (no polling)
    const one = (runId) =>
      mode === "poll"
        ? Effect.zipRight(billing.start({ runId, input: `bill ${runId}` }), polled(runId))
        : billing.workflow.execute({ runId, input: `bill ${runId}` })
    const polled = (runId) =>
      Effect.gen(function*() {
        for (;;) {
          const found = yield* billing.poll(runId)
          if (found?._tag === "Complete") return
          yield* Effect.sleep("5 millis")
        }
      })
    await runtime.runPromise(one("warm"))
    const runIds = ids("d")
    const t0 = performance.now()
    // at most `concurrency` runs in flight, as in process
    await runtime.runPromise(Effect.forEach(runIds, one, { concurrency, discard: true }))
    const wall = performance.now() - t0
    const store = await runtime.runPromise(CheckpointStore)
    return summary(
      `durable (SingleRunner), ${mode === "poll" ? "polled" : "awaited"}`,
      wall,
      await runtime.runPromise(latencies(store, runIds))
    )
  } finally {
    await runtime.dispose()
    await stores.cleanup()
  }
}

// interleaved rounds (in process, durable, in process, durable, …): the machine's speed drifts,
// so each ratio is of two neighbouring measures, and the median of the rounds is reported
const table = []
const ratios = Object.fromEntries(modes.map((mode) => [mode, []]))
for (let round = 1; round <= rounds; round++) {
  const inproc = await inProcess()
  table.push({ round, ...inproc })
  for (const mode of modes) {
    const dur = await durable(mode)
    table.push({ round, ...dur })
    ratios[mode].push(dur["runs/s"] / inproc["runs/s"])
  }
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const of = (label, key) => median(table.filter((row) => row.case.startsWith(label)).map((row) => row[key]))
console.log(
  `database: ${pgUrl === undefined ? "SQLite (temp file)" : "Postgres"}; load average ${
    (await import("node:os")).loadavg().map((l) => l.toFixed(1)).join(" ")
  }`
)
console.table(table)
const step = "ms/step (mean run latency ÷ 3)"
console.log(
  `medians of ${rounds} round(s): in process ${of("in process", "runs/s")} runs/s, ${of("in process", step)} ms/step`
)
for (const mode of modes) {
  const label = `durable (SingleRunner), ${mode === "poll" ? "polled" : "awaited"}`
  console.log(
    `  ${label}: ${of(label, "runs/s")} runs/s, ${of(label, step)} ms/step; durable ÷ in process throughput ${
      median(ratios[mode]).toFixed(2)
    } (per round: ${ratios[mode].map((r) => r.toFixed(2)).join(", ")})`
  )
}
process.exit(0)
