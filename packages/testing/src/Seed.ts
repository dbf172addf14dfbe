/**
 * The seed page's world ("How do I give an agent a tool?"): its model, prompt, question and
 * answer, and its two tools, `lookup_order` (read-only, idempotent) and `cancel_order`
 * (side-effecting), exactly as the page defines them. Tests of every package use the same ones.
 *
 * @since 0.1.0
 */
import type { ToolCall } from "@agentkit/core"
import { Tool } from "@agentkit/tools"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/**
 * The seed's model.
 *
 * @example
 * ```ts
 * import { Seed } from "@agentkit/testing"
 *
 * Seed.MODEL // "claude-sonnet-4-6"
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const MODEL = "claude-sonnet-4-6"

/**
 * The seed's system prompt.
 *
 * @example
 * ```ts
 * import { Seed } from "@agentkit/testing"
 *
 * Seed.PROMPT.startsWith("Answer order questions") // true
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const PROMPT = "Answer order questions. Use the tools; never guess a status."

/**
 * The seed's question.
 *
 * @example
 * ```ts
 * import { Seed } from "@agentkit/testing"
 *
 * Seed.TASK // "What happened to order A-771?"
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const TASK = "What happened to order A-771?"

/**
 * The seed's answer.
 *
 * @example
 * ```ts
 * import { Seed } from "@agentkit/testing"
 *
 * Seed.ANSWER // "Order A-771 shipped on 14 August and arrives Tuesday."
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const ANSWER = "Order A-771 shipped on 14 August and arrives Tuesday."

/**
 * What `lookup_order` answers for A-771.
 *
 * @example
 * ```ts
 * import { Seed } from "@agentkit/testing"
 *
 * Seed.STATUS // "order A-771: shipped 2026-08-14, arriving Tuesday"
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const STATUS = "order A-771: shipped 2026-08-14, arriving Tuesday"

/**
 * The seed's read-only tool.
 *
 * @example
 * ```ts
 * import { Seed } from "@agentkit/testing"
 *
 * Seed.lookupOrder.idempotent // true
 * ```
 *
 * @since 0.1.0
 * @category testing
 */
export const lookupOrder = Tool.make("lookup_order", {
  description:
    "Look up an order by its id and return its status line.\n\nUse this whenever the user mentions an order number.",
  parameters: { order_id: Schema.String },
  sideEffecting: false,
  idempotent: true,
  handler: ({ order_id }) => Effect.succeed(`order ${order_id}: shipped 2026-08-14, arriving Tuesday`)
})

/**
 * The seed's side-effecting tool.
 *
 * @example
 * ```ts
 * import { Seed } from "@agentkit/testing"
 *
 * Seed.cancelOrder.sideEffecting // true
 * ```
 *
 * @since 0.1.0
 * @category testing
 */
export const cancelOrder = Tool.make("cancel_order", {
  description:
    "Cancel an order. This really cancels it — there is no undo.\n\nOnly call it after the user has confirmed the order id.",
  parameters: {
    order_id: Schema.String,
    reason: Schema.String.pipe(Schema.optionalWith({ default: () => "customer request" }))
  },
  sideEffecting: true,
  handler: ({ order_id, reason }) => `order ${order_id} cancelled (${reason})`
})

/**
 * The model's `lookup_order` call of the seed.
 *
 * @example
 * ```ts
 * import { Seed } from "@agentkit/testing"
 *
 * Seed.lookupCall() // { id: "c1", name: "lookup_order", arguments: { order_id: "A-771" } }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const lookupCall = (id = "c1", orderId = "A-771"): ToolCall.ToolCall => ({
  id,
  name: "lookup_order",
  arguments: { order_id: orderId }
})
