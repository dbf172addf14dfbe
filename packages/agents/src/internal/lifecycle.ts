/**
 * A run's lifecycle under a checkpoint store, the same for every cognition. Without a store a run
 * is just its body: nothing is encoded, leased or saved, and no fiber is started.
 *
 * With a store, `agent.run` under a run id looks the record up first:
 *
 * - none: the record is created holding a new lease, and the run starts fresh;
 * - `done`: the recorded result, no model call (an idempotent start);
 * - `failed` or `cancelled`: `RunNotResumable`, naming the status and the reason;
 * - `suspended`: `RunSuspended` with its pending entries (only `resume` continues it);
 * - `running` with a live lease: `RunInProgress`, naming the owner;
 * - `running` with an expired or released lease (its process died or stopped): taken over (a new
 *   fencing token), one more recovery counted; past `maxRecoveries` the run is finished `failed`
 *   (`recovered more than N times`) and the call fails `RunNotResumable`.
 *
 * While it runs, the root holds its lease: a heartbeat fiber renews it, applies a requested
 * cancellation, and interrupts the run if the lease was lost (another process took it over).
 * Sub-runs keep records of their own, written under the root's lease. On exit: a result finishes
 * the record `done` (a suspension leaves it `suspended`); a typed failure finishes it `failed`
 * (`Cancelled`: `cancelled`); an interruption or a defect releases the lease, so the next drive
 * takes it over at once; a store failure or a lost lease leaves the record as it is. @internal
 */
import {
  AlreadyDecided,
  CanonicalJson,
  CheckpointStore,
  IdempotencyStore,
  RunContext,
  StaleLease,
  StoreError
} from "@agentkit/core"
import type { CorruptEntry } from "@agentkit/core"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Results from "../AgentResult.js"
import * as Approval from "../Approval.js"
import type { LifecycleError } from "../Cognition.js"
import type { RunStateCorrupt } from "../Errors.js"
import { InvalidDecisions, RunInProgress, RunNotResumable, RunSuspended } from "../Errors.js"
import { RunLease } from "../RunLease.js"
import * as RunState from "../RunState.js"
import type { StructuredOutput } from "../StructuredOutput.js"
import { type LeaseHolder, makeWriter, type WriteError, type Writer } from "./checkpointer.js"
import { lazy } from "./lazy.js"
import * as Recorded from "./runRecord.js"

/** What the lifecycle adds to a run's own errors (the public `LifecycleError` of `Cognition`). */
export type { LifecycleError }

/** How a run's body saves its state; absent without a store. */
export interface Durable {
  readonly checkpoint: (
    status: "running" | "suspended",
    state: () => RunState.RunState
  ) => Effect.Effect<void, WriteError>
}

/** Where a body starts: a fresh run (no state), or a saved state, with decisions when it waits on some. */
export interface Start {
  readonly state: RunState.RunState | undefined
  readonly decisions: ReadonlyMap<string, Approval.Decision> | undefined
  readonly durable: Durable | undefined
}

/** A cognition's run, as the lifecycle drives it. */
export interface Program<E, R> {
  readonly agent: string
  readonly cognition: RunState.RunState["cognition"]
  /** The agent's structured output: a recorded result keeps `parsed` encoded, and decodes it back. */
  readonly output?: StructuredOutput<unknown> | undefined
  /** Checks the cognition's own part of a saved state (`cognitionState`): a problem is `RunStateCorrupt`. */
  readonly checkState?: ((state: RunState.RunState) => RunStateCorrupt | undefined) | undefined
  /** The first state of a new run (made only when there is a store). */
  readonly fresh: (context: RunContext.Service) => RunState.RunState
  /**
   * The run itself, from `start`. With `fiber`, it is called in a step already running on that
   * fiber (a plain run, from the lifecycle's own step) and may build the run in place.
   */
  readonly body: (start: Start, fiber?: Fiber.RuntimeFiber<unknown, unknown>) => Effect.Effect<AgentResult, E, R>
}

/** A run's result; `parsed` is the structured output's, when the agent has one. */
type AgentResult = Results.AgentResult<unknown>

/** What the root gives its sub-runs: the store and its lease. */
class RunTree extends Context.Tag("@agentkit/agents/internal/RunTree")<
  RunTree,
  { readonly store: CheckpointStore.Service; readonly holder: LeaseHolder }
