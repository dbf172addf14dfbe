/**
 * agentkit tools served over MCP on stdio. Run: `node --import tsx packages/mcp/examples/server.ts`
 * (an MCP host spawns it; stdout is the protocol channel, so nothing else is printed there).
 */
import { Invoker } from "@agentkit/core"
import { McpServer } from "@agentkit/mcp"
import { FakeLLM } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import { Effect, Layer, Schema } from "effect"

export const lookupOrder = Tool.make("lookup_order", {
  description: "Look up an order by its id and return its status line.",
  parameters: { order_id: Schema.String },
  sideEffecting: false,
  idempotent: true,
  handler: ({ order_id }) => `order ${order_id}: shipped 2026-08-14, arriving Tuesday`
})

export const cancelOrder = Tool.make("cancel_order", {
  description: "Cancel an order by its id. Cancelling cannot be undone.",
  parameters: { order_id: Schema.String },
  sideEffecting: true,
  requiresApproval: true,
  handler: ({ order_id }) => `order ${order_id} cancelled`
})

// The server's own pipeline: every call goes through this Invoker's tool middleware (none here).
// No model is called on the server side, so an empty scripted model stands in for one.
const ServerLive = Layer.provideMerge(Invoker.layer(), FakeLLM.script([]).layer)

const main = Effect.scoped(
  Effect.zipRight(McpServer.stdio({ name: "orders", tools: [lookupOrder, cancelOrder] }), Effect.never)
)

if (process.argv[1]?.endsWith("server.ts") === true) Effect.runFork(main.pipe(Effect.provide(ServerLive)))
