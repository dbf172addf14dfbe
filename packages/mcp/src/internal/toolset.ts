/**
 * The client side: a server's tool list turned into agentkit tools, kept current as the server
 * changes it, with every changed definition held back until it is accepted.
 *
 * @internal
 */
import { RunPolicy } from "@agentkit/agents"
import {
  ConfigurationError,
  errorMessage,
  ToolArgumentError,
  ToolDenied,
  ToolShapeError,
  ToolTimeoutError,
  Tracing
} from "@agentkit/core"
import type { RunContext } from "@agentkit/core"
import { Tool } from "@agentkit/tools"
import type { Client, ElicitRequest, ElicitResult, Tool as McpTool } from "@modelcontextprotocol/client"
import { isInputRequiredResult, SdkError, SdkErrorCode } from "@modelcontextprotocol/client"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import type * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { McpConnectTimeout } from "../Errors.js"
import {
  McpConnectError,
  McpInputRefused,
  McpNameCollision,
  McpStreamError,
  McpToolChanged,
  McpToolError
} from "../Errors.js"
import * as McpName from "../McpName.js"
import type * as McpTransport from "../McpTransport.js"
import * as McpTrust from "../McpTrust.js"
import * as Connection from "./connection.js"
import { type Definition, type Limits, read, type Rejected } from "./definition.js"
import { type Answer, answerForm, type Asker, isForm, kindOf } from "./input.js"
import * as Result from "./result.js"

/** The options of a toolset. */
export interface Options {
  readonly name: string
  readonly transport: McpTransport.Transport
  readonly trust?: McpTrust.Trust | undefined
  readonly include?: ReadonlyArray<string | RegExp> | undefined
  readonly exclude?: ReadonlyArray<string | RegExp> | undefined
  readonly pins?: Readonly<Record<string, string>> | undefined
  readonly reconnect?: Schedule.Schedule<unknown, unknown> | undefined
  readonly connectTimeout?: Duration.DurationInput | undefined
  readonly maxDescriptionLength?: number | undefined
  readonly maxSchemaBytes?: number | undefined
  readonly maxResultBytes?: number | undefined
  readonly maxInputRounds?: number | undefined
}

/** Why a call failed, as the model is told. */
export type CallError =
  | McpToolError
  | McpToolChanged
  | McpInputRefused
  | McpConnectError
  | McpConnectTimeout
  | McpStreamError
  | ToolArgumentError
  | ToolShapeError
  | ToolTimeoutError
  | ToolDenied

/** An MCP tool as an agentkit tool. */
export type McpAgentTool = Tool.Tool<string, Tool.Parameters, string, CallError, never>

/** A definition waiting to be accepted. */
export interface Held {
  readonly tool: string
  readonly name: string
  readonly pinned: string
  readonly offered: string
}

/** What a run takes when it starts. */
export interface Snapshot {
  readonly tools: ReadonlyArray<McpAgentTool>
  /** The snapshot advertises a server's descriptions that are not declared trusted (the untrusted leg). */
  readonly untrustedDescriptions: boolean
}

/** A connected toolset. */
export interface Toolset {
  readonly server: string
  readonly snapshot: () => Snapshot
  readonly tools: () => ReadonlyArray<McpAgentTool>
  readonly held: () => ReadonlyArray<Held>
  readonly rejected: () => ReadonlyArray<Rejected>
  readonly pins: () => Readonly<Record<string, string>>
  readonly accept: (tool: string) => Effect.Effect<void, ConfigurationError>
  readonly refresh: Effect.Effect<void, McpConnectError | McpConnectTimeout | McpNameCollision>
}

const anyArguments = Schema.Struct({}, Schema.Record({ key: Schema.String, value: Schema.Unknown }))

const matches = (name: string, patterns: ReadonlyArray<string | RegExp>) =>
  patterns.some((pattern) => (typeof pattern === "string" ? pattern === name : pattern.test(name)))

/**
 * A call in flight on one connection, so that a 2025-era elicitation pushed on that connection is
 * attributed to the call (and its run) that it arrived during.
 */
interface InFlight {
  readonly answer: (request: ElicitRequest) => Promise<ElicitResult>
}

/** One connection and the calls in flight on it. */
interface Session {
  readonly connection: Connection.Connection
  readonly inFlight: Set<InFlight>
}

