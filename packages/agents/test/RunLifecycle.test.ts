/**
 * The run as a versioned, claimable state (issue 11): the lifecycle under a store, leases and
 * takeovers, at most once with the execution ledger (a crash between a side effect and its
 * checkpoint suspends the run in doubt), exact budgets across crashes and sub-runs, cancellation
 * is final, the single writer, the recovery worker.
 *
 * Crashes are simulated in-process: a fiber interrupted (the process is alive but stopped driving:
 * its lease is released), or a dead process (its store calls fail from the moment it dies, so it
 * never releases its lease, which then expires under `TestClock`).
 */
import {
  Agent,
  Approval,
  InvalidDecision,
  ReActCognition,
  RunInProgress,
  RunLease,
  RunNotResumable,
  RunRecovery,
  RunSuspended,
  SingleCallCognition
} from "@agentkit/agents"
import {
  BudgetExceeded,
  Cancelled,
  CheckpointStore,
  CorruptEntry,
  ExecutionLedger,
  markedFailedText,
  RunContext,
  StoreError
} from "@agentkit/core"
import type { Message } from "@agentkit/core"
import { failure, FakeLLM, Fixture, makeTestCtx, Seed, Turn } from "@agentkit/testing"
import type { TestContextOptions } from "@agentkit/testing"
import { asTool, Tool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Exit, Fiber, Layer, Option, Schema, TestClock } from "effect"
import { call, recordingStore, recordOf } from "./fixtures.js"

const { failureOf } = Fixture
const { lookupCall, MODEL, PROMPT, STATUS, TASK } = Seed

/** A dead process: from `kill()` on, every store call of this view fails (its writes never land). */
const killable = (inner: CheckpointStore.Service) => {
  let dead = false
  const guard =
    <Args extends ReadonlyArray<unknown>, A, E>(f: (...args: Args) => Effect.Effect<A, E>) =>
    (...args: Args): Effect.Effect<A, E | StoreError> =>
      Effect.suspend((): Effect.Effect<A, E | StoreError> =>
        dead
          ? Effect.fail(new StoreError({ operation: "any", message: "the process is dead", retryable: false }))
          : f(...args)
      )
  const store: CheckpointStore.Service = {
    create: guard(inner.create),
    claim: guard(inner.claim),
    save: guard(inner.save),
    heartbeat: guard(inner.heartbeat),
    release: guard(inner.release),
    finish: guard(inner.finish),
    load: guard(inner.load),
    list: guard(inner.list),
    decide: guard(inner.decide),
    decisions: guard(inner.decisions),
    requestCancel: guard(inner.requestCancel),
    prune: guard(inner.prune)
  }
  return { store, kill: () => void (dead = true) }
}

/** The outside world the processes share: a payment system that counts its charges. */
const payments = () => {
  const charges: Array<number> = []
  const started = Effect.runSync(Deferred.make<void>())
  let hang = false
  const charge = Tool.make("charge_card", {
    description: "Charge the customer's card. It really takes the money; there is no undo.",
    parameters: { amount: Schema.Number },
    sideEffecting: true,
    handler: ({ amount }) =>
      Effect.gen(function*() {
        charges.push(amount) // the side effect happens...
        yield* Deferred.succeed(started, undefined)
        if (hang) yield* Effect.never // ...and the process dies before the result is recorded
        return `charged $${amount}`
      })
  })
  const agent = () =>
    Agent.make({
      name: "billing",
      model: MODEL,
      prompt: PROMPT,
      cognition: ReActCognition.make({ tools: [charge, Seed.lookupOrder] })
    })
  return { agent, charges, started, hangNext: () => void (hang = true), stopHanging: () => void (hang = false) }
}

const layerOf = (
  llm: FakeLLM.FakeLLM | Layer.Layer<never>,
  stores: { readonly store: CheckpointStore.Service; readonly ledger?: ExecutionLedger.Service },
  options: Omit<TestContextOptions, "llm"> = {}
) =>
  Layer.mergeAll(
    makeTestCtx({ llm: llm as FakeLLM.FakeLLM, ...options }),
    CheckpointStore.layer(stores.store),
    stores.ledger === undefined ? Layer.empty : ExecutionLedger.layer(stores.ledger)
  )

const toolMessages = (messages: ReadonlyArray<Message.Message>) =>
  messages.flatMap((
    message
  ) => (message.role === "tool" ? [[message.toolCallId, message.content, message.isError] as const] : []))

const chargeCall = call("c1", "charge_card", { amount: 12 })

/** Lets other fibers run until `done` holds (a bounded number of scheduler turns). */
const until = (done: () => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 200 && !done(); i++) yield* Effect.yieldNow()
    expect(done()).toBe(true)
  })

