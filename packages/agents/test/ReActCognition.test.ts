/**
 * The ReAct loop: spec-runtime §7.3–§7.5 and the §9 `test_agent_loop` checklist (approvals,
 * checkpoints and resume have their own files, as do termination conditions, Termination.test.ts,
 * and the parse-repair of structured output, StructuredOutput.test.ts).
 */
import { Agent, AgentDefinitionError, ReActCognition } from "@agentkit/agents"
import {
  Budget,
  BudgetExceeded,
  Cancelled,
  DepthExceeded,
  Message,
  ToolDefinitionError,
  ToolShapeError,
  Usage
} from "@agentkit/core"
import type { ToolMiddleware } from "@agentkit/core"
import { FakeLLM, FakeTool, Fixture, makeTestCtx, Seed, Turn } from "@agentkit/testing"
import { Tool, ToolRegistry } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Data, Deferred, Effect, Schema } from "effect"
import { call, DESCRIPTION, forever, support } from "./fixtures.js"

const { defectOf, failureOf } = Fixture
const { ANSWER, cancelOrder, lookupCall, lookupOrder, MODEL, PROMPT, STATUS, TASK } = Seed

/** The seed's two-step script. */
const seedScript = () => FakeLLM.script([Turn({ toolCalls: [lookupCall()] }), Turn({ content: ANSWER })])

/** An agent over `tools`, named `support`. */
const agentWith = (tools: ReadonlyArray<ToolRegistry.AnyTool>, maxIterations?: number) =>
  Agent.make({
    name: "support",
    model: MODEL,
    prompt: PROMPT,
    cognition: ReActCognition.make({ tools, maxIterations })
  })

/** The tool messages of a request, as `[name, content, isError]`. */
const toolMessages = (messages: ReadonlyArray<Message.Message>) =>
  messages.flatMap((
    message
  ) => (message.role === "tool" ? [[message.toolCallId, message.content, message.isError] as const] : []))

