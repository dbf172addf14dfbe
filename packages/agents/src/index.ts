/**
 * @agentkit/agents: agents, cognitions (ReAct) and agent events.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Agent from "./Agent.js"
/** @since 0.1.0 */
export { AgentDefinitionError, PolicyDenied, RunNotResumable } from "./Errors.js"
/** @since 0.1.0 */
export * as AgentEvent from "./AgentEvent.js"
/** @since 0.1.0 */
export type * as AgentResult from "./AgentResult.js"
/** @since 0.1.0 */
export * as Approval from "./Approval.js"
/** @since 0.1.0 */
export type { AgentError, AgentSettings, Cognition, Drive, Resume, ResumeError } from "./Cognition.js"
/** @since 0.1.0 */
export * as ReActCognition from "./ReActCognition.js"
/** @since 0.1.0 */
export * as RunPolicy from "./RunPolicy.js"
/** @since 0.1.0 */
export * as SingleCallCognition from "./SingleCallCognition.js"
