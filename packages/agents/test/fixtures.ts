/**
 * What only the agents tests share: the seed's agent, built from the seed's world in
 * `@agentkit/testing`. (Not a test file: vitest only collects `*.test.ts`.)
 */
import { Agent, ReActCognition } from "@agentkit/agents"
import { Fixture, Seed } from "@agentkit/testing"
import { Effect } from "effect"

/** The seed's agent. */
export const support = Agent.make({
  name: "support",
  model: Seed.MODEL,
  prompt: Seed.PROMPT,
  cognition: ReActCognition.make({ tools: [Seed.lookupOrder, Seed.cancelOrder] })
})

/** A tool call literal: `call(id, name, args)`. */
export const call = Fixture.toolCall

/** A long-enough description for test-only tools. */
export const DESCRIPTION = "A test tool whose description is long enough to pass the rule."

/**
 * `Effect.never`, typed as a string result. A tool whose Success type is `never` (a handler that
 * only waits, only fails or only dies) is not assignable to `ToolRegistry.AnyTool`, so
 * `ReActCognition.make` rejects it at compile time: the tests give such handlers a string type.
 */
export const forever: Effect.Effect<string> = Effect.never