/**
 * Process 1 asks for the charge; the charge happens; the process dies before the result is
 * checkpointed (its lease never released). Returns the stores for process 2.
 */
const crashAfterCharge = (world: ReturnType<typeof payments>) =>
  Effect.gen(function*() {
    const inner = CheckpointStore.makeMemory()
    const ledger = ExecutionLedger.makeMemory()
    const dying = killable(inner)
    world.hangNext()
    const first = FakeLLM.script([Turn({ toolCalls: [chargeCall] })])
    const fiber = yield* world.agent().run(TASK).pipe(
      Effect.provide(layerOf(first, { store: dying.store, ledger })),
      Effect.fork
    )
    yield* Deferred.await(world.started)
    dying.kill()
    yield* Fiber.interrupt(fiber)
    world.stopHanging()
    expect(world.charges).toEqual([12])
    return { store: inner, ledger }
  })

describe("the lifecycle under a store", () => {
  it.effect("new → created holding a lease; live lease → RunInProgress; expired → taken over; done → the recorded result", () =>
    Effect.gen(function*() {
      const inner = CheckpointStore.makeMemory()
      const dying = killable(inner)
      const hanging = FakeLLM.respond(() => Effect.never)
      const fiber = yield* Agent.make({ name: "a", model: MODEL })
        .run(TASK)
        .pipe(Effect.provide(layerOf(hanging, { store: dying.store })), Effect.fork)
      yield* until(() => hanging.calls === 1)
      const created = yield* recordOf(inner)
      expect([created.status, created.record.lease?.token, created.record.lease?.owner]).toEqual([
        "running",
        1,
        RunLease.defaults.owner
      ])
      dying.kill()
      yield* Fiber.interrupt(fiber)

      // the dead process's lease is still live: another drive is refused, naming the owner
      const busy = yield* Effect.exit(
        Agent.make({ name: "a", model: MODEL }).run(TASK).pipe(
          Effect.provide(layerOf(FakeLLM.script([]), { store: inner }))
        )
      )
      expect(failureOf(busy)).toBeInstanceOf(RunInProgress)
      expect(failureOf(busy)).toMatchObject({ runId: "test-run", owner: RunLease.defaults.owner, expiresAt: 30_000 })

      // after its ttl it is taken over (fencing token 2) and finished
      yield* TestClock.adjust(Duration.seconds(31))
      const llm = FakeLLM.script([Turn({ content: "hello" })])
      const result = yield* Agent.make({ name: "a", model: MODEL }).run(TASK).pipe(
        Effect.provide(layerOf(llm, { store: inner }))
      )
      expect(result.output).toBe("hello")
      const done = yield* recordOf(inner)
      expect([done.status, done.record.lease?.token, done.state.recoveries]).toEqual(["done", 2, 1])

      // an idempotent start: the recorded result, no model call
      const again = FakeLLM.script([])
      expect(
        yield* Agent.make({ name: "a", model: MODEL }).run("other").pipe(
          Effect.provide(layerOf(again, { store: inner }))
        )
      ).toEqual(result)
      expect(again.calls).toBe(0)
    }))

  it.effect("a suspended run → RunSuspended; a failed run → RunNotResumable naming why; a corrupt entry → CorruptEntry; nothing runs", () =>
    Effect.gen(function*() {
      const store = CheckpointStore.makeMemory()
      const gated = FakeLLM.script([Turn({ toolCalls: [call("c1", "cancel_order", { order_id: "A-771" })] })])
      const agent = Agent.make({
        name: "a",
        model: MODEL,
        cognition: ReActCognition.make({ tools: [Seed.cancelOrder] })
      })
      yield* agent.run(TASK).pipe(Effect.provide(layerOf(gated, { store }, { autonomy: "gated" })))
      const suspended = yield* Effect.exit(agent.run(TASK).pipe(Effect.provide(layerOf(FakeLLM.script([]), { store }))))
      expect(failureOf(suspended)).toBeInstanceOf(RunSuspended)

      const failing = FakeLLM.script([
        failure({ reason: "invalid_request", retryable: false, message: "400 bad request" })
      ])
      const failed = yield* Effect.exit(
        Agent.make({ name: "b", model: MODEL }).run(TASK).pipe(
          Effect.provide(layerOf(failing, { store }, { runId: "r-failed" }))
        )
      )
      expect(failureOf(failed)._tag).toBe("ChatModelError")
      expect((yield* recordOf(store, "r-failed")).status).toBe("failed")
      const again = FakeLLM.script([])
      const refused = yield* Effect.exit(
        Agent.make({ name: "b", model: MODEL }).run(TASK).pipe(
          Effect.provide(layerOf(again, { store }, { runId: "r-failed" }))
        )
      )
      expect(failureOf(refused)).toBeInstanceOf(RunNotResumable)
      expect(failureOf(refused).message).toBe(
        "run 'r-failed' is failed: ChatModelError: 400 bad request; it is never driven again"
      )

      store.unsafePlant("r-corrupt", "{ not a record")
      const corrupt = yield* Effect.exit(
        Agent.make({ name: "b", model: MODEL }).run(TASK).pipe(
          Effect.provide(layerOf(again, { store }, { runId: "r-corrupt" }))
        )
      )
      expect(failureOf(corrupt)).toBeInstanceOf(CorruptEntry)
      expect(again.calls).toBe(0)
    }))

  it.effect("a run of another tenant under the same id is refused: never its recorded result", () =>
    Effect.gen(function*() {
      const store = CheckpointStore.makeMemory()
      yield* Agent.make({ name: "a", model: MODEL }).run(TASK).pipe(
        Effect.provide(layerOf(FakeLLM.script([Turn({ content: "secret" })]), { store }, { scope: { orgId: 1 } }))
      )
      const other = yield* Effect.exit(
        Agent.make({ name: "a", model: MODEL }).run(TASK).pipe(
          Effect.provide(layerOf(FakeLLM.script([]), { store }, { scope: { orgId: 2 } }))
        )
      )
      expect(failureOf(other)).toMatchObject({
        _tag: "RunNotResumable",
        message: "run 'test-run' belongs to another tenant; a run is only driven in its own tenant's scope"
      })
    }))

  it.effect("a run taken over more than 3 times ends failed with that reason", () =>
    Effect.gen(function*() {
      const store = CheckpointStore.makeMemory()
      const agent = Agent.make({ name: "a", model: MODEL })
      for (let drive = 0; drive < 4; drive++) {
        const hanging = FakeLLM.respond(() => Effect.never)
        const fiber = yield* agent.run(TASK).pipe(Effect.provide(layerOf(hanging, { store })), Effect.fork)
        yield* until(() => hanging.calls === 1)
        yield* Fiber.interrupt(fiber) // the fiber stops: the lease is released, the next drive takes over at once
        expect((yield* recordOf(store)).state.recoveries).toBe(drive)
      }
      const llm = FakeLLM.script([Turn({ content: "never" })])
      const exit = yield* Effect.exit(agent.run(TASK).pipe(Effect.provide(layerOf(llm, { store }))))
      expect(failureOf(exit)).toBeInstanceOf(RunNotResumable)
      expect(failureOf(exit).message).toBe(
        "run 'test-run' is failed: recovered more than 3 times; it is never driven again"
      )
      expect(llm.calls).toBe(0)
      const { record, status } = yield* recordOf(store)
      expect([status, JSON.parse(record.result!)]).toEqual(["failed", { reason: "recovered more than 3 times" }])
    }))

  it.effect("maxRecoveries is configurable (RunLease.layer); 0 fails the first takeover", () =>
    Effect.gen(function*() {
      const store = CheckpointStore.makeMemory()
      const agent = Agent.make({ name: "a", model: MODEL })
      const hanging = FakeLLM.respond(() => Effect.never)
      const fiber = yield* agent.run(TASK).pipe(Effect.provide(layerOf(hanging, { store })), Effect.fork)
      yield* until(() => hanging.calls === 1)
      yield* Fiber.interrupt(fiber)
      const exit = yield* Effect.exit(
        agent.run(TASK).pipe(
          Effect.provide(layerOf(FakeLLM.script([]), { store })),
          Effect.provide(RunLease.layer({ maxRecoveries: 0 }))
        )
      )
      expect(failureOf(exit).message).toBe(
        "run 'test-run' is failed: recovered more than 0 times; it is never driven again"
      )
      expect(() => RunLease.settings({ heartbeat: "1 minute", ttl: "30 seconds" })).toThrow(
        "runLease.heartbeat must be shorter than runLease.ttl"
      )
    }))

  it.effect("each heartbeat carries the lease the previous one returned, not the one the run started with", () =>
    Effect.gen(function*() {
      const inner = CheckpointStore.makeMemory()
      const sent: Array<number> = []
      const returned: Array<number> = []
      const store: CheckpointStore.Service = {
        ...inner,
        heartbeat: (lease, ttlMs) => {
          sent.push(lease.expiresAt)
          return Effect.tap(
            inner.heartbeat(lease, ttlMs),
            (beat) => Effect.sync(() => returned.push(beat.lease.expiresAt))
          )
        }
      }
      const hanging = FakeLLM.respond(() => Effect.never)
      const fiber = yield* Agent.make({ name: "a", model: MODEL }).run(TASK).pipe(
        Effect.provide(layerOf(hanging, { store })),
        Effect.fork
      )
      yield* until(() => hanging.calls === 1)
      const started = Option.getOrThrow(yield* inner.load("test-run")).lease!.expiresAt
      for (let beat = 0; beat < 3; beat++) yield* TestClock.adjust(Duration.seconds(10))
      yield* until(() => returned.length === 3)
      yield* Fiber.interrupt(fiber)
      expect(sent).toEqual([started, returned[0], returned[1]])
      expect(returned[0]).toBeGreaterThan(started)
    }))
})

