/**
 * Scope patterns, as an attacker reads them: a grant covers a key only by whole parts in their
 * own positions (no text prefix, no number-for-string, no other part), a malformed pattern covers
 * nothing, and a key shows as its parts.
 */
import { Scope } from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"

const key = (fields: Scope.Fields) => Scope.make(fields).storeKey

describe("Scope patterns", () => {
  it("an organisation's pattern covers its domains, users and sessions", () => {
    const acme = Scope.pattern({ orgId: "acme" })
    expect(acme).toBe("[\"acme\"]")
    for (
      const fields of [{ orgId: "acme" }, { orgId: "acme", userId: "u1" }, {
        orgId: "acme",
        domainId: 3,
        userId: "u1",
        sessionId: "s"
      }]
    ) {
      expect(Scope.covers(acme, key(fields))).toBe(true)
    }
  })

  it("covers no look-alike: another organisation, a text prefix, the name in another part, a number for a string", () => {
    const acme = Scope.pattern({ orgId: "acme" })
    for (
      const fields of [
        { orgId: "globex" },
        { orgId: "acme2" },
        { orgId: "acm" },
        { domainId: "acme" },
        { orgId: "globex", userId: "acme" },
        {}
      ]
    ) {
      expect(Scope.covers(acme, key(fields))).toBe(false)
    }
    expect(Scope.covers(Scope.pattern({ orgId: 7 }), key({ orgId: "7" }))).toBe(false)
    expect(Scope.covers(Scope.pattern({ orgId: 7 }), key({ orgId: 7, userId: "u" }))).toBe(true)
  })

  it("a user's pattern covers their sessions, not another user's nor the organisation", () => {
    const u1 = Scope.pattern({ orgId: "acme", userId: "u1" })
    expect(u1).toBe("[\"acme\",null,\"u1\"]")
    expect(Scope.covers(u1, key({ orgId: "acme", userId: "u1", sessionId: "s1" }))).toBe(true)
    expect(Scope.covers(u1, key({ orgId: "acme", userId: "u2" }))).toBe(false)
    expect(Scope.covers(u1, key({ orgId: "acme" }))).toBe(false)
    expect(Scope.covers(u1, key({ orgId: "acme", domainId: 1, userId: "u1" }))).toBe(false)
    // a wider pattern is not covered by a narrower grant; a narrower one is by a wider grant
    expect(Scope.covers(u1, Scope.pattern({ orgId: "acme" }))).toBe(false)
    expect(Scope.covers(Scope.pattern({ orgId: "acme" }), u1)).toBe(true)
  })

  it("an exact key covers that tenant only; * covers all; other text is exact", () => {
    const exact = key({ orgId: "acme" })
    expect(Scope.isExact(exact)).toBe(true)
    expect(Scope.covers(exact, exact)).toBe(true)
    expect(Scope.covers(exact, key({ orgId: "acme", userId: "u1" }))).toBe(false)
    expect(Scope.covers("*", key({ orgId: "globex" }))).toBe(true)
    expect(Scope.isExact("*")).toBe(false)
    expect(Scope.covers("acme", "acme")).toBe(true)
    expect(Scope.covers("acme", key({ orgId: "acme" }))).toBe(false)
    expect(Scope.coveredBy([], key({ orgId: "acme" }))).toBe(false)
  })

  it("a malformed pattern covers nothing (fails closed)", () => {
    const victim = key({ orgId: "acme", userId: "u1" })
    for (const bad of ["[]", "[\"acme\",null,null,null,null]", "[true]", "[[\"acme\"]]", "[\"acme\"", "[{}]"]) {
      expect(Scope.covers(bad, victim)).toBe(false)
    }
    expect(Scope.pattern({})).toBe("*")
  })

  it("shows a key and a pattern by their parts", () => {
    expect(Scope.label(key({ orgId: "acme", userId: "u1" }))).toBe("org acme · user u1")
    expect(Scope.label(key({ orgId: 7, domainId: 42 }))).toBe("org 7 · domain 42")
    expect(Scope.label(Scope.pattern({ orgId: "acme" }))).toBe("org acme · …")
    expect(Scope.label(key({}))).toBe("(no scope)")
    expect(Scope.label("*")).toBe("all tenants")
    expect(Scope.fieldsOf(key({ orgId: "acme", sessionId: "s" }))).toEqual({ orgId: "acme", sessionId: "s" })
    expect(Scope.fieldsOf("acme")).toBeUndefined()
  })
})
