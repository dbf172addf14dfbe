/**
 * The seed page's "Working code", in this API. It returns the three lines the seed prints.
 */
import { Agent, Agents, ReActCognition } from "@agentkit/agents"
import type { ChatModel } from "@agentkit/core"
import { RunContext, ToolArgumentError } from "@agentkit/core"
import { FakeLLM, Turn } from "@agentkit/testing"
import { Effect, Layer } from "effect"
import { orderTools, seedOrders } from "./orders.js"

/** The scripted two-turn model of the seed: no API key needed. */
export const scriptedModel = (): Layer.Layer<ChatModel> =>
  FakeLLM.script([
    Turn({ toolCalls: [{ id: "c1", name: "lookup_order", arguments: { order_id: "A-771" } }] }),
    Turn({ content: "Order A-771 shipped on 14 August and arrives Tuesday." })
  ]).layer

/** The model the seed names, and the one the demo runs offline (the scripted model ignores it). */
export const defaultModel = "claude-sonnet-4-6"

/** The support agent over the demo's order book, on `model`. */
export const makeSupport = (model: string = defaultModel) => {
  const tools = orderTools(seedOrders())
  const agent = Agent.make({
    name: "support",
    model,
    prompt: "Answer order questions. Use the tools; never guess a status.",
    cognition: ReActCognition.make({ tools: [tools.lookupOrder, tools.cancelOrder] })
  })
  return { agent, ...tools }
}

/** Runs the seed program on `model` and returns its three output lines. */
export const programOn = (model: string) =>
  Effect.gen(function*() {
    const { agent, cancelOrder, lookupOrder } = makeSupport(model)
    const lines: Array<string> = []

    const result = yield* Agents.run(agent, "What happened to order A-771?")
    lines.push(result.output)

    // This is exactly what the model is shown for the tool:
    lines.push(`${lookupOrder.schema.name} ${JSON.stringify(lookupOrder.schema.parameters)}`)

    // A call the model got wrong is rejected BY NAME, not silently dropped.
    // (a tool run directly reads a run context too: a fresh one, as the agent's calls get)
    const rejected = yield* Effect.flip(cancelOrder.run({ order: "A-771" }).pipe(RunContext.provide()))
    if (rejected instanceof ToolArgumentError) lines.push(`rejected: ${rejected.message}`)
    return lines
  })

/** The seed program on the seed's model. */
export const program = programOn(defaultModel)

/** Everything the program needs, over a chat model layer: the agents service, built once. */
export const runtime = <E>(model: Layer.Layer<ChatModel, E>) => Agents.layer().pipe(Layer.provide(model))