describe("cancellation is final", () => {
  it.effect("a cancelled run is recorded cancelled; driving the same id again runs nothing", () =>
    Effect.gen(function*() {
      const world = payments()
      const store = CheckpointStore.makeMemory()
      const llm = FakeLLM.respond((_request, n) => (n === 1 ? Turn({ toolCalls: [chargeCall] }) : Effect.never))
      const fiber = yield* world.agent().run(TASK).pipe(Effect.provide(layerOf(llm, { store })), Effect.fork)
      yield* Deferred.await(world.started)
      yield* store.requestCancel("test-run", "operator")
      // the owner's heartbeat sees the request and cancels the run
      yield* TestClock.adjust(Duration.seconds(10))
      const exit = yield* Fiber.await(fiber)
      expect(failureOf(exit)).toBeInstanceOf(Cancelled)
      const { record, status } = yield* recordOf(store)
      expect([status, JSON.parse(record.result!)]).toEqual(["cancelled", { reason: "Cancelled: run cancelled" }])
      expect(world.charges).toEqual([12])

      const again = FakeLLM.script([Turn({ toolCalls: [chargeCall] }), Turn({ content: "charged" })])
      const redrive = yield* Effect.exit(world.agent().run(TASK).pipe(Effect.provide(layerOf(again, { store }))))
      expect(failureOf(redrive)).toBeInstanceOf(RunNotResumable)
      expect(again.calls).toBe(0)
      expect(world.charges).toEqual([12])
    }))
})

