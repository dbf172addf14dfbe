/**
 * The errors of `@agentkit/mcp`. Errors of a call (a tool the server reports as failed, a changed
 * definition, input that could not be asked for) go back to the model as the call's `is_error`
 * result, like a local tool's failure; errors at connect (`McpConnectError`,
 * `McpNameCollision`) fail the layer; `McpConfigError` is thrown when a definition is made.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"

/**
 * Options that cannot work, thrown synchronously where they are given (a bad server name, a
 * non-loopback server without an authenticator, an unknown trust flag).
 *
 * @example
 * ```ts
 * import { McpError } from "@agentkit/mcp"
 *
 * new McpError.McpConfigError({ message: "server name 'a b' is invalid" }).message
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class McpConfigError extends Data.TaggedError("McpConfigError")<{ readonly message: string }> {}

/**
 * The server could not be reached or the MCP handshake failed (after the reconnect schedule ran
 * out). The cause is kept; the message never holds a credential.
 *
 * @example
 * ```ts
 * import { McpError } from "@agentkit/mcp"
 *
 * new McpError.McpConnectError({ server: "everything", message: "spawn ENOENT", cause: undefined }).message
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class McpConnectError extends Data.TaggedError("McpConnectError")<{
  readonly server: string
  readonly message: string
  readonly cause: unknown
}> {}

/**
 * Two of a server's tool names map to one agentkit name after sanitising (`a.b` and `a_b` both
 * become `mcp__s__a_b`): the sanitised name never identifies a tool on its own, so connecting fails.
 *
 * @example
 * ```ts
 * import { McpError } from "@agentkit/mcp"
 *
 * new McpError.McpNameCollision({ server: "s", name: "mcp__s__a_b", tools: ["a.b", "a_b"] }).message
 * // "MCP server 's': tools 'a.b', 'a_b' all map to the name 'mcp__s__a_b'; exclude all but one"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class McpNameCollision extends Data.TaggedError("McpNameCollision")<{
  readonly server: string
  readonly name: string
  readonly tools: ReadonlyArray<string>
}> {
  override get message(): string {
    return `MCP server '${this.server}': tools ${this.tools.map((t) => `'${t}'`).join(", ")} all map to the name '${this.name}'; exclude all but one`
  }
}

/**
 * The server reported the call as failed (`isError: true`, or a protocol error such as an unknown
 * tool or invalid parameters). `message` is the server's text, capped (and marked as untrusted
 * text when the tool's content is untrusted).
 *
 * @example
 * ```ts
 * import { McpError } from "@agentkit/mcp"
 *
 * new McpError.McpToolError({ server: "everything", tool: "get-sum", message: "MCP error -32602: invalid params" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class McpToolError extends Data.TaggedError("McpToolError")<{
  readonly server: string
  readonly tool: string
  readonly message: string
}> {}

/**
 * The tool's definition changed on the server after the run took its snapshot (or the tool was
 * removed): the call is not sent. A changed definition stays out of later snapshots until it is
 * accepted with `toolset.accept(name)`.
 *
 * @example
 * ```ts
 * import { McpError } from "@agentkit/mcp"
 *
 * new McpError.McpToolChanged({ server: "notes", tool: "read_note", change: "changed" }).message
 * // "MCP tool 'read_note' of server 'notes' changed its definition since this run started; the call was not sent"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class McpToolChanged extends Data.TaggedError("McpToolChanged")<{
  readonly server: string
  readonly tool: string
  readonly change: "changed" | "removed"
}> {
  override get message(): string {
    return this.change === "removed"
      ? `MCP tool '${this.tool}' of server '${this.server}' was removed since this run started; the call was not sent`
      : `MCP tool '${this.tool}' of server '${this.server}' changed its definition since this run started; the call was not sent`
  }
}

/**
 * The server asked for input (an elicitation, or an `input_required` round) that nobody could
 * give: no `Approver` is provided, the request kind is refused (sampling, roots, URL elicitation),
 * the rounds ran out, or the request could not be tied to one run. The call fails closed.
 *
 * @example
 * ```ts
 * import { McpError } from "@agentkit/mcp"
 *
 * new McpError.McpInputRefused({ server: "s", tool: "deploy", reason: "no Approver is provided to answer the server's request for input" }).message
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class McpInputRefused extends Data.TaggedError("McpInputRefused")<{
  readonly server: string
  readonly tool: string
  readonly reason: string
}> {
  override get message(): string {
    return `MCP tool '${this.tool}' of server '${this.server}' asked for input that was not given: ${this.reason}`
  }
}

/**
 * An HTTP request to an MCP server was refused before it was sent: the egress policy denied the
 * URL, or the server answered with a redirect (never followed).
 *
 * @example
 * ```ts
 * import { McpError } from "@agentkit/mcp"
 *
 * new McpError.McpEgressDenied({ server: "remote", url: "https://evil.example/mcp", message: "egress to 'evil.example' not allowed (not in egress allowlist)" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class McpEgressDenied extends Data.TaggedError("McpEgressDenied")<{
  readonly server: string
  readonly url: string
  readonly message: string
}> {}