>() {}

const leaseSettings = Effect.map(Effect.serviceOption(RunLease), Option.getOrElse(() => RunLease.defaults))

const otherTenant = (runId: string): RunNotResumable =>
  new RunNotResumable({
    runId,
    message: `run '${runId}' belongs to another tenant; a run is only driven in its own tenant's scope`
  })

const notResumable = (record: CheckpointStore.RunRecord): RunNotResumable => {
  const reason = Option.match(Recorded.decodeReason(record), { onNone: () => "", onSome: (r) => `: ${r}` })
  return new RunNotResumable({
    runId: record.runId,
    message: `run '${record.runId}' is ${record.status}${reason}; it is never driven again`
  })
}

/**
 * Decodes a record's state, naming the record, and checks the cognition's own part of it (before
 * anything is written or runs, so a state that does not decode leaves the record as it is).
 */
const stateOf = (record: CheckpointStore.RunRecord, program: Program<unknown, unknown>) =>
  Effect.flatMap(RunState.decode(record.runId, record.state), (state) => {
    const problem = program.checkState?.(state)
    return problem === undefined ? Effect.succeed(state) : Effect.fail(problem)
  })

/** The decisions recorded for a run tree, decoded (an entry that does not decode is left out: it rejects). */
const recordedDecisions = (store: CheckpointStore.Service, rootRunId: string) =>
  Effect.map(store.decisions(rootRunId), (recorded) => {
    const decisions = new Map<string, Approval.Decision>()
    for (const entry of recorded) {
      const decoded = decodeDecision(entry.decision)
      if (Option.isSome(decoded)) decisions.set(entry.pendingId, decoded.value)
    }
    return decisions
  })
const decodeDecision = lazy(() => Schema.decodeUnknownOption(Schema.parseJson(Approval.Decision)))

/** Tells an idempotency store that a top-level run ended (not a suspension), so its outcomes expire. */
const endingRun = <E, R>(
  idempotency: IdempotencyStore.Service | undefined,
  context: RunContext.Service,
  self: Effect.Effect<AgentResult, E, R>
): Effect.Effect<AgentResult, E, R> =>
  idempotency === undefined || context.parentRunId !== undefined
    ? self
    : Effect.onExit(self, (exit) =>
      Exit.isSuccess(exit) && exit.value.suspended !== undefined
        ? Effect.void
        : Effect.ignore(idempotency.endRun(context.runId)))

const none: Start = { state: undefined, decisions: undefined, durable: undefined }

/**
 * Runs a program: a plain body without a store (the services are read in one step, so a run
 * without a store pays for nothing else), else the lifecycle (root or sub-run).
 */
export const drive = <E, R>(program: Program<E, R>): Effect.Effect<AgentResult, E | LifecycleError, R | RunContext> =>
  Effect.withFiberRuntime((fiber) => {
    const env = fiber.currentContext as Context.Context<RunContext>
    const context = Context.get(env, RunContext)
    const store = Context.getOption(env as Context.Context<never>, CheckpointStore)
    const idempotency = Option.getOrUndefined(Context.getOption(env as Context.Context<never>, IdempotencyStore))
    if (context.parentRunId === undefined) {
      return endingRun(
        idempotency,
        context,
        Option.isNone(store) ? program.body(none, fiber) : root(program, store.value, context, true)
      )
    }
    const tree = Context.getOption(env as Context.Context<never>, RunTree)
    return suspendsParent(
      context,
      Option.isNone(store) || Option.isNone(tree) || tree.value.store !== store.value
        ? program.body(none)
        : child(program, tree.value.store, tree.value.holder, context)
    )
  })

/**
 * A sub-run that stops to wait (a gated call and no approver, a call in doubt) fails with
 * `RunSuspended`, listing its entries with their paths: the call that started it (`asTool`)
 * passes it through, and the loop above suspends the whole tree on it. A sub-run never ends
 * with an empty answer its parent would take for one.
 */
const suspendsParent = <E, R>(
  context: RunContext.Service,
  self: Effect.Effect<AgentResult, E, R>
): Effect.Effect<AgentResult, E | RunSuspended, R> =>
  Effect.flatMap(
    self,
    (result) =>
      result.suspended === undefined
        ? Effect.succeed(result)
        : Effect.fail(new RunSuspended({ runId: context.runId, pending: result.suspended.pending }))
  )

