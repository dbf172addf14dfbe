/**
 * The operator service the console adapts: list, show, decide, cancel and resolve suspended runs,
 * read the audit trail and follow what changed. **A stand-in.** The real service is
 * `Operator` in `@agentkit/agents` (DESIGN-NEXT §10, built on the store ports); until it lands
 * this module declares its exact interface, with the same tag key, the same error tags and the
 * same shapes, so switching is a change of import paths:
 *
 * | here | there |
 * | --- | --- |
 * | `Operator`, `RunSummary`, `RunDetail`, `RecordedDecision` | `@agentkit/agents` `Operator` |
 * | `PendingEntry`, `Decision`, `Verdict` | `@agentkit/agents` `Approval` |
 * | `AuditRecord` | `@agentkit/core` `AuditStore.AuditRecord` |
 * | `StoreError`, `RunNotFound`, `RunFinished`, `AlreadyDecided` | `@agentkit/core` |
 * | `RunStateCorrupt`, `UnknownPending`, `DigestMismatch`, `InvalidDecision` | `@agentkit/agents` |
 *
 * Additions to §10 the console needs (optional, so a service without them still works):
 * `RunSummary.requestedBy` (who started the run: the "a requester may not approve" rule),
 * `RunSummary.autonomy` and `RunSummary.legs` (why a call waits), `RunDetail.correlationId` (the
 * key its spans are stored under), `ListFilter.order` (recent runs newest first), and the audit
 * decision `"operator"` with an `action`.
 *
 * @since 0.1.0
 */
