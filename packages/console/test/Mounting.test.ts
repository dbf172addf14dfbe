/**
 * Mounting and starting: the console on an app's own router beside its routes (the README's
 * code), a console without an authenticator (loopback peers and a loopback Host only; it refuses
 * to bind anything else), bad options as ConfigurationError, the token authenticator from config.
 */
import { Console, OperatorAuth } from "@agentkit/console"
import { HttpLayerRouter, HttpServer, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Exit, Layer, Redacted, Scope } from "effect"
import { createServer, request } from "node:http"
import { call, layerOf, seed, start, tokens } from "./support/harness.js"
import * as MemoryOperator from "./support/MemoryOperator.js"

/** A raw request with any Host header (fetch refuses to set Host). */
const raw = (port: number, path: string, headers: Record<string, string>) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers }, (res) => {
      let body = ""
      res.on("data", (chunk) => (body += chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on("error", reject)
    req.end()
  })

describe("mounting the console on an app's own router", () => {
  it("serves the app's routes untouched and the console under its base path", async () => {
    const operator = MemoryOperator.make()
    seed(operator)
    const MyRoutes = HttpLayerRouter.add("GET", "/health", HttpServerResponse.text("ok"))
    const App = Layer.mergeAll(MyRoutes, Console.layer({ basePath: "/ops" })).pipe(
      Layer.provide(operator.layer),
      Layer.provide(
        OperatorAuth.Authenticator.tokens([{
          token: tokens.alice,
          principal: { id: "alice", role: "approver", tenants: ["acme"] }
        }])
      )
    )
    const Server = HttpLayerRouter.serve(App, { disableLogger: true, disableListenLog: true }).pipe(
      Layer.provideMerge(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: 0 }))
    )
    const scope = Effect.runSync(Scope.make())
    try {
      const context = await Effect.runPromise(Layer.buildWithScope(Server, scope))
      const address = Context.get(context, HttpServer.HttpServer).address
      const origin = address._tag === "TcpAddress" ? `http://127.0.0.1:${address.port}` : ""
      const health = await fetch(`${origin}/health`)
      expect(await health.text()).toBe("ok")
      expect(health.headers.get("content-security-policy")).toBeNull()
      const runs = await call(`${origin}/ops`, "api/runs", { token: tokens.alice })
      expect(runs.body.runs.map((r: { runId: string }) => r.runId)).toEqual(["run-acme-1", "run-acme-doubt"])
      const page = await fetch(`${origin}/ops`)
      expect(await page.text()).toContain("src=\"/ops/app.js\"")
      expect((await fetch(`${origin}/api/runs`)).status).toBe(404)
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })

  it("refuses bad options with a ConfigurationError naming the field", () => {
    expect(() => Console.layer({ basePath: "ops" })).toThrow(/basePath must be "" or a path like "\/ops"/)
    expect(() => Console.layer({ basePath: "/a/../b" })).toThrow(/basePath/)
    expect(() => Console.layer({ basePath: "/tools/ops-console" })).not.toThrow()
    expect(() => Console.layer({ basePath: "/ops/" })).toThrow(/basePath/)
    expect(() => Console.layer({ pollInterval: "1 millis" })).toThrow(
      /pollInterval must be a Duration of at least 10 ms/
    )
    try {
      Console.layer({ basePath: "x y" })
    } catch (error) {
      expect(error).toMatchObject({ _tag: "ConfigurationError", field: "basePath" })
    }
  })
})

