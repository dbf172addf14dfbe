/**
 * The session store port: where a conversation that continues across runs and requests is kept,
 * keyed by its tenant (the run's `scope.storeKey`) and its `threadId` (the one name for a
 * conversation across runs: `RunContext`'s `threadId`, the checkpoint record's `threadId`).
 *
 * A thread holds its messages (the stored, possibly compacted, prompt without the system prompt)
 * as one canonical JSON text, a version, and the id of the last run appended. A run on a thread
 * first claims it (one claim at a time: a second run is refused with `ThreadBusy` until the claim
 * is appended, released or expired; the same run id may claim again, so a re-driven or resumed run
 * gets its thread back), then appends its turns and ends its claim in one atomic write. An append
 * whose claim is no longer the thread's fails `StaleThreadClaim` and changes nothing.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { ErrorTypeId } from "./AgentkitError.js"
import { makeMemory as makeMemoryStore } from "./internal/sessionStore.js"
import type { StoreError } from "./StoreError.js"

/**
 * Which thread: its tenant (a scope's `storeKey`) and its `threadId`.
 *
 * @example
 * ```ts
 * import { Scope, SessionStore } from "@agentkit/core"
 *
 * const key: SessionStore.ThreadKey = { tenant: Scope.make({ orgId: "acme" }).storeKey, threadId: "t-1" }
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface ThreadKey {
  readonly tenant: string
  readonly threadId: string
}

/**
 * A stored thread.
 *
 * @example
 * ```ts
 * import type { SessionStore } from "@agentkit/core"
 *
 * const turns = (thread: SessionStore.Thread) => (JSON.parse(thread.messages) as Array<unknown>).length
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface Thread extends ThreadKey {
  /** The thread's messages (no system prompt) as canonical JSON: the prompt its next run continues. */
  readonly messages: string
  /** 0 before the first append; one more at each. */
  readonly version: number
  /** The run whose turns were appended last (an append is idempotent by run id). */
  readonly lastRunId: string | undefined
  /** When the thread was last appended to (epoch ms); retention prunes by it. */
  readonly updatedAt: number
}

/**
 * A run's claim on a thread: what an append must carry. `token` grows with every claim of the
 * thread, so a claim taken over by a newer one is stale.
 *
 * @example
 * ```ts
 * import type { SessionStore } from "@agentkit/core"
 *
 * const holder = (claim: SessionStore.Claim) => `${claim.runId} (token ${claim.token})`
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface Claim extends ThreadKey {
  readonly runId: string
  readonly owner: string
  readonly token: number
  readonly expiresAt: number
}

/**
 * What a claim asks for: the run, its owner (a process name) and how long the claim lasts
 * unless appended or released.
 *
 * @example
 * ```ts
 * import type { SessionStore } from "@agentkit/core"
 *
 * const request: SessionStore.ClaimRequest = { runId: "run-7", owner: "worker-1", ttlMs: 60_000 }
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface ClaimRequest {
  readonly runId: string
  readonly owner: string
  readonly ttlMs: number
}

/**
 * A claim and the thread as it was when claimed (`None` for a new thread).
 *
 * @example
 * ```ts
 * import type { SessionStore } from "@agentkit/core"
 * import { Option } from "effect"
 *
 * const version = (claimed: SessionStore.Claimed) => Option.match(claimed.thread, { onNone: () => 0, onSome: (t) => t.version })
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface Claimed {
  readonly claim: Claim
  readonly thread: Option.Option<Thread>
  /** Whether the thread's claim (live or expired) was this run's already: a re-driven or resumed run. */
  readonly own: boolean
}