const root = <E, R>(
  program: Program<E, R>,
  store: CheckpointStore.Service,
  context: RunContext.Service,
  retry: boolean
): Effect.Effect<AgentResult, E | LifecycleError, R> =>
  Effect.gen(function*() {
    const settings = yield* leaseSettings
    const runId = context.runId
    const request = { owner: settings.owner, ttlMs: Duration.toMillis(settings.ttl) }
    const found = yield* store.load(runId)
    if (Option.isNone(found)) {
      const state = program.fresh(context)
      const created = yield* Effect.either(
        store.create(
          {
            runId,
            rootRunId: runId,
            agent: program.agent,
            tenant: context.scope.storeKey,
            threadId: context.threadId,
            state: RunState.encode(state)
          },
          request
        )
      )
      if (created._tag === "Left") {
        const error = created.left
        if (error._tag !== "RunExists") return yield* Effect.fail(error as StoreError | CorruptEntry)
        // another drive created it first: look again, once
        if (retry) return yield* root(program, store, context, false)
        return yield* new StoreError({
          operation: "create",
          message: `run '${runId}' exists but could not be read back`,
          retryable: true
        })
      }
      return yield* supervise(program, store, context, { current: created.right.lease }, created.right.version, {
        state: undefined,
        decisions: undefined,
        saveFirst: false
      })
    }
    const record = found.value
    if (record.tenant !== context.scope.storeKey) return yield* otherTenant(runId)
    switch (record.status) {
      case "done":
        return yield* Recorded.decodeResult(record, program.output)
      case "failed":
      case "cancelled":
        return yield* notResumable(record)
      case "suspended": {
        const state = yield* stateOf(record, program)
        return yield* new RunSuspended({ runId, pending: state.pending })
      }
      case "running":
        break
    }
    const now = yield* Clock.currentTimeMillis
    if (record.lease !== undefined && record.lease.expiresAt > now) {
      return yield* new RunInProgress({ runId, owner: record.lease.owner, expiresAt: record.lease.expiresAt })
    }
    const claimed = yield* Effect.either(store.claim(runId, request))
    if (claimed._tag === "Left") {
      const error = claimed.left
      if (error._tag === "LeaseHeld") {
        return yield* new RunInProgress({ runId, owner: error.owner, expiresAt: error.expiresAt })
      }
      if (error._tag === "RunFinished" && retry) {
        return yield* root(program, store, context, false)
      }
      if (error._tag === "RunFinished" || error._tag === "RunNotFound") {
        return yield* new RunNotResumable({ runId, message: error.message })
      }
      return yield* Effect.fail(error)
    }
    const holder: LeaseHolder = { current: claimed.right.lease }
    return yield* takeOver(program, store, context, holder, claimed.right.record, settings.maxRecoveries, undefined)
  })

/**
 * Continues a claimed run whose process stopped: one more recovery (past the limit the run is
 * failed), what was in flight counted as spent, the recorded decisions of a suspension applied.
 */
const takeOver = <E, R>(
  program: Program<E, R>,
  store: CheckpointStore.Service,
  context: RunContext.Service,
  holder: LeaseHolder,
  record: CheckpointStore.RunRecord,
  maxRecoveries: number,
  decisions: ReadonlyMap<string, Approval.Decision> | undefined
): Effect.Effect<AgentResult, E | LifecycleError, R> =>
  Effect.gen(function*() {
    const decoded = yield* Effect.either(stateOf(record, program))
    if (decoded._tag === "Left") {
      yield* Effect.ignore(store.release(holder.current))
      return yield* decoded.left
    }
    const saved = decoded.right
    const recoveries = saved.recoveries + 1
    if (recoveries > maxRecoveries) {
      const reason = `recovered more than ${maxRecoveries} times`
      yield* makeWriter(store, holder, record.runId, record.version).finish(
        "failed",
        Recorded.encodeReasonText(reason)
      )
      return yield* new RunNotResumable({
        runId: record.runId,
        message: `run '${record.runId}' is failed: ${reason}; it is never driven again`
      })
    }
    // what was in flight (its open reservations) counts as spent when the state is restored
    const state: RunState.RunState = { ...saved, recoveries }
    const waitingOn = state.phase === "suspended"
      ? (decisions ?? (yield* recordedDecisions(store, record.rootRunId)))
      : undefined
    return yield* supervise(program, store, context, holder, record.version, {
      state,
      decisions: waitingOn,
      saveFirst: true
    })
  })

