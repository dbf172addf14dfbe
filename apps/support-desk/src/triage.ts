/**
 * `pnpm demo:triage`: typed answers and termination conditions, offline (scripted models).
 *
 * 1. **Structured output.** The `triage` agent classifies a customer message into a `Ticket`
 *    (`Agent.make({ output: Ticket })`); `result.parsed` is a `Ticket`, typed. Its first answer
 *    leaves out `urgent`, so it is repaired once (the model is told the decode error) and the
 *    second answer decodes. The scripted model declares a forced tool choice, as the Anthropic
 *    provider does, so the request forces the `structured_output` tool.
 * 2. **Termination.** The `escalation` agent looks an order up, then hands the case to a person by
 *    calling `escalate`; `Termination.functionCall("escalate")` stops the loop on that call
 *    without running it, and the app reads its arguments from the last message. A `maxTurns`
 *    ceiling bounds the loop either way.
 */
import { Agent, ReActCognition, Termination } from "@agentkit/agents"
import { Invoker, RunContext } from "@agentkit/core"
import type { ChatModel } from "@agentkit/core"
import { FakeLLM, Turn } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import { Effect, Layer, Schema } from "effect"
import { realpathSync } from "node:fs"
import { pathToFileURL } from "node:url"
import { orderTools, seedOrders } from "./orders.js"

/** What triage produces: the shape the backend stores. */
export const Ticket = Schema.Struct({
  category: Schema.Literal("shipping", "billing", "cancellation"),
  orderId: Schema.optional(Schema.String),
  urgent: Schema.Boolean
})
/** A triaged ticket. */
export type Ticket = typeof Ticket.Type

export const MESSAGE = "My order B-102 was charged twice, please fix this today!"

/** The triage agent: one call, a typed answer, at most two repairs. */
export const triage = Agent.make({
  name: "triage",
  model: "claude-sonnet-4-6",
  prompt: "Classify the customer's message into a support ticket.",
  output: Ticket,
  maxRepairs: 2
})

/** The triage model's script: an answer without `urgent`, then a whole one (as forced tool calls). */
export const triageModel = (): Layer.Layer<ChatModel> =>
  FakeLLM.script(
    [
      Turn({
        toolCalls: [{ id: "o1", name: "structured_output", arguments: { category: "billing", orderId: "B-102" } }]
      }),
      Turn({
        toolCalls: [{
          id: "o2",
          name: "structured_output",
          arguments: { category: "billing", orderId: "B-102", urgent: true }
        }]
      })
    ],
    { features: { toolChoice: true } }
  ).layer

/** Hands a case to a person. The loop stops on its call, so its handler never runs here. */
export const escalate = Tool.make("escalate", {
  description: "Hand the case to a human agent, with a one-line summary of what is needed.",
  parameters: { order_id: Schema.String, summary: Schema.String },
  sideEffecting: true,
  handler: () => Effect.dieMessage("escalate runs only in the app, after the loop stopped on it")
})

/** The escalation agent: a tool loop that ends on `escalate`, or after 4 turns. */
export const makeEscalation = () => {
  const { lookupOrder } = orderTools(seedOrders())
  return Agent.make({
    name: "escalation",
    model: "claude-sonnet-4-6",
    prompt: "Look the order up; if a person must act, call escalate.",
    cognition: ReActCognition.make({
      tools: [lookupOrder, escalate],
      termination: Termination.functionCall("escalate").pipe(Termination.or(Termination.maxTurns(4)))
    })
  })
}

/** The escalation model's script: look the order up, then escalate. */
export const escalationModel = (): Layer.Layer<ChatModel> =>
  FakeLLM.script([
    Turn({ toolCalls: [{ id: "c1", name: "lookup_order", arguments: { order_id: "B-102" } }] }),
    Turn({
      content: "This needs a refund, which I cannot do.",
      toolCalls: [{
        id: "c2",
        name: "escalate",
        arguments: { order_id: "B-102", summary: "refund the duplicate charge" }
      }]
    })
  ]).layer

/** Everything a run needs, over a chat model layer. */
const runtime = (model: Layer.Layer<ChatModel>) =>
  Layer.mergeAll(RunContext.layer({ correlationId: "support-desk-triage" }), Layer.provide(Invoker.layer(), model))

/** Runs both and returns the lines the demo prints. */
export const program = Effect.gen(function*() {
  const lines: Array<string> = []

  const triaged = yield* triage.run(MESSAGE).pipe(Effect.provide(runtime(triageModel())))
  const ticket: Ticket | undefined = triaged.parsed
  if (ticket === undefined) {
    lines.push(`triage failed (${triaged.stopReason}): ${triaged.error ?? ""}`)
  } else {
    lines.push(`ticket: ${ticket.category} for ${ticket.orderId ?? "no order"}${ticket.urgent ? ", urgent" : ""}`)
  }
  const repairs = triaged.transcript.filter((message) => message.role === "user").length - 1
  lines.push(`triage: ${repairs} repair, stop reason ${triaged.stopReason}`)

  const escalated = yield* makeEscalation().run("Order B-102 was charged twice.").pipe(
    Effect.provide(runtime(escalationModel()))
  )
  lines.push(`escalation stopped: ${escalated.stopReason}`)
  const last = escalated.transcript.at(-1)
  const call = last?.role === "assistant" ? last.toolCalls.find((c) => c.name === "escalate") : undefined
  if (call !== undefined) lines.push(`hand to a person: ${JSON.stringify(call.arguments)}`)
  return lines
})

const isMain = (() => {
  try {
    return process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href
  } catch {
    return false
  }
})()

if (isMain) {
  Effect.runPromise(program)
    .then((lines) => {
      for (const line of lines) console.log(line)
    })
    .catch((error: unknown) => {
      console.error(error)
      process.exitCode = 1
    })
}
