import { McpName, McpTrust } from "@agentkit/mcp"
import { describe, expect, it } from "@effect/vitest"

const pick = (flags: McpTrust.Flags) => [flags.sideEffecting, flags.idempotent, flags.requiresApproval, flags.caps]

describe("McpTrust.flags", () => {
  it("an undeclared server gets the conservative default, whatever its hints", () => {
    const liar = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }
    expect(pick(McpTrust.flags(undefined, liar))).toEqual([true, false, true, ["egress", "untrusted_content"]])
    expect(pick(McpTrust.flags(undefined, undefined))).toEqual([true, false, true, ["egress", "untrusted_content"]])
  })

  it("trusted annotations give the flags they describe, absent hints taking the spec defaults", () => {
    const trusted = { trustAnnotations: true }
    expect(pick(McpTrust.flags(trusted, { readOnlyHint: true, openWorldHint: false }))).toEqual([
      false,
      true,
      false,
      []
    ])
    expect(pick(McpTrust.flags(trusted, {}))).toEqual([true, false, true, ["egress", "untrusted_content"]])
    expect(pick(McpTrust.flags(trusted, { destructiveHint: false, openWorldHint: false }))).toEqual([
      true,
      false,
      false,
      []
    ])
  })

  it("the declaration loosens; the explicit hints then only tighten", () => {
    const readOnly = { sideEffecting: false, requiresApproval: false, idempotent: true, caps: [] }
    expect(pick(McpTrust.flags(readOnly, undefined))).toEqual([false, true, false, []])
    expect(pick(McpTrust.flags(readOnly, { readOnlyHint: false }))).toEqual([true, true, false, []])
    expect(pick(McpTrust.flags(readOnly, { destructiveHint: true }))).toEqual([true, true, true, []])
    expect(pick(McpTrust.flags(readOnly, { readOnlyHint: false, idempotentHint: false }))).toEqual([
      true,
      false,
      false,
      []
    ])
    expect(pick(McpTrust.flags(readOnly, { openWorldHint: true }))).toEqual([false, true, false, [
      "egress",
      "untrusted_content"
    ]])
    // a hint never loosens a declaration
    const guarded = { sideEffecting: true, requiresApproval: true }
    expect(pick(McpTrust.flags(guarded, { readOnlyHint: true, destructiveHint: false }))).toEqual([true, false, true, [
      "egress",
      "untrusted_content"
    ]])
  })

  it("the tool's declaration wins over the server's, field by field", () => {
    const trust: McpTrust.Trust = {
      server: { trustAnnotations: true, caps: ["private_data"] },
      tools: { echo: { caps: [] } }
    }
    expect(McpTrust.declarationFor(trust, "echo")).toEqual({ trustAnnotations: true, caps: [] })
    expect(McpTrust.declarationFor(trust, "other")).toEqual({ trustAnnotations: true, caps: ["private_data"] })
    expect(McpTrust.declarationFor(trust, "__proto__")).toEqual(trust.server)
  })

  it("bad declarations are refused when the toolset is made, naming the field", () => {
    expect(() => McpTrust.check({ server: { sideEfecting: false } as never }, "s")).toThrow(
      "unknown trust field 'sideEfecting' for the server"
    )
    expect(() => McpTrust.check({ tools: { x: { caps: ["network"] } } } as never, "s")).toThrow(
      "trust field 'caps' for tool 'x' must list 'private_data', 'untrusted_content', 'egress'"
    )
    expect(() => McpTrust.check({ server: { timeout: "-1 seconds" } }, "s")).toThrow("must be a positive Duration")
  })
})

describe("McpName", () => {
  it("prefixes, sanitises and cuts with a hash past 64 characters", () => {
    expect(McpName.make("everything", "get-sum")).toBe("mcp__everything__get-sum")
    expect(McpName.make("docs", "search.v2")).toBe("mcp__docs__search_v2")
    const long = McpName.make("docs", "x".repeat(80))
    expect(long).toHaveLength(64)
    expect(long).toMatch(/^mcp__docs__x+_[0-9a-f]{8}$/)
    expect(McpName.make("docs", "x".repeat(80))).not.toBe(McpName.make("docs", `${"x".repeat(79)}y`))
  })

  it("a server name must be letters, digits and '-'", () => {
    expect(() => McpName.checkServer("a_b")).toThrow("MCP server name \"a_b\" is invalid")
    expect(McpName.checkServer("docs-2")).toBe("docs-2")
  })
})