describe("at most once: the execution ledger", () => {
  it.effect("a dead process between the side effect and its checkpoint: the re-drive suspends in doubt, the charge is not repeated", () =>
    Effect.gen(function*() {
      const world = payments()
      const stores = yield* crashAfterCharge(world)
      yield* TestClock.adjust(Duration.seconds(31)) // the dead process's lease expires
      const llm = FakeLLM.script([])
      const result = yield* world.agent().run(TASK).pipe(Effect.provide(layerOf(llm, stores)))
      expect(world.charges).toEqual([12])
      expect(llm.calls).toBe(0) // the model call of the turn was not repeated either
      expect(result.stopReason).toBe("awaiting_approval")
      const [entry] = result.suspended!.pending
      expect(entry).toMatchObject({
        kind: "InDoubt",
        reasons: ["in_doubt"],
        call: chargeCall,
        request: { key: "test-run/t0/c0", claimedAt: 0 }
      })
      const { status, state } = yield* recordOf(stores.store)
      expect([status, state.phase, state.pending]).toEqual(["suspended", "suspended", result.suspended!.pending])
    }))

  const decide = (decision: (entry: Approval.PendingEntry) => Approval.Decision) =>
    Effect.gen(function*() {
      const world = payments()
      const stores = yield* crashAfterCharge(world)
      yield* TestClock.adjust(Duration.seconds(31))
      const suspended = yield* world.agent().run(TASK).pipe(Effect.provide(layerOf(FakeLLM.script([]), stores)))
      const entry = suspended.suspended!.pending[0]!
      const llm = FakeLLM.script([Turn({ content: "Done." })])
      const result = yield* world.agent().resume("test-run", Approval.decisions([[entry.id, decision(entry)]])).pipe(
        Effect.provide(layerOf(llm, stores))
      )
      return { world, stores, llm, result, entry }
    })

  it.effect("markDone: the model sees the given outcome, the charge is not repeated, the ledger records it", () =>
    Effect.gen(function*() {
      const { llm, result, stores, world } = yield* decide((entry) =>
        Approval.markDone(entry.digest, "charged $12 (receipt R-88)")
      )
      expect(result.output).toBe("Done.")
      expect(world.charges).toEqual([12])
      expect(toolMessages(llm.requests[0]!.messages)).toEqual([["c1", "charged $12 (receipt R-88)", false]])
      expect(yield* stores.ledger.claim("test-run/t0/c0", "x")).toMatchObject({ _tag: "InDoubt" }) // another digest is never Completed
    }))

  it.effect("markFailed: the model sees an error naming the reason, the charge is not repeated", () =>
    Effect.gen(function*() {
      const { llm, world } = yield* decide((entry) => Approval.markFailed(entry.digest, "the bank has no record of it"))
      expect(world.charges).toEqual([12])
      expect(toolMessages(llm.requests[0]!.messages)).toEqual([[
        "c1",
        markedFailedText("the bank has no record of it"),
        true
      ]])
    }))

  it.effect("retry: the claim is removed and the call runs again (once), the model sees its real result", () =>
    Effect.gen(function*() {
      const { llm, world } = yield* decide((entry) => Approval.retry(entry.digest))
      expect(world.charges).toEqual([12, 12])
      expect(toolMessages(llm.requests[0]!.messages)).toEqual([["c1", "charged $12", false]])
    }))

  it.effect("an approval verdict on a call in doubt is refused (InvalidDecision): nothing runs, the run stays as it was", () =>
    Effect.gen(function*() {
      const world = payments()
      const stores = yield* crashAfterCharge(world)
      yield* TestClock.adjust(Duration.seconds(31))
      const suspended = yield* world.agent().run(TASK).pipe(Effect.provide(layerOf(FakeLLM.script([]), stores)))
      const entry = suspended.suspended!.pending[0]!
      const before = yield* recordOf(stores.store)
      const exit = yield* Effect.exit(
        world.agent().resume("test-run", Approval.decisions([[entry.id, Approval.approve(entry.digest)]])).pipe(
          Effect.provide(layerOf(FakeLLM.script([]), stores))
        )
      )
      expect(failureOf(exit)).toBeInstanceOf(InvalidDecision)
      expect(failureOf(exit).message).toContain("(kind InDoubt) must be one of markDone, markFailed, retry")
      expect(world.charges).toEqual([12])
      const after = yield* recordOf(stores.store)
      expect([after.record.version, after.record.state]).toEqual([before.record.version, before.record.state])
    }))

  it.effect("a crash after the ledger recorded the outcome: the re-drive replays it without running the tool", () =>
    Effect.gen(function*() {
      const world = payments()
      const store = CheckpointStore.makeMemory()
      const ledger = ExecutionLedger.makeMemory()
      // the model call after the charge dies: the charge's result is in the ledger and the checkpoint
      const first = FakeLLM.script([Turn({ toolCalls: [chargeCall] })])
      yield* Effect.exit(world.agent().run(TASK).pipe(Effect.provide(layerOf(first, { store, ledger }))))
      expect(world.charges).toEqual([12])
      // the checkpoint is rolled back to before the result (as if it never landed): only the ledger knows
      const llm = FakeLLM.script([Turn({ content: "Done." })])
      const { record } = yield* recordOf(store)
      const state = JSON.parse(record.state)
      const rolledBack = {
        ...state,
        phase: "tools",
        iteration: 0,
        transcript: state.transcript.slice(0, 3),
        turn: { completed: [] }
      }
      store.unsafePlant(
        "test-run",
        JSON.stringify({
          ...record,
          state: JSON.stringify(rolledBack),
          lease: record.lease,
          parentRunId: undefined,
          threadId: undefined,
          result: undefined,
          cancelRequested: undefined
        })
      )
      const result = yield* world.agent().run(TASK).pipe(Effect.provide(layerOf(llm, { store, ledger })))
      expect(result.output).toBe("Done.")
      expect(world.charges).toEqual([12])
      expect(toolMessages(llm.requests[0]!.messages)).toEqual([["c1", "charged $12", false]])
    }))

  it.effect("two fibers resuming one suspended run: exactly one execution; the other is refused", () =>
    Effect.gen(function*() {
      const store = CheckpointStore.makeMemory()
      let cancels = 0
      const gate = yield* Deferred.make<void>()
      const slowCancel = Tool.make("cancel_order", {
        description: "Cancel an order. This really cancels it — there is no undo.",
        parameters: { order_id: Schema.String },
        sideEffecting: true,
        handler: ({ order_id }) =>
          Effect.as(Effect.zipRight(Effect.sync(() => cancels++), Deferred.await(gate)), `order ${order_id} cancelled`)
      })
      const agent = () =>
        Agent.make({ name: "a", model: MODEL, cognition: ReActCognition.make({ tools: [slowCancel] }) })
      const suspended = yield* agent()
        .run(TASK)
        .pipe(
          Effect.provide(
            layerOf(FakeLLM.script([Turn({ toolCalls: [call("c1", "cancel_order", { order_id: "A-771" })] })]), {
              store
            }, { autonomy: "gated" })
          )
        )
      const entry = suspended.suspended!.pending[0]!
      const decisions = Approval.decisions([[entry.id, Approval.approve(entry.digest)]])
      const resumeOnce = (llm: FakeLLM.FakeLLM) =>
        Effect.exit(agent().resume("test-run", decisions).pipe(Effect.provide(layerOf(llm, { store }))))
      const llms = [FakeLLM.script([Turn({ content: "done 1" })]), FakeLLM.script([Turn({ content: "done 2" })])]
      const fibers = yield* Effect.forEach(llms, (llm) => Effect.fork(resumeOnce(llm)))
      yield* Effect.yieldNow()
      yield* Deferred.succeed(gate, undefined)
      const exits = yield* Effect.forEach(fibers, Fiber.join)
      expect(cancels).toBe(1)
      const succeeded = exits.filter(Exit.isSuccess)
      expect(succeeded).toHaveLength(1)
      const refused = exits.filter(Exit.isFailure).map(failureOf)
      expect(refused.map((error) => error._tag)).toEqual(["RunInProgress"])
      expect(llms[0]!.calls + llms[1]!.calls).toBe(1)
      // and a third resume after it finished: not resumable, nothing runs
      const third = yield* resumeOnce(FakeLLM.script([]))
      expect(failureOf(third)).toBeInstanceOf(RunNotResumable)
      expect(cancels).toBe(1)
    }))
})