interface Begin {
  readonly state: RunState.RunState | undefined
  readonly decisions: ReadonlyMap<string, Approval.Decision> | undefined
  /**
   * Whether the state is saved (`running`) before anything runs: a takeover (its recovery count
   * and what was in flight) and a resume (the run is running again from now on).
   */
  readonly saveFirst: boolean
}

/** Drives a root run holding its lease: heartbeat, body, and the record's end. */
const supervise = <E, R>(
  program: Program<E, R>,
  store: CheckpointStore.Service,
  context: RunContext.Service,
  holder: LeaseHolder,
  version: number,
  begin: Begin
): Effect.Effect<AgentResult, E | LifecycleError, R> =>
  Effect.gen(function*() {
    const settings = yield* leaseSettings
    // every state the root saves carries the tree's budget as it is then (the takeover's first
    // save: what was in flight, now counted as spent)
    const initial = begin.state
    const writer = makeWriter(store, holder, context.runId, version, {
      budget: context.budget,
      initial: initial === undefined ? () => program.fresh(context) : () => initial
    })
    if (begin.state !== undefined) restoreInto(context, begin.state)
    if (begin.saveFirst && begin.state !== undefined) {
      const state = begin.state
      const first = yield* Effect.either(writer.save("running", () => state))
      if (first._tag === "Left") {
        yield* Effect.ignore(store.release(holder.current))
        return yield* first.left
      }
    }
    const body = program
      .body({ state: begin.state, decisions: begin.decisions, durable: { checkpoint: writer.save } })
      .pipe(Effect.provideService(RunTree, { store, holder }))
    const lost = { value: false }
    // under a ceiling, each reservation of the tree (a model request, a tool execution) is saved
    // with the root's state before it is sent, so a crash never loses a call from the count; a
    // write that fails stops the call (the run ends with its error). Without a ceiling there is
    // nothing to enforce, and the run saves only at its steps.
    const journal: { failure: WriteError | undefined } = { failure: undefined }
    const budget = context.budget
    const ceiled = budget.maxCostUsd !== undefined || budget.maxModelCalls !== undefined ||
      budget.maxTokens !== undefined || budget.maxToolCalls !== undefined
    const detach = ceiled
      ? budget.addJournal(Effect.catchAll(writer.journal, (error) => {
        journal.failure ??= error
        return Effect.die(error)
      }))
      : () => {}
    return yield* Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.fork(restore(body))
        const beat = yield* Effect.fork(restore(heartbeat(store, holder, settings, context, fiber, lost)))
        const awaited = yield* Effect.exit(restore(Fiber.await(fiber)))
        const ran = Exit.isSuccess(awaited) ? awaited.value : yield* Fiber.interrupt(fiber)
        detach()
        const exit: Exit.Exit<AgentResult, E | WriteError> = journal.failure !== undefined && Exit.isFailure(ran)
          ? Exit.fail(journal.failure)
          : ran
        yield* Fiber.interrupt(beat)
        const ended = yield* Effect.exit(end(store, holder, writer, context, exit, lost.value, program.output))
        if (Exit.isFailure(ended)) return yield* ended
        if (Exit.isFailure(awaited)) return yield* awaited // the caller was interrupted: stay interrupted
        if (lost.value && Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)) {
          return yield* new StaleLease({ runId: context.runId, token: holder.current.token })
        }
        return yield* exit
      })
    ) as Effect.Effect<AgentResult, E | LifecycleError, R>
  })

