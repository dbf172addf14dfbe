/**
 * @agentkit/core: the value types, errors, run context, meters, provider port and pipelines every
 * other agentkit package stands on.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Budget from "./Budget.js"
/** @since 0.1.0 */
export * as Cancellation from "./Cancellation.js"
/** @since 0.1.0 */
export * as CanonicalJson from "./CanonicalJson.js"
/** @since 0.1.0 */
export * as Chat from "./Chat.js"
/** @since 0.1.0 */
export * as ModelCatalog from "./ModelCatalog.js"
/** @since 0.1.0 */
export * as SpanStore from "./SpanStore.js"
/** @since 0.1.0 */
export { AuditStore } from "./AuditStore.js"
/** @since 0.1.0 */
export { CheckpointStore } from "./CheckpointStore.js"
/** @since 0.1.0 */
export type { CheckpointStatus } from "./CheckpointStore.js"
/** @since 0.1.0 */
export { ExecutionLedger } from "./ExecutionLedger.js"
/** @since 0.1.0 */
export { IdempotencyStore } from "./IdempotencyStore.js"
/** @since 0.1.0 */
export { MemoStore } from "./MemoStore.js"
/** @since 0.1.0 */
export { ChatModel } from "./ChatModel.js"
/** @since 0.1.0 */
export { errorMessage, errorType, ErrorTypeId, findCause, ForeignValue, isAgentkitError } from "./AgentkitError.js"
/** @since 0.1.0 */
export type { AgentkitError } from "./AgentkitError.js"
/** @since 0.1.0 */
export { BudgetExceeded, DepthExceeded, isBudgetExceeded, isDepthExceeded } from "./BudgetError.js"
/** @since 0.2.0 */
export { BudgetError } from "./BudgetError.js"
/** @since 0.1.0 */
export { Cancelled, isCancelled } from "./CancellationError.js"
/** @since 0.1.0 */
export { CanonicalJsonError } from "./CanonicalJsonError.js"
/** @since 0.1.0 */
export { ChatModelError, ChatModelErrorReason, isChatModelError, statusReason } from "./ChatModelError.js"
/** @since 0.2.0 */
export { retryAfterOf, shouldRetryOf } from "./ChatModelError.js"
/** @since 0.1.0 */
export {
  AlreadyDecided,
  LeaseHeld,
  RunExists,
  RunFinished,
  RunNotFound,
  StaleLease,
  VersionConflict
} from "./CheckpointStoreError.js"
/** @since 0.2.0 */
export { CheckpointStoreError } from "./CheckpointStoreError.js"
/** @since 0.1.0 */
export { ConfigurationError } from "./ConfigurationError.js"
/** @since 0.1.0 */
export { LedgerConflict, RecordedFailure, ToolInDoubt } from "./ExecutionLedgerError.js"
/** @since 0.2.0 */
export { ExecutionLedgerError } from "./ExecutionLedgerError.js"
/** @since 0.1.0 */
export {
  approvalDeniedText,
  DEFECT_TEXT,
  FAILURE_TEXT_MAX_BYTES,
  markedFailedText,
  shapeMismatchText,
  toolFailureText,
  unknownToolText
} from "./FailureText.js"
/** @since 0.1.0 */
export { CorruptEntry, StoreError } from "./StoreError.js"
/** @since 0.1.0 */
export {
  endsRun,
  invalidArgumentFields,
  isSubRunSuspension,
  ToolArgumentError,
  ToolDefinitionError,
  ToolDenied,
  ToolExecutionError,
  ToolNotFoundError,
  ToolShapeError,
  ToolTimeoutError
} from "./ToolError.js"
/** @since 0.1.0 */
export type { ArgumentProblem, SubRunSuspension } from "./ToolError.js"
/** @since 0.1.0 */
export { capabilities } from "./InvokableTool.js"
/** @since 0.1.0 */
export type { ApprovalCondition, Capability, ExecuteOptions, InvokableTool } from "./InvokableTool.js"
/** @since 0.1.0 */
export { Invoker } from "./Invoker.js"
/** @since 0.1.0 */
export * as Middleware from "./Middleware.js"
/** @since 0.1.0 */
export type {
  CallMetadata,
  ChatCall,
  ChatError,
  ChatHandler,
  ChatMiddleware,
  ToolCallRequest,
  ToolHandler,
  ToolInvocation,
  ToolMiddleware,
  ToolOutcome,
  ToolPipelineError
} from "./Middleware.js"
/** @since 0.1.0 */
export * as Message from "./Message.js"
/** @since 0.2.0 */
export * as ProviderConfig from "./ProviderConfig.js"
/** @since 0.1.0 */
export * as PythonText from "./PythonText.js"
/** @since 0.1.0 */
export * as Quota from "./Quota.js"
/** @since 0.1.0 */
export { autonomyTiers, RunContext } from "./RunContext.js"
/** @since 0.1.0 */
export type { Autonomy } from "./RunContext.js"
/** @since 0.1.0 */
export * as Scope from "./Scope.js"
/** @since 0.2.0 */
export * as SessionStore from "./SessionStore.js"
/** @since 0.2.0 */
export * as TokenEstimator from "./TokenEstimator.js"
/** @since 0.1.0 */
export * as ToolCall from "./ToolCall.js"
/** @since 0.1.0 */
export * as Tracing from "./Tracing.js"
/** @since 0.1.0 */
export * as Usage from "./Usage.js"
/** @since 0.1.0 */
export * as Utf8 from "./Utf8.js"
