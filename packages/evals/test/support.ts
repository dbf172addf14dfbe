/**
 * The seed's support agent and scripted models for the eval tests: a careful one (looks the order
 * up, answers from the tool) and a careless one (guesses, no tool call).
 */
import { Agent, ReActCognition } from "@agentkit/agents"
import type { Chat } from "@agentkit/core"
import { Dataset } from "@agentkit/evals"
import { FakeLLM, makeTestCtx, Seed, Turn } from "@agentkit/testing"

export const agent = Agent.make({
  name: "support",
  model: Seed.MODEL,
  prompt: Seed.PROMPT,
  cognition: ReActCognition.make({ tools: [Seed.lookupOrder, Seed.cancelOrder] })
})

/** The order id the user asks about. */
const orderIn = (request: Chat.ChatRequest): string =>
  /[A-Z]-\d+/.exec(request.messages.find((m) => m.role === "user")?.content ?? "")?.[0] ?? "?"

/** Looks the order up, then answers from the tool's status line. */
export const careful = () =>
  FakeLLM.respond((request) => {
    const last = request.messages.at(-1)
    if (last?.role === "tool") return Turn({ content: `Here is what I found: ${last.content}.` })
    return Turn({ toolCalls: [{ id: "c1", name: "lookup_order", arguments: { order_id: orderIn(request) } }] })
  })

/** Guesses a status without calling a tool. */
export const careless = () =>
  FakeLLM.respond((request) => Turn({ content: `Order ${orderIn(request)} is probably on its way.` }))

export const dataset = Dataset.make<string, string>("order status", [
  { name: "A-771", input: "What happened to order A-771?", expected: "shipped", tools: ["lookup_order"], tags: ["a"] },
  { name: "B-9", input: "Where is B-9?", expected: "shipped", tools: ["lookup_order"], tags: ["b"] },
  { name: "C-3", input: "Status of C-3 please", expected: "shipped", tools: ["lookup_order"], tags: ["b"] }
])

export const layerWith = (model: () => FakeLLM.FakeLLM) => () => makeTestCtx({ llm: model() })