/** Renews the lease until the run ends; applies a requested cancellation; stops the run if the lease is lost. */
const heartbeat = (
  store: CheckpointStore.Service,
  holder: LeaseHolder,
  settings: RunLease.Settings,
  context: RunContext.Service,
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  lost: { value: boolean }
): Effect.Effect<void> => {
  const ttlMs = Duration.toMillis(settings.ttl)
  const beat: Effect.Effect<boolean> = Effect.zipRight(
    Effect.sleep(settings.heartbeat),
    // the lease held now (read at each beat: a beat's answer replaces it)
    Effect.matchEffect(Effect.suspend(() => store.heartbeat(holder.current, ttlMs)), {
      onSuccess: ({ cancelRequested, lease }) =>
        Effect.sync(() => {
          holder.current = lease
          if (cancelRequested !== undefined && !context.cancellation.isCancelled) context.cancellation.cancel()
          return true
        }),
      onFailure: (error) =>
        error._tag === "StaleLease"
          ? Effect.as(
            Effect.sync(() => {
              lost.value = true
              fiber.unsafeInterruptAsFork(fiber.id())
            }),
            false
          )
          : Effect.as(Effect.logWarning(`run '${context.runId}': heartbeat failed: ${error.message}`), true)
    })
  )
  const loop: Effect.Effect<void> = Effect.flatMap(beat, (again) => (again ? loop : Effect.void))
  return loop
}

/** Writes how a root run ended. */
const end = (
  store: CheckpointStore.Service,
  holder: LeaseHolder,
  writer: Writer,
  context: RunContext.Service,
  exit: Exit.Exit<AgentResult, unknown>,
  lost: boolean,
  output: StructuredOutput<unknown> | undefined
): Effect.Effect<void, WriteError> => {
  if (lost) return Effect.void // another process has the run
  if (Exit.isSuccess(exit)) {
    // a suspension saved its state as it stopped; the lease ends so a resume can claim it at once
    return exit.value.suspended !== undefined
      ? store.release(holder.current)
      : writer.finish("done", Recorded.encodeResult(exit.value, output))
  }
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure)) {
    const error = failure.value as { readonly _tag?: unknown }
    switch (error._tag) {
      case "Cancelled":
        return writer.finish("cancelled", Recorded.encodeReason(error))
      case "StaleLease":
        return Effect.void
      case "StoreError":
      case "CorruptEntry":
      case "RunStateCorrupt":
      case "RunStateVersionUnsupported":
        return Effect.ignore(store.release(holder.current)) // the run stays recoverable, its record as it was
      default:
        return writer.finish("failed", Recorded.encodeReason(error))
    }
  }
  if (Cause.isInterruptedOnly(exit.cause) && context.cancellation.isCancelled) {
    return writer.finish("cancelled", Recorded.encodeReasonText("Cancelled: run cancelled"))
  }
  // an interruption or a defect: the process is alive but stopped driving; the next drive takes over at once
  return Effect.ignore(store.release(holder.current))
}

/** A sub-run under its root's lease: its own record, no lease or heartbeat of its own. */
const child = <E, R>(
  program: Program<E, R>,
  store: CheckpointStore.Service,
  holder: LeaseHolder,
  context: RunContext.Service
): Effect.Effect<AgentResult, E | LifecycleError, R> =>
  Effect.gen(function*() {
    const runId = context.runId
    const found = yield* store.load(runId)
    let version = 1
    let begin: Begin = { state: undefined, decisions: undefined, saveFirst: false }
    if (Option.isNone(found)) {
      const created = yield* Effect.either(
        store.create(
          {
            runId,
            rootRunId: context.rootRunId,
            parentRunId: context.parentRunId,
            agent: program.agent,
            tenant: context.scope.storeKey,
            threadId: context.threadId,
            state: RunState.encode(program.fresh(context))
          },
          holder.current
        )
      )
      if (created._tag === "Left") {
        return yield* Effect.fail(
          created.left._tag === "RunExists" || created.left._tag === "RunNotFound" ? lostRun(holder) : created.left
        )
      }
    } else {
      const record = found.value
      if (record.status === "done") return yield* Recorded.decodeResult(record, program.output)
      if (record.status === "failed" || record.status === "cancelled") return yield* notResumable(record)
      const saved = yield* stateOf(record, program)
      version = record.version
      // the parent is re-driving the call that started it: what was in flight counts as spent; a
      // suspended sub-run goes on with the decisions its root was resumed with, for its own entries
      begin = {
        state: saved,
        decisions: saved.phase === "suspended"
          ? decisionsFor(saved, yield* recordedDecisions(store, context.rootRunId))
          : undefined,
        saveFirst: saved.phase === "suspended"
      }
    }
    if (begin.state !== undefined) restoreInto(context, begin.state)
    const writer = makeWriter(store, holder, runId, version)
    if (begin.saveFirst && begin.state !== undefined) {
      const state = begin.state
      yield* writer.save("running", () => state)
    }
    const exit = yield* Effect.exit(
      program.body({ state: begin.state, decisions: begin.decisions, durable: { checkpoint: writer.save } })
    )
    yield* childEnd(writer, context, exit, program.output)
    return yield* exit
  })

