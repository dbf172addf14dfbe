/** Our client against our server over stdio: the runnable example, as a test (it needs the built packages). */
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { OrdersLive, program } from "../examples/client.js"

it.live("an agent calls an agentkit tool served over MCP on stdio", () =>
  Effect.gen(function*() {
    const { answer, toolResult } = yield* program.pipe(Effect.provide(OrdersLive))
    expect(toolResult).toBe("order A-771: shipped 2026-08-14, arriving Tuesday")
    expect(answer).toBe("Order A-771 shipped on 2026-08-14 and arrives Tuesday.")
  }), 120_000)
