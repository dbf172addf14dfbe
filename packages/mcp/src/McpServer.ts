/**
 * agentkit tools served over MCP: a `ToolRegistry` (an agent too, made a tool with `asTool`) over
 * Streamable HTTP, mounted on an `@effect/platform` router, or over stdio.
 *
 * - Every call goes through the Invoker's tool pipeline (the server's middleware apply) under a
 *   fresh `RunContext` built from the caller's authenticated principal.
 * - HTTP checks the `Host` header (DNS rebinding) and the `Origin` header; without an
 *   authenticator it serves loopback peers only and refuses to be configured for other hosts.
 * - A call that needs approval (`requiresApproval`, or the principal's autonomy tier) is decided by
 *   the server's own `Approver`, never by the caller: the caller is asked to confirm with an
 *   `input_required` round whose `requestState` is HMAC-signed and bound to the argument digest;
 *   a tampered or mismatched state asks again and runs nothing.
 * - The flags become annotations: `readOnlyHint = !sideEffecting`, `destructiveHint =
 *   requiresApproval`, `idempotentHint = idempotent`, `openWorldHint` = has `egress`.
 *
 * @since 0.1.0
 */
import { ConfigurationError, errorMessage } from "@agentkit/core"
import type { Autonomy, Budget, Invoker, Scope as AgentScope } from "@agentkit/core"
import { ToolRegistry } from "@agentkit/tools"
import * as HttpApp from "@effect/platform/HttpApp"
import type * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse
} from "@modelcontextprotocol/server"
import { serveStdio } from "@modelcontextprotocol/server/stdio"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import type { McpUnauthorized } from "./Errors.js"
import { makeCodec, makeServer, type Principal as InternalPrincipal, type Serving } from "./internal/server.js"

/**
 * Who is calling: a subject (shown in digests and run ids) and what the run it gets may do.
 *
 * @example
 * ```ts
 * import type { McpServer } from "@agentkit/mcp"
 *
 * const principal: McpServer.Principal = { subject: "agent-7", scope: { orgId: 3 }, autonomy: "gated" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Principal extends InternalPrincipal {
  readonly subject: string
  readonly scope?: AgentScope.Fields | undefined
  readonly autonomy?: Autonomy | undefined
  readonly budget?: Budget.Limits | undefined
}

/**
 * The authenticator port: from the request's headers (and the peer's address, when known) to a
 * principal, or `McpUnauthorized` (answered `401` with its message).
 *
 * @example
 * ```ts
 * import { McpUnauthorized, type McpServer } from "@agentkit/mcp"
 * import { Effect } from "effect"
 *
 * const bearer: McpServer.Authenticator = ({ headers }) =>
 *   headers.get("authorization") === "Bearer s3cret"
 *     ? Effect.succeed({ subject: "ops", autonomy: "auto" })
 *     : Effect.fail(new McpUnauthorized({ message: "bad token" }))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Authenticator = (request: {
  readonly headers: Headers
  readonly url: string
  readonly remoteAddress: string | undefined
}) => Effect.Effect<Principal, McpUnauthorized>

/**
 * The options of both transports.
 *
 * @example
 * ```ts
 * import type { McpServer } from "@agentkit/mcp"
 *
 * const options: McpServer.Options<typeof lookupOrder> = { name: "orders", tools: [lookupOrder] }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<T extends ToolRegistry.AnyTool> {
  /** The server name clients see. */
  readonly name: string
  readonly version?: string | undefined
  readonly tools: ReadonlyArray<T> | ToolRegistry.ToolRegistry<T>
  /** The HMAC key that signs `requestState` (32 bytes or more; share it across a fleet). Default: random per process. */
  readonly stateKey?: Uint8Array | string | undefined
  /** How long a signed approval round stays valid (default 10 minutes). */
  readonly approvalTtl?: Duration.DurationInput | undefined
}

/**
 * The options of the HTTP transport.
 *
 * @example
 * ```ts
 * import type { McpServer } from "@agentkit/mcp"
 *
 * declare const bearer: McpServer.Authenticator
 *
 * const options: McpServer.HttpOptions<typeof lookupOrder> = {
 *   name: "orders", tools: [lookupOrder], allowedHosts: ["mcp.example.com"], authenticate: bearer
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface HttpOptions<T extends ToolRegistry.AnyTool> extends Options<T> {
  /** Required to serve anyone but loopback peers. */
  readonly authenticate?: Authenticator | undefined
  /** Accepted `Host` names, port-agnostic (default: `localhost`, `127.0.0.1`, `[::1]`). */
  readonly allowedHosts?: ReadonlyArray<string> | undefined
  /** Accepted `Origin` host names, port-agnostic (default: the loopback names); a request without `Origin` passes. */
  readonly allowedOrigins?: ReadonlyArray<string> | undefined
}

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]", "::1"])

const isLoopbackAddress = (address: string | undefined): boolean =>
  address !== undefined && (address === "::1" || address.startsWith("127.") || address.startsWith("::ffff:127."))

const LOCAL: Principal = { subject: "local" }

