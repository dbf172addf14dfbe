/**
 * A crash-suite worker: a long-lived process (compiled JS, started with `node`, so SIGKILL reaches
 * the process doing the work) that drives the runs the parent names, over the SQL stores, and
 * reports each point it passes on stdout. It may be killed at any moment; whatever it committed
 * must carry the run on in the next worker.
 *
 * The runs are real agent runs: `Agent.make` with `ReActCognition`, a model from
 * `@agentkit/testing` (`FakeLLM.respond`) that answers from the conversation (a turn per
 * assistant message so far: `iterations` turns each calling a tool, then an answer), and two
 * side-effecting, non-idempotent tools (a charge; on turn `approvalAt` the one that requires a
 * person's approval), claimed in the execution ledger by the Invoker. The lifecycle does the rest:
 * the lease and its heartbeat, checkpoints, takeover of an expired lease, suspension, resume with
 * the decisions the operator recorded in the store.
 */
import { Agent, Approval, ReActCognition, RunLease } from "@agentkit/agents"
import type { AgentResult } from "@agentkit/agents"
import { CheckpointStore } from "@agentkit/core"
import { FakeLLM, makeTestCtx, Turn } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import { Cause, Context, Effect, Exit, Fiber, Layer, Option, Queue, Redacted, Schema } from "effect"
import { appendFileSync } from "node:fs"
import { SqlStores } from "../../src/index.js"
import { encode, lines, toolKey } from "./protocol.js"
import type { Command, Event, Outcome, Point, WorkerConfig } from "./protocol.js"

const config = JSON.parse(process.argv[2] ?? "{}") as WorkerConfig
const send = (event: Event) => {
  process.stdout.write(encode(event))
}
const point = (runId: string, name: Point, iteration = 0) =>
  Effect.sync(() => send({ t: "point", runId, point: name, iteration }))

const StoresLive = config.database.kind === "sqlite"
  ? SqlStores.layerSqlite({ filename: config.database.filename, busyTimeout: "2 seconds", migrate: false })
  : SqlStores.layerPg({
    url: Redacted.make(config.database.url),
    schema: config.database.schema,
    maxConnections: 4,
    migrate: false
  })

if (process.env["CRASH_DEBUG"] !== undefined) {
  let last = Date.now()
  setInterval(() => {
    const lag = Date.now() - last - 50
    if (lag > 150) process.stderr.write(`${config.workerId} event loop blocked ${lag}ms at ${Date.now()}\n`)
    last = Date.now()
  }, 50).unref()
}

let nonces = 0
const nonce = () => `${config.workerId}-${nonces++}`
const jitter = Effect.suspend(() => Effect.sleep(Math.floor(Math.random() * 3)))

/** The task names its run, so the model knows which run it answers. */
export const task = (runId: string) => `crash run ${runId}`

/** The model: the call is logged when it is sent; the response carries a fresh nonce. */
const llm = FakeLLM.respond((request) =>
  Effect.gen(function*() {
    const first = request.messages.find((message) => message.role === "user")
    const runId = typeof first?.content === "string" ? first.content.slice("crash run ".length) : "?"
    const turn = request.messages.filter((message) => message.role === "assistant").length
    yield* point(runId, "before-model", turn)
    const response = nonce()
    appendFileSync(config.callsLog, `${runId} ${turn} ${response}\n`)
    yield* jitter
    yield* point(runId, "after-model", turn)
    if (turn >= config.iterations) return Turn({ content: `done ${response}` })
    return Turn({
      content: `turn ${turn} ${response}`,
      toolCalls: [{
        id: `c${turn}`,
        name: turn === config.approvalAt ? "charge_approved" : "charge",
        arguments: { run: runId, turn }
      }]
    })
  })
)

/** The side effect of the non-idempotent tool (a payment, say): logged when it happens. */
const charge = (name: string, requiresApproval: boolean) =>
  Tool.make(name, {
    description: "Charge the customer's card for one turn. It really charges; there is no undo.",
    parameters: { run: Schema.String, turn: Schema.Number },
    sideEffecting: true,
    requiresApproval,
    handler: ({ run, turn }) =>
      Effect.gen(function*() {
        yield* point(run, "before-tool", turn)
        const id = nonce()
        appendFileSync(config.effectsLog, `${toolKey(run, turn)} ${id} ${Date.now()}\n`)
        yield* jitter
        yield* point(run, "after-tool", turn)
        return `charged:${id}`
      })
  })

const agent = Agent.make({
  name: "crash",
  model: "claude-sonnet-4-6",
  prompt: "Charge the customer once per turn.",
  cognition: ReActCognition.make({ tools: [charge("charge", false), charge("charge_approved", true)] })
})

class Stop {
  constructor(readonly outcome: Outcome, readonly detail?: string) {}
}

const tagOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string"
    ? error._tag
    : undefined