const ERROR_TEXT_BYTES = 4096

const LIMITS = ["maxDescriptionLength", "maxSchemaBytes", "maxResultBytes", "maxInputRounds"] as const

/** Checks the options that are not the transport's; throws `ConfigurationError` naming the field. */
const checkOptions = (options: Options): string => {
  if (typeof options !== "object" || options === null) {
    throw new ConfigurationError({ field: "options", message: "McpToolset.make(options): options must be an object" })
  }
  const server = McpName.checkServer(options.name)
  McpTrust.check(options.trust, server)
  for (const field of LIMITS) {
    const value = options[field]
    if (value !== undefined && !(Number.isSafeInteger(value) && value > 0)) {
      throw new ConfigurationError({
        field,
        message: `MCP server '${server}': \`${field}\` must be a positive integer; got ${String(value)}`
      })
    }
  }
  if (options.connectTimeout !== undefined) {
    const decoded = Duration.decodeUnknown(options.connectTimeout)
    if (Option.isNone(decoded) || !(Duration.toMillis(decoded.value) > 0)) {
      throw new ConfigurationError({
        field: "connectTimeout",
        message: `MCP server '${server}': \`connectTimeout\` must be a positive Duration (e.g. "10 seconds"); got ${
          String(options.connectTimeout)
        }`
      })
    }
  }
  return server
}

/** Opens a toolset; it lives until the scope closes. */
export const make = (
  options: Options
): Effect.Effect<
  Toolset,
  McpConnectError | McpConnectTimeout | McpNameCollision | ConfigurationError,
  Scope.Scope
