/**
 * HTTP transport rules: per-tenant bearer tokens read from the run context, tokens never on spans
 * or in what the model sees, redirects refused, the server's name on the execute_tool span; and the
 * stdio connection reopened after the server dies.
 */
import { Invoker, Tracing } from "@agentkit/core"
import { McpServer, McpToolset, McpTransport, McpUnauthorized } from "@agentkit/mcp"
import { FakeLLM, makeTestCtx } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import { HttpRouter } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { everythingEntry, teed } from "./fixtures.js"
import { serve } from "./http.js"

const TOKENS: Record<string, string> = {
  "tok-org-1-secret": "org1",
  "tok-org-2-secret": "org2",
  "tok-catalog-secret": "catalog"
}

const whoami = Tool.make("whoami", {
  description: "Say which tenant the server believes is calling, for an audit line.",
  parameters: { note: Schema.String },
  sideEffecting: false,
  idempotent: true,
  handler: ({ note }, { context }) =>
    `tenant ${context.scope.key}, subject ${context.correlationId.split(":")[1]}: ${note}`
})

const authenticate: McpServer.Authenticator = ({ headers }) => {
  const token = (headers.get("authorization") ?? "").replace(/^Bearer /, "")
  const subject = TOKENS[token]
  return subject === undefined
    ? Effect.fail(new McpUnauthorized({ message: "unknown token" }))
    : Effect.succeed({ subject, scope: subject.startsWith("org") ? { orgId: Number(subject.slice(3)) } : {} })
}

describe("the HTTP transport", () => {
  it.live("per-tenant tokens come from the run context; no token reaches a span or the model", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const router = HttpRouter.empty.pipe(
          HttpRouter.all("/mcp", McpServer.http({ name: "audit", tools: [whoami], authenticate }))
        )
        const { port } = yield* serve(router).pipe(
          Effect.provide(Layer.provideMerge(Invoker.layer(), FakeLLM.script([]).layer))
        )
        const toolset = yield* McpToolset.make({
          name: "audit",
          transport: McpTransport.http(`http://127.0.0.1:${port}/mcp`, {
            egress: { allowPrivate: ["127.0.0.1"] },
            auth: McpTransport.perTenant({
              catalog: Effect.succeed("tok-catalog-secret"),
              token: (context) => Effect.succeed(`tok-org-${context.scope.orgId}-secret`)
            })
          }),
          trust: { server: { trustAnnotations: true } }
        })
        const tool = toolset.tools()[0]!
        const tracer = Tracing.recording()
        const callAs = (orgId: number) =>
          Effect.flatMap(Invoker, (invoker) =>
            invoker.tool({ id: `c${orgId}`, name: tool.name, arguments: { note: "hi" } }, tool)).pipe(
              Effect.provide(makeTestCtx({ llm: FakeLLM.script([]), scope: { orgId } })),
              Effect.provide(tracer.layer)
            )
        expect((yield* callAs(1)).text).toBe("tenant org1:domNone, subject org1: hi")
        expect((yield* callAs(2)).text).toBe("tenant org2:domNone, subject org2: hi")
        const spans = tracer.spans.filter((span) =>
          span.name === "execute_tool mcp__audit__whoami"
        )
        expect(spans).toHaveLength(2)
        expect(spans[0]!.attributes.get("mcp.server.name")).toBe("audit")
        expect(spans[0]!.attributes.get("mcp.tool.name")).toBe("whoami")
        expect(spans[0]!.attributes.get("mcp.method.name")).toBe("tools/call")
        expect(spans[0]!.attributes.get("mcp.protocol.version")).toBe("2026-07-28")
        const everything = JSON.stringify(
          tracer.spans.map((span) => [span.name, Array.from(span.attributes.entries()), span.events])
        )
        expect(everything).not.toContain("secret")

        // a tenant whose token the server refuses: the call fails, and the error text never holds the token
        const refused = yield* Effect.flip(callAs(3))
        expect(refused.message).not.toContain("tok-org-3-secret")
      })
    ), 120_000)

  it.live("a redirect is never followed", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const hits: Array<string> = []
        const server = createServer((req, res) => {
          hits.push(req.url ?? "")
          res.writeHead(307, { location: "http://127.0.0.1:1/elsewhere" })
          res.end()
        })
        yield* Effect.acquireRelease(
          Effect.async<void>((resume) => {
            server.listen(0, "127.0.0.1", () => resume(Effect.void))
          }),
          () => Effect.sync(() => server.close())
        )
        const port = (server.address() as AddressInfo).port
        const error = yield* Effect.flip(
          McpToolset.make({
            name: "moved",
            transport: McpTransport.http(`http://127.0.0.1:${port}/mcp`, { egress: { allowPrivate: ["127.0.0.1"] } }),
            reconnect: undefined
          })
        )
        expect(error._tag).toBe("McpConnectError")
        expect(error.message).toContain("answered with a redirect (HTTP 307); redirects are never followed")
        expect(hits.every((path) => path === "/mcp")).toBe(true)
      })
    ), 120_000)
})

describe("reconnecting", () => {
  it.live("after the server process dies, the next call opens a new session", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const { kill, transport, wire } = teed([everythingEntry, "stdio"])
        const toolset = yield* McpToolset.make({
          name: "everything",
          transport,
          trust: { tools: { echo: { sideEffecting: false, requiresApproval: false } } },
          include: ["echo"]
        })
        const echo = toolset.tools()[0]!
        const call = (message: string) =>
          Effect.flatMap(Invoker, (invoker) => invoker.tool({ id: "c", name: echo.name, arguments: { message } }, echo))
        expect((yield* call("one")).text).toBe("Echo: one")
        // kill the server: the client's session ends with it
        const initializes = () =>
          wire().filter((m) => m.method === "initialize" || m.method === "server/discover").length
        const before = initializes()
        kill()
        // a call sent into the dying session fails (it is never re-sent: at most once); the next reconnects
        const second = yield* Effect.retry(call("two"), { times: 3 })
        expect(second.text).toBe("Echo: two")
        expect(initializes()).toBeGreaterThan(before)
      }).pipe(Effect.provide(makeTestCtx({ llm: FakeLLM.script([]) })))
    ), 120_000)
})
