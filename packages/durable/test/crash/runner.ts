/**
 * A crash-test runner process (compiled JS, started with `node`, killed with SIGKILL): the
 * durable engine over the SQL stores, on one SQLite file (`SingleRunner`) or on Postgres
 * (`NodeClusterSocket`). Its agent bills a run: the model asks for `charge_card` (side-effecting,
 * not idempotent) DURABLE_CHARGES times (default 1), then answers. Every model call and every start,
 * end and abandonment (its fiber interrupted before it ended) of a charge is appended
 * (synchronously, so a kill loses nothing written) to the effects log as `<event> <runner> <key>`,
 * a charge's key being `<runId>#<n>`. With DURABLE_GATED=1 the runs are started gated: every charge
 * waits for an approval.
 *
 * Environment: DURABLE_DB (`sqlite:<file>` or `pg:<url>`), DURABLE_RUNNER (its name),
 * DURABLE_PORT (cluster mode), DURABLE_EFFECTS (the log), DURABLE_SUBMIT (runs to start, `r-0`…),
 * DURABLE_LOCK_MS (shard lock expiry), DURABLE_LEASE_MS (run lease ttl), DURABLE_DRAIN_MS (how long
 * a SIGTERMed runner lets its entities finish), DURABLE_MAX_RECOVERIES (takeovers a run may have,
 * default 5), DURABLE_LOG_LEVEL (the least level logged, default `Warning`: a campaign of 50 runs
 * logs a few lines a run at `Info`; the soak script keeps them).
 */
import { Agent, Operator, ReActCognition, RunLease } from "@agentkit/agents"
import { SqlStores } from "@agentkit/sql"
import { FakeLLM, makeTestCtx, Turn } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import { Duration, Effect, Layer, Logger, LogLevel, Redacted, Schema } from "effect"
import { appendFileSync } from "node:fs"
import { DurableAgent, DurableRunner, DurableRuns } from "../../src/index.js"

const env = (name: string): string => {
  const value = process.env[name]
  if (value === undefined || value === "") throw new Error(`${name} is not set`)
  return value
}
const db = env("DURABLE_DB")
const runner = env("DURABLE_RUNNER")
const effects = env("DURABLE_EFFECTS")
const submit = Number(process.env["DURABLE_SUBMIT"] ?? "0")
const lockMs = Number(process.env["DURABLE_LOCK_MS"] ?? "4000")
const leaseMs = Number(process.env["DURABLE_LEASE_MS"] ?? "4000")
const drainMs = Number(process.env["DURABLE_DRAIN_MS"] ?? "15000")
const chargesPerRun = Number(process.env["DURABLE_CHARGES"] ?? "1")
const gated = process.env["DURABLE_GATED"] === "1"
const maxRecoveries = Number(process.env["DURABLE_MAX_RECOVERIES"] ?? "5")
const logLevel = LogLevel.fromLiteral(
  (process.env["DURABLE_LOG_LEVEL"] ?? "Warning") as Parameters<typeof LogLevel.fromLiteral>[0]
)

const log = (event: string, runId: string) => appendFileSync(effects, `${event} ${runner} ${runId} ${Date.now()}\n`)

const charge = Tool.make("charge_card", {
  description: "Charge the customer's card for the run; this is not idempotent.",
  parameters: { run: Schema.String },
  sideEffecting: true,
  handler: ({ run }) =>
    Effect.gen(function*() {
      log("charge-start", run)
      yield* Effect.sleep("400 millis")
      log("charge-done", run)
      return `charged ${run}`
    }).pipe(Effect.onInterrupt(() => Effect.sync(() => log("charge-abandoned", run))))
})

const model = FakeLLM.respond((request) =>
  Effect.gen(function*() {
    const user = request.messages.find((m) => m.role === "user")
    const runId = user?.role === "user" ? user.content.replace("bill ", "") : "?"
    const charged = request.messages.filter((m) => m.role === "tool").length
    const answered = charged >= chargesPerRun
    log(answered ? "model-final" : "model-first", runId)
    yield* Effect.sleep("150 millis")
    return answered
      ? Turn({ content: `billed ${runId}` })
      : Turn({
        toolCalls: [{
          id: `c-${runId}-${charged + 1}`,
          name: "charge_card",
          arguments: { run: `${runId}#${charged + 1}` }
        }]
      })
  })
)

const billing = DurableAgent.make(
  Agent.make({ name: "billing", model: "fake", cognition: ReActCognition.make({ tools: [charge] }) }),
  {
    version: 1,
    leaseRetry: "250 millis"
  }
)

const stores = db.startsWith("sqlite:")
  ? SqlStores.layerSqlite({ filename: db.slice("sqlite:".length) })
  : SqlStores.layerPg({ url: Redacted.make(db.slice("pg:".length)) })

const engine = db.startsWith("sqlite:")
  ? DurableRunner.layerSingle({
    shardingConfig: {
      shardLockExpiration: Duration.millis(lockMs),
      shardLockRefreshInterval: Duration.millis(lockMs / 4),
      entityTerminationTimeout: Duration.millis(drainMs)
    }
  })
  : DurableRunner.layerCluster({
    host: "127.0.0.1",
    port: Number(env("DURABLE_PORT")),
    lockExpiration: Duration.millis(lockMs),
    lockRefresh: Duration.millis(lockMs / 4),
    shardsPerGroup: 30,
    shardingConfig: { entityTerminationTimeout: Duration.millis(drainMs) }
  })

const services = Layer.mergeAll(
  makeTestCtx({ llm: model }),
  RunLease.layer({
    ttl: Duration.millis(leaseMs),
    heartbeat: Duration.millis(leaseMs / 4),
    owner: runner,
    maxRecoveries
  })
)

const main = Effect.gen(function*() {
  const runs = yield* DurableRuns.DurableRuns
  for (let i = 0; i < submit; i++) {
    yield* runs.start("billing", 1, {
      runId: `r-${i}`,
      input: `bill r-${i}`,
      ...(gated ? { autonomy: "gated" as const } : {})
    })
  }
  process.stdout.write(`ready ${runner}\n`)
  return yield* Effect.never
})

const live = Layer.mergeAll(billing.layer, DurableRunner.sweeper("500 millis")).pipe(
  Layer.provideMerge(DurableRuns.layer([billing]).pipe(Layer.provideMerge(Operator.Operator.layer))),
  Layer.provideMerge(engine),
  Layer.provideMerge(Layer.merge(stores, services))
)

DurableRunner.launch(
  Layer.scopedDiscard(Effect.forkScoped(main)).pipe(
    Layer.provide(live),
    Layer.provide(Logger.minimumLogLevel(logLevel))
  ) as Layer.Layer<never, unknown>
)