const serving = <T extends ToolRegistry.AnyTool>(options: Options<T>): Serving => {
  if (typeof options.name !== "string" || options.name.trim() === "") {
    throw new ConfigurationError({ field: "name", message: "McpServer: `name` is required (a non-empty string)" })
  }
  const registry: ToolRegistry.ToolRegistry = ToolRegistry.isToolRegistry(options.tools)
    ? options.tools
    : ToolRegistry.fromTools(options.tools as ReadonlyArray<T>)
  const key = options.stateKey ?? crypto.getRandomValues(new Uint8Array(32))
  const decodedTtl = Duration.decodeUnknown(options.approvalTtl ?? "10 minutes")
  if (Option.isNone(decodedTtl) || Duration.toMillis(decodedTtl.value) < 1000) {
    throw new ConfigurationError({
      field: "approvalTtl",
      message: `McpServer: \`approvalTtl\` must be a Duration of at least 1 second; got ${String(options.approvalTtl)}`
    })
  }
  const ttl = Duration.toSeconds(decodedTtl.value)
  let codec: Serving["codec"]
  try {
    codec = makeCodec(key, Math.max(1, Math.round(ttl)))
  } catch (error) {
    throw new ConfigurationError({ field: "stateKey", message: `McpServer: bad stateKey: ${errorMessage(error)}` })
  }
  return { name: options.name, version: options.version ?? "0.1.0", registry, codec }
}

/**
 * The Streamable HTTP endpoint, as a route handler for an `@effect/platform` router
 * (`HttpRouter.all("/mcp", handler)` or `HttpLayerRouter`'s `add("*", "/mcp", handler)`). It
 * serves both protocol eras (2025-era clients statelessly). Definition errors (a non-loopback
 * `allowedHosts` without `authenticate`) throw `ConfigurationError`.
 *
 * @example
 * ```ts
 * import { McpServer } from "@agentkit/mcp"
 * import { HttpRouter } from "@effect/platform"
 *
 * const router = HttpRouter.empty.pipe(HttpRouter.all("/mcp", McpServer.http({ name: "orders", tools: [lookupOrder] })))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const http = <T extends ToolRegistry.AnyTool>(
  options: HttpOptions<T>
): Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  HttpServerError.HttpServerError,
  HttpServerRequest.HttpServerRequest | Invoker | ToolRegistry.Requirements<T>
> => {
  const built = serving(options)
  const authenticate = options.authenticate
  const hosts = options.allowedHosts === undefined ? localhostAllowedHostnames() : [...options.allowedHosts]
  const origins = options.allowedOrigins === undefined ? localhostAllowedOrigins() : [...options.allowedOrigins]
  if (authenticate === undefined) {
    const remote = hosts.filter((host) => !LOOPBACK_HOSTS.has(host.toLowerCase()))
    if (remote.length > 0) {
      throw new ConfigurationError({
        field: "allowedHosts",
        message: `McpServer '${options.name}': serving ${
          remote.join(", ")
        } needs an authenticator; without one only loopback hosts are served`
      })
    }
  }
  const handler = createMcpHandler(
    (context) => {
      const extra = context.authInfo?.extra as {
        readonly principal: Principal
        readonly runtime: Runtime.Runtime<Invoker>
      }
      return makeServer(built, extra.principal, extra.runtime)
    },
    { legacy: "stateless" }
  )
  return Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const remoteAddress = request.remoteAddress._tag === "Some" ? request.remoteAddress.value : undefined
    let principal = LOCAL
    if (authenticate === undefined) {
      if (!isLoopbackAddress(remoteAddress)) {
        return HttpServerResponse.text("this MCP endpoint serves loopback peers only", { status: 403 })
      }
    } else {
      const headers = new Headers()
      for (const [key, value] of Object.entries(request.headers)) headers.set(key, value)
      const authenticated = yield* Effect.either(authenticate({ headers, url: request.url, remoteAddress }))
      if (Either.isLeft(authenticated)) return HttpServerResponse.text(authenticated.left.message, { status: 401 })
      principal = authenticated.right
    }
    const runtime = yield* Effect.runtime<Invoker | ToolRegistry.Requirements<T>>()
    const authInfo = { token: "", clientId: principal.subject, scopes: [], extra: { principal, runtime } }
    return yield* HttpApp.fromWebHandler(
      (web) =>
        Promise.resolve(
          hostHeaderValidationResponse(web, hosts) ?? originValidationResponse(web, origins)
        ).then((refused) => refused ?? handler.fetch(web, { authInfo }))
    )
  })
}

/**
 * Serves the tools over this process's stdin and stdout until the scope closes. The parent
 * process is the one client, so no authenticator is needed: calls run as `principal` (default
 * subject `local`). Log to stderr: stdout is the protocol channel.
 *
 * @example
 * ```ts
 * import { McpServer } from "@agentkit/mcp"
 * import { Effect } from "effect"
 *
 * const main = Effect.scoped(Effect.zipRight(McpServer.stdio({ name: "orders", tools: [lookupOrder] }), Effect.never))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const stdio = <T extends ToolRegistry.AnyTool>(
  options: Options<T> & { readonly principal?: Principal | undefined }
): Effect.Effect<void, never, Invoker | ToolRegistry.Requirements<T> | Scope.Scope> => {
  const built = serving(options)
  return Effect.flatMap(Effect.runtime<Invoker | ToolRegistry.Requirements<T>>(), (runtime) =>
    Effect.acquireRelease(
      Effect.sync(() => serveStdio(() => makeServer(built, options.principal ?? LOCAL, runtime))),
      (handle) => Effect.promise(() => handle.close().catch(() => undefined))
    )).pipe(Effect.asVoid)
}

/**
 * The annotations a tool's flags become on the wire.
 *
 * @example
 * ```ts
 * import { McpServer } from "@agentkit/mcp"
 *
 * McpServer.annotations(lookupOrder) // { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }
 * ```
 *
 * @since 0.1.0
 * @category getters
 */
export { annotationsOf as annotations } from "./internal/server.js"
