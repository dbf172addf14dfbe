import { Utf8 } from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"

/** A deterministic mix of ASCII, 2- and 3-byte characters, pairs and lone surrogates. */
const text = (length: number, seed: number) => {
  const units = [0x41, 0xe9, 0x20ac, 0xd83d, 0xde00, 0x7a, 0xdc00, 0xd800]
  let state = seed
  let out = ""
  for (let i = 0; i < length; i++) {
    state = (state * 1103515245 + 12345) >>> 0
    out += String.fromCharCode(units[state % units.length]!)
  }
  return out
}

describe("Utf8.byteLength", () => {
  it("is what TextEncoder writes, short texts and long ones (lone surrogates as U+FFFD)", () => {
    const encoder = new TextEncoder()
    for (const length of [0, 1, 7, 1023, 1024, 5000, 100_000]) {
      for (const seed of [1, 2, 3]) {
        const sample = text(length, seed)
        expect(Utf8.byteLength(sample)).toBe(encoder.encode(sample).length)
      }
    }
    expect(Utf8.byteLength("😀".repeat(2000))).toBe(8000)
    expect(Utf8.byteLength("\ud800".repeat(2000))).toBe(6000)
  })
})
