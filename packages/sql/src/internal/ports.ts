/**
 * TEMPORARY: a copy of the store ports that lane `runstate` (issue 11) is adding to
 * `@agentkit/core` (CheckpointStore, ExecutionLedger, AuditStore, IdempotencyStore, MemoStore and
 * the store errors), taken from its worktree so that this package can be written before they are
 * merged. The shapes, tags and texts are theirs, unchanged. At the rebase onto a `main` that has
 * them, this file is deleted and every `from "./ports.js"` becomes `from "@agentkit/core"`.
 *
 * The one addition is the `QuotaStore` port (the shared window a `Quota` counts in, so quotas hold
 * across instances), proposed for core's `Quota.ts`: it moves there in the same step.
 * @internal
 */
import { ErrorTypeId, ForeignValue } from "@agentkit/core"
import type { Chat, ToolOutcome } from "@agentkit/core"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"

// ---------------------------------------------------------------------------------------------
// errors (core Errors.ts)

export class StoreError extends Schema.TaggedError<StoreError>("@agentkit/core/StoreError")("StoreError", {
  operation: Schema.String,
  message: Schema.String,
  retryable: Schema.Boolean,
  cause: Schema.optional(ForeignValue)
}) {
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

export class RunExists extends Schema.TaggedError<RunExists>("@agentkit/core/RunExists")("RunExists", {
  runId: Schema.String
}) {
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `run '${this.runId}' exists already`
  }
}

export class RunNotFound extends Schema.TaggedError<RunNotFound>("@agentkit/core/RunNotFound")("RunNotFound", {
  runId: Schema.String
}) {
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `no run '${this.runId}' in the store`
  }
}

export class StaleLease extends Schema.TaggedError<StaleLease>("@agentkit/core/StaleLease")("StaleLease", {
  runId: Schema.String,
  token: Schema.Number
}) {
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `the lease on run '${this.runId}' (token ${this.token}) is no longer held: it expired or the run was taken over`
  }
}

export class LeaseHeld extends Schema.TaggedError<LeaseHeld>("@agentkit/core/LeaseHeld")("LeaseHeld", {
  runId: Schema.String,
  owner: Schema.String,
  expiresAt: Schema.Number
}) {
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `run '${this.runId}' is leased by '${this.owner}' until ${new Date(this.expiresAt).toISOString()}`
  }
}

export class RunFinished extends Schema.TaggedError<RunFinished>("@agentkit/core/RunFinished")("RunFinished", {
  runId: Schema.String,
  status: Schema.Literal("done", "failed", "cancelled")
}) {
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `run '${this.runId}' is finished (${this.status})`
  }
}

export class VersionConflict extends Schema.TaggedError<VersionConflict>("@agentkit/core/VersionConflict")("VersionConflict", {
  runId: Schema.String,
  expected: Schema.Number,
  actual: Schema.Number
}) {
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `run '${this.runId}': expected version ${this.expected}, the store has version ${this.actual}`
  }
}

export class CorruptEntry extends Schema.TaggedError<CorruptEntry>("@agentkit/core/CorruptEntry")("CorruptEntry", {
  store: Schema.String,
  key: Schema.String,
  detail: Schema.String
}) {
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `${this.store} entry '${this.key}' is corrupt: ${this.detail}`
  }
}

export class AlreadyDecided extends Schema.TaggedError<AlreadyDecided>("@agentkit/core/AlreadyDecided")("AlreadyDecided", {
  rootRunId: Schema.String,
  pendingId: Schema.String,
  decision: Schema.String,
  by: Schema.optional(Schema.String)
}) {
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `pending entry '${this.pendingId}' of run '${this.rootRunId}' was decided already${this.by === undefined ? "" : ` by ${this.by}`}`
  }
}

export class LedgerConflict extends Schema.TaggedError<LedgerConflict>("@agentkit/core/LedgerConflict")("LedgerConflict", {
  key: Schema.String,
  state: Schema.Literal("none", "completed", "reclaimed")
}) {
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    const state = this.state === "none" ? "it has no claim" : this.state === "completed" ? "it is completed" : "another claim replaced it"
    return `ledger entry '${this.key}' is not in doubt (${state})`
  }
}

export const markedFailedText = (reason: string): string =>
  `ERROR: the call was interrupted and its outcome was unknown; an operator marked it failed: ${reason}`

// ---------------------------------------------------------------------------------------------
// CheckpointStore (core CheckpointStore.ts)

export type CheckpointStatus = "running" | "suspended" | "done" | "failed" | "cancelled"