import type { ToolArgumentError} from "@agentkit/core";
import { ErrorTypeId, Message, ToolCall } from "@agentkit/core"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/**
 * The store is unreachable or broken (`retryable` says whether trying again may help).
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/console"
 *
 * new Operator.StoreError({ operation: "list", message: "database is locked", retryable: true })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class StoreError extends Schema.TaggedError<StoreError>("@agentkit/core/StoreError")("StoreError", {
  operation: Schema.String,
  message: Schema.String,
  retryable: Schema.Boolean
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * No run has this id (or, through the console, none the caller may see).
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/console"
 *
 * new Operator.RunNotFound({ runId: "run-1" }).message // "no run 'run-1' in the store"
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
 * The run is finished: it can no longer be cancelled or decided.
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/console"
 *
 * new Operator.RunFinished({ runId: "run-1", status: "done" }).message // "run 'run-1' is finished (done)"
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
 * Someone decided this pending entry first: the first decision wins. `decision` is the winner's
 * decision as canonical JSON text.
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/console"
 *
 * new Operator.AlreadyDecided({ rootRunId: "run-1", pendingId: "p-1", decision: "{}", by: "alice" }).message
 * // "pending entry 'p-1' of run 'run-1' was decided already by alice"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class AlreadyDecided extends Schema.TaggedError<AlreadyDecided>("@agentkit/core/AlreadyDecided")("AlreadyDecided", {
  rootRunId: Schema.String,
  pendingId: Schema.String,
  decision: Schema.String,
  by: Schema.optional(Schema.String)
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `pending entry '${this.pendingId}' of run '${this.rootRunId}' was decided already${this.by === undefined ? "" : ` by ${this.by}`}`
  }
}

/**
 * A run's stored state cannot be read back.
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/console"
 *
 * new Operator.RunStateCorrupt({ runId: "run-1", detail: "not JSON" }).message // "the state of run 'run-1' is corrupt: not JSON"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class RunStateCorrupt extends Schema.TaggedError<RunStateCorrupt>("@agentkit/agents/RunStateCorrupt")("RunStateCorrupt", {
  runId: Schema.String,
  detail: Schema.String
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `the state of run '${this.runId}' is corrupt: ${this.detail}`
  }
}

/**
 * The run has no pending entry with this id.
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/console"
 *
 * new Operator.UnknownPending({ runId: "run-1", pendingId: "p-9", expected: ["p-1"] }).message
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class UnknownPending extends Schema.TaggedError<UnknownPending>("@agentkit/agents/UnknownPending")("UnknownPending", {
  runId: Schema.String,
  pendingId: Schema.String,
  expected: Schema.Array(Schema.String)
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `run '${this.runId}' has no pending entry '${this.pendingId}'; its pending entries are [${this.expected.map((id) => `'${id}'`).join(", ")}]`
  }
}

/**
 * A decision names another digest than the pending entry's: it was given for other arguments or
 * another tool definition.
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/console"
 *
 * new Operator.DigestMismatch({ runId: "run-1", pendingId: "p-1", expected: "ab", received: "cd" }).message
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class DigestMismatch extends Schema.TaggedError<DigestMismatch>("@agentkit/agents/DigestMismatch")("DigestMismatch", {
  runId: Schema.String,
  pendingId: Schema.String,
  expected: Schema.String,
  received: Schema.String
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `the decision for '${this.pendingId}' of run '${this.runId}' names digest '${this.received}', but the pending entry's digest is '${this.expected}': it was given for other arguments or another tool definition`
  }
}

/**
 * A verdict the pending entry's kind does not accept.
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/console"
 *
 * new Operator.InvalidDecision({ runId: "run-1", pendingId: "p-1", kind: "InDoubt", accepted: ["markDone", "markFailed", "retry"], received: "approve" }).message
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidDecision extends Schema.TaggedError<InvalidDecision>("@agentkit/agents/InvalidDecision")("InvalidDecision", {
  runId: Schema.String,
  pendingId: Schema.String,
  kind: Schema.String,
  accepted: Schema.Array(Schema.String),
  received: Schema.String
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `the decision for '${this.pendingId}' of run '${this.runId}' (kind ${this.kind}) must be one of ${this.accepted.join(", ")}, with the entry's digest; got ${this.received}`
  }
}

/**
 * What a pending entry records of the tool: flags, caps, fingerprint, advertised JSON Schema.
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/console"
 * import { Schema } from "effect"
 *
 * Schema.is(Operator.ToolFacts)({ name: "t", sideEffecting: true, idempotent: false, requiresApproval: false, caps: [], fingerprint: "f", parameters: {} }) // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolFacts = Schema.Struct({
  name: Schema.String,
  sideEffecting: Schema.Boolean,
  idempotent: Schema.Boolean,
  requiresApproval: Schema.Boolean,
  caps: Schema.Array(Schema.Literal("private_data", "untrusted_content", "egress")),
  fingerprint: Schema.String,
  parameters: Schema.Unknown
})

/**
 * One entry a suspended run waits on (agents `Approval.PendingEntry`).
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/console"
 * import { Schema } from "effect"
 *
 * const decode = Schema.decodeUnknownSync(Operator.PendingEntry)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const PendingEntry = Schema.Struct({
  id: Schema.String,
  kind: Schema.Literal("Approval", "InDoubt", "Gate", "Input"),
  path: Schema.String,
  call: ToolCall.ToolCall,
  digest: Schema.String,
  reasons: Schema.Array(Schema.String),
  tool: ToolFacts,
  createdAt: Schema.Number,
  request: Schema.optional(Schema.Unknown)
})

/**
 * One entry a suspended run waits on.
 *
 * @example
 * ```ts
 * import type { Operator } from "@agentkit/console"
 *
 * const line = (entry: Operator.PendingEntry) => `${entry.id} ${entry.call.name} (${entry.reasons.join(", ")})`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface PendingEntry extends Schema.Schema.Type<typeof PendingEntry> {}

/**
 * The verdicts (agents `Approval.Verdict`).
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/console"
 * import { Schema } from "effect"
 *
 * Schema.is(Operator.Verdict)("retry") // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Verdict = Schema.Literal("approve", "reject", "edit", "markDone", "markFailed", "retry")

/**
 * A verdict.
 *
 * @example
 * ```ts
 * import type { Operator } from "@agentkit/console"
 *
 * const runs = (verdict: Operator.Verdict) => verdict === "approve" || verdict === "edit"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Verdict = Schema.Schema.Type<typeof Verdict>

const base = { digest: Schema.String, by: Schema.optional(Schema.String) }

/**
 * A person's decision on one pending entry (agents `Approval.Decision`).
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/console"
 * import { Schema } from "effect"
 *
 * Schema.is(Operator.Decision)({ verdict: "reject", digest: "3f1a", reason: "not confirmed" }) // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Decision = Schema.Union(
  Schema.Struct({ verdict: Schema.Literal("approve"), ...base, reason: Schema.optional(Schema.String) }),
  Schema.Struct({ verdict: Schema.Literal("reject"), ...base, reason: Schema.optional(Schema.String) }),
  Schema.Struct({
    verdict: Schema.Literal("edit"),
    ...base,
    reason: Schema.optional(Schema.String),
    arguments: Schema.Record({ key: Schema.String, value: Schema.Unknown })
  }),
  Schema.Struct({ verdict: Schema.Literal("markDone"), ...base, reason: Schema.optional(Schema.String), outcome: Schema.String }),
  Schema.Struct({ verdict: Schema.Literal("markFailed"), ...base, reason: Schema.String }),
  Schema.Struct({ verdict: Schema.Literal("retry"), ...base, reason: Schema.optional(Schema.String) })
)

/**
 * A person's decision on one pending entry.
 *
 * @example
 * ```ts
 * import type { Operator } from "@agentkit/console"
 *
 * const approve = (digest: string): Operator.Decision => ({ verdict: "approve", digest })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Decision = Schema.Schema.Type<typeof Decision>

/**
 * A decision as the store recorded it: the first for its pending entry.
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/console"
 * import { Schema } from "effect"
 *
 * Schema.is(Operator.RecordedDecision)({ rootRunId: "r", pendingId: "p", decision: { verdict: "approve", digest: "d" }, by: "alice", at: 0 }) // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const RecordedDecision = Schema.Struct({
  rootRunId: Schema.String,
  pendingId: Schema.String,
  decision: Decision,
  by: Schema.String,
  at: Schema.Number
})

/**
 * A recorded decision.
 *
 * @example
 * ```ts
 * import type { Operator } from "@agentkit/console"
 *
 * const who = (recorded: Operator.RecordedDecision) => `${recorded.decision.verdict} by ${recorded.by}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface RecordedDecision extends Schema.Schema.Type<typeof RecordedDecision> {}

/**
 * The statuses `list` filters by: the store's, plus `in_doubt` (a run with an `InDoubt` entry).
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/console"
 * import { Schema } from "effect"
 *
 * Schema.is(Operator.RunStatus)("in_doubt") // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const RunStatus = Schema.Literal("suspended", "in_doubt", "running", "done", "failed", "cancelled")

/**
 * A run's status as the operator sees it.
 *
 * @example
 * ```ts
 * import type { Operator } from "@agentkit/console"
 *
 * const waiting = (status: Operator.RunStatus) => status === "suspended" || status === "in_doubt"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type RunStatus = Schema.Schema.Type<typeof RunStatus>

/**
 * One run as a list shows it. `requestedBy`, `autonomy` and `legs` are the console's additions to
 * DESIGN-NEXT §10 (optional).
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/console"
 * import { Schema } from "effect"
 *
 * const decode = Schema.decodeUnknownSync(Operator.RunSummary)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const RunSummary = Schema.Struct({
  runId: Schema.String,
  rootRunId: Schema.String,
  agent: Schema.String,
  tenant: Schema.String,
  threadId: Schema.optional(Schema.String),
  status: RunStatus,
  createdAt: Schema.Number,
  updatedAt: Schema.Number,
  usage: Schema.Struct({ inputTokens: Schema.Number, outputTokens: Schema.Number, costUsd: Schema.Number }),
  pending: Schema.Array(PendingEntry),
  decided: Schema.Array(RecordedDecision),
  /** Who started the run (the run context's user): the "a requester may not approve" rule reads it. */
  requestedBy: Schema.optional(Schema.String),
  /** The run's autonomy tier. */
  autonomy: Schema.optional(Schema.Literal("auto", "gated", "manual")),
  /** The lethal-trifecta legs the run has touched so far. */
  legs: Schema.optional(Schema.Struct({ privateData: Schema.Boolean, untrustedContent: Schema.Boolean, egress: Schema.Boolean }))
})