describe("exact budgets across crashes and sub-runs", () => {
  it.effect("maxModelCalls 2 holds across a crash: the call in flight when the process died counts", () =>
    Effect.gen(function*() {
      const store = CheckpointStore.makeMemory()
      const agent = Agent.make({
        name: "a",
        model: MODEL,
        cognition: ReActCognition.make({ tools: [Seed.lookupOrder] })
      })
      const first = FakeLLM.respond((_request, n) => (n === 1 ? Turn({ toolCalls: [lookupCall()] }) : Effect.never))
      const fiber = yield* agent.run(TASK).pipe(
        Effect.provide(layerOf(first, { store }, { budget: { maxModelCalls: 2 } })),
        Effect.fork
      )
      yield* until(() => first.calls === 2) // the second request reached the provider, then the process stopped
      yield* Fiber.interrupt(fiber)
      const second = FakeLLM.script([Turn({ content: "a third request" })])
      const exit = yield* Effect.exit(
        agent.run(TASK).pipe(Effect.provide(layerOf(second, { store }, { budget: { maxModelCalls: 2 } })))
      )
      expect(failureOf(exit)).toBeInstanceOf(BudgetExceeded)
      expect(failureOf(exit).message).toBe("calls 3 > 2")
      expect(second.calls).toBe(0)
      expect(first.calls + second.calls).toBe(2)
    }))

  it.effect("50 parallel sub-agents under maxModelCalls 5: exactly 5 requests reach the model", () =>
    Effect.gen(function*() {
      const researcher = Agent.make({ name: "researcher", model: MODEL, cognition: SingleCallCognition.make() })
      const research = asTool(researcher, {
        name: "research",
        description: "Delegate a research sub-task to the researcher agent."
      })
      const parent = Agent.make({ name: "lead", model: MODEL, cognition: ReActCognition.make({ tools: [research] }) })
      const calls = Array.from({ length: 50 }, (_, i) => call(`r${i}`, "research", { task: `topic ${i}` }))
      const llm = FakeLLM.respond((_request, n) =>
        n === 1
          ? Turn({ toolCalls: calls })
          : Effect.as(Effect.promise(() => Promise.resolve()), Turn({ content: "found" }))
      )
      const budget = { maxModelCalls: 5, maxConcurrency: 64 }
      const exit = yield* Effect.exit(parent.run(TASK).pipe(Effect.provide(makeTestCtx({ llm, budget }))))
      expect(failureOf(exit)).toMatchObject({ _tag: "BudgetExceeded", message: "calls 6 > 5" })
      expect(llm.calls).toBe(5)
    }))

  it.effect("1,000 model calls of $0.0000125 on one run's budget total exactly $0.0125", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ name: "a", model: MODEL })
      const results = yield* Effect.forEach(Array.from({ length: 1000 }), () => agent.run(TASK), { concurrency: 100 })
      expect(results[0]!.usage.costUsd).toBe(0.0000125)
      const { budget } = yield* RunContext
      expect([budget.spentUsd, budget.spentNanos, budget.modelCalls]).toEqual([0.0125, 12_500_000, 1000])
    }).pipe(
      Effect.provide(makeTestCtx({
        llm: FakeLLM.respond(() =>
          Turn({ content: "ok", usage: { inputTokens: 1, outputTokens: 1, costUsd: 0.0000125 } })
        )
      }))
    ))
})

