/**
 * The result of an agent run.
 *
 * @since 0.1.0
 */
import type { Chat, Message, Usage } from "@agentkit/core"
import type { PendingEntry } from "./Approval.js"
import type * as Termination from "./Termination.js"

/**
 * Why a run stopped: the model's finish reason for a final answer (`end_turn`, `max_tokens`,
 * ...), `max_iterations` when the loop ran out, `awaiting_approval` when it suspended (waiting on
 * a person's decisions: approvals, or calls in doubt), `invalid_output` when a structured answer
 * still did not decode after its repairs, the reason of the termination condition that stopped
 * it (`function_call`, `text_mention`, `token_limit`, `max_turns`); a coordinator's `max_turns`
 * (its turns ran out) and `completed` (its stop condition held, or its selector answered `DONE`).
 *
 * @example
 * ```ts
 * import type { AgentResult } from "@agentkit/agents"
 *
 * const needsPerson = (reason: AgentResult.StopReason) => reason === "awaiting_approval"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type StopReason =
  | Exclude<Chat.FinishReason, "tool_use">
  | "max_iterations"
  | "awaiting_approval"
  | "invalid_output"
  | Termination.Reason
  | "completed"

/**
 * An entry a suspended run waits on (`Approval.PendingEntry`): its id (decisions are keyed by
 * it), kind, the call with its frozen arguments, the digest a decision must name, and why.
 *
 * @example
 * ```ts
 * import { Approval, type AgentResult } from "@agentkit/agents"
 *
 * const approveAll = (pending: ReadonlyArray<AgentResult.PendingCall>) =>
 *   Approval.decideEach(pending, (p) => Approval.approve(p.digest))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type PendingCall = PendingEntry

/**
 * A suspended run: resume it with `agent.resume(runId, decisions)`.
 *
 * @example
 * ```ts
 * import { Approval, type AgentResult } from "@agentkit/agents"
 *
 * const rejectAll = (suspended: AgentResult.Suspended) =>
 *   agent.resume(suspended.runId, Approval.decideEach(suspended.pending, (p) => Approval.reject(p.digest)))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Suspended {
  readonly _tag: "Suspended"
  readonly runId: string
  readonly pending: ReadonlyArray<PendingEntry>
}

/**
 * What a run produced, without its transcript: what the `Final` event of `agent.stream` carries
 * unless the stream is asked for the transcript. `A` is the agent's structured output.
 *
 * @example
 * ```ts
 * import type { AgentResult } from "@agentkit/agents"
 *
 * const show = (result: AgentResult.Summary) => `${result.output} (${result.stopReason}, $${result.usage.costUsd})`
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface Summary<out A = never> {
  /** The final answer, or the last assistant text of a partial run. */
  readonly output: string
  /** Usage of the whole run tree: this run's model calls and its sub-runs' (what the budget spent on it). */
  readonly usage: Usage.Usage
  /** Usage of this run's own model calls. */
  readonly ownUsage: Usage.Usage
  /** True when the run did not reach a final answer (iterations exhausted, awaiting approval). */
  readonly partial: boolean
  readonly stopReason: StopReason
  /** Present when the run suspended for approval. */
  readonly suspended?: Suspended | undefined
  /**
   * The decoded answer, with structured output, when the run ended with an answer that decodes
   * (absent when it is partial, or a termination condition stopped it).
   */
  readonly parsed?: A | undefined
  /** With structured output and stop reason `invalid_output`: why the last answer did not decode. */
  readonly error?: string | undefined
}

/**
 * What a run produced: its `Summary` and the whole conversation. `A` is the agent's structured
 * output (`Agent.make({ output })`): `parsed` holds the decoded answer of a run that ended with
 * one; an agent without `output` has none.
 *
 * @example
 * ```ts
 * import type { AgentResult } from "@agentkit/agents"
 *
 * const show = (result: AgentResult.AgentResult) =>
 *   `${result.output} (${result.stopReason}${result.partial ? ", partial" : ""}, $${result.usage.costUsd} with sub-agents, $${result.ownUsage.costUsd} own)`
 * const status = (result: AgentResult.AgentResult<{ readonly status: string }>) => result.parsed?.status ?? `(${result.error})`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentResult<out A = never> extends Summary<A> {
  /** The whole conversation, system prompt first. */
  readonly transcript: ReadonlyArray<Message.Message>
}
