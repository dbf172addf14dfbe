/**
 * The typed errors of `@agentkit/mcp`. Errors of a call (a tool the server reports as failed, a
 * changed definition, input that could not be asked for) go back to the model as the call's
 * `is_error` result, like a local tool's failure (core's `toolFailureText`), among them
 * `McpStreamError` (the answer's stream ended first); errors at connect (`McpConnectError`,
 * `McpConnectTimeout`, `McpNameCollision`) fail the layer. Options that cannot work throw core's
 * `ConfigurationError` where they are given. Each error carries core's `ErrorTypeId` (so
 * `isAgentkitError` recognises it and retry never repeats it) and is a `Schema.TaggedError`.
 *
 * @since 0.1.0
 */
import { ErrorTypeId, ForeignValue } from "@agentkit/core"
import * as Schema from "effect/Schema"

/**
 * The server could not be reached or the MCP handshake failed (after the reconnect schedule ran
 * out), or the connection closed during a call. The cause is kept; the message never holds a
 * credential.
 *
 * @example
 * ```ts
 * import { McpConnectError } from "@agentkit/mcp"
 *
 * new McpConnectError({ server: "everything", message: "spawn ENOENT" }).message // "spawn ENOENT"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class McpConnectError
  extends Schema.TaggedError<McpConnectError>("@agentkit/mcp/McpConnectError")("McpConnectError", {
    server: Schema.String,
    message: Schema.String,
    cause: Schema.optional(ForeignValue)
  })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * The server did not complete the connection (transport, handshake and reconnect tries) within
 * the toolset's `connectTimeout` (default 10 seconds): a server that accepts connections and never
 * answers fails `McpToolset.make` (and so the layer) with this, instead of holding start-up.
 * `lastError` is why the last failed try failed, when one did (never holding a credential).
 *
 * @example
 * ```ts
 * import { McpConnectTimeout } from "@agentkit/mcp"
 *
 * new McpConnectTimeout({ server: "docs", timeout: "10s" }).message
 * // "MCP server 'docs' did not complete the connection within 10s"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class McpConnectTimeout
  extends Schema.TaggedError<McpConnectTimeout>("@agentkit/mcp/McpConnectTimeout")("McpConnectTimeout", {
    server: Schema.String,
    timeout: Schema.String,
    lastError: Schema.optional(Schema.String)
  })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    const last = this.lastError === undefined ? "" : `; the last try failed: ${this.lastError}`
    return `MCP server '${this.server}' did not complete the connection within ${this.timeout}${last}`
  }
}

/**
 * The HTTP stream that carries a call's answer ended or broke before the server answered (the
 * server died, or the connection was cut): the call fails when the stream ends, not at the tool's
 * timeout, and it is never re-sent (the server may have run it). The next call opens a new
 * session. `reason` never holds a credential.
 *
 * @example
 * ```ts
 * import { McpStreamError } from "@agentkit/mcp"
 *
 * new McpStreamError({ server: "docs", tool: "search", reason: "the stream ended before the server answered" }).message
 * // "MCP tool 'search' of server 'docs' failed: the stream ended before the server answered; the call was not re-sent"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class McpStreamError
  extends Schema.TaggedError<McpStreamError>("@agentkit/mcp/McpStreamError")("McpStreamError", {
    server: Schema.String,
    tool: Schema.String,
    reason: Schema.String
  })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `MCP tool '${this.tool}' of server '${this.server}' failed: ${this.reason}; the call was not re-sent`
  }
}

/**
 * Two of a server's tool names map to one agentkit name after sanitising (`a.b` and `a_b` both
 * become `mcp__s__a_b`): the sanitised name never identifies a tool on its own, so connecting fails.
 *
 * @example
 * ```ts
 * import { McpNameCollision } from "@agentkit/mcp"
 *
 * new McpNameCollision({ server: "s", name: "mcp__s__a_b", tools: ["a.b", "a_b"] }).message
 * // "MCP server 's': tools 'a.b', 'a_b' all map to the name 'mcp__s__a_b'; exclude all but one"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class McpNameCollision
  extends Schema.TaggedError<McpNameCollision>("@agentkit/mcp/McpNameCollision")("McpNameCollision", {
    server: Schema.String,
    name: Schema.String,
    tools: Schema.Array(Schema.String)
  })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `MCP server '${this.server}': tools ${
      this.tools.map((t) => `'${t}'`).join(", ")
    } all map to the name '${this.name}'; exclude all but one`
  }
}

/**
 * The server reported the call as failed (`isError: true`, or a protocol error such as an unknown
 * tool or invalid parameters). `message` is the server's text, capped (and marked as untrusted
 * text when the tool's content is untrusted).
 *
 * @example
 * ```ts
 * import { McpToolError } from "@agentkit/mcp"
 *
 * new McpToolError({ server: "everything", tool: "get-sum", message: "MCP error -32602: invalid params" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class McpToolError extends Schema.TaggedError<McpToolError>("@agentkit/mcp/McpToolError")("McpToolError", {
  server: Schema.String,
  tool: Schema.String,
  message: Schema.String
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * The tool's definition changed on the server after the run took its snapshot (or the tool was
 * removed): the call is not sent. A changed definition stays out of later snapshots until it is
 * accepted with `toolset.accept(name)`.
 *
 * @example
 * ```ts
 * import { McpToolChanged } from "@agentkit/mcp"
 *
 * new McpToolChanged({ server: "notes", tool: "read_note", change: "changed" }).message
 * // "MCP tool 'read_note' of server 'notes' changed its definition since this run started; the call was not sent"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class McpToolChanged
  extends Schema.TaggedError<McpToolChanged>("@agentkit/mcp/McpToolChanged")("McpToolChanged", {
    server: Schema.String,
    tool: Schema.String,
    change: Schema.Literal("changed", "removed")
  })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return this.change === "removed"
      ? `MCP tool '${this.tool}' of server '${this.server}' was removed since this run started; the call was not sent`
      : `MCP tool '${this.tool}' of server '${this.server}' changed its definition since this run started; the call was not sent`
  }
}

/**
 * The server asked for input (an elicitation, or an `input_required` round) that nobody could
 * give: no `Approver` is provided, the request kind is refused (sampling, roots, URL elicitation),
 * the rounds ran out, or the request could not be tied to one call. The call fails closed.
 *
 * @example
 * ```ts
 * import { McpInputRefused } from "@agentkit/mcp"
 *
 * new McpInputRefused({ server: "s", tool: "deploy", reason: "no Approver is provided to answer the server's request for input" }).message
 * // "MCP tool 'deploy' of server 's' asked for input that was not given: no Approver is provided to answer the server's request for input"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class McpInputRefused
  extends Schema.TaggedError<McpInputRefused>("@agentkit/mcp/McpInputRefused")("McpInputRefused", {
    server: Schema.String,
    tool: Schema.String,
    reason: Schema.String
  })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `MCP tool '${this.tool}' of server '${this.server}' asked for input that was not given: ${this.reason}`
  }
}

/**
 * A request to an agentkit MCP server was not authenticated (the authenticator's failure); it is
 * answered `401` with the message.
 *
 * @example
 * ```ts
 * import { McpUnauthorized } from "@agentkit/mcp"
 *
 * new McpUnauthorized({ message: "missing bearer token" }).message // "missing bearer token"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class McpUnauthorized
  extends Schema.TaggedError<McpUnauthorized>("@agentkit/mcp/McpUnauthorized")("McpUnauthorized", {
    message: Schema.String
  })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}