for (const tracing of [true, false]) {
  describe(`ReActCognition: the two-step loop, tracing ${tracing ? "on" : "off"}`, () => {
    it.effect("[tool, final] → the final answer, not partial, 2 model calls, budget charged twice", () =>
      Effect.gen(function*() {
        const llm = seedScript()
        const budget = Budget.unsafeMake()
        const result = yield* support.run(TASK).pipe(Effect.provide(makeTestCtx({ tracing, llm, budget })))
        expect(result.output).toBe(ANSWER)
        expect(result.partial).toBe(false)
        expect(result.stopReason).toBe("end_turn")
        expect(result.suspended).toBeUndefined()
        expect(llm.calls).toBe(2)
        expect(budget.modelCalls).toBe(2)
        expect(budget.toolCalls).toBe(1)
        expect(budget.spentUsd).toBe(0.0002)
        llm.assertConsumed()
      }))

    it.effect("usage is summed over the run (2 turns × 10 in / 5 out / $0.0001)", () =>
      Effect.gen(function*() {
        const result = yield* support.run(TASK).pipe(Effect.provide(makeTestCtx({ tracing, llm: seedScript() })))
        expect(result.usage).toEqual(Usage.make({ inputTokens: 20, outputTokens: 10, costUsd: 0.0002 }))
      }))

    it.effect("usage sums every turn's own numbers, cache tokens included", () =>
      Effect.gen(function*() {
        const llm = FakeLLM.script([
          Turn({
            toolCalls: [lookupCall()],
            usage: { inputTokens: 100, outputTokens: 7, cacheReadTokens: 3, costUsd: 0.25 }
          }),
          Turn({ content: ANSWER, usage: { inputTokens: 40, outputTokens: 9, cacheWriteTokens: 2, costUsd: 0.5 } })
        ])
        const result = yield* support.run(TASK).pipe(Effect.provide(makeTestCtx({ tracing, llm })))
        expect(result.usage).toEqual({
          inputTokens: 140,
          outputTokens: 16,
          cacheReadTokens: 3,
          cacheWriteTokens: 2,
          costUsd: 0.75
        })
      }))

    it.effect("the transcript: system prompt, task, assistant with its tool call, the tool result, the answer", () =>
      Effect.gen(function*() {
        const result = yield* support.run(TASK).pipe(Effect.provide(makeTestCtx({ tracing, llm: seedScript() })))
        expect(result.transcript).toEqual([
          { role: "system", content: PROMPT },
          { role: "user", content: TASK },
          { role: "assistant", content: "", toolCalls: [lookupCall()] },
          { role: "tool", toolCallId: "c1", name: "lookup_order", content: STATUS, isError: false },
          { role: "assistant", content: ANSWER, toolCalls: [] }
        ])
      }))

    it.effect("each request carries the registry's sorted schemas and the agent's model", () =>
      Effect.gen(function*() {
        const llm = seedScript()
        const registry = ToolRegistry.fromTools([lookupOrder, cancelOrder])
        yield* support.run(TASK).pipe(Effect.provide(makeTestCtx({ tracing, llm })))
        expect(llm.requests).toHaveLength(2)
        for (const request of llm.requests) {
          expect(request.model).toBe(MODEL)
          expect(request.tools).toEqual(registry.schemas())
          expect(request.tools.map((tool) => tool.name)).toEqual(["cancel_order", "lookup_order"])
          expect(request.tools[1]).toEqual(lookupOrder.schema)
        }
        // settings the agent does not set are not sent
        expect("maxTokens" in llm.requests[0]!).toBe(false)
        expect("temperature" in llm.requests[0]!).toBe(false)
      }))

    it.effect("a registry can be passed instead of a list; maxTokens and temperature are sent", () =>
      Effect.gen(function*() {
        const llm = seedScript()
        const agent = Agent.make({
          name: "support",
          model: "claude-haiku-4-5",
          maxTokens: 512,
          temperature: 0,
          cognition: ReActCognition.make({ tools: ToolRegistry.fromTools([lookupOrder]) })
        })
        const result = yield* agent.run(TASK).pipe(Effect.provide(makeTestCtx({ tracing, llm })))
        expect(result.output).toBe(ANSWER)
        expect(llm.requests[0]).toMatchObject({ model: "claude-haiku-4-5", maxTokens: 512, temperature: 0 })
        expect(llm.requests[0]!.tools.map((tool) => tool.name)).toEqual(["lookup_order"])
        // no prompt ⇒ no system message
        expect(llm.requests[0]!.messages).toEqual([{ role: "user", content: TASK }])
      }))

    it.effect("the model's finish reason is the stop reason of a final answer", () =>
      Effect.gen(function*() {
        const llm = FakeLLM.script([Turn({ content: "cut off mid-sent", finishReason: "max_tokens" })])
        const result = yield* support.run(TASK).pipe(Effect.provide(makeTestCtx({ tracing, llm })))
        expect(result).toMatchObject({ output: "cut off mid-sent", partial: false, stopReason: "max_tokens" })
      }))
  })

  describe(`ReActCognition: a multi-turn conversation as input, tracing ${tracing ? "on" : "off"}`, () => {
    it.effect("the model receives the prompt and the whole conversation, then the tool round", () =>
      Effect.gen(function*() {
        const conversation: ReadonlyArray<Message.Message> = [
          Message.user("Hi, I have a question about an order."),
          Message.assistant("Sure: which order?"),
          Message.user("A-771, please.")
        ]
        const llm = seedScript()
        const result = yield* support.run(conversation).pipe(Effect.provide(makeTestCtx({ tracing, llm })))
        expect(result.output).toBe(ANSWER)
        expect(llm.requests[0]!.messages).toEqual([Message.system(PROMPT), ...conversation])
        expect(llm.requests[1]!.messages).toEqual([
          Message.system(PROMPT),
          ...conversation,
          Message.assistant("", [lookupCall()]),
          Message.toolResult({ toolCallId: "c1", name: "lookup_order", content: STATUS })
        ])
        expect(result.transcript).toEqual([...llm.requests[1]!.messages, Message.assistant(ANSWER)])
      }))

    it.effect("the caller's conversation array is not mutated", () =>
      Effect.gen(function*() {
        const conversation = [Message.user("A-771?")]
        yield* support.run(conversation).pipe(Effect.provide(makeTestCtx({ tracing, llm: seedScript() })))
        expect(conversation).toEqual([Message.user("A-771?")])
      }))
  })

  describe(`ReActCognition: several tool calls in one turn, tracing ${tracing ? "on" : "off"}`, () => {
    it.effect("two calls both run; results keep call order even when the first finishes last", () =>
      Effect.gen(function*() {
        const gate = yield* Deferred.make<void>()
        const finished: Array<string> = []
        // `slow` waits until `fast` has finished: a loop that ran them one after the other would hang.
        const slow = Tool.make("slow", {
          description: DESCRIPTION,
          parameters: {},
          sideEffecting: false,
          handler: () =>
            Deferred.await(gate).pipe(
              Effect.zipRight(Effect.sync(() => finished.push("slow"))),
              Effect.as("slow result")
            )
        })
        const fast = Tool.make("fast", {
          description: DESCRIPTION,
          parameters: {},
          sideEffecting: false,
          handler: () =>
            Effect.sync(() => finished.push("fast")).pipe(
              Effect.zipRight(Deferred.succeed(gate, undefined)),
              Effect.as("fast result")
            )
        })
        const llm = FakeLLM.script([
          Turn({ toolCalls: [call("c1", "slow"), call("c2", "fast")] }),
          Turn({ content: "done both" })
        ])
        const result = yield* agentWith([slow, fast]).run(TASK).pipe(Effect.provide(makeTestCtx({ tracing, llm })))
        expect(finished).toEqual(["fast", "slow"])
        expect(result.output).toBe("done both")
        expect(llm.calls).toBe(2)
        expect(toolMessages(llm.requests[1]!.messages)).toEqual([
          ["c1", "slow result", false],
          ["c2", "fast result", false]
        ])
      }))

    it.effect("identical duplicate calls both run (no implicit dedupe)", () =>
      Effect.gen(function*() {
        const fake = FakeTool.make("lookup_order", { responses: ["first", "second"] })
        const llm = FakeLLM.script([
          Turn({ toolCalls: [lookupCall("c1"), lookupCall("c2")] }),
          Turn({ content: "done" })
        ])
        const result = yield* agentWith([fake]).run(TASK).pipe(Effect.provide(makeTestCtx({ tracing, llm })))
        expect(result.output).toBe("done")
        expect(fake.calls).toEqual([{ order_id: "A-771" }, { order_id: "A-771" }])
        expect(toolMessages(llm.requests[1]!.messages).map(([id]) => id)).toEqual(["c1", "c2"])
        expect(toolMessages(llm.requests[1]!.messages).map(([, content]) => content).sort()).toEqual([
          "first",
          "second"
        ])
      }))

    it.effect("several rounds: each round's results are appended before the next model call", () =>
      Effect.gen(function*() {
        const fake = FakeTool.make("lookup_order", { responses: (args) => `status of ${String(args["order_id"])}` })
        const llm = FakeLLM.script([
          Turn({ toolCalls: [lookupCall("c1", "A-1")] }),
          Turn({ content: "checking another", toolCalls: [lookupCall("c2", "A-2")] }),
          Turn({ content: "both fine" })
        ])
        const result = yield* agentWith([fake]).run(TASK).pipe(Effect.provide(makeTestCtx({ tracing, llm })))
        expect(result.output).toBe("both fine")
        expect(llm.calls).toBe(3)
        expect(toolMessages(llm.requests[2]!.messages)).toEqual([
          ["c1", "status of A-1", false],
          ["c2", "status of A-2", false]
        ])
        expect(llm.requests[2]!.messages.at(-2)).toEqual(
          Message.assistant("checking another", [lookupCall("c2", "A-2")])
        )
      }))
  })

  describe(`ReActCognition: the concurrency limit, tracing ${tracing ? "on" : "off"}`, () => {
    it.effect("a turn's calls run at most maxConcurrency at a time, and all complete", () =>
      Effect.gen(function*() {
        let inFlight = 0
        let peak = 0
        const busy = Tool.make("busy", {
          description: DESCRIPTION,
          parameters: { n: Schema.Number },
          sideEffecting: false,
          handler: ({ n }) =>
            Effect.gen(function*() {
              inFlight += 1
              peak = Math.max(peak, inFlight)
              for (let i = 0; i < 5; i++) yield* Effect.yieldNow()
              inFlight -= 1
              return `done ${n}`
            })
        })
        const calls = [1, 2, 3, 4, 5].map((n) => call(`c${n}`, "busy", { n }))
        const run = (maxConcurrency: number) =>
          agentWith([busy]).run(TASK).pipe(
            Effect.provide(
              makeTestCtx({
                tracing,
                llm: FakeLLM.script([Turn({ toolCalls: calls }), Turn({ content: "ok" })]),
                budget: { maxConcurrency }
              })
            )
          )
        const limited = yield* run(2)
        expect(peak).toBe(2)
        expect(toolMessages(limited.transcript).map(([, content]) => content)).toEqual([
          "done 1",
          "done 2",
          "done 3",
          "done 4",
          "done 5"
        ])
        peak = 0
        yield* run(8)
        expect(peak).toBe(5)
      }))
  })

  class OrderNotFound extends Data.TaggedError("OrderNotFound")<{ readonly message: string }> {}

  describe(`ReActCognition: errors the model can fix are reflected, and the run completes, tracing ${tracing ? "on" : "off"}`, () => {
    /** Runs one bad call, then a final answer; returns the tool message the model got. */
    const reflect = (tools: ReadonlyArray<ToolRegistry.AnyTool>, bad: ReturnType<typeof call>) =>
      Effect.gen(function*() {
        const llm = FakeLLM.script([Turn({ toolCalls: [bad] }), Turn({ content: "recovered" })])
        const result = yield* agentWith(tools).run(TASK).pipe(Effect.provide(makeTestCtx({ tracing, llm })))
        expect(result.output).toBe("recovered")
        expect(result.partial).toBe(false)
        expect(llm.calls).toBe(2)
        const message = llm.requests[1]!.messages.at(-1)!
        expect(message.role).toBe("tool")
        if (message.role !== "tool") throw new Error("expected a tool message")
        expect(message.toolCallId).toBe(bad.id)
        expect(message.name).toBe(bad.name)
        expect(message.isError).toBe(true)
        return message.content
      })

    it.effect("an unknown (hallucinated) tool", () =>
      Effect.gen(function*() {
        const text = yield* reflect([lookupOrder, cancelOrder], call("c1", "ghost", { x: 1 }))
        expect(text).toBe("ERROR: no tool named 'ghost'. Available tools: cancel_order, lookup_order.")
      }))

    it.effect("an unknown tool with no tools at all", () =>
      Effect.gen(function*() {
        const text = yield* reflect([], call("c1", "ghost"))
        expect(text).toBe("ERROR: no tool named 'ghost'. Available tools: (none).")
      }))

    it.effect("a ToolArgumentError (the seed's wrong call)", () =>
      Effect.gen(function*() {
        const text = yield* reflect([lookupOrder, cancelOrder], call("c1", "cancel_order", { order: "A-771" }))
        expect(text).toBe(
          "ERROR: tool 'cancel_order' failed: ToolArgumentError: tool 'cancel_order' call rejected: unexpected argument(s) ['order']; missing required argument(s) ['order_id']. Accepted arguments: ['order_id', 'reason']"
        )
      }))

    it.effect("a ToolArgumentError for a value of the wrong type", () =>
      Effect.gen(function*() {
        const text = yield* reflect([lookupOrder], call("c1", "lookup_order", { order_id: 771 }))
        expect(text).toBe(
          "ERROR: tool 'lookup_order' failed: ToolArgumentError: tool 'lookup_order' call rejected: invalid argument(s) ['order_id']: order_id: Expected string, actual 771. Accepted arguments: ['order_id']"
        )
      }))

    it.effect("a ToolShapeError (a real one, raised by the output check)", () =>
      Effect.gen(function*() {
        const Quote = Schema.Struct({ symbol: Schema.String, price: Schema.Number }).annotations({
          identifier: "Quote"
        })
        const quote = Tool.make("quote", {
          description: "Return the last traded price for a ticker symbol.",
          parameters: { symbol: Schema.String },
          success: Quote,
          sideEffecting: false,
          handler: ({ symbol }) => ({ symbol, price: "high" }) as unknown as typeof Quote.Type
        })
        // it is a real ToolShapeError on the tool itself
        const direct = yield* Effect.flip(quote.run({ symbol: "ACME" })).pipe(
          Effect.provide(makeTestCtx({ tracing, llm: FakeLLM.script([]) }))
        )
        expect(direct).toBeInstanceOf(ToolShapeError)
        const text = yield* reflect([quote], call("c1", "quote", { symbol: "ACME" }))
        expect(text).toBe(
          `ERROR: tool returned a value that does not match its declared output schema 'Quote'. Details: price: Expected number, actual "high"`
        )
      }))

    it.effect("a handler failing with its own typed error", () =>
      Effect.gen(function*() {
        const lookup = Tool.make("lookup_order", {
          description: DESCRIPTION,
          parameters: { order_id: Schema.String },
          sideEffecting: false,
          handler: ({ order_id }): Effect.Effect<string, OrderNotFound> =>
            Effect.fail(new OrderNotFound({ message: `no order '${order_id}'` }))
        })
        const text = yield* reflect([lookup], lookupCall("c1", "ZZZ"))
        expect(text).toBe("ERROR: tool 'lookup_order' failed: OrderNotFound: no order 'ZZZ'")
      }))

    it.effect("a handler that throws (a ToolExecutionError carrying the cause)", () =>
      Effect.gen(function*() {
        const boom = Tool.make("boom", {
          description: DESCRIPTION,
          parameters: {},
          sideEffecting: false,
          handler: (): string => {
            throw new Error("database unreachable")
          }
        })
        const text = yield* reflect([boom], call("c1", "boom"))
        expect(text).toBe("ERROR: tool 'boom' failed: ToolExecutionError: database unreachable")
      }))

    it.effect("a Promise handler that rejects", () =>
      Effect.gen(function*() {
        const boom = Tool.make("boom", {
          description: DESCRIPTION,
          parameters: {},
          sideEffecting: false,
          handler: (): Promise<string> => Promise.reject(new TypeError("bad gateway"))
        })
        const text = yield* reflect([boom], call("c1", "boom"))
        expect(text).toBe("ERROR: tool 'boom' failed: ToolExecutionError: bad gateway")
      }))

    it.effect("an Effect handler that dies: the model sees a generic failure, never the defect's message", () =>
      Effect.gen(function*() {
        const boom = Tool.make("boom", {
          description: DESCRIPTION,
          parameters: {},
          sideEffecting: false,
          handler: (): Effect.Effect<string> => Effect.die(new Error("handler bug"))
        })
        const text = yield* reflect([boom], call("c1", "boom"))
        expect(text).toBe("ERROR: tool 'boom' failed: internal error")
      }))

    it.effect("one failing call does not stop its sibling", () =>
      Effect.gen(function*() {
        const llm = FakeLLM.script([
          Turn({ toolCalls: [call("c1", "ghost"), lookupCall("c2")] }),
          Turn({ content: "done" })
        ])
        const result = yield* support.run(TASK).pipe(Effect.provide(makeTestCtx({ tracing, llm })))
        expect(result.output).toBe("done")
        expect(toolMessages(llm.requests[1]!.messages)).toEqual([
          ["c1", "ERROR: no tool named 'ghost'. Available tools: cancel_order, lookup_order.", true],
          ["c2", STATUS, false]
        ])
      }))
  })

  describe(`ReActCognition: failures that end the run, tracing ${tracing ? "on" : "off"}`, () => {
    it.effect("a tool failing with Cancelled aborts the run with it (never reflected)", () =>
      Effect.gen(function*() {
        const quit = Tool.make("quit", {
          description: DESCRIPTION,
          parameters: {},
          sideEffecting: false,
          handler: (): Effect.Effect<string, Cancelled> => Effect.fail(new Cancelled())
        })
        const llm = FakeLLM.script([Turn({ toolCalls: [call("c1", "quit")] }), Turn({ content: "never reached" })])
        const exit = yield* agentWith([quit]).run(TASK).pipe(Effect.provide(makeTestCtx({ tracing, llm })), Effect.exit)
        expect(failureOf(exit)).toBeInstanceOf(Cancelled)
        expect(llm.calls).toBe(1)
      }))

    it.effect("a tool failing with a cost BudgetExceeded ends the run; a DepthExceeded is reflected", () =>
      Effect.gen(function*() {
        const over = (error: BudgetExceeded | DepthExceeded) =>
          Tool.make("over", {
            description: DESCRIPTION,
            parameters: {},
            sideEffecting: false,
            handler: (): Effect.Effect<string, BudgetExceeded | DepthExceeded> => Effect.fail(error)
          })
        const cost = FakeLLM.script([Turn({ toolCalls: [call("c1", "over")] }), Turn({ content: "never reached" })])
        const exit = yield* agentWith([over(new BudgetExceeded({ limit: "cost", message: "cost exceeded" }))])
          .run(TASK)
          .pipe(Effect.provide(makeTestCtx({ tracing, llm: cost })), Effect.exit)
        expect(failureOf(exit)).toMatchObject({ _tag: "BudgetExceeded", limit: "cost" })
        expect(cost.calls).toBe(1)

        const depth = FakeLLM.script([Turn({ toolCalls: [call("c1", "over")] }), Turn({ content: "went on" })])
        const result = yield* agentWith([over(new DepthExceeded({ depth: 5, maxDepth: 4 }))])
          .run(TASK)
          .pipe(Effect.provide(makeTestCtx({ tracing, llm: depth })))
        expect(result.output).toBe("went on")
        expect(toolMessages(result.transcript)).toEqual([
          ["c1", "ERROR: tool 'over' failed: DepthExceeded: agent depth 5 > max_depth 4", true]
        ])
      }))
  })

  describe(`ReActCognition: a defect is never shown to the model, tracing ${tracing ? "on" : "off"}`, () => {
    it.effect("a tool middleware that dies ends the run with the defect; no further model call", () =>
      Effect.gen(function*() {
        const bug = new Error("middleware bug")
        const dying: ToolMiddleware = () => () => Effect.die(bug)
        const llm = seedScript()
        const exit = yield* support.run(TASK).pipe(
          Effect.provide(makeTestCtx({ tracing, llm, toolMiddleware: [dying] })),
          Effect.exit
        )
        expect((defectOf(exit) as Error).message).toBe(bug.message)
        expect(llm.calls).toBe(1)
      }))

    it.effect("a sibling of the dying call is interrupted (its finalizer runs)", () =>
      Effect.gen(function*() {
        const started = yield* Deferred.make<void>()
        let finalized = false
        const waiting = Tool.make("waiting", {
          description: DESCRIPTION,
          parameters: {},
          sideEffecting: false,
          handler: () =>
            Deferred.succeed(started, undefined).pipe(
              Effect.zipRight(forever),
              Effect.ensuring(Effect.sync(() => (finalized = true)))
            )
        })
        const bug = new Error("middleware bug")
        // the middleware dies for `lookup_order` only, after `waiting` has started
        const dying: ToolMiddleware = (next) => (invocation) =>
          invocation.tool.name === "lookup_order"
            ? Effect.zipRight(Deferred.await(started), Effect.die(bug))
            : next(invocation)
        const llm = FakeLLM.script([Turn({ toolCalls: [call("c1", "waiting"), lookupCall("c2")] })])
        const exit = yield* agentWith([waiting, lookupOrder]).run(TASK).pipe(
          Effect.provide(makeTestCtx({ tracing, llm, toolMiddleware: [dying] })),
          Effect.exit
        )
        expect((defectOf(exit) as Error).message).toBe(bug.message)
        expect(finalized).toBe(true)
        expect(llm.calls).toBe(1)
      }))
  })

  describe(`ReActCognition: maxIterations, tracing ${tracing ? "on" : "off"}`, () => {
    it.effect("3 iterations of endless tool calls → partial, max_iterations, 3 calls, the last assistant text", () =>
      Effect.gen(function*() {
        const fake = FakeTool.make("lookup_order", { responses: ["TOOL OUTPUT, not an answer"] })
        const llm = FakeLLM.respond((_request, n) =>
          Turn({ content: "working on it", toolCalls: [lookupCall(`c${n}`)] })
        )
        const result = yield* agentWith([fake], 3).run(TASK).pipe(Effect.provide(makeTestCtx({ tracing, llm })))
        expect(result.partial).toBe(true)
        expect(result.stopReason).toBe("max_iterations")
        expect(result.output).toBe("working on it")
        expect(llm.calls).toBe(3)
        expect(fake.calls).toHaveLength(3)
        // the transcript ends with the last tool result, which is not the output
        expect(result.transcript.at(-1)).toMatchObject({ role: "tool", content: "TOOL OUTPUT, not an answer" })
        expect(result.usage.inputTokens).toBe(30)
      }))

    it.effect("the output is the LAST assistant text, even when it is empty", () =>
      Effect.gen(function*() {
        const llm = FakeLLM.script([
          Turn({ content: "first thoughts", toolCalls: [lookupCall("c1")] }),
          Turn({ toolCalls: [lookupCall("c2")] })
        ])
        const result = yield* agentWith([lookupOrder], 2).run(TASK).pipe(Effect.provide(makeTestCtx({ tracing, llm })))
        expect(result).toMatchObject({ output: "", partial: true, stopReason: "max_iterations" })
      }))

    it.effect("the default is 8 model calls", () =>
      Effect.gen(function*() {
        const llm = FakeLLM.respond((_request, n) => Turn({ toolCalls: [lookupCall(`c${n}`)] }))
        const result = yield* support.run(TASK).pipe(Effect.provide(makeTestCtx({ tracing, llm })))
        expect(result.stopReason).toBe("max_iterations")
        expect(llm.calls).toBe(8)
      }))

    it.effect("maxIterations 1: a final answer on the first call is not partial", () =>
      Effect.gen(function*() {
        const llm = FakeLLM.script([Turn({ content: "straight answer" })])
        const result = yield* agentWith([lookupOrder], 1).run(TASK).pipe(Effect.provide(makeTestCtx({ tracing, llm })))
        expect(result).toMatchObject({ output: "straight answer", partial: false, stopReason: "end_turn" })
      }))
  })

  describe(`ReActCognition: one cognition, concurrent runs, tracing ${tracing ? "on" : "off"}`, () => {
    it.effect("two concurrent runs sharing one cognition value both get their own correct result", () =>
      Effect.gen(function*() {
        // Both runs' tools wait until the other run's tool has started: the runs really overlap.
        const arrivedA = yield* Deferred.make<void>()
        const arrivedB = yield* Deferred.make<void>()
        const rendezvous = Tool.make("lookup_order", {
          description: DESCRIPTION,
          parameters: { order_id: Schema.String },
          sideEffecting: false,
          handler: ({ order_id }) =>
            order_id === "A"
              ? Deferred.succeed(arrivedA, undefined).pipe(
                Effect.zipRight(Deferred.await(arrivedB)),
                Effect.as("status A")
              )
              : Deferred.succeed(arrivedB, undefined).pipe(
                Effect.zipRight(Deferred.await(arrivedA)),
                Effect.as("status B")
              )
        })
        const agent = agentWith([rendezvous])
        const llmA = FakeLLM.script([Turn({ toolCalls: [lookupCall("a1", "A")] }), Turn({ content: "answer A" })])
        const llmB = FakeLLM.script([
          Turn({ toolCalls: [lookupCall("b1", "B")] }),
          Turn({ content: "still B", toolCalls: [lookupCall("b2", "B")] }),
          Turn({ content: "answer B" })
        ])
        const [a, b] = yield* Effect.all(
          [
            agent.run("order A?").pipe(Effect.provide(makeTestCtx({ tracing, llm: llmA, correlationId: "run-a" }))),
            agent.run("order B?").pipe(Effect.provide(makeTestCtx({ tracing, llm: llmB, correlationId: "run-b" })))
          ],
          { concurrency: 2 }
        )
        expect(a.output).toBe("answer A")
        expect(b.output).toBe("answer B")
        expect(toolMessages(a.transcript)).toEqual([["a1", "status A", false]])
        expect(toolMessages(b.transcript)).toEqual([
          ["b1", "status B", false],
          ["b2", "status B", false]
        ])
        expect(a.usage.inputTokens).toBe(20)
        expect(b.usage.inputTokens).toBe(30)
        expect(a.transcript[1]).toEqual(Message.user("order A?"))
        expect(b.transcript[1]).toEqual(Message.user("order B?"))
        llmA.assertConsumed()
        llmB.assertConsumed()
      }))
  })
}

