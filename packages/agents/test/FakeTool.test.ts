import { Agent, ReActCognition } from "@agentkit/agents"
import { FakeLLM, FakeTool, makeTestCtx, Turn } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"

// The testing kit in the agent loop (here, not in @agentkit/testing, which does not depend on agents).
describe("FakeTool", () => {
  it.effect("in an agent loop: the model's calls are recorded and the responses reach the model", () =>
    Effect.gen(function*() {
      const search = FakeTool.make("search", { responses: ["hit one", "hit two"] })
      const agent = Agent.make({
        name: "searcher",
        model: "claude-sonnet-4-6",
        cognition: ReActCognition.make({ tools: [search] })
      })
      const llm = FakeLLM.script([
        Turn({ toolCalls: [{ id: "c1", name: "search", arguments: { q: "alpha" } }] }),
        Turn({ toolCalls: [{ id: "c2", name: "search", arguments: { q: "beta", limit: 3 } }] }),
        Turn({ content: "found both" })
      ])
      const result = yield* agent.run("find").pipe(Effect.provide(makeTestCtx({ llm })))
      expect(result.output).toBe("found both")
      expect(search.calls).toEqual([{ q: "alpha" }, { q: "beta", limit: 3 }])
      expect(llm.requests[2]!.messages.filter((message) => message.role === "tool").map((message) => message.content))
        .toEqual([
          "hit one",
          "hit two"
        ])
    }))
})