export interface Lease {
  readonly rootRunId: string
  readonly owner: string
  readonly token: number
  readonly expiresAt: number
}

export interface RunRecord {
  readonly runId: string
  readonly rootRunId: string
  readonly parentRunId: string | undefined
  readonly agent: string
  readonly tenant: string
  readonly threadId: string | undefined
  readonly status: CheckpointStatus
  readonly version: number
  readonly state: string
  readonly result: string | undefined
  readonly createdAt: number
  readonly updatedAt: number
  readonly lease: { readonly owner: string; readonly token: number; readonly expiresAt: number } | undefined
  readonly cancelRequested: { readonly by: string; readonly at: number } | undefined
}

export interface NewRun {
  readonly runId: string
  readonly rootRunId: string
  readonly parentRunId?: string | undefined
  readonly agent: string
  readonly tenant: string
  readonly threadId?: string | undefined
  readonly state: string
}

export interface LeaseRequest {
  readonly owner: string
  readonly ttlMs: number
}

export interface ListQuery {
  readonly status?: CheckpointStatus | undefined
  readonly agent?: string | undefined
  readonly tenant?: string | undefined
  readonly rootOnly?: boolean | undefined
  readonly leaseExpiredAt?: number | undefined
  readonly updatedBefore?: number | undefined
  readonly cursor?: string | undefined
  readonly limit?: number | undefined
}

export interface RecordedDecision {
  readonly rootRunId: string
  readonly pendingId: string
  readonly decision: string
  readonly by: string | undefined
  readonly at: number
}

export interface CheckpointStoreService {
  readonly create: (
    run: NewRun,
    lease: LeaseRequest | Lease
  ) => Effect.Effect<{ readonly lease: Lease; readonly version: number }, RunExists | RunNotFound | StaleLease | StoreError | CorruptEntry>
  readonly claim: (
    rootRunId: string,
    request: LeaseRequest
  ) => Effect.Effect<
    { readonly lease: Lease; readonly record: RunRecord },
    RunNotFound | LeaseHeld | RunFinished | StoreError | CorruptEntry
  >
  readonly save: (
    lease: Lease,
    request: { readonly runId: string; readonly expectedVersion: number; readonly status: "running" | "suspended"; readonly state: string }
  ) => Effect.Effect<number, RunNotFound | StaleLease | VersionConflict | RunFinished | StoreError | CorruptEntry>
  readonly heartbeat: (
    lease: Lease,
    ttlMs: number
  ) => Effect.Effect<
    { readonly lease: Lease; readonly cancelRequested: { readonly by: string; readonly at: number } | undefined },
    StaleLease | StoreError | CorruptEntry
  >
  readonly release: (lease: Lease) => Effect.Effect<void, StoreError | CorruptEntry>
  readonly finish: (
    lease: Lease,
    request: { readonly runId: string; readonly expectedVersion: number; readonly status: "done" | "failed" | "cancelled"; readonly result: string }
  ) => Effect.Effect<void, RunNotFound | StaleLease | VersionConflict | RunFinished | StoreError | CorruptEntry>
  readonly load: (runId: string) => Effect.Effect<Option.Option<RunRecord>, StoreError | CorruptEntry>
  readonly list: (
    query?: ListQuery
  ) => Effect.Effect<{ readonly records: ReadonlyArray<RunRecord>; readonly cursor: string | undefined }, StoreError | CorruptEntry>
  readonly decide: (
    rootRunId: string,
    pendingId: string,
    decision: { readonly decision: string; readonly by?: string | undefined }
  ) => Effect.Effect<RecordedDecision, AlreadyDecided | RunNotFound | RunFinished | StoreError | CorruptEntry>
  readonly decisions: (rootRunId: string) => Effect.Effect<ReadonlyArray<RecordedDecision>, StoreError | CorruptEntry>
  readonly requestCancel: (rootRunId: string, by: string) => Effect.Effect<void, RunNotFound | RunFinished | StoreError | CorruptEntry>
  readonly prune: (options: { readonly finishedBefore: number }) => Effect.Effect<number, StoreError | CorruptEntry>
}

export class CheckpointStore extends Context.Tag("@agentkit/core/CheckpointStore")<CheckpointStore, CheckpointStoreService>() {}

// ---------------------------------------------------------------------------------------------
// ExecutionLedger (core ExecutionLedger.ts)

export interface Outcome {
  readonly text: string
  readonly isError: boolean
}

export type Claim =
  | { readonly _tag: "Claimed" }
  | { readonly _tag: "Completed"; readonly outcome: Outcome }
  | { readonly _tag: "InDoubt"; readonly claimedAt: number; readonly digest: string }

