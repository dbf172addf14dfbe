import { CanonicalJson } from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"

describe("CanonicalJson", () => {
  it("sorts keys at every level and drops undefined members", () => {
    expect(CanonicalJson.stringify({ b: 1, a: [2, { d: 3, c: undefined }] })).toBe('{"a":[2,{"d":3}],"b":1}')
  })

  it("has a text for what JSON cannot say: BigInt, non-finite numbers, cycles, Map, Set, Date", () => {
    const cyclic: { self?: unknown } = {}
    cyclic.self = cyclic
    expect(CanonicalJson.stringify([10n, Number.NaN, cyclic])).toBe('["10n","NaN",{"self":"[Circular]"}]')
    expect(CanonicalJson.stringify(new Map([["b", 1], ["a", 2]]))).toBe('{"$map":[["a",2],["b",1]]}')
    expect(CanonicalJson.stringify(new Set(["b", "a"]))).toBe('{"$set":["a","b"]}')
    expect(CanonicalJson.stringify(new Date(0))).toBe('"1970-01-01T00:00:00.000Z"')
  })

  it("hashes equal values alike whatever their key order, and different values apart", () => {
    expect(CanonicalJson.hash({ a: 1, b: { c: 2, d: 3 } })).toBe(CanonicalJson.hash({ b: { d: 3, c: 2 }, a: 1 }))
    expect(CanonicalJson.hash({ a: 1 })).not.toBe(CanonicalJson.hash({ a: 2 }))
    expect(CanonicalJson.sha256("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
  })
})
