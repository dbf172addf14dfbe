/**
 * One live MCP client session: it is opened on first use (within the connect deadline), shared by
 * every call, dropped when the transport closes or the server no longer knows it, and opened again
 * (on the reconnect schedule) by the next call.
 *
 * The transport is watched: a request whose HTTP response stream ends or breaks before the server
 * answered is answered at once with a "stream ended" error (the SDK would otherwise wait for the
 * request's timeout), a request that could not be sent is marked as such (never delivered, or
 * maybe delivered), and each entry of a `tools/list` answer is checked alone, so one malformed
 * definition is refused by itself instead of failing the whole list in the SDK's validation.
 *
 * @internal
 */
import { findCause } from "@agentkit/core"
import { Egress, EgressDenied } from "@agentkit/middleware"
import {
  Client,
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  ProtocolError,
  SdkError,
  SdkHttpError,
  specTypeSchemas,
  StreamableHTTPClientTransport
} from "@modelcontextprotocol/client"
import type {
  ElicitRequest,
  ElicitResult,
  FetchLike,
  JSONRPCMessage,
  Transport,
  TransportSendOptions
} from "@modelcontextprotocol/client"
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schedule from "effect/Schedule"
import { randomUUID } from "node:crypto"
import { McpConnectError, McpConnectTimeout } from "../Errors.js"
import type * as McpTransport from "../McpTransport.js"
import type { Rejected } from "./definition.js"

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

/**
 * An SSE body without its `id:` fields. Applied to the stream that answers a POSTed request: with
 * no event id the SDK never tries to resume that stream, so when it ends or breaks before the
 * answer, the request's stream-end hook runs at once (not after the SDK's reconnection delays).
 * A call is never resumed on another stream; it fails, and is not re-sent.
 */
const withoutEventIds = (body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> => {
  const decoder = new TextDecoder()
  const encoder = new TextEncoder()
  let rest = ""
  const strip = (text: string) =>
    text
      .split(/(?<=\n)/)
      .filter((line) => !/^id(:|\r?\n|$)/.test(line))
      .join("")
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        const text = rest + decoder.decode(chunk, { stream: true })
        const cut = text.lastIndexOf("\n") + 1
        rest = text.slice(cut)
        if (cut > 0) controller.enqueue(encoder.encode(strip(text.slice(0, cut))))
      },
      flush(controller) {
        const text = rest + decoder.decode()
        if (text !== "") controller.enqueue(encoder.encode(strip(text)))
      }
    })
  )
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
  const type = response.headers.get("content-type") ?? ""
  if (init?.method === "POST" && response.body !== null && type.toLowerCase().startsWith("text/event-stream")) {
    return new Response(withoutEventIds(response.body), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers
    })
  }
  return response
}

/**
 * A request could not be sent, or its answer could not be read (the fetch failed, the body broke).
 * `delivered` is false only when the server certainly never saw it (the connection was refused),
 * which makes sending it again on a new session safe.
 */
export class SendFailure extends Error {
  readonly delivered: boolean
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause })
    this.name = "SendFailure"
    this.delivered = !refused(cause)
  }
}

const refused = (cause: unknown): boolean =>
  findCause(
    cause,
    (u): u is { readonly code: string } =>
      typeof u === "object" && u !== null && (u as { readonly code?: unknown }).code === "ECONNREFUSED"
  ) !== undefined

/** Marks the "stream ended" answers the watcher makes (a server cannot know it, so cannot forge one). */
const STREAM_ENDED = randomUUID()

/** The JSON-RPC error code of a made-up "stream ended" answer. */
const STREAM_ENDED_CODE = -32000

/** The reason, when `error` is the watcher's "the stream ended before the answer". */
export const streamEnded = (error: unknown): string | undefined => {
  if (!(error instanceof ProtocolError)) return undefined
  const data: unknown = error.data
  if (typeof data !== "object" || data === null) return undefined
  const marked = data as { readonly streamEnded?: unknown; readonly reason?: unknown }
  return marked.streamEnded === STREAM_ENDED && typeof marked.reason === "string" ? marked.reason : undefined
}

/**
 * The server no longer knows the session, so it ran nothing and a new session may send the request
 * again: HTTP 404 (the spec's answer to an unknown session), or HTTP 400 whose body names the
 * session (what servers on the 1.x SDK, server-everything among them, answer instead).
 */
