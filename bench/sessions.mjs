// The per-turn cost of sessions and compaction: one customer request a turn, each shaped like a
// step of the realistic workload (the model calls a tool with a 2.6 KB argument, the tool echoes
// it back, the model answers), the model answering at once. Cases, each over `turns` turns in one
// process: a stateless run (no thread: the floor), a session in memory without compaction (the
// thread grows, every turn sends all of it), a session in memory with compaction (a 32,000-token
// window, the provider's count taken as UTF-8 bytes / 4), and the same over the SQL session store
// alone and over every SQL store (checkpoints too), on SQLite (and Postgres with DATABASE_URL).
// The model and the Invoker are built once; each turn provides its own run context. Run after
// building and bundling:
//   pnpm exec tsc -b packages/sql packages/testing && node scripts/bundle.mjs
//   node bench/sessions.mjs [turns=200]
import { Effect, Layer, Redacted, Schema } from "effect"
import { Buffer } from "node:buffer"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const turns = Number(process.argv[2] ?? "200")
const pgUrl = process.env["DATABASE_URL"] || undefined
const pkg = (name) => import(new URL(`../packages/${name}/dist/index.js`, import.meta.url).href)
const { Agent, Compaction, ReActCognition, Session } = await import("@agentkit/agents")
const { Invoker, ModelCatalog, RunContext, SessionStore, TokenEstimator } = await import("@agentkit/core")
const { SqlStores } = await import("@agentkit/sql")
const { Tool } = await import("@agentkit/tools")
const { FakeLLM, Turn } = await pkg("testing")

const PAYLOAD = "lorem ipsum dolor sit amet, ".repeat(93).slice(0, 2600)
const WINDOW = 32_000
const quarter = (request) =>
  Math.ceil(Buffer.byteLength(JSON.stringify({ messages: request.messages, tools: request.tools }), "utf8") / 4)

const echo = Tool.make("echo", {
  description: "Echo the text back to the caller, unchanged, for benchmarking.",
  parameters: { text: Schema.String },
  sideEffecting: false,
  handler: ({ text }) => Effect.promise(() => Promise.resolve(text))
})
const agent = Agent.make({
  name: "bench",
  model: "bench-model",
  prompt: "Echo.",
  cognition: ReActCognition.make({ tools: [echo], maxIterations: 4 })
})
const catalog = ModelCatalog.layer({
  "bench-model": {
    provider: "fake",
    contextWindow: WINDOW,
    maxOutputTokens: 1024,
    prices: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    capabilities: ["tools"]
  }
})
const estimator = TokenEstimator.layer({ name: "bytes/4", inputTokens: quarter })
const compaction = Compaction.Compaction.layer({
  share: 0.8,
  target: 0.4,
  strategy: Compaction.compose(
    Compaction.stubToolResults({ keepLastTurns: 4 }),
    Compaction.summarise({ keepLastTurns: 4, instruction: "Summarise.", maxTokens: 256 })
  )
})

/** The model: a summary request gets a short summary; a new turn an echo call; a tool result "ok". */
const makeModel = () => {
  const seen = { largest: 0, summaries: 0, calls: 0 }
  const llm = FakeLLM.respond((request) => {
    seen.calls++
    seen.largest = Math.max(seen.largest, quarter(request))
    if (request.messages[0]?.content === "Summarise.") {
      seen.summaries++
      return Turn({ content: "the customer asked for echoes; all were answered" })
    }
    const last = request.messages.at(-1)
    return last?.role === "user"
      ? Turn({ toolCalls: [{ id: `e${seen.calls}`, name: "echo", arguments: { text: PAYLOAD } }] })
      : Turn({ content: "ok" })
  })
  return { llm, seen }
}

const sqlite = () => {
  const dir = mkdtempSync(join(tmpdir(), "agentkit-bench-sessions-"))
  return {
    layer: SqlStores.layerSqlite({ filename: join(dir, "sessions.db") }),
    cleanup: () => rmSync(dir, { recursive: true, force: true })
  }
}
const postgres = () => {
  const schema = `bench_sessions_${process.pid}_${Date.now().toString(36)}`
  return { layer: SqlStores.layerPg({ url: Redacted.make(pgUrl), schema, maxConnections: 2 }), cleanup: () => {} }
}

const cases = [
  { name: "stateless run (no thread)", session: false, services: () => ({ layer: Layer.empty, cleanup: () => {} }) },
  {
    name: "session, memory, no compaction",
    session: true,
    services: () => ({ layer: SessionStore.SessionStore.memory(), cleanup: () => {} })
  },
  {
    name: "session, memory, compaction",
    session: true,
    services: () => ({
      layer: Layer.mergeAll(SessionStore.SessionStore.memory(), compaction, catalog, estimator),
      cleanup: () => {}
    })
  },
  ...[["SQLite", sqlite], ...(pgUrl === undefined ? [] : [["Postgres", postgres]])].flatMap(([name, open]) => [
    {
      // the SQL session store alone (no checkpoints): what a thread costs on the database
      name: `session, ${name} session store, compaction`,
      session: true,
      services: () => {
        const db = open()
        const sessionsOnly = Layer.effect(SessionStore.SessionStore, SessionStore.SessionStore).pipe(
          Layer.provide(db.layer)
        )
        return { layer: Layer.mergeAll(sessionsOnly, compaction, catalog, estimator), cleanup: db.cleanup }
      }
    },
    {
      // every SQL store: the run's checkpoints (its whole state at each step) too
      name: `session, ${name} stores with checkpoints, compaction`,
      session: true,
      services: () => {
        const db = open()
        return { layer: Layer.mergeAll(db.layer, compaction, catalog, estimator), cleanup: db.cleanup }
      }
    }
  ])
]

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

const rows = []
for (const c of cases) {
  const { llm, seen } = makeModel()
  const { cleanup, layer } = c.services()
  const program = Effect.gen(function*() {
    const times = []
    for (let turn = 1; turn <= turns; turn++) {
      const input = `turn ${turn}: echo this`
      const run = c.session ? Session.run(agent, input) : agent.run(input)
      const start = process.hrtime.bigint()
      yield* run.pipe(RunContext.provide({ runId: `run-${turn}`, threadId: "bench", tracing: false }))
      times.push(Number(process.hrtime.bigint() - start) / 1000)
    }
    return times
  })
  // the model and the Invoker built once; a turn provides only its own run context
  const services = Layer.mergeAll(
    layer,
    Layer.provideMerge(Invoker.layer({ chatMiddleware: [], toolMiddleware: [] }), llm.layer)
  )
  const times = await Effect.runPromise(Effect.scoped(Effect.provide(program, services)))
  cleanup()
  rows.push({
    case: c.name,
    meanUs: times.reduce((a, b) => a + b, 0) / times.length,
    medianUs: median(times),
    lastTenUs: times.slice(-10).reduce((a, b) => a + b, 0) / 10,
    largestPrompt: seen.largest,
    summaries: seen.summaries,
    modelCalls: seen.calls
  })
}

console.log(`sessions and compaction: ${turns} turns a case, each one tool call of 2.6 KB and an answer\n`)
console.log(
  "| case | mean µs/turn | median µs/turn | last 10 µs/turn | largest prompt (tokens, bytes/4) | summaries | model calls |"
)
console.log("|---|---:|---:|---:|---:|---:|---:|")
for (const r of rows) {
  console.log(
    `| ${r.case} | ${r.meanUs.toFixed(0)} | ${r.medianUs.toFixed(0)} | ${
      r.lastTenUs.toFixed(0)
    } | ${r.largestPrompt} | ${r.summaries} | ${r.modelCalls} |`
  )
}
