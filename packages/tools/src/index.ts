/**
 * @agentkit/tools: schema-first tools, validation, JSON Schema and the tool registry.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export { asTool, renderRunResult } from "./AsTool.js"
/** @since 0.1.0 */
export type { AsToolOptions, Runnable } from "./AsTool.js"
/** @since 0.1.0 */
export * as JsonSchema from "./JsonSchema.js"
/** @since 0.1.0 */
export * as Tool from "./Tool.js"
/** @since 0.1.0 */
export * as ToolRegistry from "./ToolRegistry.js"
/** @since 0.1.0 */
export {
  ToolArgumentError,
  ToolDefinitionError,
  ToolExecutionError,
  ToolNotFoundError,
  ToolShapeError,
  ToolTimeoutError
} from "@agentkit/core"
