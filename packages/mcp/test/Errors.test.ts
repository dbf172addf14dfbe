/**
 * The errors of @agentkit/mcp are agentkit errors (core's TypeId, so retry never repeats them and
 * `isAgentkitError` sees them), survive encoding, and read to the model through core's texts.
 * Options that cannot work are core's ConfigurationError, naming the field, before anything starts.
 */
import { ConfigurationError, isAgentkitError, toolFailureText } from "@agentkit/core"
import {
  McpConnectError,
  McpConnectTimeout,
  McpInputRefused,
  McpNameCollision,
  McpServer,
  McpStreamError,
  McpToolChanged,
  McpToolError,
  McpToolset,
  McpTransport,
  McpTrust,
  McpUnauthorized
} from "@agentkit/mcp"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"

const roundTrip = <A extends { readonly message: string }, I>(schema: Schema.Schema<A, I>, error: A) => {
  const wire = JSON.parse(JSON.stringify(Schema.encodeSync(schema)(error))) as unknown
  const decoded = Schema.decodeUnknownSync(schema)(wire)
  expect(decoded).toBeInstanceOf(error.constructor as never)
  expect(decoded.message).toBe(error.message)
  return decoded
}

describe("MCP errors", () => {
  it("each is an agentkit error and decodes back to itself, message and all", () => {
    const errors = [
      roundTrip(
        McpConnectError,
        new McpConnectError({ server: "s", message: "spawn ENOENT", cause: new Error("ENOENT") })
      ),
      roundTrip(McpNameCollision, new McpNameCollision({ server: "s", name: "mcp__s__a_b", tools: ["a.b", "a_b"] })),
      roundTrip(
        McpToolError,
        new McpToolError({ server: "s", tool: "t", message: "MCP error -32602: invalid params" })
      ),
      roundTrip(McpToolChanged, new McpToolChanged({ server: "s", tool: "t", change: "removed" })),
      roundTrip(McpInputRefused, new McpInputRefused({ server: "s", tool: "t", reason: "no Approver" })),
      roundTrip(McpUnauthorized, new McpUnauthorized({ message: "unknown token" })),
      roundTrip(McpConnectTimeout, new McpConnectTimeout({ server: "s", timeout: "10s", lastError: "spawn ENOENT" })),
      roundTrip(McpStreamError, new McpStreamError({ server: "s", tool: "t", reason: "the stream ended" }))
    ]
    for (const error of errors) expect(isAgentkitError(error), error._tag).toBe(true)
    expect((errors[0] as McpConnectError).cause).toBeInstanceOf(Error)
    expect(isAgentkitError(new Error("x"))).toBe(false)
    expect(errors.at(-2)!.message).toBe(
      "MCP server 's' did not complete the connection within 10s; the last try failed: spawn ENOENT"
    )
    expect(errors.at(-1)!.message).toBe("MCP tool 't' of server 's' failed: the stream ended; the call was not re-sent")
  })

  it("the model reads them through core's failure text", () => {
    expect(
      toolFailureText(
        "mcp__notes__read_note",
        new McpToolChanged({ server: "notes", tool: "read_note", change: "changed" })
      )
    ).toBe(
      "ERROR: tool 'mcp__notes__read_note' failed: McpToolChanged: MCP tool 'read_note' of server 'notes' changed its definition since this run started; the call was not sent"
    )
    expect(
      toolFailureText("mcp__s__a_b", new McpNameCollision({ server: "s", name: "mcp__s__a_b", tools: ["a.b", "a_b"] }))
    ).toBe(
      "ERROR: tool 'mcp__s__a_b' failed: McpNameCollision: MCP server 's': tools 'a.b', 'a_b' all map to the name 'mcp__s__a_b'; exclude all but one"
    )
  })
})

/** A transport that would fail if it were ever started: a ConfigurationError proves nothing ran. */
const never = McpTransport.stdio({ command: "/nonexistent/agentkit-mcp-test-server" })

const refusal = (options: McpToolset.Options) => Effect.flip(Effect.scoped(McpToolset.make(options)))

describe("options that cannot work", () => {
  it.effect("McpToolset.make fails with ConfigurationError naming the field, before anything is spawned", () =>
    Effect.gen(function*() {
      const name = yield* refusal({ name: "a b", transport: never })
      expect(name).toBeInstanceOf(ConfigurationError)
      expect((name as ConfigurationError).field).toBe("name")
      expect(name.message).toBe(
        `MCP server name "a b" is invalid: it must match ^[A-Za-z0-9-]{1,32}$ (letters, digits and '-')`
      )

      const limit = yield* refusal({ name: "s", transport: never, maxResultBytes: -1 })
      expect([limit._tag, (limit as ConfigurationError).field, limit.message]).toEqual([
        "ConfigurationError",
        "maxResultBytes",
        "MCP server 's': `maxResultBytes` must be a positive integer; got -1"
      ])
      const rounds = yield* refusal({ name: "s", transport: never, maxInputRounds: 1.5 })
      expect((rounds as ConfigurationError).field).toBe("maxInputRounds")

      const trust = yield* refusal({
        name: "s",
        transport: never,
        trust: { tools: { echo: { caps: ["network" as never] } } }
      })
      expect([(trust as ConfigurationError).field, trust.message]).toEqual([
        "trust.tools.echo.caps",
        "MCP server 's': trust field 'caps' for tool 'echo' must list 'private_data', 'untrusted_content', 'egress'"
      ])
    }))

  it("a trust declaration of the wrong shape is refused, naming where", () => {
    const field = (trust: unknown) => {
      try {
        McpTrust.check(trust as McpTrust.Trust, "s")
        return "accepted"
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigurationError)
        return `${(error as ConfigurationError).field}: ${(error as ConfigurationError).message}`
      }
    }
    expect(field("yes")).toBe("trust: MCP server 's': trust must be an object with 'server' and 'tools'")
    expect(field({ server: {}, tool: {} })).toBe(
      "trust: MCP server 's': unknown trust key 'tool'; accepted: server, tools"
    )
    expect(field({ tools: ["echo"] })).toBe(
      "trust.tools: MCP server 's': trust.tools must map tool names to declarations"
    )
    expect(field({ tools: { echo: true } })).toBe(
      "trust.tools.echo: MCP server 's': trust for tool 'echo' must be an object"
    )
    expect(field({ server: { timeout: "soon" } })).toBe(
      "trust.server.timeout: MCP server 's': trust field 'timeout' for the server must be a positive Duration"
    )
    expect(field({ server: { sideEffecting: false }, tools: { echo: { caps: [] } } })).toBe("accepted")
  })

  it("McpServer refuses a server it could not run safely, naming the field", () => {
    const field = (make: () => unknown) => {
      try {
        make()
        return "accepted"
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigurationError)
        return (error as ConfigurationError).field
      }
    }
    expect(field(() => McpServer.http({ name: "orders", tools: [], allowedHosts: ["mcp.example.com"] }))).toBe(
      "allowedHosts"
    )
    expect(field(() => McpServer.http({ name: "", tools: [] }))).toBe("name")
    expect(field(() => McpServer.http({ name: "orders", tools: [], stateKey: "too short" }))).toBe("stateKey")
    expect(field(() => McpServer.http({ name: "orders", tools: [], approvalTtl: "later" as never }))).toBe(
      "approvalTtl"
    )
    expect(field(() => McpServer.http({ name: "orders", tools: [], approvalTtl: "10 millis" }))).toBe("approvalTtl")
    expect(
      field(() => McpServer.http({ name: "orders", tools: [], stateKey: "k".repeat(32), approvalTtl: "5 minutes" }))
    ).toBe("accepted")
  })
})