describe("the single writer", () => {
  it.effect("two tools of one turn finishing at once: every commit holds every result before it; a crash loses neither", () =>
    Effect.gen(function*() {
      const inner = CheckpointStore.makeMemory()
      // a slow store: each save takes a few scheduler turns, so the two results' saves overlap
      const slow: CheckpointStore.MemoryStore = Object.assign(Object.create(inner) as CheckpointStore.MemoryStore, {
        save: (lease: CheckpointStore.Lease, request: Parameters<CheckpointStore.Service["save"]>[1]) =>
          Effect.zipRight(Effect.repeatN(Effect.yieldNow(), 5), inner.save(lease, request))
      })
      const { saves, store } = recordingStore(slow)
      const ran = { a: 0, b: 0 }
      const both = yield* Deferred.make<void>()
      const tool = (name: "a" | "b") =>
        Tool.make(`tool_${name}`, {
          description: "A read-only test tool that answers once both tools are running.",
          parameters: {},
          sideEffecting: false,
          handler: () =>
            Effect.as(Effect.zipRight(Effect.sync(() => ran[name]++), Deferred.await(both)), `result ${name}`)
        })
      const agent = Agent.make({
        name: "a",
        model: MODEL,
        cognition: ReActCognition.make({ tools: [tool("a"), tool("b")] })
      })
      const first = FakeLLM.respond((_request, n) =>
        n === 1
          ? Turn({ toolCalls: [call("c1", "tool_a"), call("c2", "tool_b")] })
          : Effect.die(new Error("the process dies after the round"))
      )
      const fiber = yield* agent.run(TASK).pipe(Effect.provide(layerOf(first, { store })), Effect.fork)
      yield* until(() => ran.a + ran.b === 2)
      yield* Deferred.succeed(both, undefined)
      yield* Fiber.await(fiber)
      // committed in version order; a commit never holds fewer results than one before it in the turn
      const tools = saves.filter((save) => save.state.phase === "tools").map((save) =>
        save.state.turn.completed.map((r) => r.callId).sort()
      )
      for (let i = 1; i < tools.length; i++) expect(tools[i]!.length).toBeGreaterThanOrEqual(tools[i - 1]!.length)
      const llm = FakeLLM.script([Turn({ content: "final" })])
      const result = yield* agent.run(TASK).pipe(Effect.provide(layerOf(llm, { store: inner })))
      expect(result.output).toBe("final")
      expect(ran).toEqual({ a: 1, b: 1 })
      expect(toolMessages(llm.requests[0]!.messages)).toEqual([
        ["c1", "result a", false],
        ["c2", "result b", false]
      ])
    }))
})

