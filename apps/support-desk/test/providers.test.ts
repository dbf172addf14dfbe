/**
 * The seed's program, unchanged, over each provider's wire emulator through the real SDK: the
 * first line is the emulator's scripted answer, the other two the seed's. And the model choice:
 * offline unless `AGENTKIT_MODEL` names a model; a provider key alone takes nothing online.
 */
import { AnthropicChatModel } from "@agentkit/anthropic"
import { ConfigurationError } from "@agentkit/core"
import type { ChatModel } from "@agentkit/core"
import { GoogleChatModel } from "@agentkit/google"
import { OpenAIChatModel } from "@agentkit/openai"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import * as AnthropicEmulator from "../../../packages/anthropic/test/emulator.js"
import * as GoogleEmulator from "../../../packages/google/test/emulator.js"
import * as OpenAIEmulator from "../../../packages/openai/test/emulator.js"
import { chooseModel } from "../src/model.js"
import { programOn, runtime } from "../src/program.js"

const SEED_LINES = [
  "lookup_order {\"type\":\"object\",\"properties\":{\"order_id\":{\"type\":\"string\"}},\"required\":[\"order_id\"]}",
  "rejected: tool 'cancel_order' call rejected: unexpected argument(s) ['order']; missing required argument(s) ['order_id']. Accepted arguments: ['order_id', 'reason']"
]
const lookup = { id: "call_seed_1", name: "lookup_order", fragments: ["{\"order_id\":", "\"A-771\"}"] }

const runSeed = (model: string, layer: Layer.Layer<ChatModel, ConfigurationError>) =>
  programOn(model).pipe(Effect.provide(runtime(layer)))

/** The tool result the loop sent back in the second request, whatever the wire. */
const secondRequestText = (body: unknown) => JSON.stringify(body)

describe("the seed's program over each provider's emulator", () => {
  it.scopedLive("Anthropic Messages", () =>
    Effect.gen(function*() {
      const answer = "Anthropic emulator: A-771 shipped on 14 August."
      const emu = yield* AnthropicEmulator.emulator([
        AnthropicEmulator.sse({
          blocks: [{ toolUse: { id: lookup.id, name: lookup.name, json: lookup.fragments } }],
          stopReason: "tool_use"
        }),
        AnthropicEmulator.sse({
          blocks: [{ text: ["Anthropic emulator: ", "A-771 shipped on 14 August."] }],
          stopReason: "end_turn"
        })
      ])
      const lines = yield* runSeed("claude-sonnet-4-6", AnthropicChatModel.layer({ apiKey: "k", baseURL: emu.url }))
      expect(lines).toEqual([answer, ...SEED_LINES])
      expect(secondRequestText(emu.requests[1]!.body)).toContain("order A-771: shipped")
    }))

  for (const api of ["responses", "chat"] as const) {
    it.scopedLive(`OpenAI ${api === "responses" ? "Responses" : "Chat Completions"}`, () =>
      Effect.gen(function*() {
        const answer = `OpenAI ${api} emulator: A-771 shipped on 14 August.`
        const frames = api === "responses" ? OpenAIEmulator.responsesFrames : OpenAIEmulator.chatFrames
        const emu = yield* OpenAIEmulator.emulator([
          { _tag: "sse", frames: frames({ text: [], calls: [lookup] }) },
          {
            _tag: "sse",
            frames: frames({ text: [`OpenAI ${api} emulator: `, "A-771 shipped on 14 August."], calls: [] })
          }
        ])
        const lines = yield* runSeed("gpt-4.1-mini", OpenAIChatModel.layer({ apiKey: "k", baseURL: emu.url, api }))
        expect(lines).toEqual([answer, ...SEED_LINES])
        expect(secondRequestText(emu.requests[1]!.body)).toContain("order A-771: shipped")
      }))
  }

  it.scopedLive("Gemini", () =>
    Effect.gen(function*() {
      const answer = "Gemini emulator: A-771 shipped on 14 August."
      const emu = yield* GoogleEmulator.emulator([
        {
          _tag: "sse",
          chunks: GoogleEmulator.answerChunks({
            text: [],
            calls: [{ id: lookup.id, name: lookup.name, args: { order_id: "A-771" } }]
          })
        },
        {
          _tag: "sse",
          chunks: GoogleEmulator.answerChunks({ text: ["Gemini emulator: ", "A-771 shipped on 14 August."], calls: [] })
        }
      ])
      const lines = yield* runSeed("gemini-2.5-flash", GoogleChatModel.layer({ apiKey: "k", baseURL: emu.url }))
      expect(lines).toEqual([answer, ...SEED_LINES])
      expect(secondRequestText(emu.requests[1]!.body)).toContain("order A-771: shipped")
    }))

  it.scopedLive("an Ollama-compatible server, chosen by AGENTKIT_MODEL=ollama:llama3.2 at OLLAMA_BASE_URL", () =>
    Effect.gen(function*() {
      const answer = "Ollama emulator: A-771 shipped on 14 August."
      const emu = yield* OpenAIEmulator.emulator([
        { _tag: "sse", frames: OpenAIEmulator.chatFrames({ style: "ollama", text: [], calls: [lookup] }) },
        { _tag: "sse", frames: OpenAIEmulator.chatFrames({ style: "ollama", text: [answer], calls: [] }) }
      ])
      const chosen = yield* chooseModel.pipe(
        Effect.withConfigProvider(
          ConfigProvider.fromMap(new Map([["AGENTKIT_MODEL", "ollama:llama3.2"], ["OLLAMA_BASE_URL", emu.url]]))
        )
      )
      expect([chosen.model, chosen.online]).toEqual(["llama3.2", true])
      expect(yield* runSeed(chosen.model, chosen.layer)).toEqual([answer, ...SEED_LINES])
      expect(emu.requests.map((r) => [r.path, r.body["model"]])).toEqual([
        ["/v1/chat/completions", "llama3.2"],
        ["/v1/chat/completions", "llama3.2"]
      ])
    }))
})

