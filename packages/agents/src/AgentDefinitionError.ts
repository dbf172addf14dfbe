/**
 * @since 0.1.0
 */
import * as Data from "effect/Data"

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
export class AgentDefinitionError extends Data.TaggedError("AgentDefinitionError")<{ readonly message: string }> {}
