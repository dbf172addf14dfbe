import { Pricing } from "@agentkit/anthropic"
import { describe, expect, it } from "@effect/vitest"
import * as Option from "effect/Option"

const tokens = { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 2000, cacheWriteTokens: 100 }

describe("Pricing", () => {
  it("the spec's test value: sonnet, 1000 in / 500 out / 2000 cache read / 100 cache write", () => {
    expect(Pricing.cost("claude-sonnet-4-6", tokens)).toEqual(Option.some(0.011475))
  })

  it("resolves dated ids, provider prefixes and case", () => {
    const sonnet = Pricing.defaultTable["claude-sonnet-4-6"]
    for (
      const name of [
        "claude-sonnet-4-6",
        "Claude-Sonnet-4-6",
        "claude-sonnet-4-6-20260115",
        "claude-sonnet-4-6-2026-01-15",
        "anthropic/claude-sonnet-4-6",
        "anthropic/claude-sonnet-4-6-20260115"
      ]
    ) {
      expect(Pricing.lookup(name)).toEqual(Option.some(sonnet))
    }
    expect(Pricing.lookup("claude-haiku-4-5-20251001")).toEqual(Option.some(Pricing.defaultTable["claude-haiku-4-5"]))
  })

  it("unknown or empty models have no price (never guessed)", () => {
    expect(Option.isNone(Pricing.lookup(""))).toBe(true)
    expect(Option.isNone(Pricing.lookup("claude-sonnet-5"))).toBe(true)
    expect(Option.isNone(Pricing.lookup("constructor"))).toBe(true)
    expect(Option.isNone(Pricing.cost("claude-mystery", tokens))).toBe(true)
  })

  it("a custom table is used as given", () => {
    const table: Pricing.Table = {
      ...Pricing.defaultTable,
      "claude-next": { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 }
    }
    expect(Pricing.cost("claude-next-20270101", { ...tokens, cacheReadTokens: 0, cacheWriteTokens: 0 }, table)).toEqual(
      Option.some(0.002)
    )
  })

  it("costs are kept to the nano-dollar (issue 11: exact money; no rounding to 6 places)", () => {
    const rates: Pricing.Rates = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }
    expect(Pricing.costOf(rates, { inputTokens: 1, outputTokens: 1, cacheReadTokens: 1, cacheWriteTokens: 1 })).toBe(
      0.00002205
    )
    expect(Pricing.costOf(rates, { inputTokens: 0, outputTokens: 0, cacheReadTokens: 1, cacheWriteTokens: 0 })).toBe(
      0.0000003
    )
  })
})
