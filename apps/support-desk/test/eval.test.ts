/**
 * The support agent's eval: twelve customer messages, each scored on what the answer says, which
 * tools it called, what it cost and a judge's verdict (an agent, scripted offline). It runs in
 * `npm test` against a scripted model that answers the way a good model should; the same gate
 * fails a careless model that guesses instead of using the tools.
 */
import { Agent } from "@agentkit/agents"
import type { Chat, Message } from "@agentkit/core"
import { Dataset, Scorer, Task, ThresholdError } from "@agentkit/evals"
import { describeEval, evaluate } from "@agentkit/evals/Vitest"
import { FakeLLM, makeTestCtx, Turn } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { supportAgent } from "../src/conversation.js"
import { seedOrders } from "../src/orders.js"

const dataset = Dataset.make<string, ReadonlyArray<string>>("support desk", [
  { name: "status", input: "What happened to order A-771?", expected: ["A-771", "shipped"], tools: ["lookup_order"] },
  { name: "processing", input: "Where is B-102?", expected: ["processing"], tools: ["lookup_order"] },
  { name: "delivery day", input: "Is A-771 arriving this week?", expected: ["Tuesday"], tools: ["lookup_order"] },
  {
    name: "lower-case id",
    input: "what's the status of b-102",
    expected: ["B-102", "processing"],
    tools: ["lookup_order"]
  },
  {
    name: "two orders",
    input: "Status of A-771 and B-102, please.",
    expected: ["shipped", "processing"],
    tools: ["lookup_order", "lookup_order"]
  },
  {
    name: "unknown order",
    input: "Where is order Z-999?",
    expected: ["could not find", "Z-999"],
    tools: ["lookup_order"]
  },
  {
    name: "cancel",
    input: "Please cancel B-102, I ordered it twice.",
    expected: ["B-102 cancelled"],
    tools: ["cancel_order"],
    tags: ["cancel"]
  },
  {
    name: "cancel with a reason",
    input: "Cancel A-771 because I found it cheaper elsewhere.",
    expected: ["cancelled", "found it cheaper elsewhere"],
    tools: ["cancel_order"],
    tags: ["cancel"]
  },
  {
    name: "cancel an unknown order",
    input: "Cancel order Q-1.",
    expected: ["could not find"],
    tools: ["cancel_order"],
    tags: ["cancel"]
  },
  { name: "no order id", input: "Where is my package?", expected: ["order id"], tools: [] },
  { name: "greeting", input: "Hello!", expected: ["order id"], tools: [] },
  { name: "thanks", input: "Thanks, that's all.", expected: ["welcome"], tools: [] }
])

const ORDER_ID = /\b([A-Za-z])-(\d+)\b/g

const idsIn = (text: string): ReadonlyArray<string> =>
  [...text.matchAll(ORDER_ID)].map((match) => `${match[1]!.toUpperCase()}-${match[2]}`)

const lastUser = (request: Chat.ChatRequest): string =>
  request.messages.filter((message) => message.role === "user").at(-1)?.content ?? ""

/** The tool results after the model's last turn. */
const results = (request: Chat.ChatRequest): ReadonlyArray<Message.ToolResultMessage> => {
  const out: Array<Message.ToolResultMessage> = []
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i]!
    if (message.role !== "tool") break
    out.unshift(message)
  }
  return out
}

/** A model that uses the tools and answers from what they return. */
const careful = () =>
  FakeLLM.respond((request) => {
    const answered = results(request)
    if (answered.length > 0) {
      return Turn({
        content: answered.map((result) => {
          if (result.isError) {
            const id = /'([A-Z]-\d+)'/.exec(result.content)?.[1] ?? "that order"
            return `I could not find order ${id}. Could you check the order id?`
          }
          return result.name === "cancel_order" ? `Done: ${result.content}.` : `Order ${result.content.slice(6)}.`
        }).join(" ")
      })
    }
    const text = lastUser(request)
    if (/thank/i.test(text)) return Turn({ content: "You're welcome! Anything else about your orders?" })
    const ids = idsIn(text)
    if (ids.length === 0) return Turn({ content: "Which order do you mean? Please give me the order id." })
    const reason = /because (.+?)[.!?]*$/i.exec(text)?.[1]
    const cancel = /\bcancel\b/i.test(text)
    return Turn({
      toolCalls: ids.map((id, index) => ({
        id: `c${index + 1}`,
        name: cancel ? "cancel_order" : "lookup_order",
        arguments: cancel && reason !== undefined ? { order_id: id, reason } : { order_id: id }
      }))
    })
  })

/** A model that never uses a tool and guesses. */
const careless = () =>
  FakeLLM.respond((request) => {
    const ids = idsIn(lastUser(request))
    return Turn({ content: ids.length === 0 ? "Hi there!" : `Order ${ids.join(" and ")} is probably on its way.` })
  })

/** The agent over a fresh order book for each case, on the given scripted model. */
const task = (model: () => FakeLLM.FakeLLM): Task.Task<string, unknown> => (input) =>
  supportAgent(seedOrders()).run(input).pipe(
    Effect.map(Task.fromResult),
    Effect.provide(makeTestCtx({ llm: model() }))
  )

/** The judge: an agent whose scripted model passes an answer built from a tool's result or asking for an id. */
const judge = Scorer.judge({
  agent: Agent.make({
    name: "judge",
    model: "claude-sonnet-4-6",
    prompt: "You grade a support desk's answers.",
    output: Scorer.Verdict
  }),
  rubric: "The answer states what the tools returned, or asks for the missing order id; it never guesses a status.",
  layer: Layer.orDie(makeTestCtx({
    runId: "judge",
    llm: FakeLLM.respond((request) => {
      const answer = /Answer to grade: (.*)$/s.exec(lastUser(request))?.[1] ?? ""
      const grounded = /shipped 2026|processing, ships|cancelled \(|could not find|order id|welcome/i.test(answer)
      return Turn({
        content: JSON.stringify(
          grounded
            ? { score: 1, reason: "grounded in the tools' results" }
            : { score: 0, reason: "guesses the status" }
        )
      })
    })
  }))
})

const scorers = [Scorer.contains(), Scorer.trajectory(), Scorer.costCeiling(0.001), judge]
const thresholds = { contains: 0.95, trajectory: { passRate: 1 }, cost: 1, judge: 0.9 }

describeEval("the support agent's eval (scripted model, offline)", {
  dataset,
  task: task(careful),
  scorers,
  thresholds,
  concurrency: 4
})

describe("the same gate on a careless model", () => {
  it("fails, naming each threshold missed", async () => {
    const failure = await evaluate({ dataset, task: task(careless), scorers, thresholds }).then(
      () => undefined,
      (error: unknown) => error
    )
    expect(failure).toBeInstanceOf(ThresholdError)
    expect((failure as ThresholdError).violations).toEqual([
      "contains: mean 0.125 < 0.95", // half of three answers that name the order: 1.5 / 12
      "trajectory: pass rate 0.25 < 1",
      "judge: mean 0 < 0.9"
    ])
  })

  it("passes, with every case scored and every score passing, on the careful model", async () => {
    const report = await evaluate({ dataset, task: task(careful), scorers, thresholds })
    expect(report.cases).toHaveLength(12)
    const failing = report.cases.flatMap((item) =>
      Object.entries(item.scores).filter(([, score]) => !score.pass).map(([name]) => `${item.name}: ${name}`)
    )
    expect(failing).toEqual([])
    expect(report.cases.find((item) => item.name === "two orders")?.output).toBe(
      "Order A-771: shipped 2026-08-14, arriving Tuesday. Order B-102: processing, ships in 2 days."
    )
  })
})
