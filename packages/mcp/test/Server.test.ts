/**
 * Our client against our server over Streamable HTTP on 127.0.0.1 (the 2026-07-28 era is negotiated):
 * the flags round-trip as annotations, calls go through the server's tool pipeline, approval is the
 * server's Approver's and runs only after a signed `input_required` round.
 */
import { Approval } from "@agentkit/agents"
import { Invoker } from "@agentkit/core"
import type { ToolMiddleware } from "@agentkit/core"
import { McpServer, McpToolset, McpTransport, McpUnauthorized } from "@agentkit/mcp"
import { FakeLLM, makeTestCtx } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import { HttpRouter } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { Effect, Exit, Fiber, Layer, Schema } from "effect"
import { approver, eventually } from "./fixtures.js"
import { rawPost, serve } from "./http.js"

const world = () => {
  const state = { cancelled: [] as Array<string>, aborted: 0, pipeline: [] as Array<string> }
  const lookupOrder = Tool.make("lookup_order", {
    description: "Look up an order by its id and return its status line.",
    parameters: { order_id: Schema.String },
    sideEffecting: false,
    idempotent: true,
    handler: ({ order_id }, { context }) => `order ${order_id}: shipped (tenant ${context.scope.key})`
  })
  const cancelOrder = Tool.make("cancel_order", {
    description: "Cancel an order by its id. This cannot be undone once confirmed.",
    parameters: { order_id: Schema.String },
    sideEffecting: true,
    requiresApproval: true,
    caps: ["egress"],
    handler: ({ order_id }) => {
      state.cancelled.push(order_id)
      return `order ${order_id} cancelled`
    }
  })
  const slow = Tool.make("slow_report", {
    description: "Build a long report; it takes a long time to finish, so be patient.",
    parameters: {},
    sideEffecting: false,
    handler: (_args, { signal }) =>
      new Promise<string>((_resolve, reject) => {
        signal.addEventListener("abort", () => {
          state.aborted++
          reject(new Error("aborted"))
        })
      })
  })
  const recordPipeline: ToolMiddleware = (next) => (call) =>
    Effect.zipRight(Effect.sync(() => state.pipeline.push(call.tool.name)), next(call))
  const serverEnv = Layer.provideMerge(Invoker.layer({ toolMiddleware: [recordPipeline] }), FakeLLM.script([]).layer)
  return { state, tools: [lookupOrder, cancelOrder, slow] as const, serverEnv }
}

const clientCtx = makeTestCtx({ llm: FakeLLM.script([]) })

/** Serves the world's tools on 127.0.0.1 and opens a toolset on it. */
const connect = (
  serverApprover: Layer.Layer<Approval.Approver> | undefined,
  options: Pick<McpServer.HttpOptions<Tool.Tool>, "allowedHosts" | "authenticate"> = {}
) =>
  Effect.gen(function*() {
    const w = world()
    const router = HttpRouter.empty.pipe(
      HttpRouter.all("/mcp", McpServer.http({ name: "orders", tools: w.tools, ...options }))
    )
    const env = serverApprover === undefined ? w.serverEnv : Layer.merge(w.serverEnv, serverApprover)
    const { port } = yield* serve(router).pipe(Effect.provide(env))
    const transport = McpTransport.http(`http://127.0.0.1:${port}/mcp`, { egress: { allowPrivate: ["127.0.0.1"] } })
    const toolset = yield* McpToolset.make({
      name: "orders",
      transport,
      trust: { server: { trustAnnotations: true, trustDescriptions: true } }
    })
    const tool = (name: string) => toolset.tools().find((t) => t.name === `mcp__orders__${name}`)!
    const call = (name: string, args: Record<string, unknown>) =>
      Effect.flatMap(Invoker, (invoker) =>
        invoker.tool({ id: `c-${name}`, name: `mcp__orders__${name}`, arguments: args }, tool(name)))
    return { ...w, port, toolset, tool, call }
  })

