/**
 * `Redaction`: named secrets, credential-named keys and credential-shaped text become `[redacted]`;
 * ordinary text and usage counters are left alone.
 */
import { Redaction } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Redacted } from "effect"

describe("Redaction", () => {
  it("removes named secrets wherever they occur, Redacted values included, longest first", () => {
    const redactor = Redaction.make({ secrets: ["tenant-key-1", Redacted.make("tenant-key-12345"), "ab"] })
    expect(redactor.text("a tenant-key-12345 and a tenant-key-1.")).toBe("a [redacted] and a [redacted].")
    // a secret under 4 characters is ignored (it would match too much)
    expect(redactor.text("ab cd")).toBe("ab cd")
  })

  it("removes credential-shaped text", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["Authorization: Bearer abc.DEF-123_x", "Authorization: Bearer [redacted]"],
      ["Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l", "Authorization: Basic [redacted]"],
      ["key sk-ant-api03-AbCdEf0123456789 here", "key [redacted] here"],
      ["token ghp_abcdefghijklmnopqrstuvwxyz0123", "token [redacted]"],
      ["pat github_pat_11ABCDEFG0123456789_abcdef", "pat [redacted]"],
      ["slack xoxb-1234567890-abcdef", "slack [redacted]"],
      ["aws AKIAIOSFODNN7EXAMPLE", "aws [redacted]"],
      ["jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl", "jwt [redacted]"],
      ["db postgres://app:s3cr3tpw@db.internal/agents", "db postgres://app:[redacted]@db.internal/agents"],
      ["use api_key=abcd1234efgh", "use api_key=[redacted]"],
      ["{\"password\": \"hunter22\"}", "{\"password\": \"[redacted]\"}"],
      [
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
        "[redacted]"
      ]
    ]
    for (const [input, output] of cases) expect(Redaction.text(input)).toBe(output)
  })

  it("leaves ordinary text alone", () => {
    for (
      const input of [
        "Order A-771 shipped on 14 August and arrives Tuesday.",
        "the token budget is 4096 tokens",
        "ask-for-help is a skill",
        "Bearer tokens expire; Basic information is public",
        "the token: none"
      ]
    ) expect(Redaction.text(input)).toBe(input)
  })

  it("replaces the value of credential-named keys, deeply, without touching the input or usage counters", () => {
    const input = {
      headers: { "x-api-key": "k1", Authorization: "anything", cookie: "sid=1" },
      body: { client_secret: "c", accessToken: "t", password: 1234, nested: [{ token: "t2" }] },
      usage: { inputTokens: 10, outputTokens: 5, maxTokens: 100 },
      note: "plain"
    }
    const copy = structuredClone(input)
    expect(Redaction.value(input)).toEqual({
      headers: { "x-api-key": "[redacted]", Authorization: "[redacted]", cookie: "[redacted]" },
      body: {
        client_secret: "[redacted]",
        accessToken: "[redacted]",
        password: "[redacted]",
        nested: [{ token: "[redacted]" }]
      },
      usage: { inputTokens: 10, outputTokens: 5, maxTokens: 100 },
      note: "plain"
    })
    expect(input).toEqual(copy)
  })
})