export type Resolution =
  | { readonly _tag: "Done"; readonly outcome: Outcome }
  | { readonly _tag: "Failed"; readonly reason: string }
  | { readonly _tag: "Retry" }

export interface ExecutionLedgerService {
  readonly claim: (key: string, digest: string) => Effect.Effect<Claim, StoreError>
  readonly complete: (key: string, outcome: Outcome) => Effect.Effect<void, StoreError>
  readonly resolve: (
    key: string,
    resolution: Resolution,
    options?: { readonly claimedAt?: number | undefined }
  ) => Effect.Effect<void, LedgerConflict | StoreError>
  readonly prune: (options: { readonly before: number }) => Effect.Effect<number, StoreError>
}

export class ExecutionLedger extends Context.Tag("@agentkit/core/ExecutionLedger")<ExecutionLedger, ExecutionLedgerService>() {}

// ---------------------------------------------------------------------------------------------
// AuditStore (core AuditStore.ts)

export type AuditDecision = "executed" | "deduplicated" | "failed" | "denied" | "in_doubt"

export interface AuditRecord {
  readonly runId: string
  readonly tenant: string
  readonly tool: string
  readonly callId: string
  readonly decision: AuditDecision
  readonly argHash: string
  readonly resultHash?: string | undefined
  readonly by?: string | undefined
  readonly reason?: string | undefined
  readonly denial?: { readonly reason: string; readonly message: string } | undefined
  readonly error?: { readonly type: string; readonly message: string } | undefined
  readonly at: number
}

export interface AuditListQuery {
  readonly runId?: string | undefined
  readonly tenant?: string | undefined
  readonly cursor?: string | undefined
  readonly limit?: number | undefined
}

export interface AuditStoreService {
  readonly append: (record: AuditRecord) => Effect.Effect<void, StoreError>
  readonly list: (
    query?: AuditListQuery
  ) => Effect.Effect<{ readonly records: ReadonlyArray<AuditRecord>; readonly cursor: string | undefined }, StoreError>
}

export class AuditStore extends Context.Tag("@agentkit/core/AuditStore")<AuditStore, AuditStoreService>() {}

// ---------------------------------------------------------------------------------------------
// IdempotencyStore (core IdempotencyStore.ts)

export interface IdempotencyStoreService {
  readonly get: (key: string) => Effect.Effect<Option.Option<ToolOutcome>, StoreError>
  readonly set: (key: string, outcome: ToolOutcome, runId: string) => Effect.Effect<void, StoreError>
  readonly endRun: (runId: string) => Effect.Effect<void, StoreError>
}

export class IdempotencyStore extends Context.Tag("@agentkit/core/IdempotencyStore")<IdempotencyStore, IdempotencyStoreService>() {}

// ---------------------------------------------------------------------------------------------
// MemoStore (core MemoStore.ts)

export interface MemoStoreService {
  readonly get: (key: string) => Effect.Effect<Option.Option<Chat.ChatResponse>, StoreError>
  readonly set: (key: string, response: Chat.ChatResponse, ttl?: Duration.Duration) => Effect.Effect<void, StoreError>
}

export class MemoStore extends Context.Tag("@agentkit/core/MemoStore")<MemoStore, MemoStoreService>() {}

// ---------------------------------------------------------------------------------------------
// QuotaStore (PROPOSED for core Quota.ts: where a Quota keeps its window, so one quota holds
// across instances; Quota keeps the decision and its texts, the store only counts)

/** What a tenant used inside the window: requests admitted, tokens and cost (nano-USD) charged. */
export interface QuotaTotals {
  readonly requests: number
  readonly tokens: number
  readonly costNanos: number
}

export interface QuotaStoreService {
  /**
   * Atomically (across every process sharing the store): reads the partition's totals over the
   * window ending now; when `refuse(totals)` returns an error the call fails with it and nothing
   * is recorded, otherwise one request is recorded at now.
   */
  readonly admit: <E>(
    partition: string,
    windowMillis: number,
    refuse: (totals: QuotaTotals) => E | undefined
  ) => Effect.Effect<void, E | StoreError>
  /** Records a finished call's tokens and cost (nano-USD) at now. */
  readonly charge: (partition: string, charge: { readonly tokens: number; readonly costNanos: number }) => Effect.Effect<void, StoreError>
  /** The partition's totals over the window ending now. */
  readonly totals: (partition: string, windowMillis: number) => Effect.Effect<QuotaTotals, StoreError>
}

export class QuotaStore extends Context.Tag("@agentkit/core/QuotaStore")<QuotaStore, QuotaStoreService>() {}