describe("our client against our server (Streamable HTTP)", () => {
  it.live("the flags become annotations and come back as the same flags; the schema is agentkit's", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const { tool } = yield* connect(undefined)
        const lookup = tool("lookup_order")
        expect([lookup.sideEffecting, lookup.idempotent, lookup.requiresApproval, lookup.caps]).toEqual([
          false,
          true,
          false,
          []
        ])
        const cancel = tool("cancel_order")
        expect([cancel.sideEffecting, cancel.idempotent, cancel.requiresApproval, cancel.caps]).toEqual([
          true,
          false,
          true,
          ["egress", "untrusted_content"]
        ])
        expect(JSON.stringify(lookup.schema.parameters)).toBe(
          "{\"type\":\"object\",\"properties\":{\"order_id\":{\"type\":\"string\"}},\"required\":[\"order_id\"]}"
        )
        expect(McpServer.annotations(tool("lookup_order"))).toEqual({
          readOnlyHint: true,
          destructiveHint: false,
          idempotentHint: true,
          openWorldHint: false
        })
      })
    ), 120_000)

  it.live("a call runs through the server's tool pipeline", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const { call, state } = yield* connect(undefined)
        const outcome = yield* call("lookup_order", { order_id: "A-771" })
        expect(outcome.text).toBe("order A-771: shipped (tenant orgNone:domNone)")
        expect(state.pipeline).toEqual(["lookup_order"])
      }).pipe(Effect.provide(clientCtx))
    ), 120_000)

  it.live(
    "input_required: the caller confirms, the server's Approver decides, and only then the call runs",
    () =>
      Effect.scoped(
        Effect.gen(function*() {
          const server = approver((pending) => Approval.approve(pending.digest))
          const { call, state } = yield* connect(server.layer)
          const client = approver((pending) => Approval.edit(pending.digest, { confirm: true }))
          const outcome = yield* call("cancel_order", { order_id: "A-771" }).pipe(Effect.provide(client.layer))
          expect(outcome.text).toBe("order A-771 cancelled")
          expect(state.cancelled).toEqual(["A-771"])
          // the caller was asked to confirm the exact call; the server's approver got the call and its digest
          expect((client.asked[0]!.pending[0]!.call.arguments as { message: string }).message).toContain(
            "cancel_order({\"order_id\":\"A-771\"})"
          )
          // the client's pending entry is the model's call (its id) in the call's run
          expect(client.asked[0]!.pending[0]!.call.id).toBe("c-cancel_order:input:approval")
          expect(client.asked[0]!.runId).toBe("test-run")
          const decided = server.asked[0]!.pending[0]!
          expect(decided.call.name).toBe("cancel_order")
          expect(decided.call.arguments).toEqual({ order_id: "A-771" })
          expect(decided.digest).toMatch(/^[0-9a-f]{64}$/)
        }).pipe(Effect.provide(clientCtx))
      ),
    30_000
  )

  it.live(
    "the caller never approves its own call: the server's rejection wins, and no approver denies",
    () =>
      Effect.scoped(
        Effect.gen(function*() {
          const rejecting = approver((pending) => Approval.reject(pending.digest, "not today"))
          const confirming = approver((pending) => Approval.edit(pending.digest, { confirm: true }))
          const a = yield* connect(rejecting.layer)
          const denied = yield* Effect.flip(
            a.call("cancel_order", { order_id: "A-1" }).pipe(Effect.provide(confirming.layer))
          )
          expect(denied.message).toContain("DENIED: tool call rejected by human approval: not today")
          expect(a.state.cancelled).toEqual([])

          const b = yield* connect(undefined)
          const unapproved = yield* Effect.flip(
            b.call("cancel_order", { order_id: "A-2" }).pipe(Effect.provide(confirming.layer))
          )
          expect(unapproved.message).toContain("approval required and this server has no approver")
          expect(b.state.cancelled).toEqual([])

          // the caller declines: the server's approver is never asked
          const approving = approver((pending) => Approval.approve(pending.digest))
          const c = yield* connect(approving.layer)
          const declining = approver((pending) => Approval.reject(pending.digest))
          const declined = yield* Effect.flip(
            c.call("cancel_order", { order_id: "A-3" }).pipe(Effect.provide(declining.layer))
          )
          expect(declined.message).toContain("the caller did not confirm the call")
          expect(approving.asked).toEqual([])
          expect(c.state.cancelled).toEqual([])

          // a client with no Approver cannot answer: the call fails closed
          const refused = yield* Effect.flip(c.call("cancel_order", { order_id: "A-4" }))
          expect(refused._tag).toBe("McpInputRefused")
          expect(c.state.cancelled).toEqual([])
        }).pipe(Effect.provide(clientCtx))
      ),
    30_000
  )

  it.live("a tampered requestState, or one for other arguments, asks again and runs nothing", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const server = approver((pending) => Approval.approve(pending.digest))
        const { port, state } = yield* connect(server.layer)
        const raw = new Client({ name: "raw", version: "1" }, {
          capabilities: { elicitation: { form: {} } },
          versionNegotiation: { mode: "auto" },
          inputRequired: { autoFulfill: false }
        })
        yield* Effect.promise(() =>
          raw.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)))
        )
        yield* Effect.addFinalizer(() => Effect.promise(() => raw.close()))
        expect(raw.getNegotiatedProtocolVersion()).toBe("2026-07-28")
        // what a local model would read: an unknown tool and bad arguments in core's texts
        const textOf = (result: unknown) => (result as { content: ReadonlyArray<{ text: string }> }).content[0]!.text
        const unknown = yield* Effect.promise(() => raw.callTool({ name: "refund", arguments: {} }))
        expect([unknown.isError, textOf(unknown)]).toEqual([
          true,
          "ERROR: no tool named 'refund'. Available tools: cancel_order, lookup_order, slow_report."
        ])
        const bad = yield* Effect.promise(() =>
          raw.callTool({ name: "cancel_order", arguments: { order: "A-9" } }, { allowInputRequired: true })
        )
        expect([bad.isError, textOf(bad)]).toEqual([
          true,
          "ERROR: tool 'cancel_order' failed: ToolArgumentError: tool 'cancel_order' call rejected: unexpected argument(s) ['order']; missing required argument(s) ['order_id']. Accepted arguments: ['order_id']"
        ])
        const first = (yield* Effect.promise(() =>
          raw.callTool({ name: "cancel_order", arguments: { order_id: "A-9" } }, { allowInputRequired: true })
        )) as unknown as { resultType: string; requestState: string }
        expect(first.resultType).toBe("input_required")
        const confirm = { approval: { action: "accept", content: { confirm: true } } }
        const retry = (args: Record<string, unknown>, requestState: string) =>
          Effect.promise(() =>
            raw.callTool({ name: "cancel_order", arguments: args, inputResponses: confirm, requestState } as never, {
              allowInputRequired: true
            })
          ) as Effect.Effect<{ resultType?: string; content?: ReadonlyArray<{ text: string }> }>
        const flipped = first.requestState.slice(0, -2) + (first.requestState.endsWith("AA") ? "BB" : "AA")
        expect((yield* retry({ order_id: "A-9" }, flipped)).resultType).toBe("input_required")
        expect((yield* retry({ order_id: "A-10" }, first.requestState)).resultType).toBe("input_required")
        expect(state.cancelled).toEqual([])
        expect(server.asked).toEqual([])
        const done = yield* retry({ order_id: "A-9" }, first.requestState)
        expect(done.content?.[0]?.text).toBe("order A-9 cancelled")
        expect(state.cancelled).toEqual(["A-9"])
      })
    ), 120_000)

  it.live("interrupting a call cancels it on the server: the tool's signal aborts", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const { call, state } = yield* connect(undefined)
        const fiber = yield* Effect.fork(call("slow_report", {}))
        yield* eventually("the server started the call", () => state.pipeline.includes("slow_report"))
        expect(Exit.isInterrupted(yield* Fiber.interrupt(fiber))).toBe(true)
        yield* eventually("the server's handler saw the abort", () => state.aborted === 1)
      }).pipe(Effect.provide(clientCtx))
    ), 120_000)

  it.live(
    "Host and Origin are checked; off loopback needs an authenticator, and its principal is the run's",
    () =>
      Effect.scoped(
        Effect.gen(function*() {
          const { port } = yield* connect(undefined)
          const list = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
          expect((yield* rawPost(port, { host: "evil.test" }, list)).status).toBe(403)
          expect((yield* rawPost(port, { host: `127.0.0.1:${port}`, origin: "https://evil.test" }, list)).status).toBe(
            403
          )

          expect(() => McpServer.http({ name: "orders", tools: [], allowedHosts: ["mcp.example.com"] })).toThrow(
            "McpServer 'orders': serving mcp.example.com needs an authenticator; without one only loopback hosts are served"
          )

          const authenticate: McpServer.Authenticator = ({ headers }) =>
            headers.get("authorization") === "Bearer tenant-7"
              ? Effect.succeed({ subject: "agent-7", scope: { orgId: 7 } })
              : Effect.fail(new McpUnauthorized({ message: "unknown token" }))
          const w = world()
          const router = HttpRouter.empty.pipe(
            HttpRouter.all("/mcp", McpServer.http({ name: "orders", tools: w.tools, authenticate }))
          )
          const served = yield* serve(router).pipe(Effect.provide(w.serverEnv))
          expect((yield* rawPost(served.port, { host: `127.0.0.1:${served.port}` }, list)).status).toBe(401)
          const toolset = yield* McpToolset.make({
            name: "orders",
            transport: McpTransport.http(`http://127.0.0.1:${served.port}/mcp`, {
              headers: { authorization: "Bearer tenant-7" },
              egress: { allowPrivate: ["127.0.0.1"] }
            }),
            trust: { server: { trustAnnotations: true } }
          })
          const lookup = toolset.tools().find((t) => t.name === "mcp__orders__lookup_order")!
          const outcome = yield* Effect.flatMap(
            Invoker,
            (invoker) => invoker.tool({ id: "c1", name: lookup.name, arguments: { order_id: "B-1" } }, lookup)
          ).pipe(Effect.provide(clientCtx))
          expect(outcome.text).toBe("order B-1: shipped (tenant org7:domNone)")
        })
      ),
    30_000
  )
})
