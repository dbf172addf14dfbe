/**
 * The built-in scorers, the model-graded judge (an agent with a scripted offline model), and the
 * comparison of two runs.
 */
import { Agent } from "@agentkit/agents"
import { Usage } from "@agentkit/core"
import type { ToolCall } from "@agentkit/core"
import { Comparison, Dataset, Eval, Scorer, Task } from "@agentkit/evals"
import { FakeLLM, makeTestCtx, Turn } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { agent, careful, careless, dataset, layerWith } from "./support.js"

const observe = (fields: Partial<Scorer.Observation> = {}): Scorer.Observation => ({
  output: "",
  toolCalls: [],
  usage: Usage.zero,
  durationMillis: 0,
  ...fields
})

const calls = (...names: ReadonlyArray<string>): ReadonlyArray<ToolCall.ToolCall> =>
  names.map((name, i) => ({ id: `c${i}`, name, arguments: {} }))

const score = (scorer: Scorer.Scorer, item: Dataset.Case<unknown>, observation: Scorer.Observation) =>
  Effect.runSync(scorer.score(item, observation))

describe("built-in scorers", () => {
  it("exact: text (trimmed; case optional) or structured output as canonical JSON; no expected output scores 0", () => {
    const item = { name: "a", input: "q", expected: "Shipped." }
    expect(score(Scorer.exact(), item, observe({ output: "  Shipped.\n" }))).toEqual({ value: 1, pass: true })
    expect(score(Scorer.exact(), item, observe({ output: "shipped." }))).toEqual({
      value: 0,
      pass: false,
      reason: "expected \"Shipped.\", got \"shipped.\""
    })
    expect(score(Scorer.exact({ ignoreCase: true }), item, observe({ output: "shipped." })).pass).toBe(true)
    const structured = { name: "s", input: "q", expected: { status: "shipped", id: "A-771" } }
    expect(score(Scorer.exact(), structured, observe({ parsed: { id: "A-771", status: "shipped" } })).pass).toBe(true)
    expect(score(Scorer.exact(), { name: "n", input: "q" }, observe({ output: "x" }))).toEqual({
      value: 0,
      pass: false,
      reason: "the case has no expected output"
    })
  })

  it("contains: the share of expected texts found, case-insensitive by default", () => {
    const item = { name: "a", input: "q", expected: ["A-771", "Tuesday"] }
    expect(score(Scorer.contains(), item, observe({ output: "a-771 arrives tuesday" }))).toEqual({
      value: 1,
      pass: true
    })
    expect(score(Scorer.contains({ caseSensitive: true }), item, observe({ output: "A-771 arrives tuesday" }))).toEqual(
      {
        value: 0.5,
        pass: false,
        reason: "missing \"Tuesday\""
      }
    )
    const custom = Scorer.contains({ name: "order id", texts: (c) => [String(c.metadata?.["order"])] })
    expect(
      score(custom, { name: "m", input: "q", metadata: { order: "B-9" } }, observe({ output: "B-9 shipped" })).pass
    )
      .toBe(true)
  })

  it("schemaValid: the structured output, else the text as JSON, decodes", () => {
    const scorer = Scorer.schemaValid(Schema.Struct({ status: Schema.Literal("shipped", "cancelled") }))
    const item = { name: "a", input: "q" }
    expect(score(scorer, item, observe({ parsed: { status: "shipped" } })).pass).toBe(true)
    expect(score(scorer, item, observe({ output: "{\"status\":\"cancelled\"}" })).pass).toBe(true)
    expect(score(scorer, item, observe({ output: "shipped" }))).toEqual({
      value: 0,
      pass: false,
      reason: "the output is not JSON: \"shipped\""
    })
    const wrong = score(scorer, item, observe({ output: "{\"status\":\"lost\"}" }))
    expect(wrong.pass).toBe(false)
    expect(wrong.reason).toContain("[\"status\"]")
  })

  it("trajectory: exact, inOrder and anyOrder", () => {
    const item = { name: "a", input: "q", tools: ["lookup_order", "cancel_order"] }
    const made = observe({ toolCalls: calls("lookup_order", "search", "cancel_order") })
    expect(score(Scorer.trajectory(), item, made)).toEqual({
      value: 0,
      pass: false,
      reason: "expected exact [lookup_order, cancel_order], got [lookup_order, search, cancel_order]"
    })
    expect(score(Scorer.trajectory({ mode: "inOrder" }), item, made).pass).toBe(true)
    const reversed = observe({ toolCalls: calls("cancel_order", "lookup_order") })
    expect(score(Scorer.trajectory({ mode: "inOrder" }), item, reversed).pass).toBe(false)
    expect(score(Scorer.trajectory({ mode: "anyOrder" }), item, reversed).pass).toBe(true)
    expect(score(Scorer.trajectory({ mode: "anyOrder" }), item, observe({ toolCalls: calls("lookup_order") })).pass)
      .toBe(false)
    expect(score(Scorer.trajectory(), { name: "none", input: "q", tools: [] }, observe()).pass).toBe(true)
    expect(score(Scorer.trajectory(), { name: "n", input: "q" }, observe()).reason).toBe(
      "the case has no expected tools"
    )
  })

  it("costCeiling", () => {
    const item = { name: "a", input: "q" }
    expect(score(Scorer.costCeiling(0.01), item, observe({ usage: Usage.make({ costUsd: 0.01 }) })).pass).toBe(true)
    expect(score(Scorer.costCeiling(0.01), item, observe({ usage: Usage.make({ costUsd: 0.0125 }) }))).toEqual({
      value: 0,
      pass: false,
      reason: "cost $0.0125 > $0.01"
    })
  })
})

