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
export {
  AlreadyDecided,
  approvalDeniedText,
  BudgetExceeded,
  Cancelled,
  CanonicalJsonError,
  ChatModelError,
  ChatModelErrorReason,
  ConfigurationError,
  CorruptEntry,
  DEFECT_TEXT,
  DepthExceeded,
  endsRun,
  errorMessage,
  errorType,
  ErrorTypeId,
  FAILURE_TEXT_MAX_BYTES,
  findCause,
  ForeignValue,
  invalidArgumentFields,
  isAgentkitError,
  isBudgetExceeded,
  isCancelled,
  isChatModelError,
  isDepthExceeded,
  isSubRunSuspension,
  LeaseHeld,
  LedgerConflict,
  markedFailedText,
  RecordedFailure,
  RunExists,
  RunFinished,
  RunNotFound,
  shapeMismatchText,
  StaleLease,
  StoreError,
  ToolArgumentError,
  ToolDefinitionError,
  ToolDenied,
  ToolExecutionError,
  toolFailureText,
  ToolInDoubt,
  ToolNotFoundError,
  ToolShapeError,
  ToolTimeoutError,
  unknownToolText,
  VersionConflict
} from "./Errors.js"
/** @since 0.1.0 */
export type { AgentkitError, ArgumentProblem, SubRunSuspension } from "./Errors.js"
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
/** @since 0.1.0 */
export * as ToolCall from "./ToolCall.js"
/** @since 0.1.0 */
export * as Tracing from "./Tracing.js"
/** @since 0.1.0 */
export * as Usage from "./Usage.js"
/** @since 0.1.0 */
export * as Utf8 from "./Utf8.js"