describe("a console without an authenticator", () => {
  it("refuses to bind a non-loopback host", async () => {
    const exit = await Effect.runPromiseExit(
      Effect.scoped(Layer.build(layerOf(MemoryOperator.make(), { auth: false, host: "0.0.0.0" })))
    )
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isFailure(exit)) {
      expect(exit.cause.toString()).toContain("Console.serve: binding 0.0.0.0 needs an Authenticator")
    }
  })

  it("serves loopback peers as the local operator, refuses a foreign Host (DNS rebinding) and a write without the CSRF header", async () => {
    const operator = MemoryOperator.make({ owner: "manual" })
    const runs = seed(operator)
    const server = await start(operator, { auth: false })
    try {
      const session = await call(server.url, "api/session")
      expect(session.status).toBe(200)
      expect(session.body.operator).toEqual({ id: "local", role: "approver", tenants: "*" })
      const rebound = await raw(server.port, "/console/api/runs", { host: "attacker.example:80" })
      expect(rebound.status).toBe(403)
      expect(JSON.parse(rebound.body).message).toBe(
        "this console has no authenticator: it serves loopback peers (and a loopback Host) only"
      )
      expect((await raw(server.port, "/console/api/live", { host: "attacker.example" })).status).toBe(403)
      const entry = runs.acme.pending[0]!
      const body = { runId: "run-acme-1", pendingId: entry.id, verdict: "reject", digest: entry.digest }
      expect((await call(server.url, "api/decide", { body })).status).toBe(403)
      expect((await call(server.url, "api/login", { body: { token: tokens.alice } })).status).toBe(403)
      // a body over 1 MiB is not read: a valid edit of 2 MiB is refused (or cut while still sent), nothing recorded
      const huge = await fetch(`${server.url}/api/decide`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-agentkit-csrf": session.body.csrf },
        body: JSON.stringify({
          ...body,
          verdict: "edit",
          arguments: { order_id: "A-771", reason: "x".repeat(2 * 1024 * 1024) }
        })
      }).then((response) => response.status, () => "reset")
      expect(huge === "reset" || huge === 413).toBe(true)
      expect(operator.calls.decide ?? 0).toBe(0)
      expect((await call(server.url, "api/session")).status).toBe(200)
      const ok = await call(server.url, "api/decide", { body, headers: { "x-agentkit-csrf": session.body.csrf } })
      expect(ok.status).toBe(200)
      expect(ok.body.by).toBe("local")
    } finally {
      await server.close()
    }
  })
})

describe("OperatorAuth", () => {
  it.effect("reads scope patterns from config, a comma inside a key not splitting it", () =>
    Effect.gen(function*() {
      const auth = yield* OperatorAuth.fromConfig.pipe(
        Effect.withConfigProvider(
          ConfigProvider.fromMap(
            new Map([
              ["AGENTKIT_CONSOLE_TOKEN", "a-long-enough-config-token"],
              ["AGENTKIT_CONSOLE_TENANTS", "[\"acme\"], [\"globex\",null,\"u,1\"],legacy"]
            ])
          )
        )
      )
      const principal = yield* auth.authenticate(Redacted.make("a-long-enough-config-token"))
      expect(principal.tenants).toEqual(["[\"acme\"]", "[\"globex\",null,\"u,1\"]", "legacy"])
      expect(OperatorAuth.canSee(principal, "[\"acme\",null,\"u9\",\"s1\"]")).toBe(true)
      expect(OperatorAuth.canSee(principal, "[\"globex\",null,\"u,1\",null]")).toBe(true)
      expect(OperatorAuth.canSee(principal, "[\"globex\",null,\"u2\",null]")).toBe(false)
      expect(OperatorAuth.canSee(principal, "[\"acme2\",null,null,null]")).toBe(false)
    }))

  it.effect("reads one token from config, with its operator, role and tenants", () =>
    Effect.gen(function*() {
      const auth = yield* OperatorAuth.fromConfig.pipe(
        Effect.withConfigProvider(
          ConfigProvider.fromMap(
            new Map([
              ["AGENTKIT_CONSOLE_TOKEN", "a-long-enough-config-token"],
              ["AGENTKIT_CONSOLE_OPERATOR", "ops"],
              ["AGENTKIT_CONSOLE_ROLE", "viewer"],
              ["AGENTKIT_CONSOLE_TENANTS", "acme, globex"]
            ])
          )
        )
      )
      expect(yield* auth.authenticate(Redacted.make("a-long-enough-config-token"))).toEqual({
        id: "ops",
        role: "viewer",
        tenants: ["acme", "globex"]
      })
      const wrong = yield* Effect.flip(auth.authenticate(Redacted.make("a-long-enough-config-tokeN")))
      expect(wrong.message).toBe("the token is not one this console accepts")
      const short = yield* Effect.flip(
        OperatorAuth.fromConfig.pipe(
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["AGENTKIT_CONSOLE_TOKEN", "short"]])))
        )
      )
      expect(String(short)).toContain("AGENTKIT_CONSOLE_TOKEN must be at least 16 characters")
      const missing = yield* Effect.flip(
        OperatorAuth.fromConfig.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map())))
      )
      expect(String(missing)).toContain("AGENTKIT_CONSOLE_TOKEN")
    }))

  it("refuses a token table entry shorter than 16 characters", () => {
    expect(() => OperatorAuth.tokens([{ token: "short", principal: OperatorAuth.local }])).toThrow(
      "the token of 'local' must be at least 16 characters"
    )
  })
})
