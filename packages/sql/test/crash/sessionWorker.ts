/**
 * A session worker: one process (compiled JS, started with `node`) that serves one request on a
 * conversation thread over the SQL stores (`Session.run` of a ReAct agent, its checkpoints and its
 * thread in the same database) and prints its outcome as one JSON line. With `pauseBeforeAppend`
 * it prints `appending` when the run has finished and its turns are about to be appended, and
 * waits there: the parent kills it with SIGKILL at that point.
 *
 * The model's answer is a function of its request: a new turn calls `echo` once; a tool result
 * gets "ok"; the question "what was the code of turn N?" gets the code the prompt holds for turn N
 * (`FACT-N-<code>`), or "unknown". Every model call is appended to `callsLog` first.
 */
import { Agent, ReActCognition, Session } from "@agentkit/agents"
import { SessionStore } from "@agentkit/core"
import { FakeLLM, makeTestCtx, Turn } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import { Cause, Effect, Exit, Layer, Redacted, Schema } from "effect"
import { appendFileSync } from "node:fs"
import { SqlStores } from "../../src/index.js"
import type { Database } from "./protocol.js"

export interface SessionWorkerConfig {
  readonly database: Database
  readonly threadId: string
  readonly runId: string
  readonly input: string
  readonly callsLog: string
  readonly pauseBeforeAppend?: boolean
  /** Milliseconds the model takes per call (for the concurrency test). */
  readonly modelDelayMs?: number
}

const config = JSON.parse(process.argv[2] ?? "{}") as SessionWorkerConfig

const StoresLive = config.database.kind === "sqlite"
  ? SqlStores.layerSqlite({ filename: config.database.filename, busyTimeout: "5 seconds", migrate: false })
  : SqlStores.layerPg({
    url: Redacted.make(config.database.url),
    schema: config.database.schema,
    maxConnections: 2,
    migrate: false
  })

const llm = FakeLLM.respond((request) =>
  Effect.gen(function*() {
    appendFileSync(config.callsLog, `${config.runId}\n`)
    if (config.modelDelayMs !== undefined) yield* Effect.sleep(config.modelDelayMs)
    const last = request.messages.at(-1)
    if (last?.role === "user") {
      const question = /^what was the code of turn (\d+)\?$/.exec(last.content)
      if (question !== null) {
        const facts = new Map<string, string>()
        for (const match of JSON.stringify(request.messages).matchAll(/FACT-(\d+)-([A-Z0-9]+)/g)) {
          facts.set(match[1]!, match[2]!)
        }
        return Turn({ content: facts.get(question[1]!) ?? "unknown" })
      }
      return Turn({ toolCalls: [{ id: `echo-${config.runId}`, name: "echo", arguments: { text: last.content } }] })
    }
    return Turn({ content: "ok" })
  })
)

const echo = Tool.make("echo", {
  description: "Echo the text back to the caller, unchanged.",
  parameters: { text: Schema.String },
  sideEffecting: false,
  handler: ({ text }) => text
})

const agent = Agent.make({
  name: "support",
  model: "session-model",
  prompt: "You are a support agent.",
  cognition: ReActCognition.make({ tools: [echo], maxIterations: 4 })
})

/** The stores' session store, paused before its append when asked. */
const sessions = Layer.effect(
  SessionStore.SessionStore,
  Effect.map(SessionStore.SessionStore, (store): SessionStore.Service =>
    config.pauseBeforeAppend === true
      ? {
        ...store,
        append: () =>
          Effect.zipRight(
            Effect.sync(() => process.stdout.write(`${JSON.stringify({ point: "appending" })}\n`)),
            Effect.never
          )
      }
      : store)
)

const program = Session.run(agent, config.input).pipe(
  Effect.provide(
    makeTestCtx({ llm, runId: config.runId, threadId: config.threadId, scope: { orgId: "acme" } })
  ),
  // the inner layer wins: the run sees the (paused) session store, over the stores' own
  Effect.provide(sessions),
  Effect.provide(StoresLive)
)

void Effect.runPromiseExit(program).then((exit) => {
  const outcome = Exit.isSuccess(exit)
    ? { ok: true, output: exit.value.output }
    : {
      ok: false,
      error: Cause.failureOption(exit.cause).pipe((
        o
      ) => (o._tag === "Some" ? (o.value as { _tag: string })._tag : "defect")),
      cause: Cause.pretty(exit.cause)
    }
  process.stdout.write(`${JSON.stringify(outcome)}\n`)
  process.exit(0)
})