/**
 * One run as a list shows it.
 *
 * @example
 * ```ts
 * import type { Operator } from "@agentkit/console"
 *
 * const cost = (run: Operator.RunSummary) => `$${run.usage.costUsd.toFixed(4)}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface RunSummary extends Schema.Schema.Type<typeof RunSummary> {}

/**
 * One run in full: its transcript, sub-runs and result. `correlationId` (an addition) is the key
 * its spans are stored under; it defaults to the root run's id.
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/console"
 * import { Schema } from "effect"
 *
 * const decode = Schema.decodeUnknownSync(Operator.RunDetail)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const RunDetail = Schema.Struct({
  ...RunSummary.fields,
  transcript: Schema.Array(Message.Message),
  children: Schema.Array(RunSummary),
  result: Schema.optional(Schema.Unknown),
  correlationId: Schema.optional(Schema.String)
})

/**
 * One run in full.
 *
 * @example
 * ```ts
 * import type { Operator } from "@agentkit/console"
 *
 * const turns = (run: Operator.RunDetail) => run.transcript.length
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface RunDetail extends Schema.Schema.Type<typeof RunDetail> {}

/**
 * One audit record (core `AuditStore.AuditRecord`). The console's addition: the decision
 * `"operator"` (a person's decision, cancel or resolution) with its `action`.
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/console"
 * import { Schema } from "effect"
 *
 * const decode = Schema.decodeUnknownSync(Operator.AuditRecord)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const AuditRecord = Schema.Struct({
  runId: Schema.String,
  tenant: Schema.String,
  tool: Schema.String,
  callId: Schema.String,
  decision: Schema.Literal("executed", "deduplicated", "failed", "denied", "in_doubt", "operator"),
  /** For an `operator` record: what the operator did. */
  action: Schema.optional(Schema.Literal("approve", "reject", "edit", "markDone", "markFailed", "retry", "cancel")),
  argHash: Schema.String,
  resultHash: Schema.optional(Schema.String),
  by: Schema.optional(Schema.String),
  reason: Schema.optional(Schema.String),
  at: Schema.Number
})

