/**
 * The approvals demo as a regression test: a recorded run of it (test/fixtures, committed,
 * redacted) replays offline to the same result, printed lines and checkpoints; a change to the
 * agent's prompt, or another decision, makes the replay fail naming the first different turn.
 *
 * `UPDATE_FIXTURES=1 pnpm exec vitest run --project app:support-desk approvals.replay` rewrites
 * the fixture from a fresh recording.
 */
import { Agent, Approval, ReActCognition } from "@agentkit/agents"
import { CheckpointStore, Message } from "@agentkit/core"
import type { ChatModel, Invoker } from "@agentkit/core"
import { Fixture, Recorder, Recording, Replay } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { readFileSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { program, REQUEST, scriptedModel } from "../src/approvals.js"
import type { Terminal } from "../src/approvals.js"
import { PROMPT, runLayer, supportAgent } from "../src/conversation.js"
import { orderTools, seedOrders } from "../src/orders.js"

const FIXTURE = fileURLToPath(new URL("./fixtures/approvals.recording.json", import.meta.url))

/** A terminal that answers from a list and records what it printed. */
const terminalAnswering = (answers: ReadonlyArray<string>) => {
  const printed: Array<string> = []
  let next = 0
  const terminal: Terminal = {
    interactive: true,
    ask: () => Promise.resolve(answers[next++] ?? ""),
    print: (line) => void printed.push(line)
  }
  return { terminal, printed }
}

/** An in-memory checkpoint store that keeps every state it is given, in order. */
const capturingStore = () => {
  const memory = CheckpointStore.makeMemory()
  const written: Array<unknown> = []
  const store: CheckpointStore.Service = {
    ...memory,
    create: (run, lease) => {
      written.push({ created: JSON.parse(run.state) })
      return memory.create(run, lease)
    },
    save: (lease, request) => {
      written.push({ [request.status]: JSON.parse(request.state) })
      return memory.save(lease, request)
    },
    finish: (lease, request) => {
      written.push({ [request.status]: JSON.parse(request.result) })
      return memory.finish(lease, request)
    }
  }
  return { store, written }
}

/** The demo, approved at the terminal, under a capturing checkpoint store. */
const demo = (model: Layer.Layer<ChatModel>, pipelines: Invoker.Options = {}, answers: ReadonlyArray<string> = ["y"]) =>
  Effect.gen(function*() {
    const { printed, terminal } = terminalAnswering(answers)
    const { store, written } = capturingStore()
    const result = yield* program(terminal, model, pipelines).pipe(
      Effect.provide(CheckpointStore.layer(store))
    )
    return { result, printed, checkpoints: written }
  })

const committed = () => Effect.orDie(Recording.read(FIXTURE))

/** An approver that approves every pending call. */
const approveAll = Layer.succeed(Approval.Approver, {
  decide: ({ pending }) => Effect.succeed(Approval.decideEach(pending, (entry) => Approval.approve(entry.digest)))
})

describe("the approvals demo, recorded and replayed", () => {
  it.effect("recording the demo today gives the committed fixture (redacted JSON, turn by turn)", () =>
    Effect.gen(function*() {
      const recorder = Recorder.make()
      yield* demo(scriptedModel(), { chatMiddleware: [recorder.middleware], toolMiddleware: [recorder.middleware] })
      const text = Recording.toText(recorder.recording())
      if (process.env["UPDATE_FIXTURES"] === "1") writeFileSync(FIXTURE, text)
      expect(readFileSync(FIXTURE, "utf8")).toBe(text)
      expect(recorder.recording().exchanges.map((e) => `${e._tag}:${e.turn}`)).toEqual(["Chat:1", "Tool:1", "Chat:2"])
    }))

  it.effect("replays offline to the same result, printed lines and checkpoints (TestClock, fixed run id)", () =>
    Effect.gen(function*() {
      const live = yield* demo(scriptedModel())
      const replay = Replay.make(yield* committed(), { tools: "real" })
      const replayed = yield* Replay.orDivergence(
        demo(replay.llm.layer, { toolMiddleware: [replay.toolMiddleware] })
      )
      replay.assertConsumed()
      expect(replayed.result).toEqual(live.result)
      expect(replayed.printed).toEqual(live.printed)
      expect(replayed.printed.at(-1)).toBe("order B-102: cancelled")
      expect(replayed.checkpoints).toEqual(live.checkpoints)
      expect(live.checkpoints.length).toBeGreaterThanOrEqual(3)
    }))

  it.effect("with the recorded tool results, the tool does not run: same answer, the order stays as it was", () =>
    Effect.gen(function*() {
      const live = yield* demo(scriptedModel())
      const replay = Replay.make(yield* committed())
      const replayed = yield* Replay.orDivergence(demo(replay.llm.layer, { toolMiddleware: [replay.toolMiddleware] }))
      replay.assertConsumed()
      expect(replayed.result).toEqual(live.result)
      expect(replayed.checkpoints).toEqual(live.checkpoints)
      expect(replayed.printed.at(-1)).toBe("order B-102: processing, ships in 2 days")
    }))

  it.effect("an agent built with replay.tool doubles of its tools replays the same result, with no middleware", () =>
    Effect.gen(function*() {
      const live = yield* demo(scriptedModel())
      const replay = Replay.make(yield* committed())
      const { cancelOrder, lookupOrder } = orderTools(seedOrders())
      const agent = Agent.make({
        name: "support",
        model: "claude-sonnet-4-6",
        prompt: PROMPT,
        cognition: ReActCognition.make({ tools: [replay.tool(lookupOrder), replay.tool(cancelOrder)] })
      })
      const result = yield* Replay.orDivergence(
        agent.run([Message.user(REQUEST)]).pipe(
          Effect.provide(Layer.merge(runLayer("support-desk-approvals", replay.llm.layer), approveAll))
        )
      )
      replay.assertConsumed()
      expect(result).toEqual(live.result)
    }))

  it.effect("a change to the agent's prompt fails the replay at turn 1, naming the field", () =>
    Effect.gen(function*() {
      const replay = Replay.make(yield* committed())
      const exit = yield* Effect.exit(
        Replay.orDivergence(
          supportAgent(seedOrders(), "Answer order questions briefly. Use the tools.").run([Message.user(REQUEST)])
            .pipe(
              Effect.provide(
                Layer.merge(
                  runLayer("support-desk-approvals", replay.llm.layer, { toolMiddleware: [replay.toolMiddleware] }),
                  approveAll
                )
              )
            )
        )
      )
      const error = Fixture.failureOf(exit)
      expect(error).toBeInstanceOf(Replay.ReplayDivergence)
      expect(error).toMatchObject({ turn: 1, exchange: "model request", path: "messages[0].content" })
      expect(error.message).toMatch(
        /^replay diverged at turn 1 \(model request\): messages\[0\]\.content: the recording has .*"Answer order questions\. Use the tools; never guess/
      )
    }))

  it.effect("another decision (rejected) fails the replay at turn 2, where the model first sees it", () =>
    Effect.gen(function*() {
      const replay = Replay.make(yield* committed())
      const exit = yield* Effect.exit(
        Replay.orDivergence(demo(replay.llm.layer, { toolMiddleware: [replay.toolMiddleware] }, ["n", "not today"]))
      )
      const error = Fixture.failureOf(exit)
      expect(error).toMatchObject({ turn: 2, exchange: "model request", path: "messages[3].content" })
      expect(error.message).toContain("DENIED")
    }))
})