const program = Effect.gen(function*() {
  const context = yield* Layer.build(StoresLive)
  const inner = Context.get(context, CheckpointStore)
  const owner = `${config.workerId}/${process.pid}`
  /**
   * How many times this process finished each run (the store's finish succeeded): a drive finished
   * its run if the count grew while it ran (a later drive that only read the recorded result did not).
   */
  const finishedHere = new Map<string, number>()
  // the store as the lifecycle uses it, reporting the points a kill may land after
  const checkpoints: CheckpointStore.Service = {
    ...inner,
    create: (run, lease) => Effect.tap(inner.create(run, lease), () => point(run.runId, "created")),
    claim: (rootRunId, request) =>
      Effect.tap(
        inner.claim(rootRunId, request),
        ({ record }) => point(rootRunId, record.status === "suspended" ? "resuming" : "takeover")
      ),
    save: (lease, request) =>
      Effect.tap(
        inner.save(lease, request),
        () => point(request.runId, request.status === "suspended" ? "suspended" : "committed")
      ),
    finish: (lease, request) =>
      Effect.tap(inner.finish(lease, request), () =>
        Effect.zipRight(
          Effect.sync(() => finishedHere.set(request.runId, (finishedHere.get(request.runId) ?? 0) + 1)),
          point(request.runId, "finished")
        ))
  }
  const stores = Layer.succeedContext(Context.add(context, CheckpointStore, checkpoints))
  const lease = RunLease.layer({
    ttl: config.leaseTtlMs,
    heartbeat: config.heartbeatMs,
    owner,
    maxRecoveries: 1_000_000
  })
  const provide = (runId: string) =>
    Effect.provide(Layer.mergeAll(stores, lease, makeTestCtx({ llm, runId, autonomy: "auto" })))

  /** A drive: start or take over, or resume a suspension whose every entry is decided. */
  const attempt = (runId: string) =>
    agent.run(task(runId)).pipe(
      Effect.catchTag("RunSuspended", (suspended) =>
        Effect.gen(function*() {
          const recorded = yield* checkpoints.decisions(runId)
          const decided = new Map(recorded.map((d) => [d.pendingId, JSON.parse(d.decision) as unknown] as const))
          if (!suspended.pending.every((entry) => decided.has(entry.id))) {
            return yield* Effect.fail(new Stop("suspended"))
          }
          return yield* agent.resume(
            runId,
            Approval.decideEach(suspended.pending, (entry) => decided.get(entry.id) as Approval.Decision) // checked on resume
          )
        })),
      provide(runId)
    )

  const ended = (runId: string, result: AgentResult.AgentResult, finishesBefore: number): Outcome =>
    result.suspended !== undefined
      ? result.suspended.pending.some((entry) => entry.kind === "InDoubt")
        ? "in-doubt"
        : "suspended"
      : (finishedHere.get(runId) ?? 0) > finishesBefore
      ? "finished"
      : "already-finished"

  const drive = (runId: string) =>
    Effect.gen(function*() {
      for (let waited = 0;; waited++) {
        const finishesBefore = finishedHere.get(runId) ?? 0
        const exit = yield* Effect.exit(attempt(runId))
        if (Exit.isSuccess(exit)) return { outcome: ended(runId, exit.value, finishesBefore) }
        const failure = Cause.failureOption(exit.cause)
        if (Option.isNone(failure)) {
          // interrupted: the heartbeat found the lease taken over
          if (Cause.isInterruptedOnly(exit.cause)) return { outcome: "lost-lease" as const, detail: "interrupted" }
          return { outcome: "error" as const, detail: Cause.pretty(exit.cause) }
        }
        const error = failure.value
        if (error instanceof Stop) return { outcome: error.outcome }
        const tag = tagOf(error)
        if (tag === "RunInProgress" && waited < 40) {
          // another owner's lease: live (a worker still on it) or not yet expired (a worker that died)
          const expiresAt = (error as { readonly expiresAt: number }).expiresAt
          yield* Effect.sleep(Math.max(1, Math.min(config.leaseTtlMs, expiresAt - Date.now()) + 5))
          continue
        }
        if (tag === "RunInProgress") return { outcome: "busy" as const }
        if (tag === "StaleLease" || tag === "VersionConflict" || tag === "AlreadyDecided") {
          if (process.env["CRASH_DEBUG"] !== undefined) {
            const now = yield* Effect.orDie(inner.load(runId))
            process.stderr.write(
              `${owner} ${runId} ${tag} ${JSON.stringify(error)} now ${
                JSON.stringify(Option.map(now, (r) => [r.status, r.version, r.lease]))
              } at ${Date.now()}\n`
            )
          }
          return { outcome: "lost-lease" as const, detail: tag }
        }
        return {
          outcome: "error" as const,
          detail: `${tag ?? "Error"}: ${String((error as { message?: unknown }).message ?? error)}`
        }
      }
    }).pipe(Effect.flatMap((result) => Effect.sync(() => send({ t: "outcome", runId, ...result }))))

  const commands = yield* Queue.unbounded<Command>()
  process.stdin.on(
    "data",
    lines((text) => Queue.unsafeOffer(commands, JSON.parse(text) as Command))
  )
  process.stdin.on("end", () => Queue.unsafeOffer(commands, { t: "exit" }))
  send({ t: "ready", pid: process.pid })
  const drivers = yield* Effect.forEach(
    Array.from({ length: config.concurrency }),
    () =>
      Effect.fork(
        Effect.gen(function*() {
          for (;;) {
            const command = yield* Queue.take(commands)
            if (command.t === "exit") {
              yield* Queue.offer(commands, command) // the next driver stops too
              return
            }
            yield* drive(command.runId)
          }
        })
      )
  )
  yield* Fiber.joinAll(drivers)
})

Effect.runPromiseExit(Effect.scoped(program)).then((exit) => {
  if (Exit.isFailure(exit)) {
    process.stderr.write(`worker ${config.workerId} failed: ${String(exit.cause)}\n`)
    process.exit(1)
  }
  process.exit(0)
})
