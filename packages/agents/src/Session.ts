/**
 * Sessions: a conversation that continues across runs and requests, kept in a `SessionStore`
 * under the run's tenant (`scope.storeKey`) and its `threadId` (the `RunContext`'s: the one name
 * for a conversation across runs; `Scope.sessionId` is not it, it is a part of the tenant key).
 *
 * `Session.run(agent, input)` claims the thread (a second request on the thread while the first
 * runs fails `ThreadBusy`: two requests never interleave), runs the agent on the thread's stored
 * messages followed by `input`, and on an answer appends the run's transcript (without the system
 * prompt, in its compacted form when `Compaction` rewrote it) in one atomic write that ends the
 * claim. A run that fails releases the claim and appends nothing; a run that suspends keeps the
 * claim (for `suspendedTtl`) and `Session.resume` appends when it ends. A process that dies
 * between the run's end and the append leaves the thread as it was before the run: under a
 * `CheckpointStore`, driving the same run id again returns the recorded result and appends it
 * then, once (the append is idempotent by run id).
 *
 * The thread is bounded: past `maxMessages`, its oldest turns are dropped (a tool call with its
 * results, never one without the other). Retention is the store's `prune`. Without a
 * `SessionStore` in context, threads live in one in-memory store per process.
 *
 * A claim is not renewed while its run runs: a run longer than `claimTtl` may lose its thread to
 * another request, and its append then fails `StaleThreadClaim` (nothing is written); give
 * `claimTtl` the longest a request may take.
 *
 * @since 0.2.0
 */
import { CanonicalJson, CheckpointStore, ConfigurationError, Message, RunContext, SessionStore } from "@agentkit/core"
import type { Invoker, StoreError } from "@agentkit/core"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { Agent } from "./Agent.js"
import type { AgentResult } from "./AgentResult.js"
import type * as Approval from "./Approval.js"
import type { AgentError, ResumeError } from "./Cognition.js"
import { turnsOf } from "./Compaction.js"
import { RunStateCorrupt } from "./Errors.js"

/**
 * The options of `Session.run` and `Session.resume`.
 *
 * @example
 * ```ts
 * import type { Session } from "@agentkit/agents"
 *
 * const options: Session.Options = { claimTtl: "10 minutes", suspendedTtl: "1 day", maxMessages: 500 }
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /** How long a running request holds the thread before another may take it over (default 10 minutes). */
  readonly claimTtl?: Duration.DurationInput | undefined
  /** How long a suspended run keeps the thread while it waits for decisions (default 1 day). */
  readonly suspendedTtl?: Duration.DurationInput | undefined
  /** The most messages a thread keeps; older turns go first (default 2000). */
  readonly maxMessages?: number | undefined
  /** Names the process holding a claim (default `pid-<pid>`). */
  readonly owner?: string | undefined
}

/**
 * The errors a session adds to a run's: the thread is busy, the claim was lost, no `threadId`, a
 * stored thread that does not decode, or a broken store.
 *
 * @example
 * ```ts
 * import type { Session } from "@agentkit/agents"
 *
 * const retryLater = (error: Session.SessionError) => error._tag === "ThreadBusy"
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export type SessionError =
  | SessionStore.ThreadBusy
  | SessionStore.StaleThreadClaim
  | ConfigurationError
  | RunStateCorrupt
  | StoreError

const fallback = SessionStore.makeMemory()
const decodeMessages = Schema.decodeUnknownEither(Schema.parseJson(Schema.Array(Message.Message)))

/** The session store in context, else the process's default in-memory one. */
const storeOf = Effect.map(Effect.serviceOption(SessionStore.SessionStore), Option.getOrElse(() => fallback))

interface Settings {
  readonly claimTtlMs: number
  readonly suspendedTtlMs: number
  readonly maxMessages: number
  readonly owner: string
}

const millis = (field: string, input: Duration.DurationInput | undefined, fallbackMs: number) => {
  if (input === undefined) return Either.right(fallbackMs)
  const decoded = Duration.decodeUnknown(input)
  return Option.isSome(decoded) && Duration.isFinite(decoded.value) && Duration.toMillis(decoded.value) > 0
    ? Either.right(Duration.toMillis(decoded.value))
    : Either.left(
      new ConfigurationError({
        field: `session.${field}`,
        message: `session.${field} must be a positive, finite duration (e.g. "10 minutes"); got ${String(input)}`
      })
    )
}

