/**
 * The server side: one low-level MCP `Server` per request (HTTP) or per connection (stdio) over a
 * `ToolRegistry`. Each call runs under a fresh `RunContext` built from the authenticated
 * principal and goes through the Invoker's tool pipeline, so the server's middleware apply. A
 * call that needs approval runs only after two rounds:
 *
 * 1. the first `tools/call` returns `input_required` with a form elicitation (the caller is asked
 *    to confirm the exact call) and a `requestState` signed with HMAC-SHA256 that binds the
 *    argument digest (the principal, the tool's fingerprint and the canonical arguments);
 * 2. the retry carries the caller's answer and the state; the state is verified (signature,
 *    expiry, digest against the retry's own arguments: anything else asks again and runs
 *    nothing), a declined answer is a denial, and a confirmed one goes to the server's own
 *    `Approver`, which decides. The caller never approves its own call; without an `Approver` the
 *    call is denied (fail closed).
 *
 * 2025-era clients get the same flow through the SDK's legacy shim (a pushed elicitation) on a
 * stateful connection; over stateless HTTP they cannot be asked and the call fails closed.
 *
 * @internal
 */
import { Approval } from "@agentkit/agents"
import {
  approvalDeniedText,
  CanonicalJson,
  errorMessage,
  Invoker,
  RunContext,
  toolFailureText,
  unknownToolText
} from "@agentkit/core"
import type { Autonomy, Budget, Scope } from "@agentkit/core"
import type { ToolRegistry } from "@agentkit/tools"
import { createRequestStateCodec, inputRequired, inputResponse, Server } from "@modelcontextprotocol/server"
import type { CallToolResult, ServerContext } from "@modelcontextprotocol/server"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"

/** Who is calling: the authenticated principal a request runs under. */
export interface Principal {
  readonly subject: string
  readonly scope?: Scope.Fields | undefined
  readonly autonomy?: Autonomy | undefined
  readonly budget?: Budget.Limits | undefined
}

/** What serving needs, built once. */
export interface Serving {
  readonly name: string
  readonly version: string
  readonly registry: ToolRegistry.ToolRegistry
  readonly codec: {
    readonly mint: (payload: StatePayload) => Promise<string>
    readonly verify: (state: string) => Promise<StatePayload>
  }
}

/** What a signed `requestState` carries. */
export interface StatePayload {
  readonly digest: string
}

/** Builds the state codec (HMAC-SHA256, with an expiry). */
export const makeCodec = (key: Uint8Array | string, ttlSeconds: number): Serving["codec"] => {
  const codec = createRequestStateCodec<StatePayload>({ key, ttlSeconds })
  return {
    mint: (payload) => codec.mint(payload),
    verify: (state) => codec.verify(state, undefined as unknown as ServerContext)
  }
}

const text = (message: string, isError: boolean): CallToolResult => ({
  content: [{ type: "text", text: message }],
  isError
})

/** The annotations a tool's flags become. */
export const annotationsOf = (tool: ToolRegistry.AnyTool) => ({
  readOnlyHint: !tool.sideEffecting,
  // a conditional approval may apply: a client should expect it
  destructiveHint: tool.requiresApproval !== false,
  idempotentHint: tool.idempotent,
  openWorldHint: tool.caps.includes("egress")
})

/** The tool's fingerprint: what its digest binds (advertised schema and flags). */
const fingerprint = (tool: ToolRegistry.AnyTool): string =>
  CanonicalJson.hash({
    schema: tool.schema.parameters,
    sideEffecting: tool.sideEffecting,
    idempotent: tool.idempotent,
    requiresApproval: typeof tool.requiresApproval === "function" ? "conditional" : tool.requiresApproval,
    caps: tool.caps
  })

/** Whether a call waits for approval: the tool's own (possibly conditional) `requiresApproval`, or the principal's tier. */
const needsApproval = (
  tool: ToolRegistry.AnyTool,
  args: unknown,
  context: RunContext.Service
): Effect.Effect<boolean> =>
  context.autonomy === "manual" || (context.autonomy === "gated" && tool.sideEffecting)
    ? Effect.succeed(true)
    : Approval.required(tool, args, context)

