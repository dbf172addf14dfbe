/**
 * @agentkit/agents: agents, cognitions (ReAct), structured output, termination conditions and agent events.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Agent from "./Agent.js"
/** @since 0.2.0 */
export { Agents } from "./Agents.js"
/** @since 0.1.0 */
export {
  AgentDefinitionError,
  DigestMismatch,
  InvalidDecision,
  InvalidDecisions,
  NoParsedOutput,
  OtherTenant,
  PolicyDenied,
  RunInProgress,
  RunNotResumable,
  RunStateCorrupt,
  RunStateVersionUnsupported,
  RunSuspended,
  UnknownPending
} from "./Errors.js"
/** @since 0.1.0 */
export * as AgentEvent from "./AgentEvent.js"
/** @since 0.1.0 */
export type * as AgentResult from "./AgentResult.js"
/** @since 0.1.0 */
export * as Approval from "./Approval.js"
/** @since 0.1.0 */
export type { AgentError, AgentSettings, Cognition, Drive, LifecycleError, Resume, ResumeError } from "./Cognition.js"
/** @since 0.2.0 */
export * as Compaction from "./Compaction.js"
/** @since 0.1.0 */
export * as Coordinator from "./Coordinator.js"
/** @since 0.2.0 */
export * as DurableRunsPort from "./DurableRunsPort.js"
/** @since 0.1.0 */
export * as Graph from "./Graph.js"
/** @since 0.3.0 */
export * as Guardrail from "./Guardrail.js"
/** @since 0.3.0 */
export { GuardrailTripped } from "./Guardrail.js"
/** @since 0.1.0 */
export * as Operator from "./Operator.js"
/** @since 0.1.0 */
export * as ReActCognition from "./ReActCognition.js"
/** @since 0.2.0 */
export * as RunEngine from "./RunEngine.js"
/** @since 0.1.0 */
export { RunLease } from "./RunLease.js"
/** @since 0.1.0 */
export * as RunAgents from "./RunAgents.js"
/** @since 0.1.0 */
export { runAgents } from "./RunAgents.js"
/** @since 0.1.0 */
export * as RunPolicy from "./RunPolicy.js"
/** @since 0.1.0 */
export * as RunRecovery from "./RunRecovery.js"
/** @since 0.1.0 */
export * as RunState from "./RunState.js"
/** @since 0.2.0 */
export * as Session from "./Session.js"
/** @since 0.1.0 */
export * as SingleCallCognition from "./SingleCallCognition.js"
/** @since 0.1.0 */
export * as StructuredOutput from "./StructuredOutput.js"
/** @since 0.1.0 */
export * as Termination from "./Termination.js"
