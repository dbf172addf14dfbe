/**
 * The typed errors of `@agentkit/agents`: a wrong agent definition, a run refused by the static
 * trifecta check, the lifecycle outcomes of a run under a checkpoint store (suspended, in
 * progress elsewhere, not resumable, a state this release cannot read) and the refusals of a
 * resume's decisions. Each carries core's `ErrorTypeId`, so
 * `isAgentkitError` recognises it, and is a `Schema.TaggedError`, so it can be stored and read
 * back.
 *
 * @since 0.1.0
 */
import { ErrorTypeId, PythonText } from "@agentkit/core"
import * as Schema from "effect/Schema"
import { PendingEntry } from "./Approval.js"

/**
 * An agent or cognition was wired wrong (a bad name, model or iteration count). Thrown
 * synchronously by `Agent.make` and `ReActCognition.make`, so the mistake fails when the module
 * loads.
 *
 * @example
 * ```ts
 * import { Agent } from "@agentkit/agents"
 *
 * Agent.make({ name: "", model: "claude-sonnet-4-6" }) // throws AgentDefinitionError
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class AgentDefinitionError
  extends Schema.TaggedError<AgentDefinitionError>("@agentkit/agents/AgentDefinitionError")(
    "AgentDefinitionError",
    { message: Schema.String }
  )
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * The run cannot be driven or resumed: `agent.resume` found nothing to resume (no checkpoint
 * store, no suspended run under that id, a cognition that cannot resume), or the run under that
 * id failed or was cancelled (the message names the status and the reason: it is never driven
 * again), was taken over more than `maxRecoveries` times, or belongs to another tenant.
 *
 * @example
 * ```ts
 * import { RunNotResumable } from "@agentkit/agents"
 *
 * new RunNotResumable({ runId: "run-1", message: "no suspended run 'run-1' to resume" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class RunNotResumable extends Schema.TaggedError<RunNotResumable>("@agentkit/agents/RunNotResumable")(
  "RunNotResumable",
  { runId: Schema.String, message: Schema.String }
) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * The reason text of a trifecta verdict (the Python agentkit's): the message of `PolicyDenied`
 * and of the dynamic check's `ToolDenied`.
 *
 * @example
 * ```ts
 * import { PolicyDenied, RunPolicy } from "@agentkit/agents"
 *
 * new PolicyDenied({ capabilities: RunPolicy.trifecta }).message === RunPolicy.trifectaReason // true
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const trifectaReason =
  "lethal trifecta: this tool set combines private-data access, untrusted-content ingestion, and egress in one run — require a human gate or split the run"

/**
 * The static trifecta check failed in `deny` mode: the run is refused before its first model
 * call.
 *
 * @example
 * ```ts
 * import { PolicyDenied } from "@agentkit/agents"
 *
 * new PolicyDenied({ capabilities: ["egress", "private_data", "untrusted_content"] }).message
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class PolicyDenied extends Schema.TaggedError<PolicyDenied>("@agentkit/agents/PolicyDenied")("PolicyDenied", {
  capabilities: Schema.Array(Schema.Literal("private_data", "untrusted_content", "egress"))
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return trifectaReason
  }
}

/**
 * `agent.run` under the id of a suspended run: it waits for decisions on its pending entries.
 * Continue it with `agent.resume(runId, decisions)`.
 *
 * @example
 * ```ts
 * import { RunSuspended } from "@agentkit/agents"
 *
 * new RunSuspended({ runId: "run-1", pending: [] }).message
 * // "run 'run-1' is suspended, waiting for 0 decision(s): continue it with agent.resume(runId, decisions)"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class RunSuspended extends Schema.TaggedError<RunSuspended>("@agentkit/agents/RunSuspended")("RunSuspended", {
  runId: Schema.String,
  pending: Schema.Array(PendingEntry)
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `run '${this.runId}' is suspended, waiting for ${this.pending.length} decision(s): continue it with agent.resume(runId, decisions)`
  }
}

/**
 * The run is being driven by another owner right now (its lease is live).
 *
 * @example
 * ```ts
 * import { RunInProgress } from "@agentkit/agents"
 *
 * new RunInProgress({ runId: "run-1", owner: "worker-a", expiresAt: 30_000 }).message
 * // "run 'run-1' is running in 'worker-a' (its lease runs until 1970-01-01T00:00:30.000Z)"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class RunInProgress
  extends Schema.TaggedError<RunInProgress>("@agentkit/agents/RunInProgress")("RunInProgress", {
    runId: Schema.String,
    owner: Schema.String,
    expiresAt: Schema.Number
  })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `run '${this.runId}' is running in '${this.owner}' (its lease runs until ${
      new Date(this.expiresAt).toISOString()
    })`
  }
}

/**
 * A stored run state has a version this release cannot read (a newer release wrote it): the run
 * is left as it is.
 *
 * @example
 * ```ts
 * import { RunStateVersionUnsupported } from "@agentkit/agents"
 *
 * new RunStateVersionUnsupported({ runId: "run-1", version: 9, supported: [1] }).message
 * // "the state of run 'run-1' has version 9; this release reads versions [1]: the run is left as it is"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class RunStateVersionUnsupported extends Schema.TaggedError<RunStateVersionUnsupported>(
  "@agentkit/agents/RunStateVersionUnsupported"
)("RunStateVersionUnsupported", {
  runId: Schema.String,
  version: Schema.Number,
  supported: Schema.Array(Schema.Number)
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `the state of run '${this.runId}' has version ${this.version}; this release reads versions [${
      this.supported.join(", ")
    }]: the run is left as it is`
  }
}

/**
 * A stored run state (or recorded result) cannot be decoded: the message names what was
 * expected; the run is left as it is.
 *
 * @example
 * ```ts
 * import { RunStateCorrupt } from "@agentkit/agents"
 *
 * new RunStateCorrupt({ runId: "run-1", detail: "not JSON" }).message
 * // "the state of run 'run-1' is corrupt: not JSON"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class RunStateCorrupt
  extends Schema.TaggedError<RunStateCorrupt>("@agentkit/agents/RunStateCorrupt")("RunStateCorrupt", {
    runId: Schema.String,
    detail: Schema.String
  })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `the state of run '${this.runId}' is corrupt: ${this.detail}`
  }
}

/**
 * `agent.resume(runId, decisions)` was given decisions that are not a record of pending id to
 * decision. Nothing ran; the run is as it was.
 *
 * @example
 * ```ts
 * import { InvalidDecisions } from "@agentkit/agents"
 *
 * new InvalidDecisions({ runId: "run-1", received: "an array" }).message
 * // "the decisions for run 'run-1' must be a record of pending id to decision (Approval.decisions([[pending.id, Approval.approve(pending.digest)]])); got an array"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidDecisions
  extends Schema.TaggedError<InvalidDecisions>("@agentkit/agents/InvalidDecisions")("InvalidDecisions", {
    runId: Schema.String,
    received: Schema.String
  })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `the decisions for run '${this.runId}' must be a record of pending id to decision (Approval.decisions([[pending.id, Approval.approve(pending.digest)]])); got ${this.received}`
  }
}

/**
 * A decision names a pending entry the run does not have. Nothing ran; the run is as it was.
 *
 * @example
 * ```ts
 * import { UnknownPending } from "@agentkit/agents"
 *
 * new UnknownPending({ runId: "run-1", pendingId: "c1", expected: ["p-0123456789abcdef"] }).message
 * // "run 'run-1' has no pending entry 'c1'; its pending entries are ['p-0123456789abcdef']"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class UnknownPending
  extends Schema.TaggedError<UnknownPending>("@agentkit/agents/UnknownPending")("UnknownPending", {
    runId: Schema.String,
    pendingId: Schema.String,
    expected: Schema.Array(Schema.String)
  })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `run '${this.runId}' has no pending entry '${this.pendingId}'; its pending entries are ${
      PythonText.list(this.expected)
    }`
  }
}

/**
 * A decision's digest is not its pending entry's: it was given for other arguments, another tool
 * definition or another run. Nothing ran; the run is as it was.
 *
 * @example
 * ```ts
 * import { DigestMismatch } from "@agentkit/agents"
 *
 * new DigestMismatch({ runId: "run-1", pendingId: "p-1", expected: "ab12", received: "ff00" }).message
 * // "the decision for 'p-1' of run 'run-1' names digest 'ff00', but the pending entry's digest is 'ab12': it was given for other arguments or another tool definition"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class DigestMismatch
  extends Schema.TaggedError<DigestMismatch>("@agentkit/agents/DigestMismatch")("DigestMismatch", {
    runId: Schema.String,
    pendingId: Schema.String,
    expected: Schema.String,
    received: Schema.String
  })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `the decision for '${this.pendingId}' of run '${this.runId}' names digest '${this.received}', but the pending entry's digest is '${this.expected}': it was given for other arguments or another tool definition`
  }
}

/**
 * A decision is not one the pending entry accepts (not a decision at all, or a verdict of another
 * kind: `markDone` for an approval, `approve` for a call in doubt). Nothing ran; the run is as it
 * was.
 *
 * @example
 * ```ts
 * import { InvalidDecision } from "@agentkit/agents"
 *
 * new InvalidDecision({ runId: "run-1", pendingId: "p-1", kind: "Approval", accepted: ["approve", "reject", "edit"], received: "'approved'" }).message
 * // "the decision for 'p-1' of run 'run-1' (kind Approval) must be one of approve, reject, edit, with the entry's digest; got 'approved'"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidDecision
  extends Schema.TaggedError<InvalidDecision>("@agentkit/agents/InvalidDecision")("InvalidDecision", {
    runId: Schema.String,
    pendingId: Schema.String,
    kind: Schema.String,
    accepted: Schema.Array(Schema.String),
    received: Schema.String
  })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `the decision for '${this.pendingId}' of run '${this.runId}' (kind ${this.kind}) must be one of ${
      this.accepted.join(", ")
    }, with the entry's digest; got ${this.received}`
  }
}

/**
 * An operator asked for a run outside the tenants it may see. The message names neither the
 * run's tenant nor whether such a run exists elsewhere; nothing was read or changed.
 *
 * @example
 * ```ts
 * import { OtherTenant } from "@agentkit/agents"
 *
 * new OtherTenant({ runId: "run-1" }).message
 * // "run 'run-1' is not one of the tenants this operator may see"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class OtherTenant extends Schema.TaggedError<OtherTenant>("@agentkit/agents/OtherTenant")("OtherTenant", {
  runId: Schema.String
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `run '${this.runId}' is not one of the tenants this operator may see`
  }
}

/**
 * `Agents.parsed` asked an agent for its structured answer and the run ended without one: the
 * answer did not decode after its repairs (`invalid_output`, with the decode error in `error`),
 * the run suspended for a person's decision (`awaiting_approval`), its iterations ran out, or a
 * termination condition stopped it. `output` is the run's last text. An agent made without
 * `output` has no structured answer to give: then nothing runs and `stopReason` is absent.
 *
 * @example
 * ```ts
 * import { NoParsedOutput } from "@agentkit/agents"
 *
 * new NoParsedOutput({ agent: "triage", stopReason: "invalid_output", output: "{}", error: "category: is missing" }).message
 * // "agent 'triage' ended without a structured answer (stop reason invalid_output): category: is missing"
 * ```
 *
 * @since 0.2.0
 * @category errors
 */
export class NoParsedOutput extends Schema.TaggedError<NoParsedOutput>("@agentkit/agents/NoParsedOutput")(
  "NoParsedOutput",
  {
    agent: Schema.String,
    /** Why the run stopped; absent when the agent has no `output` schema (nothing ran). */
    stopReason: Schema.optional(Schema.String),
    output: Schema.String,
    error: Schema.optional(Schema.String),
    runId: Schema.optional(Schema.String)
  }
) {
  /** @since 0.2.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    if (this.stopReason === undefined) {
      return `agent '${this.agent}' has no structured answer to give: make it with Agent.make({ output: schema })`
    }
    const why = this.error === undefined ? "" : `: ${this.error}`
    const suspended = this.runId === undefined ? "" : ` (run '${this.runId}' waits for decisions)`
    return `agent '${this.agent}' ended without a structured answer (stop reason ${this.stopReason})${why}${suspended}`
  }
}
