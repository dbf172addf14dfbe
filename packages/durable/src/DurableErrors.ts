/**
 * The durable engine's errors (experimental): a run started on a workflow version no runner here
 * knows, and a run that ended in a failure (its reason as the in-process lifecycle records it).
 *
 * @since 0.2.0
 * @experimental
 */
import * as Schema from "effect/Schema"

/**
 * A run was started (or looked up) on a workflow version this process does not register. Nothing
 * ran. Names the agent, the version asked for, and the versions registered.
 *
 * @example
 * ```ts
 * import { DurableErrors } from "@agentkit/durable"
 *
 * const error = new DurableErrors.UnknownWorkflowVersion({ agent: "support", version: 3, known: [1, 2] })
 * error.message // "agent 'support' has no workflow version 3 on this runner; registered: 1, 2"
 * ```
 *
 * @since 0.2.0
 * @category errors
 */
export class UnknownWorkflowVersion
  extends Schema.TaggedError<UnknownWorkflowVersion>("@agentkit/durable/UnknownWorkflowVersion")(
    "UnknownWorkflowVersion",
    { agent: Schema.String, version: Schema.Number, known: Schema.Array(Schema.Number) }
  )
{
  override get message(): string {
    const known = this.known.length === 0 ? "none" : this.known.join(", ")
    return `agent '${this.agent}' has no workflow version ${this.version} on this runner; registered: ${known}`
  }
}

/**
 * A durable run ended in a failure: the reason is the failure's tag and message, as the
 * checkpoint store records it for a failed run.
 *
 * @example
 * ```ts
 * import { DurableErrors } from "@agentkit/durable"
 *
 * const error = new DurableErrors.DurableRunFailed({ runId: "r-1", reason: "BudgetExceeded: calls 3 > 2" })
 * error.message // "durable run 'r-1' failed: BudgetExceeded: calls 3 > 2"
 * ```
 *
 * @since 0.2.0
 * @category errors
 */
export class DurableRunFailed
  extends Schema.TaggedError<DurableRunFailed>("@agentkit/durable/DurableRunFailed")("DurableRunFailed", {
    runId: Schema.String,
    reason: Schema.String
  })
{
  override get message(): string {
    return `durable run '${this.runId}' failed: ${this.reason}`
  }
}
