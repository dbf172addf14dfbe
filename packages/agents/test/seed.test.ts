/**
 * The seed page's "Working code", as a test: the three things it prints, in this API.
 */
import { Agent, Agents, ReActCognition } from "@agentkit/agents"
import { RunContext, ToolArgumentError } from "@agentkit/core"
import { FakeLLM, makeTestCtx, Seed, Turn } from "@agentkit/testing"
import { describe, expect, it, vi } from "@effect/vitest"
import { Console, Effect, Layer } from "effect"

const { ANSWER, cancelOrder, lookupOrder, MODEL, PROMPT, STATUS, TASK } = Seed

describe("seed working code", () => {
  it.effect("prints the answer, the advertised schema and the rejection, offline", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([
        Turn({ toolCalls: [{ id: "c1", name: "lookup_order", arguments: { order_id: "A-771" } }] }),
        Turn({ content: "Order A-771 shipped on 14 August and arrives Tuesday." })
      ])
      const ctx = makeTestCtx({ llm })
      const agent = Agent.make({
        name: "support",
        model: "claude-sonnet-4-6",
        prompt: "Answer order questions. Use the tools; never guess a status.",
        cognition: ReActCognition.make({ tools: [lookupOrder, cancelOrder] })
      })

      // print((await agent.run("What happened to order A-771?", ctx)).output)
      const result = yield* agent.run("What happened to order A-771?").pipe(Effect.provide(ctx))
      expect(result.output).toBe("Order A-771 shipped on 14 August and arrives Tuesday.")
      expect(result.partial).toBe(false)
      expect(llm.calls).toBe(2)
      llm.assertConsumed()

      // the loop really ran the tool and handed its text back
      expect(llm.requests[1]!.messages.at(-1)).toEqual({
        role: "tool",
        toolCallId: "c1",
        name: "lookup_order",
        content: "order A-771: shipped 2026-08-14, arriving Tuesday",
        isError: false
      })

      // print(lookup_order.schema.name, lookup_order.schema.parameters)
      expect(`${lookupOrder.schema.name} ${JSON.stringify(lookupOrder.schema.parameters)}`).toBe(
        "lookup_order {\"type\":\"object\",\"properties\":{\"order_id\":{\"type\":\"string\"}},\"required\":[\"order_id\"]}"
      )

      // cancel_order.run({"order": "A-771"}, ctx) is rejected BY NAME
      const error = yield* Effect.flip(cancelOrder.run({ order: "A-771" }).pipe(Effect.provide(ctx)))
      expect(error).toBeInstanceOf(ToolArgumentError)
      expect(`rejected: ${error.message}`).toBe(
        "rejected: tool 'cancel_order' call rejected: unexpected argument(s) ['order']; missing required argument(s) ['order_id']. Accepted arguments: ['order_id', 'reason']"
      )
      // the model was not called for the rejected direct run
      expect(llm.calls).toBe(2)
    }))

  it.effect("the first request is the seed's prompt, the task, and both tools, sorted", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([
        Turn({ toolCalls: [{ id: "c1", name: "lookup_order", arguments: { order_id: "A-771" } }] }),
        Turn({ content: ANSWER })
      ])
      const agent = Agent.make({
        name: "support",
        model: MODEL,
        prompt: PROMPT,
        cognition: ReActCognition.make({ tools: [lookupOrder, cancelOrder] })
      })
      yield* agent.run(TASK).pipe(Effect.provide(makeTestCtx({ llm })))
      const first = llm.requests[0]!
      expect(first.model).toBe(MODEL)
      expect(first.messages).toEqual([
        { role: "system", content: PROMPT },
        { role: "user", content: TASK }
      ])
      expect(first.tools.map((tool) => tool.name)).toEqual(["cancel_order", "lookup_order"])
      expect(llm.requests[1]!.messages.map((message) => message.role)).toEqual(["system", "user", "assistant", "tool"])
      expect(llm.requests[1]!.messages[3]!.content).toBe(STATUS)
    }))

  it.effect("the one-statement form (Agents over the model layer) prints the seed's three lines", () =>
    Effect.gen(function*() {
      const llm = FakeLLM.script([
        Turn({ toolCalls: [{ id: "c1", name: "lookup_order", arguments: { order_id: "A-771" } }] }),
        Turn({ content: "Order A-771 shipped on 14 August and arrives Tuesday." })
      ])
      const agent = Agent.make({
        name: "support",
        model: "claude-sonnet-4-6",
        prompt: "Answer order questions. Use the tools; never guess a status.",
        cognition: ReActCognition.make({ tools: [lookupOrder, cancelOrder] })
      })
      const main = Effect.gen(function*() {
        yield* Console.log((yield* Agents.run(agent, "What happened to order A-771?")).output)

        // This is exactly what the model is shown for the tool:
        yield* Console.log(lookupOrder.schema.name, JSON.stringify(lookupOrder.schema.parameters))

        // A call the model got wrong is rejected BY NAME, not silently dropped.
        yield* cancelOrder.run({ order: "A-771" }).pipe(
          RunContext.provide(),
          Effect.catchTag("ToolArgumentError", (exc) => Console.log(`rejected: ${exc.message}`))
        )
      })

      const printed: Array<string> = []
      const log = vi.spyOn(console, "log").mockImplementation((...args: Array<unknown>) => {
        printed.push(args.join(" "))
      })
      yield* main.pipe(
        Effect.provide(Agents.layer().pipe(Layer.provide(llm.layer))),
        Effect.ensuring(Effect.sync(() => log.mockRestore()))
      )
      expect(printed).toEqual([
        "Order A-771 shipped on 14 August and arrives Tuesday.",
        "lookup_order {\"type\":\"object\",\"properties\":{\"order_id\":{\"type\":\"string\"}},\"required\":[\"order_id\"]}",
        "rejected: tool 'cancel_order' call rejected: unexpected argument(s) ['order']; missing required argument(s) ['order_id']. Accepted arguments: ['order_id', 'reason']"
      ])
      llm.assertConsumed()
    }))
})