describe("a tool knows its call", () => {
  it.effect("the handler gets { signal, context, callId, runId } with the real (path-derived) run id", () =>
    Effect.gen(function*() {
      const seen: Array<readonly [string | undefined, string | undefined, boolean]> = []
      const probe = Tool.make("probe", {
        description: "Report the call id and the run id the handler was given.",
        parameters: {},
        sideEffecting: false,
        handler: (_args, { callId, runId, signal }) => {
          seen.push([callId, runId, signal instanceof AbortSignal])
          return "ok"
        }
      })
      const researcher = Agent.make({
        name: "researcher",
        model: MODEL,
        cognition: ReActCognition.make({ tools: [probe] })
      })
      const research = asTool(researcher, {
        name: "research",
        description: "Delegate a research sub-task to the researcher agent."
      })
      const lead = Agent.make({
        name: "lead",
        model: MODEL,
        cognition: ReActCognition.make({ tools: [probe, research] })
      })
      const llm = FakeLLM.script([
        Turn({ toolCalls: [call("p1", "probe"), call("r1", "research", { task: "look" })] }),
        Turn({ toolCalls: [call("p2", "probe")] }), // the researcher
        Turn({ content: "looked" }), // the researcher
        Turn({ content: "done" })
      ])
      yield* lead.run(TASK).pipe(Effect.provide(makeTestCtx({ llm, runId: "run-7" })))
      expect(seen.sort()).toEqual([
        ["p1", "run-7", true],
        ["p2", "run-7/research#r1", true]
      ])
    }))
})

