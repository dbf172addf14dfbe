import { ReActCognition } from "@agentkit/agents"
import { Tool } from "@agentkit/tools"
import { it } from "@effect/vitest"
import { Effect, Schema } from "effect"

it("x", () => {
  const failing = Tool.make("failing", {
    description: "A tool that always fails, for checking the registry accepts it.",
    parameters: { q: Schema.String },
    sideEffecting: false,
    handler: () => Effect.fail("nope" as const)
  })
  ReActCognition.make({ tools: [failing] })
})
