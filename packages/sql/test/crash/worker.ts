/**
 * A crash-suite worker: a long-lived process (compiled JS, started with `node`, so SIGKILL reaches
 * the process doing the work) that drives the runs the parent names, over the SQL stores, and
 * reports each point it passes on stdout. It may be killed at any moment; whatever it committed
 * must carry the run on in the next worker.
 *
 * The run it drives is the plug-in: `drive` here is a toy run with the real shape (a model turn,
 * then a side-effecting, non-idempotent tool call claimed in the execution ledger, per turn; one
 * turn's call gated on a person's approval; a lease with a heartbeat; takeover of an expired
 * lease). The agent-level suite plugs an `agent.run` in its place and keeps everything else.
 */
import { CanonicalJson, CheckpointStore, ExecutionLedger } from "@agentkit/core"
import { Context, Effect, Either, Exit, Fiber, Layer, Option, Queue, Redacted, Schedule } from "effect"
import { appendFileSync } from "node:fs"
import { SqlStores } from "../../src/index.js"
import { approvalId, encode, initialState, lines, toolKey } from "./protocol.js"
import type { Command, Event, Outcome, Point, RunState, WorkerConfig } from "./protocol.js"

const config = JSON.parse(process.argv[2] ?? "{}") as WorkerConfig
const send = (event: Event) => {
  process.stdout.write(encode(event))
}

const StoresLive =
  config.database.kind === "sqlite"
    ? SqlStores.layerSqlite({ filename: config.database.filename, busyTimeout: "2 seconds", migrate: false })
    : SqlStores.layerPg({ url: Redacted.make(config.database.url), schema: config.database.schema, maxConnections: 4, migrate: false })

let nonces = 0
const nonce = () => `${config.workerId}-${nonces++}`
const jitter = Effect.suspend(() => Effect.sleep(Math.floor(Math.random() * 3)))

/** The model: the call is logged when it is sent; the response carries a fresh nonce. */
const callModel = (runId: string, iteration: number) =>
  Effect.suspend(() => {
    const response = nonce()
    appendFileSync(config.callsLog, `${runId} ${iteration} ${response}\n`)
    return Effect.as(jitter, response)
  })

/** The side effect of the non-idempotent tool (a payment, say): logged when it happens. */
const sideEffect = (key: string) =>
  Effect.suspend(() => {
    const id = nonce()
    appendFileSync(config.effectsLog, `${key} ${id} ${Date.now()}\n`)
    return Effect.as(jitter, `charged:${id}`)
  })

class Stop {
  constructor(readonly outcome: Outcome, readonly detail?: string) {}
}

