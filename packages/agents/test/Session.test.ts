/**
 * Sessions on a thread and compaction within the model's window (issue 40): a thread continues
 * across runs, two requests on one thread never interleave, a 200-turn conversation shaped like the
 * bench's realistic workload stays within a 32,000-token window (counted by the fake model itself,
 * UTF-8 bytes / 4) and still answers a question about turn 3 from the prompt it is sent, and a
 * compacted run that suspends resumes with the prompt it would have sent.
 */
import { Agent, Approval, Compaction, ReActCognition, Session } from "@agentkit/agents"
import {
  AuditStore,
  Budget,
  CheckpointStore,
  ConfigurationError,
  Message,
  ModelCatalog,
  RunContext,
  SessionStore,
  TokenEstimator
} from "@agentkit/core"
import type { Chat } from "@agentkit/core"
import { FakeLLM, makeTestCtx, Turn } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, Option, Schema } from "effect"

const MODEL = "session-model"
const WINDOW = 32_000
const PAYLOAD = "lorem ipsum dolor sit amet, ".repeat(93).slice(0, 2600)
const INSTRUCTION = "Summarise for the assistant. Keep every FACT code."

/** The fake model's own count of a request: UTF-8 bytes of its JSON / 4 (not the framework's estimator). */
const independentTokens = (request: Chat.ChatRequest): number =>
  Math.ceil(Buffer.byteLength(JSON.stringify({ messages: request.messages, tools: request.tools }), "utf8") / 4)

/** The facts a request holds, by turn: `FACT-<turn>-<code>` wherever it appears in the prompt. */
const factsIn = (request: Chat.ChatRequest): Map<string, string> => {
  const facts = new Map<string, string>()
  for (const match of JSON.stringify(request.messages).matchAll(/FACT-(\d+)-([A-Z0-9]+)/g)) {
    facts.set(match[1]!, match[2]!)
  }
  return facts
}

/**
 * A model whose every answer is a function of its request: a summary request gets the facts it
 * holds; a question gets the code the prompt holds for that turn (or "unknown"); a new turn gets
 * an echo call with a 2.6 KB argument; a tool result gets "ok". It records the largest request it
 * was sent, by its own count.
 */
const conversationalModel = () => {
  let largest = 0
  let summaries = 0
  const llm = FakeLLM.respond((request) => {
    largest = Math.max(largest, independentTokens(request))
    const first = request.messages[0]
    if (first?.role === "system" && first.content === INSTRUCTION) {
      summaries++
      const facts = [...factsIn(request)].map(([turn, code]) => `FACT-${turn}-${code}`)
      return Turn({ content: `facts so far: ${facts.join(" ")}` })
    }
    const last = request.messages.at(-1)
    if (last?.role === "user") {
      const question = /^what was the code of turn (\d+)\?$/.exec(last.content)
      if (question !== null) {
        return Turn({ content: factsIn(request).get(question[1]!) ?? "unknown" })
      }
      const turn = /^turn (\d+):/.exec(last.content)?.[1] ?? "x"
      return Turn({ toolCalls: [{ id: `echo-${turn}`, name: "echo", arguments: { text: PAYLOAD } }] })
    }
    return Turn({ content: "ok" })
  })
  return {
    llm,
    get largest() {
      return largest
    },
    get summaries() {
      return summaries
    }
  }
}

const echo = Tool.make("echo", {
  description: "Echo the text back to the caller, unchanged.",
  parameters: { text: Schema.String },
  sideEffecting: false,
  handler: ({ text }) => text
})

const agent = Agent.make({
  name: "support",
  model: MODEL,
  prompt: "You are a support agent. Keep the customer's codes.",
  cognition: ReActCognition.make({ tools: [echo], maxIterations: 4 })
})

const catalog = ModelCatalog.layer({
  [MODEL]: {
    provider: "fake",
    contextWindow: WINDOW,
    maxOutputTokens: 1024,
    prices: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    capabilities: ["tools"]
  }
})

