import { ProviderConfig } from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Redacted } from "effect"

const env = (entries: Record<string, string>) =>
  Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(entries))))
const options = { layer: "GoogleChatModel", variables: ["GEMINI_API_KEY", "GOOGLE_API_KEY"] as const, given: undefined }

describe("ProviderConfig", () => {
  it.effect("takes the given key over the environment, else the first variable present", () =>
    Effect.gen(function*() {
      const given = yield* ProviderConfig.apiKey({ ...options, given: "k-given" }).pipe(
        env({ GEMINI_API_KEY: "k-env" })
      )
      expect(Redacted.value(given)).toBe("k-given")
      const second = yield* ProviderConfig.apiKey(options).pipe(env({ GOOGLE_API_KEY: "k-google" }))
      expect(Redacted.value(second)).toBe("k-google")
      const first = yield* ProviderConfig.apiKey(options).pipe(env({ GEMINI_API_KEY: "k-1", GOOGLE_API_KEY: "k-2" }))
      expect(Redacted.value(first)).toBe("k-1")
    }))

  it.effect("a missing or blank key fails naming the option and the variable", () =>
    Effect.gen(function*() {
      for (const entries of [{}, { GEMINI_API_KEY: "  " }]) {
        const error = yield* Effect.flip(ProviderConfig.apiKey(options).pipe(env(entries)))
        expect(error.field).toBe("apiKey")
        expect(error.message).toBe(
          "GoogleChatModel: no API key: pass { apiKey } to GoogleChatModel.layer or set the GEMINI_API_KEY environment variable"
        )
      }
    }))

  it.effect("integer options are checked against their minimum", () =>
    Effect.gen(function*() {
      yield* ProviderConfig.integer("OpenAIChatModel", "maxTokens", undefined, 1)
      yield* ProviderConfig.integer("OpenAIChatModel", "maxTokens", 1, 1)
      for (const bad of [0, 1.5, Number.NaN]) {
        const error = yield* Effect.flip(ProviderConfig.integer("OpenAIChatModel", "maxTokens", bad, 1))
        expect(error.message).toBe(`OpenAIChatModel: maxTokens must be an integer >= 1; got ${String(bad)}`)
      }
    }))
})
