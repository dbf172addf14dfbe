import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc, Option } from "effect"
import { DEFAULT_MAX_BYTES, renderValue } from "../../src/internal/render.js"

const utf8 = (text: string): number => new TextEncoder().encode(text).length

describe("renderValue", () => {
  it("returns a string as is", () => {
    expect(renderValue("order A-771: shipped")).toBe("order A-771: shipped")
    expect(renderValue("")).toBe("")
  })

  it("renders anything else as compact JSON", () => {
    expect(renderValue({ s: 200, ok: true, list: [1, "a", null] })).toBe(`{"s":200,"ok":true,"list":[1,"a",null]}`)
    expect(renderValue(42)).toBe("42")
    expect(renderValue(null)).toBe("null")
    expect(renderValue(Option.some(1))).toBe(`{"_id":"Option","_tag":"Some","value":1}`)
    expect(renderValue(new Date(Date.UTC(2026, 7, 14)))).toBe(`"2026-08-14T00:00:00.000Z"`)
  })

  it("renders undefined and other values without a JSON form as null", () => {
    expect(renderValue(undefined)).toBe("null")
    expect(renderValue(() => 1)).toBe("null")
    expect(renderValue(Symbol("s"))).toBe("null")
  })

  it("renders a bigint as a string of digits, at any depth", () => {
    expect(renderValue(12345678901234567890n)).toBe(`"12345678901234567890"`)
    expect(renderValue({ n: 1n, list: [-2n] })).toBe(`{"n":"1","list":["-2"]}`)
  })

  it("replaces a cycle with [Circular] but repeats a shared reference", () => {
    const node: { a: number; self?: unknown; list: Array<unknown> } = { a: 1, list: [] }
    node.self = node
    node.list.push(node)
    expect(renderValue(node)).toBe(`{"a":1,"list":["[Circular]"],"self":"[Circular]"}`)
    const shared = { x: 1 }
    expect(renderValue({ p: shared, q: [shared, shared] })).toBe(`{"p":{"x":1},"q":[{"x":1},{"x":1}]}`)
  })

  it("never throws, even when toJSON does", () => {
    const bad = {
      toJSON() {
        throw new Error("nope")
      }
    }
    expect(renderValue(bad)).toBe(`"[unrenderable value: nope]"`)
  })

  it("cuts text over 64 KiB of UTF-8 and appends a marker", () => {
    expect(DEFAULT_MAX_BYTES).toBe(65536)
    const fits = "a".repeat(65536)
    expect(renderValue(fits)).toBe(fits)
    expect(renderValue("a".repeat(70000))).toBe(`${"a".repeat(65536)}…[truncated 4464 bytes]`)
    const big = renderValue({ data: "x".repeat(70000) })
    expect(big.startsWith(`{"data":"xxx`)).toBe(true)
    expect(big.endsWith(`…[truncated ${70011 - 65536} bytes]`)).toBe(true)
  })

  it("cuts at a configurable size, on a character boundary, never inside a surrogate pair", () => {
    expect(renderValue("hello world", { maxBytes: 5 })).toBe("hello…[truncated 6 bytes]")
    expect(renderValue("é".repeat(10), { maxBytes: 5 })).toBe("éé…[truncated 16 bytes]")
    expect(renderValue("\u{1F600}\u{1F600}", { maxBytes: 6 })).toBe("\u{1F600}…[truncated 4 bytes]")
    expect(renderValue("\u{1F600}", { maxBytes: 3 })).toBe("…[truncated 4 bytes]")
    expect(renderValue("abc", { maxBytes: 3 })).toBe("abc")
    expect(renderValue({ a: 1 }, { maxBytes: 0 })).toBe("…[truncated 7 bytes]")
  })

  it("keeps at most maxBytes of the text and counts the rest exactly (property)", () => {
    fc.assert(
      fc.property(fc.fullUnicodeString({ maxLength: 60 }), fc.nat({ max: 120 }), (text, maxBytes) => {
        const out = renderValue(text, { maxBytes })
        if (utf8(text) <= maxBytes) {
          expect(out).toBe(text)
          return
        }
        const match = /^([\s\S]*)…\[truncated (\d+) bytes\]$/.exec(out)
        expect(match).not.toBeNull()
        const kept = match![1]!
        expect(text.startsWith(kept)).toBe(true)
        expect(utf8(kept)).toBeLessThanOrEqual(maxBytes)
        expect(utf8(kept) + Number(match![2])).toBe(utf8(text))
        // The cut is as late as it can be, and never splits a code point.
        const next = String.fromCodePoint(text.slice(kept.length).codePointAt(0)!)
        expect(utf8(kept) + utf8(next)).toBeGreaterThan(maxBytes)
      }),
      { numRuns: 300 }
    )
  })
})
