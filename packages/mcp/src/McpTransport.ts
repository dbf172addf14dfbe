/**
 * How to reach an MCP server: a local process over stdio, or an endpoint over Streamable HTTP.
 *
 * An HTTP endpoint passes the egress policy of `@agentkit/middleware` (by default: private,
 * loopback and link-local addresses are refused, so a local test server needs `allowPrivate`)
 * before any request is sent, and a redirect is never followed: a 3xx answer fails the request.
 * Authentication is by static headers, or by a bearer token per tenant read from the run's
 * context (`McpTransport.perTenant`): each tenant then gets its own connection. Credentials are
 * never put on spans or in texts the model sees.
 *
 * @since 0.1.0
 */
import type { RunContext } from "@agentkit/core"
import type { Egress } from "@agentkit/middleware"
import type * as Effect from "effect/Effect"

/**
 * A server started as a child process, spoken to over its stdin and stdout.
 *
 * @example
 * ```ts
 * import { McpTransport } from "@agentkit/mcp"
 *
 * const transport: McpTransport.Stdio = McpTransport.stdio({ command: "node", args: ["server.js"] })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Stdio {
  readonly _tag: "Stdio"
  readonly command: string
  readonly args: ReadonlyArray<string>
  /** The child's environment; absent: the MCP SDK's safe default subset (PATH, HOME, ...). */
  readonly env: Readonly<Record<string, string>> | undefined
  readonly cwd: string | undefined
  /** Where the child's stderr goes (default `"inherit"`). */
  readonly stderr: "inherit" | "ignore"
}

/**
 * Bearer tokens per tenant: `token(context)` gives the token for the run's tenant, `tenant(context)`
 * names the tenant (default: `scope.storeKey`, the unambiguous tenant key), and `catalog` is the token used to list the
 * server's tools when the toolset connects.
 *
 * @example
 * ```ts
 * import { McpTransport } from "@agentkit/mcp"
 * import { Effect } from "effect"
 *
 * const auth: McpTransport.PerTenant = McpTransport.perTenant({
 *   catalog: Effect.succeed("catalog-token"),
 *   token: (context) => Effect.succeed(`token-for-${context.scope.key}`)
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface PerTenant {
  readonly _tag: "PerTenant"
  readonly catalog: Effect.Effect<string, unknown>
  readonly token: (context: RunContext.Service) => Effect.Effect<string, unknown>
  readonly tenant: (context: RunContext.Service) => string
}

/**
 * A Streamable HTTP endpoint.
 *
 * @example
 * ```ts
 * import { McpTransport } from "@agentkit/mcp"
 *
 * const transport: McpTransport.Http = McpTransport.http("https://mcp.example.com/mcp", {
 *   headers: { "x-api-key": "..." },
 *   egress: { allow: ["mcp.example.com"] }
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Http {
  readonly _tag: "Http"
  readonly url: string
  /** Sent on every request (static credentials go here). */
  readonly headers: Readonly<Record<string, string>>
  readonly auth: PerTenant | undefined
  /** The egress policy every request passes (default: `Egress.policy()`, private addresses refused). */
  readonly egress: Egress.Options | Egress.Policy | undefined
}

/**
 * A transport.
 *
 * @example
 * ```ts
 * import { McpTransport } from "@agentkit/mcp"
 *
 * const describe = (transport: McpTransport.Transport) => (transport._tag === "Stdio" ? transport.command : transport.url)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Transport = Stdio | Http

/**
 * A stdio transport.
 *
 * @example
 * ```ts
 * import { McpTransport } from "@agentkit/mcp"
 *
 * McpTransport.stdio({ command: "npx", args: ["@modelcontextprotocol/server-everything", "stdio"], stderr: "ignore" })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const stdio = (options: {
  readonly command: string
  readonly args?: ReadonlyArray<string> | undefined
  readonly env?: Readonly<Record<string, string>> | undefined
  readonly cwd?: string | undefined
  readonly stderr?: "inherit" | "ignore" | undefined
}): Stdio => ({
  _tag: "Stdio",
  command: options.command,
  args: options.args ?? [],
  env: options.env,
  cwd: options.cwd,
  stderr: options.stderr ?? "inherit"
})

/**
 * A Streamable HTTP transport.
 *
 * @example
 * ```ts
 * import { McpTransport } from "@agentkit/mcp"
 *
 * McpTransport.http("http://127.0.0.1:3001/mcp", { egress: { allowPrivate: ["127.0.0.1"] } })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const http = (
  url: string,
  options: {
    readonly headers?: Readonly<Record<string, string>> | undefined
    readonly auth?: PerTenant | undefined
    readonly egress?: Egress.Options | Egress.Policy | undefined
  } = {}
): Http => ({ _tag: "Http", url, headers: options.headers ?? {}, auth: options.auth, egress: options.egress })

/**
 * Bearer tokens per tenant, read from the run context.
 *
 * @example
 * ```ts
 * import { McpTransport } from "@agentkit/mcp"
 * import { Effect } from "effect"
 *
 * McpTransport.perTenant({ catalog: Effect.succeed("catalog"), token: (context) => Effect.succeed(`t-${context.scope.orgId}`) })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const perTenant = (options: {
  readonly catalog: Effect.Effect<string, unknown>
  readonly token: (context: RunContext.Service) => Effect.Effect<string, unknown>
  readonly tenant?: ((context: RunContext.Service) => string) | undefined
}): PerTenant => ({
  _tag: "PerTenant",
  catalog: options.catalog,
  token: options.token,
  tenant: options.tenant ?? ((context) => context.scope.storeKey)
})