/** One MCP `Server` over the registry, for one principal, running calls on `runtime`. */
export const makeServer = (serving: Serving, principal: Principal, runtime: Runtime.Runtime<Invoker>): Server => {
  const server = new Server({ name: serving.name, version: serving.version }, { capabilities: { tools: {} } })
  const registry = serving.registry
  const run = <A>(effect: Effect.Effect<A, never, Invoker | RunContext>, signal: AbortSignal): Promise<A> =>
    Runtime.runPromise(runtime)(
      Effect.flatMap(
        RunContext.make({
          correlationId: `mcp:${principal.subject}:${crypto.randomUUID()}`,
          scope: principal.scope,
          autonomy: principal.autonomy,
          budget: principal.budget
        }),
        (context) => Effect.provideService(effect, RunContext, context)
      ).pipe(
        Effect.catchTag(
          "ConfigurationError",
          (error) => Effect.succeed(text(`ERROR: ConfigurationError: ${errorMessage(error)}`, true) as A)
        )
      ),
      { signal }
    )

  server.setRequestHandler("tools/list", () =>
    Promise.resolve({
      tools: registry.names().map((name) => {
        const tool = registry.get(name)
        return {
          name,
          description: tool.schema.description,
          inputSchema: tool.schema.parameters as { type: "object" },
          annotations: annotationsOf(tool)
        }
      })
    }))

  server.setRequestHandler("tools/call", async (request, ctx) => {
    const name = request.params.name
    const args = (request.params.arguments ?? {}) as Record<string, unknown>
    const found = registry.getOption(name)
    if (Option.isNone(found)) return text(unknownToolText(name, registry.names()), true)
    const tool = found.value
    const call = { id: `mcp-${String(ctx.mcpReq.id)}`, name, arguments: args }
    const execute = (callArgs: Record<string, unknown>) =>
      Effect.flatMap(Invoker, (invoker) => invoker.tool({ ...call, arguments: callArgs }, tool)).pipe(
        Effect.map((outcome): CallToolResult => text(outcome.text, false)),
        Effect.catchAll((error) => Effect.succeed(text(toolFailureText(name, error), true)))
      )

    return run(
      Effect.gen(function*() {
        const context = yield* RunContext
        if (!(yield* needsApproval(tool, args, context))) return yield* execute(args)
        // the arguments are checked before anyone is asked
        const checked = yield* Effect.either(tool.validate(args))
        if (checked._tag === "Left") return text(toolFailureText(name, checked.left), true)
        const digest = CanonicalJson.hash({
          principal: principal.subject,
          tool: name,
          fingerprint: fingerprint(tool),
          arguments: args
        })
        const ask = Effect.map(
          Effect.promise(() => serving.codec.mint({ digest })),
          (requestState) =>
            inputRequired({
              inputRequests: {
                approval: inputRequired.elicit({
                  message: `The call ${name}(${
                    CanonicalJson.stringify(args).slice(0, 1000)
                  }) needs approval by this server's operators. Confirm to submit it.`,
                  requestedSchema: {
                    type: "object",
                    properties: { confirm: { type: "boolean", description: "Submit this exact call for approval" } },
                    required: ["confirm"]
                  }
                })
              },
              requestState
            }) as unknown as CallToolResult
        )
        const raw = ctx.mcpReq.requestState()
        if (typeof raw !== "string") return yield* ask
        const state = yield* Effect.either(Effect.tryPromise(() => serving.codec.verify(raw)))
        if (state._tag === "Left" || state.right.digest !== digest) return yield* ask // tampered, expired or other arguments
        const answer = inputResponse(ctx.mcpReq.inputResponses, "approval")
        if (answer.kind !== "elicit") return yield* ask
        if (answer.action !== "accept" || (answer.content as { confirm?: unknown } | undefined)?.confirm !== true) {
          return text(approvalDeniedText("the caller did not confirm the call"), true)
        }
        const approver = yield* Effect.serviceOption(Approval.Approver)
        if (Option.isNone(approver)) {
          return text(approvalDeniedText("approval required and this server has no approver"), true)
        }
        const pending = Approval.makeEntry({
          kind: "Approval",
          path: context.runId,
          iteration: 0,
          index: 0,
          call: { ...call, arguments: args },
          tool,
          reasons: ["requires_approval"],
          createdAt: yield* Clock.currentTimeMillis
        })
        const decisions = yield* approver.value.decide({
          runId: context.runId,
          agent: `mcp-server:${serving.name}`,
          pending: [pending]
        })
        const decision = Approval.resolve(pending, decisions)
        if (decision.verdict === "reject") return text(approvalDeniedText(decision.reason), true)
        if (decision.verdict === "edit") {
          const edited = yield* Effect.either(tool.validate(decision.arguments))
          if (edited._tag === "Left") {
            return text(approvalDeniedText(`the edited arguments were invalid: ${edited.left.message}`), true)
          }
          return yield* execute(decision.arguments as Record<string, unknown>)
        }
        return yield* execute(args)
      }) as Effect.Effect<CallToolResult, never, Invoker | RunContext>,
      ctx.mcpReq.signal
    )
  })
  return server
}