const judgeAgent = Agent.make({
  name: "judge",
  model: "claude-sonnet-4-6",
  prompt: "You grade support answers.",
  output: Scorer.Verdict
})

/** A judge model that reads the answer it is given: an answer from the tool passes, a guess fails. */
const judgeModel = () =>
  FakeLLM.respond((request) => {
    const asked = request.messages.find((m) => m.role === "user")?.content ?? ""
    return Turn({
      content: asked.includes("Answer to grade: Here is what I found")
        ? "{\"score\":0.9,\"reason\":\"states the status from the tool\"}"
        : "{\"score\":0.1,\"reason\":\"guesses the status\"}"
    })
  })

describe("the judge scorer (an agent, scripted offline)", () => {
  it.effect("grades each answer with the judge agent's verdict, and passes at passAt", () =>
    Effect.gen(function*() {
      const requests: Array<string> = []
      const model = judgeModel()
      const judge = Scorer.judge({
        agent: judgeAgent,
        rubric: "The answer states the order's status from the tool, never a guess.",
        layer: Layer.orDie(makeTestCtx({ llm: model, runId: "judge" })),
        passAt: 0.7
      })
      const good = yield* Eval.run({ dataset, task: Task.agent(agent, layerWith(careful)), scorers: [judge] })
      const bad = yield* Eval.run({ dataset, task: Task.agent(agent, layerWith(careless)), scorers: [judge] })
      for (const request of model.requests) requests.push(request.messages.find((m) => m.role === "user")!.content)
      expect(good.cases[0]?.scores.judge).toEqual({ value: 0.9, pass: true, reason: "states the status from the tool" })
      expect(bad.summary.scorers.judge).toEqual({ mean: 0.1, passRate: 0, count: 3 })
      expect(requests[0]).toBe(
        Scorer.judgePrompt(
          "The answer states the order's status from the tool, never a guess.",
          dataset.cases[0]!,
          { output: good.cases[0]!.output!, toolCalls: [], usage: Usage.zero, durationMillis: 0 }
        )
      )
      expect(requests[0]).toContain("Reference answer: shipped")
    }))

  it.effect("a verdict that does not decode scores 0 with the decode error", () =>
    Effect.gen(function*() {
      const judge = Scorer.judge({
        agent: judgeAgent,
        rubric: "anything",
        layer: Layer.orDie(makeTestCtx({ llm: FakeLLM.respond(() => Turn({ content: "{\"score\":3}" })) }))
      })
      const report = yield* Eval.run({ dataset, task: Task.agent(agent, layerWith(careful)), scorers: [judge] })
      const verdict = report.cases[0]?.scores.judge
      expect(verdict?.value).toBe(0)
      expect(verdict?.reason).toMatch(/^the judge gave no verdict: /)
    }))
})

describe("Comparison", () => {
  it.effect("before/after a prompt change: per-case differences, regressions first", () =>
    Effect.gen(function*() {
      const scorers = [Scorer.contains(), Scorer.trajectory()]
      const before = yield* Eval.run({ dataset, task: Task.agent(agent, layerWith(careful)), scorers })
      const mixed = () =>
        FakeLLM.respond((request, call) =>
          request.messages.some((m) => m.role === "user" && m.content.includes("B-9"))
            ? Turn({ content: "Order B-9 is probably on its way." })
            : call === 1 && request.messages.at(-1)?.role !== "tool"
            ? Turn({ toolCalls: [{ id: "c1", name: "lookup_order", arguments: { order_id: "A-771" } }] })
            : Turn({ content: `Here is what I found: ${request.messages.at(-1)?.content}.` })
        )
      const after = yield* Eval.run({
        dataset: Dataset.make("order status", [...dataset.cases.slice(0, 2), {
          name: "D-1",
          input: "D-1?",
          tools: []
        }]),
        task: Task.agent(agent, layerWith(mixed)),
        scorers
      })
      const comparison = Comparison.make(before, after)
      expect(comparison.cases.map((c) => [c.name, c.kind])).toEqual([
        ["A-771", "unchanged"],
        ["B-9", "regressed"],
        ["D-1", "added"],
        ["C-3", "removed"]
      ])
      expect(Comparison.toText(comparison)).toBe(
        [
          "eval 'order status': before -> after",
          "  contains: mean 1 -> 0.333333 (-0.666667)",
          "  trajectory: mean 1 -> 0.333333 (-0.666667)",
          "regressed 'B-9': contains 1 -> 0, trajectory 1 -> 0",
          "    output: \"Here is what I found: order B-9: shipped 2026-08-14, arriving Tuesday.\" -> \"Order B-9 is probably on its way.\"",
          "    tool calls: [lookup_order] -> []",
          "added 'D-1': contains - -> 0, trajectory - -> 0",
          "    output: - -> \"Here is what I found: order A-771: shipped 2026-08-14, arriving Tuesday.\"",
          "    tool calls: [] -> [lookup_order]",
          "removed 'C-3': contains 1 -> -, trajectory 1 -> -",
          "    output: \"Here is what I found: order C-3: shipped 2026-08-14, arriving Tuesday.\" -> -",
          "    tool calls: [lookup_order] -> []",
          "1 case(s) unchanged",
          ""
        ].join("\n")
      )
    }))
})