describe("RunRecovery", () => {
  it.effect("picks up a run whose lease expired (a dead process) and finishes it", () =>
    Effect.gen(function*() {
      const inner = CheckpointStore.makeMemory()
      const dying = killable(inner)
      let looked = 0
      const lookup = Tool.make("lookup_order", {
        description: "Look up an order by its id and return its status line.",
        parameters: { order_id: Schema.String },
        sideEffecting: false,
        handler: ({ order_id }) =>
          Effect.sync(() => (looked++, `order ${order_id}: shipped 2026-08-14, arriving Tuesday`))
      })
      const agent = Agent.make({
        name: "support",
        model: MODEL,
        prompt: PROMPT,
        cognition: ReActCognition.make({ tools: [lookup] })
      })
      const first = FakeLLM.respond((_request, n) => (n === 1 ? Turn({ toolCalls: [lookupCall()] }) : Effect.never))
      const fiber = yield* agent.run(TASK).pipe(
        Effect.provide(layerOf(first, { store: dying.store }, { scope: { orgId: 7 }, autonomy: "gated" })),
        Effect.fork
      )
      yield* until(() => first.calls === 2)
      dying.kill()
      yield* Fiber.interrupt(fiber)

      const llm = FakeLLM.script([Turn({ content: "A-771 shipped." })])
      const worker = Layer.provide(
        RunRecovery.layer({ agents: [agent], every: "10 seconds" }),
        Layer.merge(CheckpointStore.layer(inner), makeTestCtx({ llm }))
      )
      yield* Effect.gen(function*() {
        yield* TestClock.adjust(Duration.seconds(20)) // passes at 0, 10, 20 s: the lease (until 30 s) is live
        expect(llm.calls).toBe(0)
        expect((yield* recordOf(inner)).status).toBe("running")
        yield* TestClock.adjust(Duration.seconds(20)) // the pass at 40 s takes it over
        const { record, status } = yield* recordOf(inner)
        expect(status).toBe("done")
        expect(JSON.parse(record.result!).output).toBe("A-771 shipped.")
      }).pipe(Effect.provide(worker), Effect.scoped)
      expect(looked).toBe(1)
      // the context was rebuilt from the state: the model call saw the first round, under the run's own scope
      expect(toolMessages(llm.requests[0]!.messages)).toEqual([["c1", STATUS, false]])
      expect((yield* recordOf(inner)).record.tenant).toBe("[7,null,null,null]")
    }))

  it.effect("resumes a suspended run once every pending entry has a recorded decision; cancels what was asked to be cancelled", () =>
    Effect.gen(function*() {
      const store = CheckpointStore.makeMemory()
      const agent = Agent.make({
        name: "support",
        model: MODEL,
        cognition: ReActCognition.make({ tools: [Seed.cancelOrder] })
      })
      const ask = () =>
        FakeLLM.script([
          Turn({
            toolCalls: [
              call("c1", "cancel_order", { order_id: "A-771" }),
              call("c2", "cancel_order", { order_id: "B-102" })
            ]
          })
        ])
      const suspended = yield* agent.run(TASK).pipe(Effect.provide(layerOf(ask(), { store }, { autonomy: "gated" })))
      yield* agent.run(TASK).pipe(Effect.provide(layerOf(ask(), { store }, { autonomy: "gated", runId: "to-cancel" })))
      const [a, b] = suspended.suspended!.pending
      const llm = FakeLLM.script([Turn({ content: "Both handled." })])
      const pass = RunRecovery.runOnce({ agents: [agent] }).pipe(
        Effect.provide(Layer.merge(CheckpointStore.layer(store), makeTestCtx({ llm })))
      )

      yield* store.decide("test-run", a!.id, { decision: JSON.stringify(Approval.approve(a!.digest)), by: "alice" })
      yield* store.requestCancel("to-cancel", "bob")
      const once = yield* pass
      expect(once).toMatchObject({ resumed: [], cancelled: ["to-cancel"] })
      expect((yield* recordOf(store)).status).toBe("suspended") // one entry is still undecided
      expect((yield* recordOf(store, "to-cancel")).status).toBe("cancelled")

      yield* store.decide("test-run", b!.id, {
        decision: JSON.stringify(Approval.reject(b!.digest, "keep it")),
        by: "alice"
      })
      const twice = yield* pass
      expect(twice.resumed).toEqual(["test-run"])
      const { record, status } = yield* recordOf(store)
      expect([status, JSON.parse(record.result!).output]).toEqual(["done", "Both handled."])
      expect(toolMessages(llm.requests[0]!.messages)).toEqual([
        ["c1", "order A-771 cancelled (customer request)", false],
        ["c2", "DENIED: tool call rejected by human approval: keep it", true]
      ])
    }))

  it.effect("leaves alone the runs of agents it was not given", () =>
    Effect.gen(function*() {
      const store = CheckpointStore.makeMemory()
      const hanging = FakeLLM.respond(() => Effect.never)
      const fiber = yield* Agent.make({ name: "other", model: MODEL }).run(TASK).pipe(
        Effect.provide(layerOf(hanging, { store })),
        Effect.fork
      )
      yield* until(() => hanging.calls === 1)
      yield* Fiber.interrupt(fiber)
      const report = yield* RunRecovery.runOnce({ agents: [Agent.make({ name: "support", model: MODEL })] }).pipe(
        Effect.provide(Layer.merge(CheckpointStore.layer(store), makeTestCtx({ llm: FakeLLM.script([]) })))
      )
      expect(report.skipped).toEqual(["test-run"])
      expect(Option.getOrThrow(yield* store.load("test-run")).status).toBe("running")
    }))
})