const settingsOf = (options: Options): Either.Either<Settings, ConfigurationError> =>
  Either.gen(function*() {
    const claimTtlMs = yield* millis("claimTtl", options.claimTtl, 10 * 60_000)
    const suspendedTtlMs = yield* millis("suspendedTtl", options.suspendedTtl, 24 * 3_600_000)
    const maxMessages = options.maxMessages ?? 2000
    if (!Number.isSafeInteger(maxMessages) || maxMessages < 1) {
      return yield* Either.left(
        new ConfigurationError({
          field: "session.maxMessages",
          message: `session.maxMessages must be a positive integer; got ${String(options.maxMessages)}`
        })
      )
    }
    return { claimTtlMs, suspendedTtlMs, maxMessages, owner: options.owner ?? `pid-${process.pid}` }
  })

/** The thread's key in the run's context; a run without a `threadId` has no session. */
const keyOf = (context: RunContext.Service): Either.Either<SessionStore.ThreadKey, ConfigurationError> =>
  context.threadId === undefined
    ? Either.left(
      new ConfigurationError({
        field: "threadId",
        message: "a session runs on a thread: give the RunContext a threadId (RunContext.layer({ threadId }))"
      })
    )
    : Either.right({ tenant: context.scope.storeKey, threadId: context.threadId })

/** The messages a thread keeps of a transcript: no system prompt, at most `max` (whole turns dropped first). */
const stored = (transcript: ReadonlyArray<Message.Message>, max: number): ReadonlyArray<Message.Message> => {
  const { turns } = turnsOf(transcript)
  let count = 0
  let first = turns.length
  while (first > 0 && count + turns[first - 1]!.length <= max) count += turns[--first]!.length
  return turns.slice(first).flat()
}

const historyOf = (thread: Option.Option<SessionStore.Thread>) => {
  if (Option.isNone(thread)) return Either.right<ReadonlyArray<Message.Message>>([])
  return Either.mapLeft(
    decodeMessages(thread.value.messages),
    (error) =>
      new RunStateCorrupt({
        runId: thread.value.threadId,
        detail: `thread '${thread.value.threadId}' holds messages that do not decode: ${error.message}`
      })
  )
}

/**
 * The failures that leave a run recoverable under a checkpoint store (its record as it was): the
 * claim stays, so driving the same run id again gets the thread back.
 */
const recoverable = new Set([
  "StoreError",
  "CorruptEntry",
  "StaleLease",
  "RunInProgress",
  "RunStateCorrupt",
  "RunStateVersionUnsupported"
])

/** A resume's refusals of its decisions: nothing ran, and the run still waits. */
const refusals = new Set([
  "ToolArgumentError",
  "InvalidDecisions",
  "UnknownPending",
  "DigestMismatch",
  "InvalidDecision",
  "AlreadyDecided"
])

/** What happens to the claim when the run ends: append its transcript, keep it (suspended), or release it. */
const settle = <A, E>(
  store: SessionStore.Service,
  claim: SessionStore.Claim,
  settings: Settings,
  exit: Exit.Exit<AgentResult<A>, E>,
  durable: boolean
): Effect.Effect<AgentResult<A>, E | SessionStore.StaleThreadClaim | StoreError> => {
  if (Exit.isFailure(exit)) {
    const failure = Cause.failureOption(exit.cause)
    const tag = Option.isSome(failure) ? (failure.value as { readonly _tag?: unknown })._tag : undefined
    const keep = durable && (typeof tag !== "string" || recoverable.has(tag))
    return keep ? exit : Effect.zipRight(Effect.ignore(store.release(claim)), exit)
  }
  const result = exit.value
  if (result.suspended !== undefined) return Effect.as(store.renew(claim, settings.suspendedTtlMs), result)
  const messages = CanonicalJson.stringify(stored(result.transcript, settings.maxMessages))
  return Effect.as(store.append(claim, { runId: claim.runId, messages }), result)
}