/**
 * The session store.
 *
 * @example
 * ```ts
 * import { SessionStore } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const count = (store: SessionStore.Service) =>
 *   Effect.map(store.load({ tenant: "t", threadId: "t-1" }), (thread) => thread._tag)
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface Service {
  /**
   * Claims a thread for a run (making it when new): refused with `ThreadBusy` while another run's
   * claim is live; an expired claim is taken over; the same run id claims its own claim again.
   */
  readonly claim: (key: ThreadKey, request: ClaimRequest) => Effect.Effect<Claimed, ThreadBusy | StoreError>
  /**
   * Replaces the thread's messages with `messages` (canonical JSON of the whole stored prompt),
   * records `runId` as the last run, adds one to the version and ends the claim: one atomic write.
   */
  readonly append: (
    claim: Claim,
    update: { readonly runId: string; readonly messages: string }
  ) => Effect.Effect<Thread, StaleThreadClaim | StoreError>
  /** Extends a live claim (a suspended run keeps its thread while it waits). */
  readonly renew: (claim: Claim, ttlMs: number) => Effect.Effect<Claim, StaleThreadClaim | StoreError>
  /** Ends a claim without appending (a failed run); a stale claim is ignored. */
  readonly release: (claim: Claim) => Effect.Effect<void, StoreError>
  readonly load: (key: ThreadKey) => Effect.Effect<Option.Option<Thread>, StoreError>
  /** Retention: forgets the unclaimed threads last appended to before `before` (epoch ms); returns how many. */
  readonly prune: (options: { readonly before: number }) => Effect.Effect<number, StoreError>
}

/**
 * Another run holds the thread: two requests on one thread never interleave.
 *
 * @example
 * ```ts
 * import { SessionStore } from "@agentkit/core"
 *
 * new SessionStore.ThreadBusy({ threadId: "t-1", runId: "run-2", expiresAt: 0 }).message
 * // "thread 't-1' is busy: run 'run-2' holds it"
 * ```
 *
 * @since 0.2.0
 * @category errors
 */
export class ThreadBusy extends Schema.TaggedError<ThreadBusy>("@agentkit/core/ThreadBusy")("ThreadBusy", {
  threadId: Schema.String,
  runId: Schema.String,
  expiresAt: Schema.Number
}) {
  /** @since 0.2.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `thread '${this.threadId}' is busy: run '${this.runId}' holds it`
  }
}

/**
 * The claim an append or renewal carried is no longer the thread's (it expired and another run
 * claimed the thread, or it was appended or released): nothing was written.
 *
 * @example
 * ```ts
 * import { SessionStore } from "@agentkit/core"
 *
 * new SessionStore.StaleThreadClaim({ threadId: "t-1", token: 3 }).message
 * // "the claim on thread 't-1' (token 3) is no longer held"
 * ```
 *
 * @since 0.2.0
 * @category errors
 */
export class StaleThreadClaim extends Schema.TaggedError<StaleThreadClaim>("@agentkit/core/StaleThreadClaim")(
  "StaleThreadClaim",
  { threadId: Schema.String, token: Schema.Number }
) {
  /** @since 0.2.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `the claim on thread '${this.threadId}' (token ${this.token}) is no longer held`
  }
}

/**
 * The options of the in-memory store: at most `maxThreads` threads (past it, the least recently
 * appended unclaimed thread is forgotten).
 *
 * @example
 * ```ts
 * import type { SessionStore } from "@agentkit/core"
 *
 * const options: SessionStore.MemoryOptions = { maxThreads: 1000 }
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface MemoryOptions {
  readonly maxThreads?: number | undefined
}

/**
 * Makes an in-memory session store (the default: what a `Session` uses when none is provided is
 * one made per layer).
 *
 * @example
 * ```ts
 * import { SessionStore } from "@agentkit/core"
 *
 * const store = SessionStore.makeMemory({ maxThreads: 100 })
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const makeMemory = (options: MemoryOptions = {}): Service => makeMemoryStore(options)

/**
 * The session store service.
 *
 * @example
 * ```ts
 * import { SessionStore } from "@agentkit/core"
 *
 * const layer = SessionStore.SessionStore.memory({ maxThreads: 100 })
 * ```
 *
 * @since 0.2.0
 * @category services
 */
export class SessionStore extends Context.Tag("@agentkit/core/SessionStore")<SessionStore, Service>() {
  /** A layer of a fresh in-memory store. */
  static memory(options: MemoryOptions = {}): Layer.Layer<SessionStore> {
    return Layer.sync(SessionStore, () => makeMemory(options))
  }
  /** A layer of a given store value. */
  static layer(store: Service): Layer.Layer<SessionStore> {
    return Layer.succeed(SessionStore, store)
  }
}
