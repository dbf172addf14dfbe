/**
 * The compare-and-set outcomes of the checkpoint store (`CheckpointStore`): a run that exists
 * already or does not exist, a lease lost or held by another owner, a finished run, a version
 * conflict, a pending entry decided already; with the `CheckpointStoreError` union. A broken
 * backend is a `StoreError`, a corrupt row a `CorruptEntry`.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"
import { ErrorTypeId } from "./AgentkitError.js"

/**
 * A run record with this id exists already (`CheckpointStore.create`).
 *
 * @example
 * ```ts
 * import { RunExists } from "@agentkit/core"
 *
 * new RunExists({ runId: "run-1" }).message // "run 'run-1' exists already"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class RunExists extends Schema.TaggedError<RunExists>("@agentkit/core/RunExists")("RunExists", {
  runId: Schema.String
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `run '${this.runId}' exists already`
  }
}

/**
 * No run record has this id.
 *
 * @example
 * ```ts
 * import { RunNotFound } from "@agentkit/core"
 *
 * new RunNotFound({ runId: "run-1" }).message // "no run 'run-1' in the store"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class RunNotFound extends Schema.TaggedError<RunNotFound>("@agentkit/core/RunNotFound")("RunNotFound", {
  runId: Schema.String
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `no run '${this.runId}' in the store`
  }
}

/**
 * The lease a write carried is no longer the run's: it expired, was released, or another process
 * took the run over (a newer fencing token). The writer has lost the run and must stop.
 *
 * @example
 * ```ts
 * import { StaleLease } from "@agentkit/core"
 *
 * new StaleLease({ runId: "run-1", token: 1 }).message
 * // "the lease on run 'run-1' (token 1) is no longer held: it expired or the run was taken over"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class StaleLease extends Schema.TaggedError<StaleLease>("@agentkit/core/StaleLease")("StaleLease", {
  runId: Schema.String,
  token: Schema.Number
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `the lease on run '${this.runId}' (token ${this.token}) is no longer held: it expired or the run was taken over`
  }
}

/**
 * Another owner holds a live lease on the run (`CheckpointStore.claim`).
 *
 * @example
 * ```ts
 * import { LeaseHeld } from "@agentkit/core"
 *
 * new LeaseHeld({ runId: "run-1", owner: "worker-a", expiresAt: 0 }).message
 * // "run 'run-1' is leased by 'worker-a' until 1970-01-01T00:00:00.000Z"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class LeaseHeld extends Schema.TaggedError<LeaseHeld>("@agentkit/core/LeaseHeld")("LeaseHeld", {
  runId: Schema.String,
  owner: Schema.String,
  expiresAt: Schema.Number
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `run '${this.runId}' is leased by '${this.owner}' until ${new Date(this.expiresAt).toISOString()}`
  }
}

/**
 * The run is finished (done, failed or cancelled): its record takes no more writes.
 *
 * @example
 * ```ts
 * import { RunFinished } from "@agentkit/core"
 *
 * new RunFinished({ runId: "run-1", status: "done" }).message // "run 'run-1' is finished (done)"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class RunFinished extends Schema.TaggedError<RunFinished>("@agentkit/core/RunFinished")("RunFinished", {
  runId: Schema.String,
  status: Schema.Literal("done", "failed", "cancelled")
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `run '${this.runId}' is finished (${this.status})`
  }
}

/**
 * A compare-and-set write named a version that is not the record's current one: someone else
 * wrote since it was read.
 *
 * @example
 * ```ts
 * import { VersionConflict } from "@agentkit/core"
 *
 * new VersionConflict({ runId: "run-1", expected: 3, actual: 4 }).message
 * // "run 'run-1': expected version 3, the store has version 4"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class VersionConflict
  extends Schema.TaggedError<VersionConflict>("@agentkit/core/VersionConflict")("VersionConflict", {
    runId: Schema.String,
    expected: Schema.Number,
    actual: Schema.Number
  })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `run '${this.runId}': expected version ${this.expected}, the store has version ${this.actual}`
  }
}

/**
 * A pending entry was decided already: the first decision wins; this one names it and who made it.
 *
 * @example
 * ```ts
 * import { AlreadyDecided } from "@agentkit/core"
 *
 * new AlreadyDecided({ rootRunId: "run-1", pendingId: "p-1", decision: "{}", by: "alice" }).message
 * // "pending entry 'p-1' of run 'run-1' was decided already by alice"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class AlreadyDecided
  extends Schema.TaggedError<AlreadyDecided>("@agentkit/core/AlreadyDecided")("AlreadyDecided", {
    rootRunId: Schema.String,
    pendingId: Schema.String,
    decision: Schema.String,
    by: Schema.optional(Schema.String)
  })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `pending entry '${this.pendingId}' of run '${this.rootRunId}' was decided already${
      this.by === undefined ? "" : ` by ${this.by}`
    }`
  }
}

/**
 * Every compare-and-set outcome of the checkpoint store.
 *
 * @example
 * ```ts
 * import type { CheckpointStoreError } from "@agentkit/core"
 *
 * const lostTheRun = (error: CheckpointStoreError) => error._tag === "StaleLease" || error._tag === "RunFinished"
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export type CheckpointStoreError =
  | RunExists
  | RunNotFound
  | StaleLease
  | LeaseHeld
  | RunFinished
  | VersionConflict
  | AlreadyDecided

/**
 * The schema of `CheckpointStoreError`: decodes an encoded outcome back to its class.
 *
 * @example
 * ```ts
 * import { CheckpointStoreError, StaleLease } from "@agentkit/core"
 * import { Schema } from "effect"
 *
 * const error = Schema.decodeUnknownSync(CheckpointStoreError)({ _tag: "StaleLease", runId: "run-1", token: 1 })
 * error instanceof StaleLease // true
 * ```
 *
 * @since 0.2.0
 * @category schemas
 */
export const CheckpointStoreError: Schema.Union<
  [
    typeof RunExists,
    typeof RunNotFound,
    typeof StaleLease,
    typeof LeaseHeld,
    typeof RunFinished,
    typeof VersionConflict,
    typeof AlreadyDecided
  ]
> = Schema.Union(RunExists, RunNotFound, StaleLease, LeaseHeld, RunFinished, VersionConflict, AlreadyDecided)