/**
 * Runs `agent` on the context's thread: its stored messages, then `input`; the run's transcript
 * is appended when it answers. The thread is the `RunContext`'s `threadId` in its tenant.
 *
 * @example
 * ```ts
 * import { Agent, Session } from "@agentkit/agents"
 * import { RunContext } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * declare const agent: Agent.Agent
 * const reply = Session.run(agent, "and where is it now?").pipe(
 *   RunContext.provide({ threadId: "customer-42" })
 * )
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const run = <R, A>(
  agent: Agent<R, A>,
  input: string | ReadonlyArray<Message.Message>,
  options: Options = {}
): Effect.Effect<AgentResult<A>, AgentError | SessionError, RunContext | Invoker | R> =>
  Effect.gen(function*() {
    const settings = yield* settingsOf(options)
    const context = yield* RunContext
    const key = yield* keyOf(context)
    const store = yield* storeOf
    const claimed = yield* store.claim(key, {
      runId: context.runId,
      owner: settings.owner,
      ttlMs: settings.claimTtlMs
    })
    const claim = claimed.claim
    const checkpoints = yield* Effect.serviceOption(CheckpointStore)
    const thread = claimed.thread
    if (Option.isSome(thread) && thread.value.lastRunId === context.runId) {
      // appended already: the run's turns are in the thread
      yield* store.release(claim)
      return yield* new SessionStore.StaleThreadClaim({ threadId: key.threadId, token: claim.token })
    }
    if (!claimed.own && Option.isSome(checkpoints)) {
      // a run recorded before whose claim another run has had since: its turns would overwrite theirs
      const found = yield* Effect.either(checkpoints.value.load(context.runId))
      if (Either.isLeft(found) || Option.isSome(found.right)) {
        yield* Effect.ignore(store.release(claim))
        if (Either.isLeft(found)) return yield* Effect.fail(found.left as StoreError)
        return yield* new SessionStore.StaleThreadClaim({ threadId: key.threadId, token: claim.token })
      }
    }
    const history = historyOf(thread)
    if (Either.isLeft(history)) {
      yield* Effect.ignore(store.release(claim))
      return yield* history.left
    }
    const messages = history.right.concat(typeof input === "string" ? [Message.user(input)] : input)
    const durable = Option.isSome(checkpoints)
    const exit = yield* Effect.exit(agent.run(messages)).pipe(
      // interrupted: without a checkpoint store nothing can drive the run again, so the thread is freed
      Effect.onInterrupt(() => (durable ? Effect.void : Effect.ignore(store.release(claim))))
    )
    return yield* settle(store, claim, settings, exit, durable)
  })

/**
 * Continues a suspended run on the context's thread with decisions (`agent.resume`), and appends
 * its transcript when it answers. The thread must still be the run's (its claim kept while it
 * waited); otherwise `StaleThreadClaim`, and nothing runs.
 *
 * @example
 * ```ts
 * import { Agent, Session } from "@agentkit/agents"
 * import type { Approval } from "@agentkit/agents"
 * import { RunContext } from "@agentkit/core"
 *
 * declare const agent: Agent.Agent
 * declare const decisions: Approval.Decisions
 * const resumed = Session.resume(agent, "run-7", decisions).pipe(RunContext.provide({ threadId: "customer-42" }))
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const resume = <R, A>(
  agent: Agent<R, A>,
  runId: string,
  decisions: Approval.Decisions,
  options: Options = {}
): Effect.Effect<AgentResult<A>, ResumeError | SessionError, RunContext | Invoker | R> =>
  Effect.gen(function*() {
    const settings = yield* settingsOf(options)
    const context = yield* RunContext
    const key = yield* keyOf(context)
    const store = yield* storeOf
    const claimed = yield* store.claim(key, { runId, owner: settings.owner, ttlMs: settings.claimTtlMs })
    if (!claimed.own) {
      yield* Effect.ignore(store.release(claimed.claim))
      return yield* new SessionStore.StaleThreadClaim({ threadId: key.threadId, token: claimed.claim.token })
    }
    const exit = yield* Effect.exit(agent.resume(runId, decisions))
    // a refused resume (bad decisions: nothing ran) leaves the run suspended, holding its thread
    const refused = Exit.isFailure(exit) && Option.exists(Cause.failureOption(exit.cause), (error) =>
      refusals.has((error as { readonly _tag?: unknown })._tag as string))
    if (refused) {
      return yield* Effect.zipRight(store.renew(claimed.claim, settings.suspendedTtlMs), exit)
    }
    return yield* settle(store, claimed.claim, settings, exit, true)
  })

/**
 * The messages stored on the context's thread (empty for a new thread).
 *
 * @example
 * ```ts
 * import { Session } from "@agentkit/agents"
 * import { RunContext } from "@agentkit/core"
 *
 * const history = Session.messages.pipe(RunContext.provide({ threadId: "customer-42" }))
 * ```
 *
 * @since 0.2.0
 * @category getters
 */
export const messages: Effect.Effect<
  ReadonlyArray<Message.Message>,
  ConfigurationError | RunStateCorrupt | StoreError,
  RunContext
> = Effect.gen(function*() {
  const context = yield* RunContext
  const key = yield* keyOf(context)
  const store = yield* storeOf
  return yield* historyOf(yield* store.load(key))
})
