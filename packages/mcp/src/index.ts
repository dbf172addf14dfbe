/**
 * @agentkit/mcp: an MCP server's tools as agentkit tools, with their flags enforced, and agentkit
 * tools served over MCP.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export {
  McpConnectError,
  McpConnectTimeout,
  McpInputRefused,
  McpNameCollision,
  McpStreamError,
  McpToolChanged,
  McpToolError,
  McpUnauthorized
} from "./Errors.js"
/** @since 0.1.0 */
export * as McpName from "./McpName.js"
/** @since 0.1.0 */
export * as McpToolset from "./McpToolset.js"
/** @since 0.1.0 */
export * as McpTransport from "./McpTransport.js"
/** @since 0.1.0 */
export * as McpTrust from "./McpTrust.js"
/** @since 0.1.0 */
export * as McpServer from "./McpServer.js"