/**
 * Starts a run from its saved state: the shared budget's counters, the tree's legs (touched
 * again) and its tally's usage (its own and its sub-runs').
 */
const restoreInto = (context: RunContext.Service, state: RunState.RunState): void => {
  context.budget.restore(state.budget)
  context.restore({ legs: state.legs, usage: Recorded.usageOf(state.treeUsage) })
}

/**
 * The decisions for a suspended sub-run's own entries: those recorded for its root (a resume
 * records every entry of the tree, checked, before anything runs; nothing running in the tree can
 * add one); `undefined` when none was recorded (it stays suspended).
 */
const decisionsFor = (
  state: RunState.RunState,
  recorded: ReadonlyMap<string, Approval.Decision>
): ReadonlyMap<string, Approval.Decision> | undefined => {
  let found: Map<string, Approval.Decision> | undefined
  for (const entry of state.pending) {
    const decision = recorded.get(entry.id)
    if (decision !== undefined) (found ??= new Map()).set(entry.id, decision)
  }
  return found
}

const lostRun = (holder: LeaseHolder): WriteError =>
  new StaleLease({ runId: holder.current.rootRunId, token: holder.current.token })

const childEnd = (
  writer: Writer,
  context: RunContext.Service,
  exit: Exit.Exit<AgentResult, unknown>,
  output: StructuredOutput<unknown> | undefined
): Effect.Effect<void, WriteError> => {
  if (Exit.isSuccess(exit)) {
    return exit.value.suspended !== undefined
      ? Effect.void
      : writer.finish("done", Recorded.encodeResult(exit.value, output))
  }
  const failure = Cause.failureOption(exit.cause)
  if (Option.isNone(failure)) {
    return Cause.isInterruptedOnly(exit.cause) && context.cancellation.isCancelled
      ? writer.finish("cancelled", Recorded.encodeReasonText("Cancelled: run cancelled"))
      : Effect.void
  }
  const tag = (failure.value as { readonly _tag?: unknown })._tag
  if (
    tag === "StaleLease" || tag === "StoreError" || tag === "CorruptEntry" || tag === "RunStateCorrupt" ||
    tag === "RunStateVersionUnsupported"
  ) {
    return Effect.void
  }
  return writer.finish(
    tag === "Cancelled" ? "cancelled" : "failed",
    Recorded.encodeReason(failure.value)
  )
}

/** Checks a resume's decisions against the state it would continue: the cognition's rules. */
export type Validate<V> = (
  state: RunState.RunState,
  decisions: Readonly<Record<string, unknown>>
) => Effect.Effect<ReadonlyMap<string, Approval.Decision>, V>

/** A recorded decision's text in canonical form (a store may hold it as any JSON). */
const canonical = (text: string): string => {
  try {
    return CanonicalJson.stringify(JSON.parse(text))
  } catch {
    return text
  }
}

const describeValue = (value: unknown): string =>
  value === null
    ? "null"
    : Array.isArray(value)
    ? "an array"
    : typeof value === "object"
    ? "an object"
    : `${typeof value} ${String(value)}`

/**
 * Continues a suspended root run with decisions: checked (shape, ids, digests, verdicts, edits)
 * against its stored state before anything changes, recorded first-writer-wins, then applied.
 * Any refusal leaves the run as it was. A resume that crashed mid-way (the record is `running`,
 * its lease not live, its state still waiting on the same entries) is taken over with the same
 * decisions.
 */