/**
 * One audit record.
 *
 * @example
 * ```ts
 * import type { Operator } from "@agentkit/console"
 *
 * const line = (record: Operator.AuditRecord) => `${record.runId} ${record.tool}: ${record.action ?? record.decision} by ${record.by ?? "-"}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface AuditRecord extends Schema.Schema.Type<typeof AuditRecord> {}

/**
 * The filters of `list`. `tenant` is the set of tenant keys the caller may see.
 *
 * @example
 * ```ts
 * import type { Operator } from "@agentkit/console"
 *
 * const inbox: Operator.ListFilter = { status: ["suspended", "in_doubt"], tenant: ["acme"], limit: 50 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ListFilter {
  readonly status?: ReadonlyArray<RunStatus> | undefined
  readonly tenant?: ReadonlyArray<string> | undefined
  readonly agent?: string | undefined
  readonly tool?: string | undefined
  readonly threadId?: string | undefined
  readonly updatedAfter?: number | undefined
  readonly updatedBefore?: number | undefined
  readonly cursor?: string | undefined
  /** Default 50, at most 500. */
  readonly limit?: number | undefined
  /**
   * An addition to §10: `asc` (default, oldest change first: an inbox) or `desc` (newest first:
   * recent runs). The order is (`updatedAt`, `runId`) either way; a cursor keeps its direction.
   */
  readonly order?: "asc" | "desc" | undefined
}

/**
 * The errors `decide` and `resolve` fail with.
 *
 * @example
 * ```ts
 * import type { Operator } from "@agentkit/console"
 *
 * const conflict = (error: Operator.DecideError) => error._tag === "AlreadyDecided"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export type DecideError =
  | RunNotFound
  | UnknownPending
  | DigestMismatch
  | InvalidDecision
  | ToolArgumentError
  | AlreadyDecided
  | StoreError

/**
 * What a resolution of a call in doubt carries.
 *
 * @example
 * ```ts
 * import type { Operator } from "@agentkit/console"
 *
 * const done: Operator.Resolution = { verdict: "markDone", digest: "ab", by: "alice", outcome: "charged" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Resolution {
  readonly verdict: "markDone" | "markFailed" | "retry"
  readonly digest: string
  readonly by: string
  readonly outcome?: string | undefined
  readonly reason?: string | undefined
}

/**
 * The operator service's operations (DESIGN-NEXT §10).
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/console"
 * import { Effect } from "effect"
 *
 * const waiting = Effect.flatMap(Operator.Operator, (operator) => operator.list({ status: ["suspended"], tenant: ["acme"] }))
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export interface Service {
  readonly list: (
    filter: ListFilter
  ) => Effect.Effect<{ readonly runs: ReadonlyArray<RunSummary>; readonly cursor?: string | undefined }, StoreError>
  readonly show: (runId: string) => Effect.Effect<RunDetail, RunNotFound | RunStateCorrupt | StoreError>
  /** Validates kind, digest and (for `edit`) the arguments; the first decision wins; writes an audit record. */
  readonly decide: (
    rootRunId: string,
    pendingId: string,
    decision: Decision & { readonly by: string }
  ) => Effect.Effect<RecordedDecision, DecideError>
  readonly cancel: (runId: string, by: string) => Effect.Effect<void, RunNotFound | RunFinished | StoreError>
  readonly resolve: (rootRunId: string, pendingId: string, decision: Resolution) => Effect.Effect<RecordedDecision, DecideError>
  readonly audit: (filter: {
    readonly runId?: string | undefined
    readonly tenant?: ReadonlyArray<string> | undefined
    readonly cursor?: string | undefined
    readonly limit?: number | undefined
  }) => Effect.Effect<{ readonly records: ReadonlyArray<AuditRecord>; readonly cursor?: string | undefined }, StoreError>
  /** The runs that changed since a cursor (polling): what drives live updates across processes. */
  readonly changes: (
    since: string | undefined
  ) => Effect.Effect<{ readonly runIds: ReadonlyArray<string>; readonly cursor: string }, StoreError>
}

/**
 * The operator service tag. Its key is the real service's, so a layer of `@agentkit/agents`'
 * `Operator` satisfies it.
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/console"
 * import { Effect } from "effect"
 *
 * const show = (runId: string) => Effect.flatMap(Operator.Operator, (operator) => operator.show(runId))
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class Operator extends Context.Tag("@agentkit/agents/Operator")<Operator, Service>() {}
