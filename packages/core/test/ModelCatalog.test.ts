/**
 * The model catalog: lookups (dated, routed, cased ids), exact prices, user entries over the
 * defaults (checked), the capability check that fails before any request.
 */
import { ModelCatalog } from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option } from "effect"

const tokens = { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 2000, cacheWriteTokens: 100 }

const local: ModelCatalog.Entry = {
  provider: "ollama",
  contextWindow: 131_072,
  maxOutputTokens: 8192,
  prices: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  capabilities: ["tools"]
}

describe("ModelCatalog", () => {
  it("finds dated, routed and cased ids; never guesses an unknown one", () => {
    const sonnet = ModelCatalog.defaults["claude-sonnet-4-6"]
    for (const id of ["claude-sonnet-4-6", "Claude-Sonnet-4-6", "anthropic/claude-sonnet-4-6-20260115"]) {
      expect(ModelCatalog.standard.lookup(id)).toEqual(Option.some(sonnet))
    }
    expect(ModelCatalog.standard.lookup("gpt-4.1-mini-2025-04-14")).toEqual(
      Option.some(ModelCatalog.defaults["gpt-4.1-mini"])
    )
    for (const id of ["", "claude-sonnet-5", "constructor", "__proto__"]) {
      expect(Option.isNone(ModelCatalog.standard.lookup(id))).toBe(true)
    }
  })

  it("prices to the nano-dollar: sonnet 1000 in / 500 out / 2000 cache read / 100 cache write", () => {
    expect(ModelCatalog.standard.cost("claude-sonnet-4-6", tokens)).toEqual(Option.some(0.011475))
    // gpt-4.1-mini: 1000 × 0.4 + 500 × 1.6 + 2000 × 0.1 per million
    expect(ModelCatalog.standard.cost("gpt-4.1-mini", { ...tokens, cacheWriteTokens: 0 })).toEqual(Option.some(0.0014))
    expect(Option.isNone(ModelCatalog.standard.cost("my-model", tokens))).toBe(true)
  })

  it("user entries add models and override defaults; bad entries are refused by name", () => {
    const cheaper = {
      ...ModelCatalog.defaults["gpt-4o"]!,
      prices: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 }
    }
    const catalog = ModelCatalog.make({ "llama3.2": local, "gpt-4o": cheaper })
    expect(catalog.lookup("llama3.2")).toEqual(Option.some(local))
    expect(catalog.cost("gpt-4o", { ...tokens, cacheReadTokens: 0 })).toEqual(Option.some(0.0015))
    expect(catalog.lookup("claude-sonnet-4-6")).toEqual(Option.some(ModelCatalog.defaults["claude-sonnet-4-6"]))
    expect(() => ModelCatalog.make({ x: { ...local, contextWindow: 0 } })).toThrow(
      "ModelCatalog: entry 'x': contextWindow must be a positive integer; got 0"
    )
    expect(() => ModelCatalog.make({ x: { ...local, prices: { ...local.prices, output: -1 } } })).toThrow(
      "prices.output must be a finite number >= 0"
    )
    expect(() => ModelCatalog.make({ x: { ...local, capabilities: ["telepathy" as ModelCatalog.Capability] } }))
      .toThrow("capabilities must be some of tools, images, structuredOutput, reasoning, caching; got telepathy")
  })

  it.effect("requireCapabilities: names the agent, the model and what it lacks; the layer's entries count", () =>
    Effect.gen(function*() {
      const lacking = yield* Effect.either(
        ModelCatalog.requireCapabilities("support", "deepseek-reasoner", ["tools", "reasoning", "images"])
      )
      expect(Either.isLeft(lacking) && lacking.left.message).toBe(
        "agent 'support' needs tools, images, which model 'deepseek-reasoner' lacks (by the model catalog)"
      )
      const unknown = yield* Effect.either(ModelCatalog.requireCapabilities("support", "llama3.2", ["tools"]))
      expect(Either.isLeft(unknown) && unknown.left.unknownModel).toBe(true)
      yield* ModelCatalog.requireCapabilities("support", "llama3.2", ["tools"], { unknownModel: "pass" })
      yield* ModelCatalog.requireCapabilities("support", "llama3.2", ["tools"]).pipe(
        Effect.provide(ModelCatalog.layer({ "llama3.2": local }))
      )
      const images = yield* Effect.either(
        ModelCatalog.requireCapabilities("support", "llama3.2", ["images"]).pipe(
          Effect.provide(ModelCatalog.layer({ "llama3.2": local }))
        )
      )
      expect(Either.isLeft(images) && images.left.missing).toEqual(["images"])
    }))
})