export const sessionGone = (error: unknown): boolean => {
  if (!(error instanceof SdkHttpError)) return false
  if (error.status === 404) return true
  const text: unknown = (error.data as { readonly text?: unknown }).text
  return error.status === 400 && typeof text === "string" && /session/i.test(text)
}

const MAX_ISSUES = 3

/** Why a `tools/list` entry is not a valid MCP tool definition, or `undefined` when it is. */
const malformed = (entry: unknown): string | undefined => {
  const checked = specTypeSchemas.Tool["~standard"].validate(entry)
  if (checked.issues === undefined || checked.issues.length === 0) return undefined
  const issues = checked.issues.slice(0, MAX_ISSUES).map((issue) => {
    const path = (issue.path ?? []).map((p) => String(typeof p === "object" ? p.key : p)).join(".")
    return `${path === "" ? "" : `${path}: `}${issue.message.slice(0, 200)}`
  })
  return `it is not a valid MCP tool definition: ${issues.join("; ")}`
}

const nameOf = (entry: unknown): string => {
  const name: unknown = typeof entry === "object" && entry !== null ? (entry as { name?: unknown }).name : undefined
  return typeof name === "string" ? name.slice(0, 128) : "(no name)"
}

/**
 * Watches a transport (before the client connects it): see the module's comment. `onMalformed`
 * receives the entries refused from each `tools/list` answer.
 */
const watch = <T extends Transport>(
  transport: T,
  onMalformed: (entries: ReadonlyArray<Rejected>) => void
): T => {
  const pending = new Map<string | number, string>()
  let deliver: Transport["onmessage"]
  let report: Transport["onerror"]
  let errors = 0
  let lastError = ""
  const receive = (message: JSONRPCMessage, extra?: Parameters<NonNullable<Transport["onmessage"]>>[1]) => {
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
      const id = message.id
      const method = id === undefined ? undefined : pending.get(id)
      if (id !== undefined) pending.delete(id)
      if (method === "tools/list" && isJSONRPCResultResponse(message)) {
        const tools: unknown = (message.result as { readonly tools?: unknown }).tools
        if (Array.isArray(tools)) {
          const refused: Array<Rejected> = []
          const kept = tools.filter((entry: unknown) => {
            const reason = malformed(entry)
            if (reason !== undefined) refused.push({ tool: nameOf(entry), reason })
            return reason === undefined
          })
          if (refused.length > 0) {
            onMalformed(refused)
            deliver?.({ ...message, result: { ...message.result, tools: kept } }, extra)
            return
          }
        }
      }
    }
    deliver?.(message, extra)
  }
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    enumerable: true,
    get: () => (deliver === undefined ? undefined : receive),
    set: (handler: Transport["onmessage"]) => {
      deliver = handler
    }
  })
  const onError = (error: Error) => {
    errors++
    lastError = error.message.slice(0, 300)
    report?.(error)
  }
  Object.defineProperty(transport, "onerror", {
    configurable: true,
    enumerable: true,
    get: () => (report === undefined ? undefined : onError),
    set: (handler: Transport["onerror"]) => {
      report = handler
    }
  })
  const send = transport.send.bind(transport)
  transport.send = async (message: JSONRPCMessage, options?: TransportSendOptions) => {
    // a caller with its own stream-end hook (a subscription) handles its stream itself
    if (!isJSONRPCRequest(message) || options?.onRequestStreamEnd !== undefined) return send(message, options)
    const id = message.id
    pending.set(id, message.method)
    const errorsBefore = errors
    const ended = () => {
      if (!pending.has(id)) return
      pending.delete(id)
      const broke = errors > errorsBefore ? ` (${lastError})` : ""
      deliver?.({
        jsonrpc: "2.0",
        id,
        error: {
          code: STREAM_ENDED_CODE,
          message: "the response stream ended before the server answered",
          data: { streamEnded: STREAM_ENDED, reason: `the response stream ended before the server answered${broke}` }
        }
      })
    }
    try {
      return await send(message, { ...options, onRequestStreamEnd: ended })
    } catch (error) {
      pending.delete(id)
      if (error instanceof SdkError || egressRefusal(error) !== undefined || options?.requestSignal?.aborted === true) {
        throw error
      }
      throw new SendFailure(error)
    }
  }
  return transport
}