describe("chooseModel", () => {
  const withEnv = (entries: ReadonlyArray<[string, string]>) =>
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(entries)))

  it.effect("provider keys alone take nothing online: the scripted model plays the seed", () =>
    Effect.gen(function*() {
      const chosen = yield* chooseModel.pipe(
        withEnv([["ANTHROPIC_API_KEY", "sk-ant-real"], ["OPENAI_API_KEY", "sk-real"], ["GEMINI_API_KEY", "g"]])
      )
      expect(chosen.online).toBe(false)
      const lines = yield* runSeed(chosen.model, chosen.layer)
      expect(lines).toEqual(["Order A-771 shipped on 14 August and arrives Tuesday.", ...SEED_LINES])
    }))

  it.effect("AGENTKIT_MODEL names the provider and the model; the key comes from the vendor's variable", () =>
    Effect.gen(function*() {
      const chosen = yield* chooseModel.pipe(withEnv([["AGENTKIT_MODEL", "openai:gpt-4.1-mini"]]))
      expect([chosen.model, chosen.online]).toEqual(["gpt-4.1-mini", true])
      const noKey = yield* Effect.flip(Layer.build(chosen.layer).pipe(Effect.scoped, withEnv([])))
      expect(noKey.message).toContain("OPENAI_API_KEY")
      yield* Layer.build(chosen.layer).pipe(Effect.scoped, withEnv([["OPENAI_API_KEY", "sk-test"]]))
      const claude = yield* chooseModel.pipe(withEnv([["AGENTKIT_MODEL", "anthropic:claude-haiku-4-5"]]))
      expect(claude.model).toBe("claude-haiku-4-5")
    }))

  it.effect("a malformed AGENTKIT_MODEL or an unknown provider: ConfigurationError naming what is accepted", () =>
    Effect.gen(function*() {
      for (const value of ["gpt-4.1-mini", "azure:gpt-4o", "openai:"]) {
        const error = yield* Effect.flip(chooseModel.pipe(withEnv([["AGENTKIT_MODEL", value]])))
        expect(error).toBeInstanceOf(ConfigurationError)
        expect(error.message).toBe(
          `AGENTKIT_MODEL must be provider:model with provider one of anthropic, openai, google, ollama (e.g. openai:gpt-4.1-mini); got '${value}'`
        )
      }
    }))
})
