/**
 * The billing agent every process of the example shares: a ReAct agent with one side-effecting,
 * non-idempotent tool (`charge_card`), run with autonomy `gated` so each charge waits for an
 * operator. The model is scripted (offline): it asks for the charge, then answers.
 */
import { Agent, ReActCognition } from "@agentkit/agents"
import { DurableAgent } from "@agentkit/durable"
import { SqlStores } from "@agentkit/sql"
import { FakeLLM, Turn } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import { Effect, Redacted, Schema } from "effect"

export const chargeCard = Tool.make("charge_card", {
  description: "Charge the customer's card the given amount in cents; this is not idempotent.",
  parameters: { customer: Schema.String, cents: Schema.Int },
  sideEffecting: true,
  handler: ({ cents, customer }) => Effect.as(Effect.sleep("200 millis"), `charged ${customer} ${cents} cents`)
})

/** The scripted model: charge 1200 cents to the customer named in the request, then confirm. */
export const model = FakeLLM.respond((request) => {
  const user = request.messages.find((m) => m.role === "user")
  const customer = user?.role === "user" ? (/customer (\S+)/.exec(user.content)?.[1] ?? "unknown") : "unknown"
  const result = [...request.messages].reverse().find((m) => m.role === "tool")
  return result === undefined
    ? Turn({ toolCalls: [{ id: `charge-${customer}`, name: "charge_card", arguments: { customer, cents: 1200 } }] })
    : Turn({ content: `Done: ${result.role === "tool" ? result.content : ""}` })
})

export const billing = DurableAgent.make(
  Agent.make({
    name: "billing",
    model: "scripted",
    prompt: "Bill the customer.",
    cognition: ReActCognition.make({ tools: [chargeCard] })
  }),
  { version: 1, approvalTimeout: "2 days" }
)

/** The stores on the Postgres database named by DATABASE_URL. */
export const stores = () => {
  const url = process.env["DATABASE_URL"]
  if (url === undefined || url === "") throw new Error("DATABASE_URL must name a Postgres database")
  return SqlStores.layerPg({ url: Redacted.make(url) })
}
