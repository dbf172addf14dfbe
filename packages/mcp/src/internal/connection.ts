/**
 * One live MCP client session: it is opened on first use, shared by every call, dropped when the
 * transport closes, and opened again (on the reconnect schedule) by the next call.
 *
 * @internal
 */
import { findCause } from "@agentkit/core"
import { Egress, EgressDenied } from "@agentkit/middleware"
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import type { ElicitRequest, ElicitResult, FetchLike } from "@modelcontextprotocol/client"
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schedule from "effect/Schedule"
import { McpConnectError } from "../Errors.js"
import type * as McpTransport from "../McpTransport.js"

/** The client identity sent to servers. */
export const CLIENT_INFO = { name: "agentkit", version: "0.1.0" } as const

const isEgressDenied = (u: unknown): u is EgressDenied => u instanceof EgressDenied

/**
 * Finds the refusal in an error's cause chain: the guarded fetch throws the policy's (or the
 * redirect's) `EgressDenied` inside the SDK, which wraps it.
 */
export const egressRefusal = (error: unknown): EgressDenied | undefined => findCause(error, isEgressDenied)

/** Replaces every credential in a text (so an error message never carries one). */
export const redact = (text: string, secrets: ReadonlyArray<string>): string => {
  let out = text
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join("[redacted]")
  return out
}

/** The fetch every HTTP request of a transport goes through: egress policy first, redirects refused. */
export const guardedFetch = (server: string, policy: Egress.Policy): FetchLike => async (url, init) => {
  const target = typeof url === "string" ? url : url.href
  const checked = await Effect.runPromiseExit(policy.check(target))
  if (Exit.isFailure(checked)) {
    throw checked.cause._tag === "Fail"
      ? checked.cause.error
      : new EgressDenied({ url: target, message: "egress check failed" })
  }
  const response = await fetch(url, { ...init, redirect: "manual" })
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel().catch(() => undefined)
    throw new EgressDenied({
      url: target,
      message: `MCP server '${server}' answered with a redirect (HTTP ${response.status}); redirects are never followed`
    })
  }
  return response
}

/** What a connection needs. */
export interface ConnectionOptions {
  readonly server: string
  readonly transport: McpTransport.Transport
  /** The bearer token for each HTTP request, when the transport authenticates per tenant. */
  readonly token: (() => Promise<string>) | undefined
  readonly reconnect: Schedule.Schedule<unknown, unknown>
  /** Answers an elicitation the server pushes (2025-era connections). */
  readonly onElicit: (request: ElicitRequest) => Promise<ElicitResult>
  /** Called when the server says its tool list changed. */
  readonly onToolsChanged: (() => void) | undefined
  readonly secrets: ReadonlyArray<string>
}

/** A shared, self-reopening session. */
export interface Connection {
  /** The live client, opening (or reopening) the session when there is none. */
  readonly client: Effect.Effect<Client, McpConnectError>
  /** Forgets a client whose transport failed, so the next use opens a new session. */
  readonly drop: (client: Client) => Effect.Effect<void>
  readonly close: Effect.Effect<void>
}

const makeTransport = (options: ConnectionOptions) => {
  const transport = options.transport
  if (transport._tag === "Stdio") {
    return new StdioClientTransport({
      command: transport.command,
      args: [...transport.args],
      ...(transport.env === undefined ? {} : { env: { ...transport.env } }),
      ...(transport.cwd === undefined ? {} : { cwd: transport.cwd }),
      stderr: transport.stderr
    })
  }
  const policy = Egress.isPolicy(transport.egress) ? transport.egress : Egress.policy(transport.egress ?? {})
  const token = options.token
  return new StreamableHTTPClientTransport(new URL(transport.url), {
    fetch: guardedFetch(options.server, policy),
    requestInit: { headers: { ...transport.headers } },
    ...(token === undefined ? {} : { authProvider: { token } })
  })
}

const connectOnce = (options: ConnectionOptions, onClose: (client: Client) => void) =>
  Effect.tryPromise({
    try: async (signal) => {
      const client = new Client(CLIENT_INFO, {
        capabilities: { elicitation: { form: {} } },
        versionNegotiation: { mode: "auto" },
        inputRequired: { autoFulfill: false },
        // structured results are checked by the toolset (with agentkit's texts), not by the SDK
        jsonSchemaValidator: {
          getValidator: () => (input: unknown) => ({
            valid: true as const,
            data: input as never,
            errorMessage: undefined
          })
        },
        ...(options.onToolsChanged === undefined
          ? {}
          : { listChanged: { tools: { autoRefresh: false, onChanged: () => options.onToolsChanged?.() } } })
      })
      client.setRequestHandler("elicitation/create", (request) => options.onElicit(request))
      client.onclose = () => onClose(client)
      client.onerror = () => undefined // surfaced through the failing request instead
      const transport = makeTransport(options)
      try {
        await client.connect(transport, { signal })
      } catch (error) {
        await client.close().catch(() => undefined)
        throw error
      }
      return client
    },
    catch: (cause) => {
      const denied = egressRefusal(cause)
      const message = denied !== undefined ? denied.message : cause instanceof Error ? cause.message : String(cause)
      return new McpConnectError({
        server: options.server,
        message: redact(message, options.secrets),
        cause: denied ?? cause
      })
    }
  })

/** Makes a connection; nothing is opened until the first use. */
export const make = (options: ConnectionOptions): Effect.Effect<Connection> =>
  Effect.map(Effect.makeSemaphore(1), (lock) => {
    let current: Client | undefined
    let closed = false
    const onClose = (client: Client) => {
      if (current === client) current = undefined
    }
    // an egress refusal is final: retrying cannot make the URL allowed
    const open = connectOnce(options, onClose).pipe(
      Effect.retry({ schedule: options.reconnect, while: (error) => !(error.cause instanceof EgressDenied) })
    )
    const client: Effect.Effect<Client, McpConnectError> = lock.withPermits(1)(
      Effect.suspend(() => {
        if (closed) {
          return Effect.fail(new McpConnectError({ server: options.server, message: "the toolset is closed" }))
        }
        if (current !== undefined) return Effect.succeed(current)
        return Effect.tap(open, (opened) => {
          current = opened
        })
      })
    )
    const drop = (stale: Client) =>
      Effect.suspend(() => {
        if (current !== stale) return Effect.void
        current = undefined
        return Effect.promise(() => stale.close().catch(() => undefined))
      })
    const close = Effect.suspend(() => {
      closed = true
      const open = current
      current = undefined
      return open === undefined ? Effect.void : Effect.promise(() => open.close().catch(() => undefined))
    })
    return { client, drop, close }
  })

/** The default reconnect schedule: 5 more tries, 100 ms apart and doubling. */
export const defaultReconnect: Schedule.Schedule<unknown, unknown> = Schedule.intersect(
  Schedule.exponential("100 millis"),
  Schedule.recurs(5)
)
