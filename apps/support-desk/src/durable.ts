/**
 * The durable approvals demo: with nobody at a terminal, the run suspends to an embedded SQLite
 * file (`@agentkit/sql`, libsql: prebuilt, nothing compiles) and the demo prints the run id, the
 * file and the command that decides it. That command is a new process: it records the decision
 * with the operator service (`Operator` from `@agentkit/agents`: checked against the pending
 * entry's digest, first decision wins, audited with the operator) and resumes the run from the
 * store to the end. With `--console` (`serveConsole`), this process instead serves the operator
 * console on 127.0.0.1 over the same stores, and resumes the run (`RunRecovery`) once a decision
 * is recorded there.
 */
import { Approval, Operator, RunRecovery } from "@agentkit/agents"
import type { AgentResult } from "@agentkit/agents"
import { Console, SpanRecorder } from "@agentkit/console"
import { Message, SpanStore } from "@agentkit/core"
import { SqlSpanStore, SqlStores } from "@agentkit/sql"
import { HttpServer } from "@effect/platform"
import { Effect, Layer, Schedule } from "effect"
import type { Duration } from "effect"
import { randomUUID } from "node:crypto"
import { mkdirSync } from "node:fs"
import { userInfo } from "node:os"
import { dirname } from "node:path"
import { describePending, invokerLayer, REQUEST, runLayer, supportAgent } from "./conversation.js"
import { seedOrders } from "./orders.js"

/** Where the demo prints. */
export interface Output {
  readonly print: (line: string) => void
}

/** The stores over the SQLite file (created, with its directory, when missing). */
export const storesAt = (db: string) => {
  mkdirSync(dirname(db), { recursive: true })
  return SqlStores.layerSqlite({ filename: db })
}

/**
 * The span store in the same SQLite file (its `agentkit_spans` table): the runs' spans, written
 * by whichever process ran them, for the console's trace view in any process.
 */
export const spansAt = (db: string) =>
  SqlSpanStore.layer({ flushEvery: "250 millis" }).pipe(Layer.provideMerge(storesAt(db)))

