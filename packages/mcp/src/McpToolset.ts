/**
 * An MCP server's tools as agentkit tools. A toolset is opened once per server (a scoped layer,
 * shared by every run), reconnects on a `Schedule` when the server goes away, and keeps the
 * server's tool list current: a run takes the snapshot current when it starts and never sees it
 * change; a changed definition of a known tool is pinned by hash and held back until it is
 * accepted; `include` / `exclude` pick tools by the server's own names.
 *
 * Every tool is `sideEffecting`, `requiresApproval` and has caps `[untrusted_content, egress]`
 * unless the server or the tool is declared otherwise (`McpTrust`); its arguments are validated
 * against the server's JSON Schema (closed to undeclared keys) before anything is sent; its
 * result is capped, non-text content is wrapped, and structured content is checked against the
 * output schema. A server's requests for input go to the `Approver`; sampling is refused.
 * Interrupting a run sends the protocol's cancellation for the call in flight. Connecting has a
 * deadline (`connectTimeout`); a session the server no longer knows (HTTP 404 after a restart) is
 * replaced by a new one and the call sent again (the server never ran it), with the tool list read
 * again so a changed definition is held, not swapped in; a call whose HTTP stream ends before the
 * answer fails at once with `McpStreamError`. Each call is the
 * Invoker's `execute_tool` span, annotated with `mcp.server.name`, `mcp.tool.name`,
 * `mcp.method.name` and `mcp.protocol.version` (`Tracing.Attribute` of `@agentkit/core`).
 *
 * @since 0.1.0
 */
import type { ConfigurationError } from "@agentkit/core"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { McpConnectError, McpConnectTimeout, McpNameCollision } from "./Errors.js"
import * as internal from "./internal/toolset.js"

/**
 * The options of a toolset.
 *
 * @example
 * ```ts
 * import { McpToolset, McpTransport } from "@agentkit/mcp"
 *
 * const options: McpToolset.Options = {
 *   name: "everything",
 *   transport: McpTransport.stdio({ command: "npx", args: ["@modelcontextprotocol/server-everything", "stdio"] }),
 *   trust: { tools: { echo: { sideEffecting: false, requiresApproval: false, caps: ["untrusted_content"] } } },
 *   exclude: ["get-env"]
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Options = internal.Options

/**
 * Why an MCP call failed; each goes back to the model as the call's error.
 *
 * @example
 * ```ts
 * import type { McpToolset } from "@agentkit/mcp"
 *
 * const tag = (error: McpToolset.CallError) => error._tag
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type CallError = internal.CallError

/**
 * One MCP tool as an agentkit `Tool` (built with `Tool.make`; its advertised schema is the
 * server's).
 *
 * @example
 * ```ts
 * import type { McpToolset } from "@agentkit/mcp"
 *
 * const names = (tools: ReadonlyArray<McpToolset.McpTool>) => tools.map((tool) => tool.name)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type McpTool = internal.McpAgentTool

/**
 * A changed definition waiting to be accepted: the pinned hash and the one the server now offers.
 *
 * @example
 * ```ts
 * import type { McpToolset } from "@agentkit/mcp"
 *
 * const show = (held: McpToolset.Held) => `${held.tool}: ${held.pinned.slice(0, 8)} -> ${held.offered.slice(0, 8)}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Held = internal.Held

/**
 * What a run takes when it starts: the tools, and whether advertising them shows the model a
 * server's untrusted text (the untrusted leg of the lethal trifecta, from the first turn).
 *
 * @example
 * ```ts
 * import type { McpToolset } from "@agentkit/mcp"
 *
 * const legs = (snapshot: McpToolset.Snapshot) => (snapshot.untrustedDescriptions ? ["untrusted_content"] : [])
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Snapshot = internal.Snapshot

/**
 * A connected toolset.
 *
 * - `tools()`: the current snapshot's tools, to pass beside local tools
 *   (`ReActCognition.make({ tools: [...local, ...toolset.tools()] })`);
 * - `snapshot()`: the tools and `untrustedDescriptions`;
 * - `held()`, `accept(tool)`: changed definitions and their acceptance; `pins()`: the pinned
 *   hashes (persist them and pass them back as `pins` to hold changes made while you were away);
 * - `rejected()`: definitions refused, each alone with the reason (an entry that is not a valid
 *   MCP tool definition, a bad name, a schema too large or not compilable, a tool that runs only
 *   as a task, a name collision after a change); the server's other tools stay usable;
 * - `refresh`: lists the tools again now.
 *
 * @example
 * ```ts
 * import type { McpToolset } from "@agentkit/mcp"
 * import { Effect } from "effect"
 *
 * const acceptAll = (toolset: McpToolset.Toolset) => Effect.forEach(toolset.held(), (held) => toolset.accept(held.tool))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Toolset = internal.Toolset

/**
 * Opens a toolset in the current scope: checks the options (a bad name, trust declaration, limit
 * or `connectTimeout` fails with `ConfigurationError` before anything is started), connects
 * (failing with `McpConnectTimeout` when the server has not completed the connection within
 * `connectTimeout`, default 10 seconds), lists the tools (a name collision fails with
 * `McpNameCollision`) and closes the connection when the scope closes.
 *
 * @example
 * ```ts
 * import { McpToolset, McpTransport } from "@agentkit/mcp"
 * import { Effect } from "effect"
 *
 * const program = Effect.scoped(
 *   Effect.gen(function* () {
 *     const toolset = yield* McpToolset.make({ name: "docs", transport: McpTransport.stdio({ command: "docs-server" }) })
 *     return toolset.tools().map((tool) => tool.name)
 *   })
 * )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (
  options: Options
) => Effect.Effect<
  Toolset,
  McpConnectError | McpConnectTimeout | McpNameCollision | ConfigurationError,
  Scope.Scope
> = internal.make

/**
 * The service tag of one server's toolset: `class Docs extends McpToolset.Tag("docs")<Docs>() {}`.
 *
 * @example
 * ```ts
 * import { McpToolset } from "@agentkit/mcp"
 *
 * class Everything extends McpToolset.Tag("everything")<Everything>() {}
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export const Tag =
  <const Name extends string>(name: Name) =>
  <Self>(): Context.TagClass<Self, `@agentkit/mcp/McpToolset/${Name}`, Toolset> =>
    (Effect.Tag(`@agentkit/mcp/McpToolset/${name}`)<Self, Toolset>() as unknown) as Context.TagClass<
      Self,
      `@agentkit/mcp/McpToolset/${Name}`,
      Toolset
    >

/**
 * A scoped layer providing one server's toolset: built once, shared by every run, closed with
 * the layer.
 *
 * @example
 * ```ts
 * import { McpToolset, McpTransport } from "@agentkit/mcp"
 *
 * class Everything extends McpToolset.Tag("everything")<Everything>() {}
 * const EverythingLive = McpToolset.layer(Everything, {
 *   name: "everything",
 *   transport: McpTransport.stdio({ command: "npx", args: ["@modelcontextprotocol/server-everything", "stdio"] })
 * })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <Self, Id extends string>(
  tag: Context.TagClass<Self, Id, Toolset>,
  options: Options
): Layer.Layer<Self, McpConnectError | McpConnectTimeout | McpNameCollision | ConfigurationError> =>
  Layer.scoped(tag, internal.make(options))