> =>
  Effect.gen(function*() {
    const server = yield* Effect.try({
      try: () => checkOptions(options),
      catch: (
        error
      ) => (error instanceof ConfigurationError
        ? error
        : new ConfigurationError({ field: "options", message: errorMessage(error) }))
    })
    const limits: Limits = {
      maxDescriptionLength: options.maxDescriptionLength ?? 1024,
      maxSchemaBytes: options.maxSchemaBytes ?? 32768
    }
    const maxResultBytes = options.maxResultBytes ?? 65536
    const maxRounds = options.maxInputRounds ?? 4
    const include = options.include
    const exclude = options.exclude ?? []
    const reconnect = options.reconnect ?? Connection.defaultReconnect
    const connectTimeout = options.connectTimeout === undefined
      ? Connection.defaultConnectTimeout
      : Duration.decode(options.connectTimeout)
    const transport = options.transport
    const auth = transport._tag === "Http" ? transport.auth : undefined
    // a header's value, and the token of a `Bearer <token>` value (a server may echo either)
    const staticSecrets = transport._tag === "Http"
      ? Object.values(transport.headers).flatMap((value) => {
        const bearer = /^Bearer\s+(\S+)\s*$/i.exec(value)
        return bearer === null ? [value] : [value, bearer[1]!]
      })
      : []

    // --- the definitions ---------------------------------------------------------------------
    const pinned = new Map<string, string>(Object.entries(options.pins ?? {}))
    let current = new Map<string, Definition>()
    let snapshot: Snapshot = { tools: [], untrustedDescriptions: false }
    let held: ReadonlyArray<Held> = []
    let rejected: ReadonlyArray<Rejected> = []
    let lastListing: ReadonlyArray<McpTool> = []
    let lastMalformed: ReadonlyArray<Rejected> = []
    /** The entries the transport refused from the listing being read (one listing at a time). */
    let malformed: Array<Rejected> = []
    const listingLock = yield* Effect.makeSemaphore(1)
    const secrets = new Set<string>(staticSecrets)

    const toolFor = (definition: Definition): McpAgentTool => {
      const made = Tool.make(definition.name, {
        description: definition.description,
        parameters: anyArguments,
        sideEffecting: definition.flags.sideEffecting,
        idempotent: definition.flags.idempotent,
        requiresApproval: definition.flags.requiresApproval,
        caps: definition.flags.caps,
        untrustedDescription: !definition.flags.trustDescriptions,
        timeout: definition.flags.timeout,
        maxResultBytes,
        handler: (args: unknown, { callId, context, runId }) => callTool(definition, args, { context, callId, runId })
      })
      const validate = (args: unknown) => {
        const problems = definition.check(args)
        return problems === undefined
          ? Effect.succeed(args)
          : Effect.fail(
            new ToolArgumentError({ toolName: definition.name, ...problems, accepted: definition.accepted })
          )
      }
      // The advertised schema is the server's, and so is the argument check (the tool's own
      // decoder accepts any object and hands it to the handler, which checks it before sending).
      // `Tool.make` takes Effect Schema parameters only, so the schema, the accepted names, the
      // URL argument and `validate` (read by an approval's edit) are set over the made tool; a
      // `Tool.make` parameters kind carrying a JSON Schema and its own checker would replace this.
      return Object.freeze(
        Object.assign(Object.create(Object.getPrototypeOf(made) as object) as object, made, {
          schema: Object.freeze({
            name: definition.name,
            description: definition.description,
            parameters: definition.parameters
          }),
          accepted: definition.accepted,
          urlArg: definition.flags.urlArg,
          validate
        })
      ) as unknown as McpAgentTool
    }

    /** Reads a listing; at connect (`strict`) a name collision fails, later it holds the tools back. */
    const apply = (
      tools: ReadonlyArray<McpTool>,
      bad: ReadonlyArray<Rejected>,
      strict: boolean
    ): Effect.Effect<void, McpNameCollision> => {
      lastListing = tools
      lastMalformed = bad
      const next = new Map<string, Definition>()
      const picked = (name: string) => (include === undefined || matches(name, include)) && !matches(name, exclude)
      const refused: Array<Rejected> = bad.filter((entry) => picked(entry.tool))
      for (const tool of tools) {
        const name = typeof tool?.name === "string" ? tool.name : ""
        if (!picked(name)) continue
        const result = read(server, tool, options.trust, limits)
        if (result._tag === "Rejected") refused.push(result.rejected)
        else if (next.has(result.definition.raw)) refused.push({ tool: name, reason: "the server listed it twice" })
        else next.set(result.definition.raw, result.definition)
      }
      const byName = new Map<string, Array<string>>()
      for (const definition of next.values()) {
        byName.set(definition.name, [...(byName.get(definition.name) ?? []), definition.raw])
      }
      for (const [name, raws] of byName) {
        if (raws.length < 2) continue
        if (strict) return Effect.fail(new McpNameCollision({ server, name, tools: raws.sort() }))
        for (const raw of raws) {
          next.delete(raw)
          refused.push({
            tool: raw,
            reason: `its name collides with ${raws.filter((r) => r !== raw).join(", ")} as '${name}'`
          })
        }
      }
      const waiting: Array<Held> = []
      const tools_: Array<McpAgentTool> = []
      let untrusted = false
      for (const definition of next.values()) {
        const pin = pinned.get(definition.raw)
        if (pin === undefined) pinned.set(definition.raw, definition.hash) // a new tool: pinned at first sight
        else if (pin !== definition.hash) {
          waiting.push({ tool: definition.raw, name: definition.name, pinned: pin, offered: definition.hash })
          continue
        }
        tools_.push(toolFor(definition))
        if (!definition.flags.trustDescriptions) untrusted = true
      }
      current = next
      held = waiting
      rejected = refused
      snapshot = Object.freeze({ tools: Object.freeze(tools_), untrustedDescriptions: untrusted })
      return Effect.void
    }

    // --- connections ---------------------------------------------------------------------------
    /**
     * A 2025-era server pushes its request with nothing that ties it to a call (JSON-RPC carries
     * no related request id back to the client), so it is answered only when exactly one call is
     * in flight on the connection it arrived on (each tenant has its own); otherwise declined.
     */
    const onElicit = (inFlight: ReadonlySet<InFlight>) => (request: ElicitRequest): Promise<ElicitResult> => {
      if (inFlight.size !== 1) return Promise.resolve({ action: "decline" })
      const [only] = inFlight
      return only!.answer(request)
    }

    const runtime = yield* Effect.runtime<never>()
    const runPromise = Runtime.runPromise(runtime)
    const tenants = new Map<string, Session>()
    const openSession = (
      token: (() => Promise<string>) | undefined,
      watch: boolean,
      onReopen: Connection.ConnectionOptions["onReopen"]
    ): Effect.Effect<Session> => {
      const inFlight = new Set<InFlight>()
      return Effect.map(
        Connection.make({
          server,
          transport,
          token,
          reconnect,
          connectTimeout,
          onReopen,
          onMalformed: (entries) => {
            for (const entry of entries) malformed.push(entry)
          },
          onElicit: onElicit(inFlight),
          onToolsChanged: watch ? () => void runPromise(Effect.ignore(refresh)) : undefined,
          get secrets() {
            return Array.from(secrets)
          }
        }),
        (connection) => ({ connection, inFlight })
      )
    }
    const remember = (token: string) => {
      secrets.add(token)
      return token
    }

    // a session opened again lists the tools again: changes are held or reported, never swapped in
    const catalog = yield* openSession(
      auth === undefined ? undefined : () => runPromise(Effect.orDie(Effect.map(auth.catalog, remember))),
      true,
      // (a listing after connect never fails on a collision: it holds the colliding tools back)
      (client) =>
        Effect.flatMap(
          Effect.mapError(listTools(client), listingFailed),
          ({ bad, tools }) => Effect.orDie(apply(tools, bad, false))
        )
    )
    const listing = catalog.connection
    yield* Effect.addFinalizer(() =>
      Effect.forEach([catalog, ...tenants.values()], (session) => session.connection.close, { discard: true })
    )

    /** The latest run context seen per tenant: the token is read from it each time the transport asks. */
    const latest = new Map<string, RunContext.Service>()
    const sessionFor = (context: RunContext.Service): Effect.Effect<Session> => {
      if (auth === undefined) return Effect.succeed(catalog)
      const tenant = auth.tenant(context)
      latest.set(tenant, context)
      const existing = tenants.get(tenant)
      if (existing !== undefined) return Effect.succeed(existing)
      const token = () =>
        runPromise(Effect.orDie(Effect.map(Effect.suspend(() => auth.token(latest.get(tenant) ?? context)), remember)))
      return Effect.map(
        openSession(token, false, () => Effect.catchTag(refresh, "McpNameCollision", Effect.die)),
        (session) => {
          const raced = tenants.get(tenant)
          if (raced !== undefined) return raced
          tenants.set(tenant, session)
          return session
        }
      )
    }

    /** One listing, every page; the entries the transport refused come with it. */
    const listTools = (client: Client) =>
      listingLock.withPermits(1)(
        Effect.tryPromise({
          try: async (signal) => {
            malformed = []
            const result = await client.listTools(undefined, { signal, cacheMode: "bypass" })
            return { tools: result.tools, bad: malformed }
          },
          catch: (cause) => cause
        })
      )

    const listingFailed = (cause: unknown) =>
      new McpConnectError({
        server,
        message: Connection.redact(
          `listing the tools failed: ${cause instanceof Error ? cause.message : String(cause)}`,
          Array.from(secrets)
        ),
        cause
      })

    /** The server certainly did not run the request: it no longer knows the session, or refused the connection. */
    const notRun = (cause: unknown) =>
      Connection.sessionGone(cause) || (cause instanceof Connection.SendFailure && !cause.delivered)

    /** A listing on the catalog session; a session the server no longer knows is opened again (which lists). */
    const refresh: Effect.Effect<void, McpConnectError | McpConnectTimeout | McpNameCollision> = Effect.flatMap(
      listing.client,
      (client) =>
        Effect.matchEffect(listTools(client), {
          onSuccess: ({ bad, tools }) => apply(tools, bad, false),
          onFailure: (cause) =>
            notRun(cause)
              ? Effect.zipRight(listing.drop(client), Effect.asVoid(listing.client))
              : Effect.fail(listingFailed(cause))
        })
    )

    // connect and take the first listing: a collision fails the layer
    const first = yield* Effect.flatMap(listing.client, (client) => Effect.mapError(listTools(client), listingFailed))
    yield* apply(first.tools, first.bad, true)

    // --- one call ------------------------------------------------------------------------------
    const fail = (definition: Definition, text: string) => {
      const capped = Tool.renderResult(Connection.redact(text, Array.from(secrets)), { maxBytes: ERROR_TEXT_BYTES })
      const shown = definition.flags.caps.includes("untrusted_content")
        ? RunPolicy.wrapUntrustedOutput(capped, definition.name)
        : capped
      return new McpToolError({ server, tool: definition.raw, message: shown })
    }

    const thrown =
      (definition: Definition, client: Client, connection: Connection.Connection) =>
      (cause: unknown): Effect.Effect<never, CallError> => {
        const denied = Connection.egressRefusal(cause)
        if (denied !== undefined) {
          return Effect.fail(new ToolDenied({ toolName: definition.name, reason: "egress", message: denied.message }))
        }
        if (cause instanceof SdkError && cause.code === SdkErrorCode.RequestTimeout) {
          return Effect.fail(
            new ToolTimeoutError({ toolName: definition.name, timeout: Duration.format(definition.flags.timeout) })
          )
        }
        const ended = Connection.streamEnded(cause)
        if (ended !== undefined) {
          return Effect.fail(
            new McpStreamError({ server, tool: definition.raw, reason: Connection.redact(ended, Array.from(secrets)) })
          )
        }
        if (cause instanceof Connection.SendFailure) {
          // the server could not be reached, or its answer could not be read: the next call opens a new session
          return Effect.zipRight(
            connection.drop(client),
            Effect.fail(
              new McpStreamError({
                server,
                tool: definition.raw,
                reason: Connection.redact(`the request failed on the wire (${cause.message})`, Array.from(secrets))
              })
            )
          )
        }
        if (cause instanceof SdkError && cause.code === SdkErrorCode.ConnectionClosed) {
          return Effect.zipRight(
            connection.drop(client),
            Effect.fail(new McpConnectError({ server, message: "the connection closed during the call", cause }))
          )
        }
        return Effect.fail(fail(definition, cause instanceof Error ? cause.message : String(cause)))
      }

    const outcome = (
      definition: Definition,
      result: Record<string, unknown>
    ): Effect.Effect<string, McpToolError | ToolShapeError> => {
      const found = Result.text(result.content)
      // a server may echo a credential it was sent: no text of it reaches the model with one
      const text = found === undefined ? undefined : Connection.redact(found, Array.from(secrets))
      if (result.isError === true) {
        return Effect.fail(fail(definition, text ?? "the server reported an error without a message"))
      }
      const structured = result.structuredContent
      if (definition.output !== undefined) {
        const errors = structured === undefined
          ? ["top-level: the tool declares an output schema but returned no structuredContent"]
          : definition.output(structured)
        if (errors !== undefined) {
          return Effect.zipRight(
            Tracing.addEvent(Tracing.EventName.toolShapeMismatch, {
              tool_name: definition.name,
              expected_shape: definition.outputName
            }),
            Effect.fail(
              new ToolShapeError({
                toolName: definition.name,
                expected: definition.outputName,
                raw: structured,
                errors: errors.slice(0, 20)
              })
            )
          )
        }
      }
      if (text !== undefined) return Effect.succeed(text)
      return Effect.succeed(
        structured === undefined
          ? ""
          : Connection.redact(Tool.renderResult(structured, { maxBytes: maxResultBytes }), Array.from(secrets))
      )
    }

    /** Answers one round of embedded input requests (2026-07-28). */
    const answerRound = (definition: Definition, requests: unknown, asker: Asker) =>
      Effect.gen(function*() {
        const responses: Record<string, Answer> = {}
        const entries = typeof requests === "object" && requests !== null ? Object.entries(requests) : []
        for (const [key, request] of entries) {
          if (!isForm(request)) {
            return yield* new McpInputRefused({
              server,
              tool: definition.raw,
              reason: `the server asked for ${kindOf(request)}, which agentkit does not answer`
            })
          }
          responses[key] = yield* answerForm(asker, key, request.params)
        }
        return responses
      })

    /** Fails with `McpToolChanged` when the server's definition is no longer the one the run took. */
    const unchanged = (definition: Definition): Effect.Effect<void, McpToolChanged> =>
      Effect.suspend(() => {
        const now = current.get(definition.raw)
        return now !== undefined && now.hash === definition.hash
          ? Effect.void
          : Effect.fail(
            new McpToolChanged({ server, tool: definition.raw, change: now === undefined ? "removed" : "changed" })
          )
      })

    /** One call: `call` is the handler's (the model's call id and the run's id, when the Invoker ran it). */
    const callTool = (
      definition: Definition,
      args: unknown,
      call: {
        readonly context: RunContext.Service
        readonly callId: string | undefined
        readonly runId: string | undefined
      }
    ): Effect.Effect<string, CallError> =>
      Effect.gen(function*() {
        yield* unchanged(definition)
        const problems = definition.check(args)
        if (problems !== undefined) {
          return yield* new ToolArgumentError({ toolName: definition.name, ...problems, accepted: definition.accepted })
        }
        const context = call.context
        const session = yield* sessionFor(context)
        const connection = session.connection
        const client = yield* connection.client
        if (context.tracing) {
          yield* Tracing.annotate({
            [Tracing.Attribute.mcpServerName]: server,
            [Tracing.Attribute.mcpToolName]: definition.raw,
            [Tracing.Attribute.mcpMethodName]: "tools/call",
            [Tracing.Attribute.mcpProtocolVersion]: client.getNegotiatedProtocolVersion()
          })
        }
        // the pending entries the Approver sees carry the model's call id (a direct `tool.run` has none: the tool's name)
        const asker: Asker = {
          server,
          tool: definition.name,
          callId: call.callId ?? definition.name,
          runId: call.runId ?? context.correlationId
        }
        const run = yield* Effect.runtime<never>()
        const entry: InFlight = {
          answer: (request) =>
            isForm(request)
              ? Runtime.runPromise(run)(
                answerForm(asker, "elicitation", request.params).pipe(
                  Effect.catchAll(() => Effect.succeed<Answer>({ action: "decline" }))
                )
              ) as Promise<ElicitResult>
              : Promise.resolve({ action: "decline" })
        }
        const timeout = Duration.toMillis(definition.flags.timeout) + 1000
        const attempt = (on: Client, params: Record<string, unknown>) =>
          Effect.tryPromise({
            try: (signal) =>
              on.callTool(params as { name: string }, { signal, timeout, allowInputRequired: true }) as Promise<
                Record<string, unknown>
              >,
            catch: (cause) => cause
          })
        // a request the server never ran is sent once more, on a new session (which lists the tools
        // again: a definition that changed meanwhile fails the call with McpToolChanged, unsent)
        const send = (params: Record<string, unknown>): Effect.Effect<Record<string, unknown>, CallError> =>
          Effect.flatMap(connection.client, (on) =>
            Effect.catchAll(attempt(on, params), (cause) =>
              notRun(cause)
                ? Effect.zipRight(
                  connection.drop(on),
                  Effect.flatMap(connection.client, (again) =>
                    Effect.zipRight(
                      unchanged(definition),
                      Effect.catchAll(attempt(again, params), thrown(definition, again, connection))
                    ))
                )
                : thrown(definition, on, connection)(cause)))
        const rounds = (params: Record<string, unknown>, round: number): Effect.Effect<string, CallError> =>
          Effect.flatMap(send(params), (result) => {
            if (!isInputRequiredResult(result)) return outcome(definition, result)
            if (round >= maxRounds) {
              return Effect.fail(
                new McpInputRefused({
                  server,
                  tool: definition.raw,
                  reason: `the server asked for input more than ${maxRounds} times`
                })
              )
            }
            return Effect.flatMap(answerRound(definition, result.inputRequests, asker), (inputResponses) =>
              rounds(
                {
                  name: definition.raw,
                  arguments: args,
                  inputResponses,
                  ...(typeof result.requestState === "string" ? { requestState: result.requestState } : {})
                },
                round + 1
              ))
          })
        return yield* Effect.acquireUseRelease(
          Effect.sync(() => session.inFlight.add(entry)),
          () => rounds({ name: definition.raw, arguments: args }, 0),
          () => Effect.sync(() => session.inFlight.delete(entry))
        )
      })

    return {
      server,
      snapshot: () => snapshot,
      tools: () => snapshot.tools,
      held: () => held,
      rejected: () => rejected,
      pins: () => Object.fromEntries(pinned),
      accept: (tool: string) =>
        Effect.suspend(() => {
          const waiting = held.find((entry) => entry.tool === tool)
          if (waiting === undefined) {
            return Effect.fail(
              new ConfigurationError({
                field: "tool",
                message: `MCP server '${server}': no changed definition of '${tool}' waits to be accepted`
              })
            )
          }
          pinned.set(tool, waiting.offered)
          // re-read the last listing: the accepted definition joins the next snapshot
          return Effect.orDie(apply(lastListing, lastMalformed, false))
        }),
      refresh
    } satisfies Toolset
  })