/** Quotes a command-line argument for a POSIX shell when it needs it. */
const shellQuote = (text: string) => (/^[\w./:@%+=-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`)

/** The commands that decide a suspended run. */
export const decideCommands = (runId: string, db: string): ReadonlyArray<string> => [
  `pnpm demo:approvals -- --approve ${shellQuote(runId)} --db ${shellQuote(db)}`,
  `pnpm demo:approvals -- --reject ${shellQuote(runId)} --reason 'not confirmed' --db ${shellQuote(db)}`
]

/** Who decides from this process: the operating-system user. */
const operatorName = (): string => {
  try {
    return `cli:${userInfo().username}`
  } catch {
    return "cli:operator"
  }
}

const failed = (output: Output) => (error: { readonly message: string }) =>
  Effect.sync(() => {
    output.print(`error: ${error.message}`)
    return 1
  })

const newRunId = () => `support-desk-${randomUUID().slice(0, 8)}`

/**
 * Runs `self` with its spans teed into the span store in context (when there is one): the app's
 * tracer still gets every span. Only the runs are traced this way, not the console's HTTP server.
 */
const recorded = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.flatMap(
    Effect.serviceOption(SpanStore.SpanStore),
    (store) =>
      store._tag === "None"
        ? self
        : Effect.provide(self, SpanRecorder.layer.pipe(Layer.provide(SpanStore.SpanStore.layer(store.value))))
  )

/** Runs the conversation until it suspends (printing the pending calls); false when it finished instead. */
const start = (output: Output, agent: ReturnType<typeof supportAgent>, runId: string) =>
  Effect.gen(function*() {
    output.print(`customer: ${REQUEST}`)
    const result: AgentResult.AgentResult = yield* agent.run([Message.user(REQUEST)]).pipe(
      Effect.provide(runLayer(runId)),
      recorded
    )
    if (result.suspended === undefined) {
      output.print(`support: ${result.output}`)
      return false
    }
    for (const entry of result.suspended.pending) {
      for (const line of describePending(agent.name, entry)) output.print(line)
    }
    return true
  })

/** A finished run's final answer (its stored `AgentResult`'s `output`). */
const finalAnswer = (run: Operator.RunDetail): string | undefined => {
  const result = run.result
  return typeof result === "object" && result !== null && "output" in result && typeof result.output === "string"
    ? result.output
    : undefined
}

/**
 * `--console`: suspends the conversation in the SQLite file, serves the operator console on
 * 127.0.0.1 (`port`, default a free one; loopback only, so no token) over the same stores and
 * prints its URL. The run waits in the inbox; once every pending call has a decision recorded
 * there, the recovery worker resumes it here and the demo prints how it ended. It keeps serving
 * until interrupted (SIGINT/SIGTERM stop it: exit code 0).
 */
export const serveConsole = (
  output: Output,
  db: string,
  options: {
    readonly port?: number | undefined
    readonly runId?: string | undefined
    readonly every?: Duration.DurationInput | undefined
  } = {}
): Effect.Effect<number> =>
  Effect.gen(function*() {
    const runId = options.runId ?? newRunId()
    const book = seedOrders()
    const agent = supportAgent(book)
    if (!(yield* start(output, agent, runId))) return 0
    const server = yield* HttpServer.HttpServer
    output.print(`run ${runId} is suspended in ${db}`)
    output.print(`operator console: ${HttpServer.formatAddress(server.address)}/console`)
    output.print("(loopback only: no token needed) decide the call in the inbox; Ctrl-C stops the console")
    const operator = yield* Operator.Operator
    const waiting = Effect.map(operator.show(runId), (run) => run.status === "suspended" || run.status === "running")
    // the recovery worker resumes the run once the console has recorded a decision for every
    // pending call; only that resumption is traced (the polls are not the run's spans)
    const undecided = Effect.map(
      operator.show(runId),
      (run) =>
        run.status === "suspended" &&
        run.pending.some((entry) => !run.decided.some((decision) => decision.pendingId === entry.id))
    )
    const step = Effect.flatMap(undecided, (still) =>
      still ? Effect.succeed(true) : RunRecovery.runOnce({ agents: [agent] }).pipe(recorded, Effect.zipRight(waiting)))
    yield* step.pipe(Effect.repeat({
      schedule: Schedule.spaced(options.every ?? "500 millis"),
      while: (still) =>
        still
    }))
    const run = yield* operator.show(runId)
    const answer = finalAnswer(run)
    if (answer !== undefined) {
      output.print(`support: ${answer}`)
    }
    output.print(`order B-102: ${(yield* book.get("B-102")).status}`)
    output.print(`run ${runId}: ${run.status}`)
    output.print("the console keeps serving (the run and its audit are there); Ctrl-C stops it")
    return yield* Effect.never
  }).pipe(
    Effect.provide(
      Console.serve({ host: "127.0.0.1", port: options.port }).pipe(
        Layer.provideMerge(Operator.Operator.layer),
        Layer.provideMerge(spansAt(db)),
        Layer.provideMerge(invokerLayer())
      )
    ),
    Effect.catchTag("ServeError", (error) =>
      failed(output)({
        message: `the console could not listen on 127.0.0.1:${options.port ?? 0} (${
          error.cause instanceof Error ? error.cause.message : String(error.cause)
        })`
      })),
    Effect.catchAll(failed(output)),
    Effect.onInterrupt(() =>
      Effect.sync(() => output.print("console stopped"))
    )
  )

/**
 * Starts the conversation with the run kept in the SQLite file; it suspends on the cancel and
 * the demo prints how to decide it. Answers the exit code.
 */
export const suspend = (output: Output, db: string, runId = newRunId()): Effect.Effect<number> =>
  Effect.gen(function*() {
    if (!(yield* start(output, supportAgent(seedOrders()), runId))) return 0
    output.print(`no terminal attached: run ${runId} is suspended in ${db}`)
    output.print("decide it from another process (it resumes the run to the end):")
    for (const command of decideCommands(runId, db)) output.print(`  ${command}`)
    return 0
  }).pipe(Effect.provide(storesAt(db)), Effect.catchAll(failed(output)))

/**
 * Records a decision on every pending call of a suspended run (through the operator service),
 * then resumes the run here and prints how it ended. Answers the exit code.
 */
export const decide = (
  output: Output,
  db: string,
  decision: { readonly verdict: "approve" | "reject"; readonly runId: string; readonly reason?: string | undefined }
): Effect.Effect<number> =>
  Effect.gen(function*() {
    const operator = yield* Operator.Operator
    const run = yield* operator.show(decision.runId)
    if (run.pending.length === 0) {
      output.print(`run ${run.runId} is ${run.status}: it waits on no decision`)
      return 1
    }
    const by = operatorName()
    for (const entry of run.pending) {
      for (const line of describePending(run.agent, entry)) output.print(line)
      const verdict = decision.verdict === "approve"
        ? Approval.approve(entry.digest)
        : Approval.reject(entry.digest, decision.reason ?? "rejected by the operator")
      yield* operator.decide(run.runId, entry.id, { ...verdict, by })
      output.print(`${decision.verdict === "approve" ? "approved" : "rejected"} by ${by}`)
    }
    // this process resumes the run with what was recorded (a fresh agent over a fresh order book)
    const recorded = new Map((yield* operator.show(run.runId)).decided.map((d) => [d.pendingId, d.decision]))
    const decisions = Approval.decisions(
      run.pending.flatMap((entry) => {
        const decision = recorded.get(entry.id)
        return decision === undefined ? [] : [[entry.id, decision] as const]
      })
    )
    const book = seedOrders()
    const result = yield* supportAgent(book)
      .resume(run.runId, decisions)
      .pipe(Effect.provide(runLayer(run.runId)))
    output.print(`support: ${result.output}`)
    const order = yield* book.get("B-102")
    output.print(`order ${order.id}: ${order.status}`)
    output.print(`run ${run.runId}: ${(yield* operator.show(run.runId)).status}`)
    return 0
  }).pipe(
    Effect.provide(Operator.Operator.layer.pipe(Layer.provideMerge(storesAt(db)))),
    Effect.catchAll(failed(output))
  )