export const resume = <E, R, V>(
  program: Program<E, R>,
  runId: string,
  raw: unknown,
  validate: Validate<V>
): Effect.Effect<AgentResult, E | V | LifecycleError | InvalidDecisions | AlreadyDecided, R | RunContext> =>
  Effect.gen(function*() {
    const store = yield* Effect.serviceOption(CheckpointStore)
    const nothing = new RunNotResumable({ runId, message: `no suspended run '${runId}' to resume` })
    if (Option.isNone(store)) return yield* nothing
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
      return yield* new InvalidDecisions({ runId, received: describeValue(raw) })
    }
    // a frozen copy, taken now: changing the caller's object later changes nothing that runs
    const decisions = Approval.snapshot(raw) as Readonly<Record<string, unknown>>
    const context = yield* RunContext
    const settings = yield* leaseSettings
    const found = yield* store.value.load(runId)
    if (Option.isNone(found)) return yield* nothing
    const record = found.value
    if (record.tenant !== context.scope.storeKey) return yield* otherTenant(runId)
    if (record.runId !== record.rootRunId) {
      return yield* new RunNotResumable({
        runId,
        message: `run '${runId}' is a sub-run: resume its root '${record.rootRunId}'`
      })
    }
    if (record.status === "done") return yield* nothing
    if (record.status === "failed" || record.status === "cancelled") return yield* notResumable(record)
    const now = yield* Clock.currentTimeMillis
    if (record.status === "running") {
      if (record.lease !== undefined && record.lease.expiresAt > now) {
        return yield* new RunInProgress({ runId, owner: record.lease.owner, expiresAt: record.lease.expiresAt })
      }
      const peek = yield* stateOf(record, program)
      if (peek.phase !== "suspended") {
        return yield* new RunNotResumable({ runId, message: `no suspended run '${runId}' to resume (it is running)` })
      }
    }
    const claimed = yield* Effect.either(
      store.value.claim(runId, { owner: settings.owner, ttlMs: Duration.toMillis(settings.ttl) })
    )
    if (claimed._tag === "Left") {
      const error = claimed.left
      if (error._tag === "LeaseHeld") {
        return yield* new RunInProgress({ runId, owner: error.owner, expiresAt: error.expiresAt })
      }
      if (error._tag === "RunFinished" || error._tag === "RunNotFound") return yield* nothing
      return yield* Effect.fail(error)
    }
    const holder: LeaseHolder = { current: claimed.right.lease }
    const current = claimed.right.record
    // from here on, a refusal releases the lease and changes nothing else
    const checked = yield* Effect.either(
      Effect.gen(function*() {
        if (current.status !== "suspended" && current.status !== "running") return yield* nothing
        const state = yield* stateOf(current, program)
        if (state.phase !== "suspended") return yield* nothing
        const resolved = yield* validate(state, decisions)
        const recorded = yield* store.value.decisions(runId)
        const texts = new Map<string, string>()
        for (const entry of state.pending) {
          const text = CanonicalJson.stringify(resolved.get(entry.id))
          texts.set(entry.id, text)
          const first = recorded.find((r) => r.pendingId === entry.id)
          if (first !== undefined && canonical(first.decision) !== text) {
            return yield* new AlreadyDecided({
              rootRunId: runId,
              pendingId: entry.id,
              decision: first.decision,
              by: first.by
            })
          }
        }
        for (const entry of state.pending) {
          if (recorded.some((r) => r.pendingId === entry.id)) continue
          const decision = resolved.get(entry.id)
          yield* store.value.decide(runId, entry.id, { decision: texts.get(entry.id)!, by: decision?.by })
        }
        return { state, resolved }
      })
    )
    if (checked._tag === "Left") {
      yield* Effect.ignore(store.value.release(holder.current))
      return yield* Effect.fail(checked.left)
    }
    // the run goes on as itself, whatever run id the resuming process's context carries
    const own = context.runId === runId
      ? context
      : yield* RunContext.make({
        runId,
        threadId: current.threadId,
        correlationId: checked.right.state.context.correlationId,
        scope: context.scope,
        budget: context.budget,
        autonomy: context.autonomy,
        cancellation: context.cancellation,
        tracing: context.tracing
      }).pipe(Effect.orDie)
    const run = current.status === "running"
      ? takeOver(program, store.value, own, holder, current, settings.maxRecoveries, checked.right.resolved)
      : supervise(program, store.value, own, holder, current.version, {
        state: checked.right.state,
        decisions: checked.right.resolved,
        saveFirst: true
      })
    const idempotency = Option.getOrUndefined(yield* Effect.serviceOption(IdempotencyStore))
    return yield* endingRun(idempotency, own, Effect.provideService(run, RunContext, own))
  }) as Effect.Effect<AgentResult, E | V | LifecycleError | InvalidDecisions | AlreadyDecided, R | RunContext>
