/**
 * The typed errors of `@agentkit/agents`: a wrong agent definition, a resume with nothing to
 * resume, and a run refused by the static trifecta check. Each carries core's `ErrorTypeId`, so
 * `isAgentkitError` recognises it, and is a `Schema.TaggedError`, so it can be stored and read
 * back.
 *
 * @since 0.1.0
 */
import { ErrorTypeId } from "@agentkit/core"
import * as Schema from "effect/Schema"

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
export class AgentDefinitionError extends Schema.TaggedError<AgentDefinitionError>("@agentkit/agents/AgentDefinitionError")(
  "AgentDefinitionError",
  { message: Schema.String }
) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * `agent.resume(runId, decisions)` found nothing to resume: no checkpoint store, no suspended run
 * under that id (it finished, or never suspended), or a cognition that cannot resume.
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