describe("ReActCognition.make: definition errors are thrown synchronously", () => {
  it("maxIterations 0, negative or fractional → AgentDefinitionError", () => {
    for (const maxIterations of [0, -1, 2.5, Number.NaN]) {
      expect(() => ReActCognition.make({ tools: [lookupOrder], maxIterations })).toThrow(AgentDefinitionError)
    }
    expect(() => ReActCognition.make({ tools: [lookupOrder], maxIterations: 0 })).toThrow(
      "ReActCognition: maxIterations must be a positive integer; got 0"
    )
  })

  it("duplicate tool names → ToolDefinitionError with the registry's text", () => {
    const again = FakeTool.make("lookup_order")
    expect(() => ReActCognition.make({ tools: [lookupOrder, again] })).toThrow(ToolDefinitionError)
    expect(() => ReActCognition.make({ tools: [lookupOrder, again] })).toThrow(
      "ToolRegistry: tool 'lookup_order' already registered. Pass { replace: true } to swap deliberately."
    )
  })

  it("a value that is not a tool → ToolDefinitionError", () => {
    expect(() => ReActCognition.make({ tools: [{ name: "fake" } as never] })).toThrow(ToolDefinitionError)
  })

  it("a cognition is named 'react' and exposes its registry", () => {
    const cognition = ReActCognition.make({ tools: [lookupOrder, cancelOrder] })
    expect(cognition.name).toBe("react")
    expect(cognition.tools.names()).toEqual(["cancel_order", "lookup_order"])
  })
})
