/**
 * What an operator is shown: a run's status, a recorded decision, a run as a list shows it and in
 * full, and an audit record, each as a schema (for adapters that serve them) and a type.
 * Re-exported as part of `Operator`.
 *
 * @since 0.1.0
 */
import { Message } from "@agentkit/core"
import * as Schema from "effect/Schema"
import * as Approval from "./Approval.js"

/**
 * The statuses `list` filters by: the store's, plus `in_doubt` (a suspended run with an `InDoubt`
 * entry).
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/agents"
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
 * import type { Operator } from "@agentkit/agents"
 *
 * const waiting = (status: Operator.RunStatus) => status === "suspended" || status === "in_doubt"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type RunStatus = Schema.Schema.Type<typeof RunStatus>

/**
 * A tenant's scope as its parts (an absent part left out), what the operator is shown instead of
 * the raw store key: `{ orgId: "acme", userId: "u1" }` is the key `["acme",null,"u1",null]`.
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/agents"
 * import { Schema } from "effect"
 *
 * Schema.is(Operator.ScopeParts)({ orgId: "acme", userId: "u1" }) // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ScopeParts = Schema.Struct({
  orgId: Schema.optional(Schema.Union(Schema.Number, Schema.String)),
  domainId: Schema.optional(Schema.Union(Schema.Number, Schema.String)),
  userId: Schema.optional(Schema.String),
  sessionId: Schema.optional(Schema.String)
})

/**
 * A tenant's scope as its parts.
 *
 * @example
 * ```ts
 * import type { Operator } from "@agentkit/agents"
 *
 * const org = (scope: Operator.ScopeParts) => scope.orgId ?? "(no organisation)"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ScopeParts extends Schema.Schema.Type<typeof ScopeParts> {}

/**
 * A decision as the store recorded it: the first for its pending entry, decoded.
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/agents"
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
  decision: Approval.Decision,
  by: Schema.String,
  at: Schema.Number
})

/**
 * A recorded decision.
 *
 * @example
 * ```ts
 * import type { Operator } from "@agentkit/agents"
 *
 * const who = (recorded: Operator.RecordedDecision) => `${recorded.decision.verdict} by ${recorded.by}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface RecordedDecision extends Schema.Schema.Type<typeof RecordedDecision> {}

/**
 * One run as a list shows it: who started it (`requestedBy`, the scope's user), its autonomy tier
 * and trifecta legs (why a call waits), usage so far, what it waits on and what was decided.
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/agents"
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
  /** The tenant key (the scope's `storeKey`): what grants and filters match. Show `scope` instead. */
  tenant: Schema.String,
  /** The run's scope as its parts (absent when the tenant is not a scope's store key). */
  scope: Schema.optional(ScopeParts),
  threadId: Schema.optional(Schema.String),
  status: RunStatus,
  createdAt: Schema.Number,
  updatedAt: Schema.Number,
  usage: Schema.Struct({ inputTokens: Schema.Number, outputTokens: Schema.Number, costUsd: Schema.Number }),
  pending: Schema.Array(Approval.PendingEntry),
  decided: Schema.Array(RecordedDecision),
  /** Who started the run (the run context's `scope.userId`): the "a requester may not approve" rule reads it. */
  requestedBy: Schema.optional(Schema.String),
  /** The run's autonomy tier. */
  autonomy: Schema.optional(Schema.Literal("auto", "gated", "manual")),
  /** The lethal-trifecta legs the run has touched so far. */
  legs: Schema.optional(
    Schema.Struct({ privateData: Schema.Boolean, untrustedContent: Schema.Boolean, egress: Schema.Boolean })
  )
})

/**
 * One run as a list shows it.
 *
 * @example
 * ```ts
 * import type { Operator } from "@agentkit/agents"
 *
 * const cost = (run: Operator.RunSummary) => `$${run.usage.costUsd.toFixed(4)}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface RunSummary extends Schema.Schema.Type<typeof RunSummary> {}

/**
 * One run in full: its transcript, sub-runs, result (the `AgentResult` of a finished run, or
 * `{ reason }` of a failed or cancelled one) and `correlationId` (the key its spans are stored
 * under).
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/agents"
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
 * import type { Operator } from "@agentkit/agents"
 *
 * const turns = (run: Operator.RunDetail) => run.transcript.length
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface RunDetail extends Schema.Schema.Type<typeof RunDetail> {}

/**
 * One audit record (core `AuditStore.AuditRecord`) as a schema, for adapters that serve it.
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/agents"
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
  /** The tenant key (the scope's `storeKey`). Show `scope` instead. */
  tenant: Schema.String,
  /** The tenant's scope as its parts (absent when the tenant is not a scope's store key). */
  scope: Schema.optional(ScopeParts),
  tool: Schema.String,
  callId: Schema.String,
  decision: Schema.Literal("executed", "deduplicated", "failed", "denied", "in_doubt", "operator", "rewritten"),
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
 * import type { Operator } from "@agentkit/agents"
 *
 * const line = (record: Operator.AuditRecord) => `${record.runId} ${record.tool}: ${record.action ?? record.decision}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface AuditRecord extends Schema.Schema.Type<typeof AuditRecord> {}
