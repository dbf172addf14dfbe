/**
 * An agent that needs a capability its model lacks (by the model catalog) fails before any
 * request, with `CapabilityMismatch` naming the agent, the model and what is missing.
 */
import { Agent, AgentDefinitionError, ReActCognition } from "@agentkit/agents"
import { ModelCatalog } from "@agentkit/core"
import { FakeLLM, makeTestCtx, Seed, Turn } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"

const { lookupOrder, PROMPT, TASK } = Seed

const failure = <A, E>(self: Effect.Effect<A, E>) =>
  Effect.map(Effect.either(self), (result) => (Either.isLeft(result) ? result.left : undefined))

describe("Agent capabilities", () => {
  it.effect("an agent with tools on a model the catalog says has none: CapabilityMismatch, no request", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ content: "never" })])
      const agent = Agent.make({
        name: "support",
        model: "deepseek-reasoner",
        prompt: PROMPT,
        cognition: ReActCognition.make({ tools: [lookupOrder] })
      })
      const error = yield* failure(agent.run(TASK).pipe(Effect.provide(makeTestCtx({ llm }))))
      expect(error?._tag).toBe("CapabilityMismatch")
      expect(error?.message).toBe(
        "agent 'support' needs tools, which model 'deepseek-reasoner' lacks (by the model catalog)"
      )
      expect(llm.calls).toBe(0)
    }))

  it.effect("declared needs: checked against the catalog in context; an unknown model fails closed", () =>
    Effect.gen(function*() {
      const vision = (model: string) =>
        Agent.make({ name: "vision", model, prompt: PROMPT, requires: ["images", "structuredOutput"] })
      const llm = FakeLLM.script([Turn({ content: "a cat" })])
      const unknown = yield* failure(vision("llava").run(TASK).pipe(Effect.provide(makeTestCtx({ llm }))))
      expect(unknown?.message).toContain("model 'llava' is not in the model catalog")
      const lacking = yield* failure(vision("deepseek-chat").run(TASK).pipe(Effect.provide(makeTestCtx({ llm }))))
      expect(lacking?.message).toBe(
        "agent 'vision' needs images, which model 'deepseek-chat' lacks (by the model catalog)"
      )
      expect(llm.calls).toBe(0)
      const catalog = ModelCatalog.layer({
        llava: {
          provider: "ollama",
          contextWindow: 32_768,
          maxOutputTokens: 4096,
          prices: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
          capabilities: ["images", "structuredOutput"]
        }
      })
      const result = yield* vision("llava").run(TASK).pipe(
        Effect.provide(makeTestCtx({ llm })),
        Effect.provide(catalog)
      )
      expect(result.output).toBe("a cat")
    }))

  it("requires naming an unknown capability throws AgentDefinitionError, naming what is accepted", () => {
    expect(() => Agent.make({ name: "x", model: "m", requires: ["telepathy" as ModelCatalog.Capability] })).toThrow(
      new AgentDefinitionError({
        message: "Agent 'x': requires holds 'telepathy'; accepted: tools, images, structuredOutput, reasoning, caching"
      })
    )
  })

  it.effect("an agent with tools on a model the catalog does not know runs (tools are checked for known models)", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ content: "ok" })])
      const agent = Agent.make({
        name: "local",
        model: "llama3.2",
        cognition: ReActCognition.make({ tools: [lookupOrder] })
      })
      expect((yield* agent.run(TASK).pipe(Effect.provide(makeTestCtx({ llm })))).output).toBe("ok")
    }))

  it.effect("a model the catalog knows with the capability: the run proceeds", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([Turn({ content: "ok" })])
      const agent = Agent.make({
        name: "support",
        model: "gpt-4.1-mini",
        cognition: ReActCognition.make({ tools: [lookupOrder] }),
        requires: ["tools"]
      })
      expect((yield* agent.run(TASK).pipe(Effect.provide(makeTestCtx({ llm })))).output).toBe("ok")
    }))
})
