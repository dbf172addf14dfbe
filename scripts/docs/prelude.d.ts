/**
 * The free names of the doc examples: values an example uses without making them, because the
 * reader has them in hand (the seed page's support agent and its tools, a pending approval, a
 * task). Each is declared once here with the public type a reader would hold, so an example that
 * misuses one still fails to compile. Only add a name that several examples share; an example
 * that needs anything else makes it.
 *
 * scripts/check-docs.mjs type-checks every example in one program with this file.
 */
import type { Agent, AgentResult } from "@agentkit/agents"
import type { Tool } from "@agentkit/tools"
import type * as Schema from "effect/Schema"

declare global {
  /** The seed's support agent: ReAct over `lookupOrder` and `cancelOrder`. */
  const agent: Agent.Agent
  /** A sub-agent that `asTool` wraps. */
  const researcher: Agent.Agent
  /** The user's request. */
  const task: string
  /** A tool call of a suspended run that waits for a person's decision. */
  const pending: AgentResult.PendingCall
  /** The seed's `lookup_order` tool (read-only). */
  const lookupOrder: Tool.Tool<"lookup_order", { readonly order_id: typeof Schema.String }, string>
  /** The seed's `cancel_order` tool (side-effecting; `reason` defaults to "customer request"). */
  const cancelOrder: Tool.Tool<
    "cancel_order",
    {
      readonly order_id: typeof Schema.String
      readonly reason: Schema.optionalWith<typeof Schema.String, { default: () => string }>
    },
    string
  >
  /** The lethal trifecta's three tools: private data, untrusted content, egress. */
  const readInbox: Tool.Tool<"read_inbox", {}, string>
  const fetchUrl: Tool.Tool<"fetch_url", { readonly url: typeof Schema.String }, string>
  const sendEmail: Tool.Tool<
    "send_email",
    { readonly to: typeof Schema.String; readonly body: typeof Schema.String },
    string
  >
}

export {}
