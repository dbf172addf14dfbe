// The console under a burst, and the CLI's start-up (issue 39). Run after the packages are built
// (`pnpm exec tsc -b packages/console && node scripts/bundle.mjs`):
//   node bench/console.mjs [--runs 10000] [--json]
//
// 1. An app serves its own route (`GET /health`) and the console on one router, over the
//    in-memory stores. A client follows the inbox as the browser does (the first page and the
//    total, again 150 ms after each change it is told of, over the live stream). Then 10,000
//    waiting runs arrive (their states made beforehand), in batches of 100 with a 5 ms pause. The app's `/health` and
//    the console's inbox query are timed one after another the whole time: the figures are the
//    median and the worst during the burst as ratios to the same request while idle.
// 2. The CLI's start-up: `agentkit-console --help` in a fresh process, against a fresh process
//    that only imports `effect` (medians of 5, interleaved).
import { Approval, Operator, RunState } from "@agentkit/agents"
import { Console, OperatorAuth } from "@agentkit/console"
import { AuditStore, CheckpointStore } from "@agentkit/core"
import { HttpLayerRouter, HttpServer, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { execFileSync } from "node:child_process"
import { createServer } from "node:http"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import { TextDecoder } from "node:util"

const { fetch } = globalThis

const args = process.argv.slice(2)
const burst = Number(args[args.indexOf("--runs") + 1] ?? 10_000) || 10_000
const asJson = args.includes("--json")
const token = "bench-operator-token-0001"

const checkpoints = CheckpointStore.makeMemory()
const audit = AuditStore.makeMemory()
const operator = Effect.runSync(
  Operator.make.pipe(Effect.provide(Layer.merge(CheckpointStore.layer(checkpoints), AuditStore.layer(audit))))
)
const parameters = { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] }

/** A waiting run's state, as an agent leaves it: one approval pending. */
const stateOf = (runId) => {
  const createdAt = Date.now()
  const call = { id: "c0", name: "refund", arguments: { order_id: runId } }
  const entry = Approval.makeEntry({
    kind: "Approval",
    path: runId,
    iteration: 0,
    index: 0,
    call,
    tool: {
      name: "refund",
      schema: { parameters },
      sideEffecting: true,
      idempotent: false,
      requiresApproval: true,
      caps: []
    },
    reasons: ["requires_approval"],
    createdAt
  })
  const usage = { inputTokens: 1200, outputTokens: 300, cacheReadTokens: 0, cacheWriteTokens: 0, costNanos: 4_200_000 }
  const state = RunState.encode({
    version: 1,
    runId,
    agent: "support",
    cognition: "react",
    phase: "suspended",
    iteration: 0,
    transcript: [{ role: "user", content: `refund ${runId}` }],
    usage,
    treeUsage: usage,
    turn: { completed: [] },
    pending: [entry],
    legs: { privateData: false, untrustedContent: false, egress: false },
    budget: {
      modelCalls: 1,
      toolCalls: 0,
      tokens: 0,
      costNanos: usage.costNanos,
      inFlightModelCalls: 0,
      inFlightToolCalls: 0
    },
    recoveries: 0,
    context: { scope: {}, autonomy: "gated", limits: {}, correlationId: runId }
  })
  return state
}

/** Writes a waiting run (its state made beforehand: the burst measures the console, not the writer). */
const plant = (runId, state = stateOf(runId)) => {
  Effect.runSync(
    Effect.gen(function*() {
      const { lease } = yield* checkpoints.create(
        { runId, rootRunId: runId, agent: "support", tenant: "acme", state },
        { owner: "bench", ttlMs: 60_000 }
      )
      yield* checkpoints.save(lease, { runId, expectedVersion: 1, status: "suspended", state })
      yield* checkpoints.release(lease)
    })
  )
}

for (let i = 0; i < 3; i++) plant(`run-seed-${i}`)

const App = Layer.mergeAll(
  HttpLayerRouter.add("GET", "/health", HttpServerResponse.text("ok")),
  Console.layer({ basePath: "/console", pollInterval: "100 millis" })
).pipe(
  Layer.provide(Layer.succeed(Operator.Operator, operator)),
  Layer.provide(
    OperatorAuth.Authenticator.tokens([{ token, principal: { id: "bench", role: "approver", tenants: ["acme"] } }])
  )
)
const Server = HttpLayerRouter.serve(App, { disableLogger: true, disableListenLog: true }).pipe(
  Layer.provideMerge(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: 0 }))
)
const scope = Effect.runSync(Scope.make())
const context = await Effect.runPromise(Layer.buildWithScope(Server, scope))
const address = Context.get(context, HttpServer.HttpServer).address
const origin = `http://127.0.0.1:${address.port}`
const headers = { authorization: `Bearer ${token}` }
const inboxUrl = `${origin}/console/api/runs?status=suspended,in_doubt&limit=50&total=true`

