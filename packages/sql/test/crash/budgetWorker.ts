/**
 * The budget crash suite's worker: a process (compiled JS, started with `node`, so SIGKILL reaches
 * the process doing the work) that drives one run over the SQL stores until it ends, reporting
 * each point it passes on stdout; the parent kills it at a random point and starts another, which
 * takes the run over once the dead worker's lease has expired.
 *
 * The run is a real agent run: `Agent.make` with `ReActCognition`, a model from
 * `@agentkit/testing` (`FakeLLM.respond`) that calls a read-only tool every turn (so only the
 * budget ends the run), under `maxModelCalls` or `maxCostUsd`. The model is the provider: each
 * request that reaches it is appended to the calls log with what it bills (a random share of the
 * request's bound, at the catalog's prices) before it answers, so the log is the ground truth of
 * what was sent and spent whatever the budget believed.
 */
import { Agent, ReActCognition, RunLease } from "@agentkit/agents"
import { CheckpointStore, ModelCatalog, TokenEstimator, Usage } from "@agentkit/core"
import { FakeLLM, makeTestCtx, Turn } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import { Cause, Context, Effect, Exit, Layer, Option, Redacted, Schema } from "effect"
import { appendFileSync } from "node:fs"
import { SqlStores } from "../../src/index.js"
import type { Database } from "./protocol.js"

/** A budget worker's configuration, its one command-line argument (JSON). */
export interface BudgetWorkerConfig {
  readonly workerId: string
  readonly database: Database
  readonly runId: string
  /** Every request that reached the model: `runId turn billedNanos boundNanos`. */
  readonly callsLog: string
  readonly leaseTtlMs: number
  readonly heartbeatMs: number
  readonly limits: { readonly maxModelCalls?: number; readonly maxCostUsd?: number }
  readonly seed: number
}

/** The worker's model: $1 a million input tokens, $3 a million output tokens. */
export const MODEL = "crash-model"
export const prices = { input: 1, output: 3, cacheRead: 0.1, cacheWrite: 1 }
/** The agent's output bound per call. */
export const MAX_TOKENS = 400

/** What a request may cost at most: its UTF-8 bytes of input and `MAX_TOKENS` of output at `prices`. */
export const boundOf = (request: Parameters<typeof TokenEstimator.utf8Bytes.inputTokens>[0]) =>
  Math.ceil(TokenEstimator.utf8Bytes.inputTokens(request) * prices.input * 1e3 + MAX_TOKENS * prices.output * 1e3)

type Point = "takeover" | "sent" | "answered" | "tool" | "saved"
type Report =
  | { readonly t: "ready"; readonly pid: number }
  | { readonly t: "point"; readonly point: Point }
  | { readonly t: "end"; readonly outcome: string }

const config = JSON.parse(process.argv[2] ?? "{}") as BudgetWorkerConfig
const send = (report: Report) => {
  process.stdout.write(`${JSON.stringify(report)}\n`)
}
const point = (name: Point) => Effect.sync(() => send({ t: "point", point: name }))

/** A small seeded generator: what each request bills, reproducible from the seed. */
let state = config.seed >>> 0
const random = () => {
  state = (state + 0x6d2b79f5) >>> 0
  let t = state
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const StoresLive = config.database.kind === "sqlite"
  ? SqlStores.layerSqlite({ filename: config.database.filename, busyTimeout: "2 seconds", migrate: false })
  : SqlStores.layerPg({
    url: Redacted.make(config.database.url),
    schema: config.database.schema,
    maxConnections: 4,
    migrate: false
  })

/** The provider: logs each request with what it bills (30% to 100% of its bound), then answers with a tool call. */
const llm = FakeLLM.respond((request) =>
  Effect.gen(function*() {
    const turn = request.messages.filter((message) => message.role === "assistant").length
    const bound = boundOf(request)
    const billed = Math.floor(bound * (0.3 + 0.7 * random()))
    appendFileSync(config.callsLog, `${config.runId} ${turn} ${billed} ${bound}\n`)
    yield* point("sent")
    yield* Effect.sleep(Math.floor(random() * 4))
    yield* point("answered")
    return Turn({
      content: `turn ${turn}`,
      toolCalls: [{ id: `c${turn}`, name: "lookup_order", arguments: { order_id: `A-${turn}` } }],
      usage: { inputTokens: 10, outputTokens: 5, costUsd: Usage.usdOf(billed) }
    })
  })
)

const lookupOrder = Tool.make("lookup_order", {
  description: "Look up an order by its id and return its status line.",
  parameters: { order_id: Schema.String },
  sideEffecting: false,
  handler: ({ order_id }) => Effect.as(point("tool"), `order ${order_id}: shipped`)
})

const agent = Agent.make({
  name: "spender",
  model: MODEL,
  prompt: "Look up orders until told to stop.",
  maxTokens: MAX_TOKENS,
  cognition: ReActCognition.make({ tools: [lookupOrder], maxIterations: 10_000 })
})

const catalog = ModelCatalog.layer({
  [MODEL]: { provider: "fake", contextWindow: 1_000_000, maxOutputTokens: 8192, prices, capabilities: ["tools"] }
})

const program = Effect.gen(function*() {
  const context = yield* Layer.build(StoresLive)
  const inner = Context.get(context, CheckpointStore)
  // the store as the lifecycle uses it, reporting the points a kill may land after
  const checkpoints: CheckpointStore.Service = {
    ...inner,
    claim: (rootRunId, request) => Effect.tap(inner.claim(rootRunId, request), () => point("takeover")),
    save: (lease, request) => Effect.tap(inner.save(lease, request), () => point("saved"))
  }
  const layer = Layer.mergeAll(
    Layer.succeedContext(Context.add(context, CheckpointStore, checkpoints)),
    RunLease.layer({
      ttl: config.leaseTtlMs,
      heartbeat: config.heartbeatMs,
      owner: `${config.workerId}/${process.pid}`,
      maxRecoveries: 1_000_000
    }),
    makeTestCtx({ llm, runId: config.runId, budget: config.limits }),
    catalog
  )
  send({ t: "ready", pid: process.pid })
  for (let waited = 0;; waited++) {
    const exit = yield* Effect.exit(agent.run(`spend on run ${config.runId}`).pipe(Effect.provide(layer)))
    if (Exit.isSuccess(exit)) return `finished ${exit.value.stopReason}`
    const failure = Cause.failureOption(exit.cause)
    if (Option.isNone(failure)) return `error ${Cause.pretty(exit.cause)}`
    const error = failure.value as { readonly _tag?: string; readonly message?: string; readonly expiresAt?: number }
    if (error._tag === "RunInProgress" && waited < 100) {
      // the dead worker's lease: wait for it to expire, then take the run over
      yield* Effect.sleep(Math.max(1, Math.min(config.leaseTtlMs, (error.expiresAt ?? 0) - Date.now()) + 5))
      continue
    }
    if (error._tag === "StaleLease" && waited < 100) continue // this worker's own lease ran out (a stalled event loop): take the run over again
    return `${error._tag ?? "Error"}: ${error.message ?? String(error)}`
  }
})

Effect.runPromiseExit(Effect.scoped(program)).then((exit) => {
  if (Exit.isFailure(exit)) {
    process.stderr.write(`worker ${config.workerId} failed: ${Cause.pretty(exit.cause)}\n`)
    process.exit(1)
  }
  send({ t: "end", outcome: exit.value })
  process.exit(0)
})