/** The provider's count, bytes / 4 (the default estimator counts bytes, a bound four times looser). */
const quarterBytes = TokenEstimator.layer({
  name: "bytes/4",
  inputTokens: (request) =>
    Math.ceil(Buffer.byteLength(JSON.stringify({ messages: request.messages, tools: request.tools }), "utf8") / 4)
})

const code = (turn: number) => `C${(turn * 7919).toString(36).toUpperCase()}`

/** One request of a conversation on `threadId`, in its own run (its own context, as a server gives it). */
const request = (llm: FakeLLM.FakeLLM, threadId: string, runId: string, input: string, options?: Session.Options) =>
  Session.run(agent, input, options).pipe(
    Effect.provide(makeTestCtx({ llm, threadId, runId, scope: { orgId: "acme" } }))
  )

describe("Session", () => {
  it.effect("continues a thread across runs: the second run is sent the first's turns", () =>
    Effect.gen(function*() {
      const model = conversationalModel()
      yield* request(model.llm, "t-1", "r1", `turn 1: my code is FACT-1-${code(1)}`)
      const second = yield* request(model.llm, "t-1", "r2", "what was the code of turn 1?")
      expect(second.output).toBe(code(1))
      const stored = yield* Session.messages.pipe(
        Effect.provide(RunContext.layer({ threadId: "t-1", scope: { orgId: "acme" } }))
      )
      // no system prompt; run 1: user, call, result, answer; run 2: question, answer
      expect(stored.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user", "assistant"])
    }).pipe(Effect.provide(SessionStore.SessionStore.memory())))

  it.effect("a thread is per tenant", () =>
    Effect.gen(function*() {
      const model = conversationalModel()
      yield* request(model.llm, "t-1", "r1", `turn 1: my code is FACT-1-${code(1)}`)
      const other = yield* Session.run(agent, "what was the code of turn 1?").pipe(
        Effect.provide(makeTestCtx({ llm: model.llm, threadId: "t-1", runId: "r2", scope: { orgId: "globex" } }))
      )
      expect(other.output).toBe("unknown")
    }).pipe(Effect.provide(SessionStore.SessionStore.memory())))

  it.effect("a run without a threadId fails with a ConfigurationError naming it", () =>
    Effect.gen(function*() {
      const model = conversationalModel()
      const exit = yield* Effect.exit(Session.run(agent, "hi").pipe(Effect.provide(makeTestCtx({ llm: model.llm }))))
      expect(exit).toStrictEqual(Exit.fail(expect.any(ConfigurationError)))
      expect(model.llm.calls).toBe(0)
    }).pipe(Effect.provide(SessionStore.SessionStore.memory())))

  it.effect("two requests on one thread at once: the second is refused with ThreadBusy, never interleaved", () =>
    Effect.gen(function*() {
      const entered = yield* Deferred.make<void>()
      const gate = yield* Deferred.make<void>()
      const llm = FakeLLM.respond((request) =>
        Effect.gen(function*() {
          const last = request.messages.at(-1)
          if (last?.role === "user" && last.content === "slow") {
            yield* Deferred.succeed(entered, undefined)
            yield* Deferred.await(gate)
          }
          return Turn({ content: `seen ${request.messages.length}` })
        })
      )
      const first = yield* Effect.fork(request(llm, "t-2", "r1", "slow"))
      yield* Deferred.await(entered)
      const second = yield* Effect.exit(request(llm, "t-2", "r2", "fast"))
      expect(second).toStrictEqual(Exit.fail(expect.objectContaining({ _tag: "ThreadBusy", runId: "r1" })))
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(first)
      const third = yield* request(llm, "t-2", "r3", "after")
      // the system prompt, run 1's two messages, and its own question
      expect(third.output).toBe("seen 4")
      const stored = yield* Session.messages.pipe(
        Effect.provide(RunContext.layer({ threadId: "t-2", scope: { orgId: "acme" } }))
      )
      expect(stored.map((m) => m.role === "user" ? m.content : "answer")).toEqual(["slow", "answer", "after", "answer"])
    }).pipe(Effect.provide(SessionStore.SessionStore.memory())))

  it.effect("an interrupted request (no checkpoint store) frees the thread and appends nothing", () =>
    Effect.gen(function*() {
      const entered = yield* Deferred.make<void>()
      const llm = FakeLLM.respond((request) =>
        request.messages.at(-1)?.role === "user" && request.messages.at(-1)?.content === "hang"
          ? Effect.zipRight(Deferred.succeed(entered, undefined), Effect.as(Effect.never, Turn({})))
          : Turn({ content: "fine" })
      )
      const hanging = yield* Effect.fork(request(llm, "t-5", "r1", "hang"))
      yield* Deferred.await(entered)
      yield* Fiber.interrupt(hanging)
      const next = yield* request(llm, "t-5", "r2", "hello")
      expect(next.output).toBe("fine")
      const stored = yield* Session.messages.pipe(
        Effect.provide(RunContext.layer({ threadId: "t-5", scope: { orgId: "acme" } }))
      )
      expect(stored.map((m) => m.role === "user" ? m.content : m.role)).toEqual(["hello", "assistant"])
    }).pipe(Effect.provide(SessionStore.SessionStore.memory())))

  it.effect("a failed run appends nothing and frees the thread", () =>
    Effect.gen(function*() {
      const model = conversationalModel()
      yield* request(model.llm, "t-3", "r1", `turn 1: FACT-1-${code(1)}`)
      const exit = yield* Effect.exit(
        Session.run(agent, "turn 2: again").pipe(
          Effect.provide(
            makeTestCtx({
              llm: model.llm,
              threadId: "t-3",
              runId: "r2",
              scope: { orgId: "acme" },
              budget: { maxModelCalls: 1 }
            })
          )
        )
      )
      expect(Exit.isFailure(exit)).toBe(true)
      const stored = yield* Session.messages.pipe(
        Effect.provide(RunContext.layer({ threadId: "t-3", scope: { orgId: "acme" } }))
      )
      expect(stored).toHaveLength(4)
      const next = yield* request(model.llm, "t-3", "r3", "what was the code of turn 1?")
      expect(next.output).toBe(code(1))
    }).pipe(Effect.provide(SessionStore.SessionStore.memory())))

  it.effect("the thread keeps at most maxMessages, dropping whole turns (a call never without its result)", () =>
    Effect.gen(function*() {
      const model = conversationalModel()
      for (let turn = 1; turn <= 3; turn++) {
        yield* request(model.llm, "t-4", `r${turn}`, `turn ${turn}: x`, { maxMessages: 5 })
      }
      const stored = yield* Session.messages.pipe(
        Effect.provide(RunContext.layer({ threadId: "t-4", scope: { orgId: "acme" } }))
      )
      // the last run: user, the call with its result (one turn), the answer; then the older answer fits
      expect(stored.map((m) => m.role)).toEqual(["assistant", "user", "assistant", "tool", "assistant"])
    }).pipe(Effect.provide(SessionStore.SessionStore.memory())))
})

describe("Session: a suspended run keeps its thread", () => {
  it.effect("others are refused while it waits; Session.resume appends its turns, once", () =>
    Effect.gen(function*() {
      const refund = Tool.make("refund", {
        description: "Refund an order (a person approves it).",
        parameters: { order: Schema.String },
        sideEffecting: true,
        requiresApproval: true,
        handler: ({ order }) => `refunded ${order}`
      })
      const gated = Agent.make({
        name: "support",
        model: MODEL,
        prompt: "You are a support agent.",
        cognition: ReActCognition.make({ tools: [refund], maxIterations: 4 })
      })
      const llm = FakeLLM.respond((request) =>
        request.messages.at(-1)?.role === "user"
          ? Turn({
            toolCalls: [{ id: `refund-${request.messages.length}`, name: "refund", arguments: { order: "A-7" } }]
          })
          : Turn({ content: "refunded" })
      )
      const ctx = (runId: string) => makeTestCtx({ llm, runId, threadId: "t-9", scope: { orgId: "acme" } })
      const suspended = yield* Session.run(gated, "refund A-7").pipe(Effect.provide(ctx("r1")))
      expect(suspended.stopReason).toBe("awaiting_approval")
      const busy = yield* Effect.flip(Session.run(gated, "hello?").pipe(Effect.provide(ctx("r2"))))
      expect(busy).toMatchObject({ _tag: "ThreadBusy", runId: "r1" })
      const decisions = Approval.decideEach(suspended.suspended!.pending, (p) => Approval.approve(p.digest))
      const stranger = yield* Effect.flip(Session.resume(gated, "r9", decisions).pipe(Effect.provide(ctx("r9"))))
      expect(stranger).toMatchObject({ _tag: "ThreadBusy", runId: "r1" })
      // a refused resume (a stale digest: nothing runs) leaves the run waiting, holding its thread
      const stale = Approval.decideEach(suspended.suspended!.pending, () => Approval.approve("0".repeat(64)))
      const refused = yield* Effect.flip(Session.resume(gated, "r1", stale).pipe(Effect.provide(ctx("r1"))))
      expect(refused._tag).toBe("DigestMismatch")
      expect(yield* Effect.flip(Session.run(gated, "hello?").pipe(Effect.provide(ctx("r2"))))).toMatchObject({
        _tag: "ThreadBusy"
      })
      const done = yield* Session.resume(gated, "r1", decisions).pipe(Effect.provide(ctx("r1")))
      expect(done.output).toBe("refunded")
      const stored = yield* Session.messages.pipe(
        Effect.provide(RunContext.layer({ threadId: "t-9", scope: { orgId: "acme" } }))
      )
      expect(stored.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"])
      // its claim ended with the append: resuming it again is refused, and nothing runs
      const again = yield* Effect.flip(Session.resume(gated, "r1", decisions).pipe(Effect.provide(ctx("r1"))))
      expect(again).toMatchObject({ _tag: "StaleThreadClaim" })
      // the thread is free again
      const next = yield* Session.run(gated, "thanks").pipe(Effect.provide(ctx("r3")))
      expect(next.stopReason).toBe("awaiting_approval")
    }).pipe(Effect.provide(Layer.merge(SessionStore.SessionStore.memory(), CheckpointStore.memory()))))
})

describe("Compaction", () => {
  const compaction = (strategy?: Compaction.Strategy) =>
    Compaction.Compaction.layer({
      share: 0.8,
      target: 0.4,
      strategy: strategy ?? Compaction.compose(
        Compaction.stubToolResults({ keepLastTurns: 4 }),
        Compaction.summarise({ keepLastTurns: 4, instruction: INSTRUCTION, maxTokens: 512 })
      )
    })

  const conversation = (strategy?: Compaction.Strategy) =>
    Effect.gen(function*() {
      const model = conversationalModel()
      for (let turn = 1; turn <= 200; turn++) {
        const input = turn === 3 ? `turn 3: remember FACT-3-${code(3)}` : `turn ${turn}: FACT-${turn}-${code(turn)}`
        yield* request(model.llm, "long", `run-${turn}`, input)
      }
      const answer = yield* request(model.llm, "long", "question", "what was the code of turn 3?")
      return { model, answer: answer.output }
    }).pipe(
      Effect.provide(Layer.mergeAll(SessionStore.SessionStore.memory(), compaction(strategy), catalog, quarterBytes))
    )

  it.effect(
    "200 realistic turns stay within a 32,000-token window, and turn 3's fact survives in the prompt",
    () =>
      Effect.gen(function*() {
        const { answer, model } = yield* conversation()
        expect(model.largest).toBeLessThanOrEqual(WINDOW)
        // without compaction the thread would hold 200 x ~5.4 KB, about 270,000 tokens by the same count
        expect(model.largest).toBeGreaterThan(WINDOW * 0.5)
        expect(model.summaries).toBeGreaterThan(0)
        expect(answer).toBe(code(3))
      }),
    { timeout: 120_000 }
  )

  it.effect(
    "the answer is the prompt's: a strategy that drops old turns loses turn 3's fact",
    () =>
      Effect.gen(function*() {
        const drop: Compaction.Strategy = {
          name: "drop",
          apply: (messages) =>
            Effect.sync(() => {
              const { system, turns } = Compaction.turnsOf(messages)
              return [...system, ...turns.slice(-4).flat()]
            })
        }
        const { answer, model } = yield* conversation(drop)
        expect(model.largest).toBeLessThanOrEqual(WINDOW)
        expect(answer).toBe("unknown")
      }),
    { timeout: 120_000 }
  )

  it.effect("a history far over the window is summarised in pieces, each request within the window", () =>
    Effect.gen(function*() {
      const model = conversationalModel()
      const history: Array<Message.Message> = []
      for (let turn = 1; turn <= 120; turn++) {
        history.push(
          Message.user(`turn ${turn}: FACT-${turn}-${code(turn)}`),
          Message.assistant("", [{ id: `echo-${turn}`, name: "echo", arguments: { text: PAYLOAD } }]),
          Message.toolResult({ toolCallId: `echo-${turn}`, name: "echo", content: PAYLOAD }),
          Message.assistant("ok")
        )
      }
      // about 160,000 tokens by the fake's count: five times the window
      expect(independentTokens({ model: MODEL, messages: history, tools: [] })).toBeGreaterThan(WINDOW * 4)
      const result = yield* agent.run([...history, Message.user("what was the code of turn 3?")]).pipe(
        Effect.provide(makeTestCtx({ llm: model.llm })),
        Effect.provide(Layer.mergeAll(compaction(), catalog, quarterBytes))
      )
      expect(model.summaries).toBeGreaterThan(1)
      expect(model.largest).toBeLessThanOrEqual(WINDOW)
      expect(result.output).toBe(code(3))
    }))

  it("keeps a tool call beside its results and the system prompt first", () => {
    const messages: ReadonlyArray<Message.Message> = [
      Message.system("s"),
      Message.user("u1"),
      Message.assistant("", [{ id: "a", name: "echo", arguments: {} }, { id: "b", name: "echo", arguments: {} }]),
      Message.toolResult({ toolCallId: "a", name: "echo", content: "ra" }),
      Message.toolResult({ toolCallId: "b", name: "echo", content: "rb" }),
      Message.assistant("done")
    ]
    const { system, turns } = Compaction.turnsOf(messages)
    expect(system).toEqual([Message.system("s")])
    expect(turns.map((t) => t.map((m) => m.role))).toEqual([["user"], ["assistant", "tool", "tool"], ["assistant"]])
  })

  it.effect("a summary's model call is charged to the run's budget and audited", () =>
    Effect.gen(function*() {
      const audit = AuditStore.makeMemory()
      const model = conversationalModel()
      // a history over the share, then one run: a summary call, then its own two
      const history: Array<Message.Message> = []
      for (let turn = 1; turn <= 30; turn++) {
        history.push(
          Message.user(`turn ${turn}: FACT-${turn}-${code(turn)}`),
          Message.assistant("", [{ id: `echo-${turn}`, name: "echo", arguments: { text: PAYLOAD } }]),
          Message.toolResult({ toolCallId: `echo-${turn}`, name: "echo", content: PAYLOAD }),
          Message.assistant("ok")
        )
      }
      const result = yield* agent.run([...history, Message.user("turn 31: FACT-31-X")]).pipe(
        Effect.provide(makeTestCtx({ llm: model.llm, runId: "charged" })),
        Effect.provide(Layer.mergeAll(compaction(), catalog, quarterBytes, AuditStore.layer(audit)))
      )
      expect(model.summaries).toBeGreaterThanOrEqual(1)
      // FakeLLM's default usage is 5 output tokens a call: the two turns and every summary call
      expect(result.usage.outputTokens).toBe(5 * (2 + model.summaries))
      expect(result.ownUsage.outputTokens).toBe(10)
      const records = audit.records.filter((r) => r.tool === "agentkit.compaction")
      expect(records).toHaveLength(1)
      expect(records[0]).toMatchObject({ runId: "charged", callId: "compact-0", decision: "executed" })
      expect(records[0]!.reason).toMatch(/^stub-tool-results\+summarise: \d+ -> \d+ tokens \(bytes\/4\) of 32000$/)
      // a budget of two model calls cannot pay for the summary and both turns
      const capped = yield* Effect.exit(
        agent.run([...history, Message.user("turn 31: FACT-31-X")]).pipe(
          Effect.provide(
            makeTestCtx({ llm: conversationalModel().llm, budget: Budget.unsafeMake({ maxModelCalls: 2 }) })
          ),
          Effect.provide(Layer.mergeAll(compaction(), catalog, quarterBytes))
        )
      )
      expect(capped).toStrictEqual(Exit.fail(expect.objectContaining({ _tag: "BudgetExceeded" })))
    }))

  it.effect("a compacted run that suspends resumes with the prompt it would have sent", () =>
    Effect.gen(function*() {
      const refund = Tool.make("refund", {
        description: "Refund an order (a person approves it).",
        parameters: { order: Schema.String },
        sideEffecting: true,
        requiresApproval: true,
        handler: ({ order }) => `refunded ${order}`
      })
      const gated = Agent.make({
        name: "support",
        model: MODEL,
        prompt: "You are a support agent.",
        cognition: ReActCognition.make({ tools: [echo, refund], maxIterations: 4 })
      })
      const history: Array<Message.Message> = []
      for (let turn = 1; turn <= 30; turn++) {
        history.push(
          Message.user(`turn ${turn}: FACT-${turn}-${code(turn)}`),
          Message.assistant("", [{ id: `echo-${turn}`, name: "echo", arguments: { text: PAYLOAD } }]),
          Message.toolResult({ toolCallId: `echo-${turn}`, name: "echo", content: PAYLOAD }),
          Message.assistant("ok")
        )
      }
      const input = [...history, Message.user("refund A-7")]
      // the model: a summary, a refund call, then an answer naming what it was sent
      const model = () =>
        FakeLLM.respond((request) => {
          const first = request.messages[0]
          if (first?.role === "system" && first.content === INSTRUCTION) return Turn({ content: "summary FACT-3-Z" })
          const last = request.messages.at(-1)
          if (last?.role === "user") {
            return Turn({ toolCalls: [{ id: "refund-1", name: "refund", arguments: { order: "A-7" } }] })
          }
          return Turn({ content: `answered after ${request.messages.length} messages` })
        })
      const services = Layer.mergeAll(compaction(), catalog, quarterBytes)

      // straight through: an approver decides in-process
      const straight = model()
      const approver = Layer.succeed(Approval.Approver, {
        decide: (request) => Effect.succeed(Approval.decideEach(request.pending, (p) => Approval.approve(p.digest)))
      })
      yield* gated.run(input).pipe(
        Effect.provide(makeTestCtx({ llm: straight, runId: "straight" })),
        Effect.provide(Layer.mergeAll(services, approver))
      )

      // suspended, then resumed by another "process" (a new model, the same store)
      const store = CheckpointStore.makeMemory()
      const before = model()
      const suspended = yield* gated.run(input).pipe(
        Effect.provide(makeTestCtx({ llm: before, runId: "gated" })),
        Effect.provide(Layer.mergeAll(services, CheckpointStore.layer(store)))
      )
      expect(suspended.suspended?.pending).toHaveLength(1)
      const pending = suspended.suspended!.pending
      const after = model()
      yield* gated.resume("gated", Approval.decideEach(pending, (p) => Approval.approve(p.digest))).pipe(
        Effect.provide(makeTestCtx({ llm: after, runId: "gated" })),
        Effect.provide(Layer.mergeAll(services, CheckpointStore.layer(store)))
      )
      // the resumed run made no summary of its own, and sent exactly what the straight run sent
      expect(after.requests).toHaveLength(1)
      expect(after.requests[0]!.messages).toEqual(straight.requests.at(-1)!.messages)
      // and it is the compacted prompt: the summary in place of the old turns
      expect(after.requests[0]!.messages.length).toBeLessThan(input.length)
      expect(JSON.stringify(after.requests[0]!.messages)).toContain("summary FACT-3-Z")
      const saved = yield* store.load("gated")
      expect(Option.isSome(saved)).toBe(true)
    }))
})