const timed = async (url) => {
  const t0 = performance.now()
  const response = await fetch(url, { headers })
  await response.text()
  if (!response.ok) throw new Error(`${url} answered ${response.status}`)
  return performance.now() - t0
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const max = (xs) => Math.max(...xs)

// idle
for (let i = 0; i < 20; i++) {
  await timed(`${origin}/health`)
  await timed(inboxUrl)
}
const idle = { health: [], inbox: [] }
for (let i = 0; i < 60; i++) {
  idle.health.push(await timed(`${origin}/health`))
  idle.inbox.push(await timed(inboxUrl))
}

const states = Array.from({ length: burst }, (_, i) => {
  const runId = `run-burst-${String(i).padStart(6, "0")}`
  return [runId, stateOf(runId)]
})

// the browser: the live stream, and the inbox fetched again 150 ms after a change
const live = await fetch(`${origin}/console/api/live`, { headers })
const reader = live.body.getReader()
let refreshPending = false
let refreshes = 0
let lastTotal = 0
let following = true
const follow = (async () => {
  const decoder = new TextDecoder()
  while (following) {
    const { value, done } = await reader.read()
    if (done) return
    if (decoder.decode(value).includes("event: change") && !refreshPending) {
      refreshPending = true
      setTimeout(async () => {
        const response = await fetch(inboxUrl, { headers })
        lastTotal = (await response.json()).total
        refreshes++
        refreshPending = false
      }, 150)
    }
  }
})()

// the burst, and the app's own route timed while it lands
const during = { health: [], inbox: [] }
let landing = true
const probe = (async () => {
  while (landing) {
    during.health.push(await timed(`${origin}/health`))
    during.inbox.push(await timed(inboxUrl))
  }
})()
const started = performance.now()
for (let i = 0; i < burst; i++) {
  plant(states[i][0], states[i][1])
  if (i % 100 === 99) await new Promise((resolve) => setTimeout(resolve, 5))
}
const written = performance.now() - started
// until the followed inbox shows every run
while (lastTotal !== burst + 3) await new Promise((resolve) => setTimeout(resolve, 20))
const caughtUp = performance.now() - started
landing = false
await probe
following = false
await reader.cancel()
await follow.catch(() => undefined)
await Effect.runPromise(Scope.close(scope, Exit.void))

// the CLI's start-up
const bin = fileURLToPath(new URL("../packages/console/dist/bin.js", import.meta.url))
const spawnMs = (argv) => {
  const t0 = performance.now()
  execFileSync(process.execPath, argv, { stdio: "ignore", cwd: fileURLToPath(new URL(".", import.meta.url)) })
  return performance.now() - t0
}
const cli = []
const effectOnly = []
for (let i = 0; i < 5; i++) {
  effectOnly.push(spawnMs(["--input-type=module", "-e", "await import(\"effect\")"]))
  cli.push(spawnMs([bin, "--help"]))
}

const result = {
  runs: burst,
  writtenMs: Math.round(written),
  caughtUpMs: Math.round(caughtUp),
  refreshes,
  health: {
    idleMs: +median(idle.health).toFixed(2),
    duringMedianMs: +median(during.health).toFixed(2),
    duringMaxMs: +max(during.health).toFixed(1),
    medianRatio: +(median(during.health) / median(idle.health)).toFixed(1),
    maxRatio: +(max(during.health) / median(idle.health)).toFixed(1),
    samples: during.health.length
  },
  inbox: {
    idleMs: +median(idle.inbox).toFixed(2),
    duringMedianMs: +median(during.inbox).toFixed(2),
    duringMaxMs: +max(during.inbox).toFixed(1),
    medianRatio: +(median(during.inbox) / median(idle.inbox)).toFixed(1),
    maxRatio: +(max(during.inbox) / median(idle.inbox)).toFixed(1)
  },
  cli: {
    helpMs: Math.round(median(cli)),
    importEffectMs: Math.round(median(effectOnly)),
    ratio: +(median(cli) / median(effectOnly)).toFixed(2)
  }
}
if (asJson) console.log(JSON.stringify(result))
else {
  console.log(
    `${burst} runs written in ${result.writtenMs} ms; the followed inbox showed them all after ${result.caughtUpMs} ms (${refreshes} refreshes)`
  )
  console.log(
    `GET /health: idle ${result.health.idleMs} ms; during the burst median ${result.health.duringMedianMs} ms (${result.health.medianRatio}x), worst ${result.health.duringMaxMs} ms (${result.health.maxRatio}x), ${result.health.samples} samples`
  )
  console.log(
    `GET inbox page+total: idle ${result.inbox.idleMs} ms; during median ${result.inbox.duringMedianMs} ms (${result.inbox.medianRatio}x), worst ${result.inbox.duringMaxMs} ms (${result.inbox.maxRatio}x)`
  )
  console.log(
    `CLI start (--help): ${result.cli.helpMs} ms; import effect alone: ${result.cli.importEffectMs} ms (${result.cli.ratio}x)`
  )
}