/** What a connection needs. */
export interface ConnectionOptions {
  readonly server: string
  readonly transport: McpTransport.Transport
  /** The bearer token for each HTTP request, when the transport authenticates per tenant. */
  readonly token: (() => Promise<string>) | undefined
  readonly reconnect: Schedule.Schedule<unknown, unknown>
  /** How long opening a session (every try of the reconnect schedule) may take. */
  readonly connectTimeout: Duration.Duration
  /** Runs when a session is opened again (not the first time), before anything uses it. */
  readonly onReopen: ((client: Client) => Effect.Effect<void, McpConnectError | McpConnectTimeout>) | undefined
  /** Receives the entries refused from each `tools/list` answer. */
  readonly onMalformed: (entries: ReadonlyArray<Rejected>) => void
  /** Answers an elicitation the server pushes (2025-era connections). */
  readonly onElicit: (request: ElicitRequest) => Promise<ElicitResult>
  /** Called when the server says its tool list changed. */
  readonly onToolsChanged: (() => void) | undefined
  readonly secrets: ReadonlyArray<string>
}

/** A shared, self-reopening session. */
export interface Connection {
  /** The live client, opening (or reopening) the session when there is none. */
  readonly client: Effect.Effect<Client, McpConnectError | McpConnectTimeout>
  /** Forgets a client whose transport failed, so the next use opens a new session. */
  readonly drop: (client: Client) => Effect.Effect<void>
  readonly close: Effect.Effect<void>
}

const makeTransport = (options: ConnectionOptions): Transport => {
  const transport = options.transport
  if (transport._tag === "Stdio") {
    return watch(
      new StdioClientTransport({
        command: transport.command,
        args: [...transport.args],
        ...(transport.env === undefined ? {} : { env: { ...transport.env } }),
        ...(transport.cwd === undefined ? {} : { cwd: transport.cwd }),
        stderr: transport.stderr
      }),
      options.onMalformed
    )
  }
  const policy = Egress.isPolicy(transport.egress) ? transport.egress : Egress.policy(transport.egress ?? {})
  const token = options.token
  return watch(
    new StreamableHTTPClientTransport(new URL(transport.url), {
      fetch: guardedFetch(options.server, policy),
      requestInit: { headers: { ...transport.headers } },
      ...(token === undefined ? {} : { authProvider: { token } })
    }),
    options.onMalformed
  )
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
      // a transport error reaches the call it broke: the watcher answers that call (see `watch`)
      client.onerror = () => undefined
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
    let opened = 0
    let closed = false
    const onClose = (client: Client) => {
      if (current === client) current = undefined
    }
    // an egress refusal is final: retrying cannot make the URL allowed
    const open = Effect.suspend(() => {
      let last: McpConnectError | undefined
      return connectOnce(options, onClose).pipe(
        Effect.tapError((error) =>
          Effect.sync(() => {
            last = error
          })
        ),
        Effect.retry({ schedule: options.reconnect, while: (error) => !(error.cause instanceof EgressDenied) }),
        Effect.timeoutFail({
          duration: options.connectTimeout,
          onTimeout: () =>
            new McpConnectTimeout({
              server: options.server,
              timeout: Duration.format(options.connectTimeout),
              ...(last === undefined ? {} : { lastError: last.message })
            })
        })
      )
    })
    const client: Effect.Effect<Client, McpConnectError | McpConnectTimeout> = lock.withPermits(1)(
      Effect.suspend(() => {
        if (closed) {
          return Effect.fail(new McpConnectError({ server: options.server, message: "the toolset is closed" }))
        }
        if (current !== undefined) return Effect.succeed(current)
        return Effect.tap(open, (made) => {
          current = made
          opened++
          return opened > 1 && options.onReopen !== undefined ? options.onReopen(made) : Effect.void
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

/** The default connect deadline. */
export const defaultConnectTimeout: Duration.Duration = Duration.seconds(10)

/** The default reconnect schedule: 5 more tries, 100 ms apart and doubling. */
export const defaultReconnect: Schedule.Schedule<unknown, unknown> = Schedule.intersect(
  Schedule.exponential("100 millis"),
  Schedule.recurs(5)
)
