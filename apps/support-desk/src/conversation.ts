/**
 * The demo's conversation: the customer's request, the scripted model, the support agent over an
 * order book, what a run is given, and how a pending call is shown to a person. Shared by the
 * terminal flow (`approvals.ts`) and the durable one (`durable.ts`).
 */
import { Agent, ReActCognition } from "@agentkit/agents"
import type { AgentResult } from "@agentkit/agents"
import { Invoker, RunContext } from "@agentkit/core"
import type { ChatModel } from "@agentkit/core"
import { FakeLLM, Turn } from "@agentkit/testing"
import { Layer } from "effect"
import { orderTools } from "./orders.js"
import type { OrderBook } from "./orders.js"

/** The lines that show a person what they are asked to approve. */
export const describePending = (agent: string, pending: AgentResult.PendingCall): ReadonlyArray<string> => [
  `approval needed: ${agent} wants to run ${pending.call.name}`,
  `  arguments: ${JSON.stringify(pending.call.arguments)}`,
  `  digest:    ${pending.digest}`
]

/** The customer's message. */
export const REQUEST = "Hi, I ordered B-102 twice by mistake. Please cancel it."

const CANCEL = { id: "c1", name: "cancel_order", arguments: { order_id: "B-102", reason: "duplicate order" } }

/**
 * The scripted model: it asks to cancel B-102, then answers from what the tool call returned
 * (the cancellation, or the rejection and its reason). It reads the conversation, not a call
 * counter, so a run resumed in another process gets the same answers.
 */
export const scriptedModel = (): Layer.Layer<ChatModel> =>
  FakeLLM.respond((request) => {
    const result = request.messages.at(-1)
    if (result?.role !== "tool") return Turn({ content: "I'll cancel order B-102 for you.", toolCalls: [CANCEL] })
    if (!result.isError) return Turn({ content: `Done: ${result.content}. Anything else?` })
    const why = result.content.replace(/^DENIED: tool call rejected by human approval:? ?/, "")
    return Turn({
      content: `I have not cancelled order B-102: the cancellation was not approved${
        why === "" ? "" : ` (${why})`
      }. It is still active.`
    })
  }).layer

/** The support agent's system prompt. */
export const PROMPT =
  "Answer order questions. Use the tools; never guess a status. Cancel only what the customer asks to cancel."

/** The demo's support agent over an order book (its prompt can be swapped, to test a change of it). */
export const supportAgent = (book: OrderBook, prompt: string = PROMPT) => {
  const { cancelOrder, lookupOrder } = orderTools(book)
  return Agent.make({
    name: "support",
    model: "claude-sonnet-4-6",
    prompt,
    cognition: ReActCognition.make({ tools: [lookupOrder, cancelOrder] })
  })
}

/** The Invoker over the model (the scripted one by default), with the pipelines' middleware, if any. */
export const invokerLayer = (model: Layer.Layer<ChatModel> = scriptedModel(), pipelines: Invoker.Options = {}) =>
  Layer.provide(Invoker.layer(pipelines), model)

/** What a run of the demo is given: its id, `gated` autonomy, the Invoker over the model. */
export const runLayer = (
  runId: string,
  model: Layer.Layer<ChatModel> = scriptedModel(),
  pipelines: Invoker.Options = {}
) => Layer.merge(RunContext.layer({ runId, autonomy: "gated" }), invokerLayer(model, pipelines))
