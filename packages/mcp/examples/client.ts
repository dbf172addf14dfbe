/**
 * An agent using an MCP server's tools beside its own. It starts `server.ts` (beside this file) over
 * stdio and runs offline with a scripted model. Run: `node --import tsx packages/mcp/examples/client.ts`
 */
import { Agent, ReActCognition } from "@agentkit/agents"
import { McpToolset, McpTransport } from "@agentkit/mcp"
import { FakeLLM, makeTestCtx, Turn } from "@agentkit/testing"
import { Effect } from "effect"
import { fileURLToPath } from "node:url"

class Orders extends McpToolset.Tag("orders")<Orders>() {}

export const OrdersLive = McpToolset.layer(Orders, {
  name: "orders",
  transport: McpTransport.stdio({
    command: process.execPath,
    args: ["--import", "tsx", fileURLToPath(new URL("./server.ts", import.meta.url))],
    stderr: "ignore"
  }),
  // we run this server ourselves: trust its annotations and descriptions
  trust: { server: { trustAnnotations: true, trustDescriptions: true } }
})

export const program = Effect.gen(function*() {
  const orders = yield* Orders
  const agent = Agent.make({
    name: "support",
    model: "claude-sonnet-4-6",
    prompt: "Answer order questions. Use the tools; never guess a status.",
    cognition: ReActCognition.make({ tools: orders.tools() }) // the snapshot current now
  })
  const llm = FakeLLM.script([
    Turn({ toolCalls: [{ id: "c1", name: "mcp__orders__lookup_order", arguments: { order_id: "A-771" } }] }),
    Turn({ content: "Order A-771 shipped on 2026-08-14 and arrives Tuesday." })
  ])
  const result = yield* agent.run("What happened to order A-771?").pipe(Effect.provide(makeTestCtx({ llm })))
  const tool = result.transcript.find((message) => message.role === "tool")
  return { toolResult: tool?.role === "tool" ? tool.content : undefined, answer: result.output }
})

if (process.argv[1]?.endsWith("client.ts") === true) {
  Effect.runPromise(program.pipe(Effect.provide(OrdersLive))).then(
    ({ answer, toolResult }) => console.log(`${toolResult}\n${answer}`),
    (error) => {
      console.error(error)
      process.exit(1)
    }
  )
}