const program = Effect.gen(function* () {
  const context = yield* Layer.build(StoresLive)
  const checkpoints = Context.get(context, CheckpointStore)
  const ledger = Context.get(context, ExecutionLedger)
  const owner = `${config.workerId}/${process.pid}`
  const request = { owner, ttlMs: config.leaseTtlMs }
  const point = (runId: string, name: Point, iteration: number) => Effect.sync(() => send({ t: "point", runId, point: name, iteration }))
  const stop = (outcome: Outcome, detail?: string) => Effect.fail(new Stop(outcome, detail))

  /** Takes the run: creates it, or claims it (waiting out another owner's lease for a while). */
  const take = (runId: string): Effect.Effect<{ lease: CheckpointStore.Lease; version: number; state: RunState }, Stop | unknown> =>
    Effect.gen(function* () {
      for (let waited = 0; ; waited++) {
        const found = yield* checkpoints.load(runId)
        if (Option.isNone(found)) {
          const created = yield* Effect.either(
            checkpoints.create({ runId, rootRunId: runId, agent: "crash", tenant: "crash", state: CanonicalJson.stringify(initialState) }, request)
          )
          if (Either.isLeft(created)) {
            if (created.left._tag === "RunExists") continue
            return yield* Effect.fail(created.left)
          }
          yield* point(runId, "created", 0)
          return { lease: created.right.lease, version: 1, state: initialState }
        }
        const record = found.value
        if (record.status === "done" || record.status === "failed" || record.status === "cancelled") return yield* stop("already-finished")
        const claimed = yield* Effect.either(checkpoints.claim(runId, request))
        if (Either.isRight(claimed)) {
          const state = JSON.parse(claimed.right.record.state) as RunState
          yield* point(runId, record.status === "suspended" ? "resuming" : "takeover", state.iteration)
          return { lease: claimed.right.lease, version: claimed.right.record.version, state }
        }
        const error = claimed.left
        if (error._tag === "RunFinished") return yield* stop("already-finished")
        if (error._tag !== "LeaseHeld" || waited > 40) return yield* stop(error._tag === "LeaseHeld" ? "busy" : "error", error.message)
        // another owner's lease: live (a worker still on it) or not yet expired (a worker that died)
        yield* Effect.sleep(Math.max(1, Math.min(config.leaseTtlMs, error.expiresAt - Date.now()) + 5))
      }
    })

  const drive = (runId: string) =>
    Effect.gen(function* () {
      const taken = yield* take(runId)
      const lease = taken.lease
      let version = taken.version
      let state = taken.state
      const save = (status: "running" | "suspended", next: RunState) =>
        Effect.map(checkpoints.save(lease, { runId, expectedVersion: version, status, state: CanonicalJson.stringify(next) }), (v) => {
          version = v
          state = next
        })
      const suspend = (next: RunState, outcome: "suspended" | "in-doubt") =>
        Effect.gen(function* () {
          yield* save("suspended", next)
          yield* point(runId, "suspended", next.iteration)
          yield* checkpoints.release(lease)
          return yield* stop(outcome)
        })
      const steps = Effect.gen(function* () {
        for (;;) {
          const i = state.iteration
          if (i >= config.iterations) {
            yield* checkpoints.finish(lease, {
              runId,
              expectedVersion: version,
              status: "done",
              result: CanonicalJson.stringify({ responses: state.responses, results: state.results, approvals: state.approvals })
            })
            yield* point(runId, "finished", i)
            return "finished" as const
          }
          if (state.phase === "model") {
            yield* point(runId, "before-model", i)
            const response = yield* callModel(runId, i)
            yield* point(runId, "after-model", i)
            yield* save("running", { ...state, phase: "tools", responses: [...state.responses, response], pending: undefined })
            yield* point(runId, "committed-model", i)
            continue
          }
          if (i === config.approvalAt && state.approvals[String(i)] === undefined) {
            const decided = (yield* checkpoints.decisions(runId)).find((d) => d.pendingId === approvalId(i))
            if (decided === undefined) return yield* suspend({ ...state, pending: { kind: "Approval", id: approvalId(i) } }, "suspended")
            yield* save("running", { ...state, approvals: { ...state.approvals, [String(i)]: decided.by ?? "?" }, pending: undefined })
            yield* point(runId, "approval-applied", i)
          }
          const key = toolKey(runId, i)
          const claim = yield* ledger.claim(key, "charge:digest")
          let result: string
          if (claim._tag === "InDoubt") return yield* suspend({ ...state, pending: { kind: "InDoubt", id: `in-doubt-${key}`, key } }, "in-doubt")
          if (claim._tag === "Completed") result = claim.outcome.text
          else {
            yield* point(runId, "before-tool", i)
            result = yield* sideEffect(key)
            yield* point(runId, "after-tool", i)
            yield* ledger.complete(key, { text: result, isError: false })
          }
          yield* save("running", { ...state, iteration: i + 1, phase: "model", results: [...state.results, result], pending: undefined })
          yield* point(runId, "committed-tool", i)
        }
      })
      // the heartbeat keeps the lease; losing it (a takeover) stops the drive
      const heartbeat = checkpoints.heartbeat(lease, config.leaseTtlMs).pipe(
        Effect.repeat(Schedule.spaced(config.heartbeatMs)),
        Effect.zipRight(Effect.never)
      )
      return yield* Effect.raceFirst(steps, heartbeat)
    }).pipe(
      Effect.map((outcome): { outcome: Outcome; detail?: string } => ({ outcome })),
      Effect.catchAll((error) =>
        Effect.succeed(
          error instanceof Stop
            ? { outcome: error.outcome, ...(error.detail === undefined ? {} : { detail: error.detail }) }
            : typeof error === "object" && error !== null && "_tag" in error && (error._tag === "StaleLease" || error._tag === "VersionConflict")
              ? { outcome: "lost-lease" as const, detail: String((error as { message?: unknown }).message) }
              : { outcome: "error" as const, detail: String((error as { message?: unknown })?.message ?? error) }
        )
      ),
      Effect.flatMap((result) => Effect.sync(() => send({ t: "outcome", runId, ...result })))
    )

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
        Effect.gen(function* () {
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
