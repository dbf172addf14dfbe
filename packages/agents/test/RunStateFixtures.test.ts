/**
 * The golden run-state fixtures (`fixtures/run-state/<version>/*.json`, written once by
 * `generate.ts` when that version was released): every one must keep decoding, and every run
 * must keep resuming, in every later release. A fixture is a stored state as an older process
 * left it; the test plants it in a store the way that process left its record, then drives it.
 */
import { Agent, Approval, Coordinator, Graph, ReActCognition, RunState } from "@agentkit/agents"
import type { AgentResult } from "@agentkit/agents"
import { CheckpointStore, Scope } from "@agentkit/core"
import type { Message } from "@agentkit/core"
import { FakeLLM, makeTestCtx, Seed, Turn } from "@agentkit/testing"
import { asTool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { recordOf } from "./fixtures.js"

const root = fileURLToPath(new URL("./fixtures/run-state/", import.meta.url))
const fixtures = readdirSync(root, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .flatMap((version) =>
    readdirSync(join(root, version.name))
      .filter((name) => name.endsWith(".json"))
      .map((name) => ({
        version: version.name,
        name: name.slice(0, -".json".length),
        text: readFileSync(join(root, version.name, name), "utf8")
      }))
  )

const fixture = (name: string, version = "v1") => {
  const found = fixtures.find((f) => f.name === name && f.version === version)
  if (found === undefined) throw new Error(`no fixture ${version}/${name}`)
  return found.text
}

const support = Agent.make({
  name: "support",
  model: Seed.MODEL,
  prompt: Seed.PROMPT,
  cognition: ReActCognition.make({ tools: [Seed.lookupOrder, Seed.cancelOrder] })
})
const coordinator = Agent.make({
  name: "coordinator",
  model: Seed.MODEL,
  prompt: Seed.PROMPT,
  cognition: ReActCognition.make({
    tools: [
      asTool(
        Agent.make({
          name: "researcher",
          model: "claude-haiku-4-5",
          prompt: "Research briefly.",
          cognition: ReActCognition.make({ tools: [Seed.lookupOrder] })
        }),
        { name: "research", description: "Delegate a research sub-task to the researcher agent." }
      )
    ]
  })
})

/**
 * Plants stored states as their process left them: a top-level record (and its sub-runs' under
 * its lease), `suspended` when its state waits on entries, else `running` with the lease
 * released (the process stopped).
 */
const plant = (store: CheckpointStore.Service, texts: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const states = texts.map((text) => ({ text, state: JSON.parse(text) as RunState.RunState }))
    const [top, ...children] = states
    const tenant = Scope.make(top!.state.context.scope).storeKey
    const created = yield* store.create(
      { runId: top!.state.runId, rootRunId: top!.state.runId, agent: top!.state.agent, tenant, state: top!.text },
      { owner: "the process that stopped", ttlMs: 30_000 }
    )
    for (const { state, text } of children) {
      const parentRunId = state.runId.slice(0, state.runId.lastIndexOf("/"))
      yield* store.create({
        runId: state.runId,
        rootRunId: top!.state.runId,
        parentRunId,
        agent: state.agent,
        tenant,
        state: text
      }, created.lease)
    }
    if (top!.state.phase === "suspended") {
      yield* store.save(created.lease, {
        runId: top!.state.runId,
        expectedVersion: 1,
        status: "suspended",
        state: top!.text
      })
    }
    yield* store.release(created.lease)
    return { state: top!.state, context: { runId: top!.state.runId, scope: top!.state.context.scope } }
  })

const toolMessages = (messages: ReadonlyArray<Message.Message>) =>
  messages.flatMap((
    message
  ) => (message.role === "tool" ? [[message.toolCallId, message.content, message.isError] as const] : []))

const driven = (result: AgentResult.AgentResult) =>
  expect(result).toMatchObject({ partial: false, stopReason: "end_turn" })

describe("golden run-state fixtures", () => {
  it("there is a fixture of every phase of version 1", () => {
    const phases = fixtures.filter((f) => f.version === "v1").map((f) =>
      (JSON.parse(f.text) as RunState.RunState).phase
    )
    expect(new Set(phases)).toEqual(new Set(["model", "tools", "suspended"]))
    expect(fixtures.map((f) => f.name)).toEqual(
      expect.arrayContaining([
        "fresh-after-round",
        "tools-mid-round",
        "suspended-approval",
        "suspended-in-doubt",
        "sub-run-waiting",
        "sub-run-waiting.child"
      ])
    )
  })

  for (const { name, text, version } of fixtures) {
    it.effect(`${version}/${name} decodes into the newest version, and re-encodes to the same state`, () =>
      Effect.gen(function*() {
        const runId = (JSON.parse(text) as { runId: string }).runId
        const state = yield* RunState.decode(runId, text)
        expect(state.version).toBe(RunState.currentVersion)
        expect(JSON.parse(RunState.encode(state))).toEqual(JSON.parse(text))
      }))
  }

  it.effect("fresh-after-round: driven again, one model call from the saved conversation; the round is not repeated", () =>
    Effect.gen(function*() {
      const store = CheckpointStore.makeMemory()
      const { context } = yield* plant(store, [fixture("fresh-after-round")])
      const llm = FakeLLM.script([Turn({ content: "Order A-771 shipped on 14 August." })])
      const result = yield* support.run("ignored").pipe(
        Effect.provide(Layer.merge(makeTestCtx({ llm, ...context }), CheckpointStore.layer(store)))
      )
      driven(result)
      expect(llm.calls).toBe(1)
      expect(toolMessages(llm.requests[0]!.messages)).toEqual([["c1", Seed.STATUS, false]])
      expect((yield* recordOf(store, context.runId)).status).toBe("done")
    }))

  it.effect("tools-mid-round: only the call without a result runs; results in call order", () =>
    Effect.gen(function*() {
      const store = CheckpointStore.makeMemory()
      const { context } = yield* plant(store, [fixture("tools-mid-round")])
      const llm = FakeLLM.script([Turn({ content: "Both orders found." })])
      const result = yield* support.run("ignored").pipe(
        Effect.provide(Layer.merge(makeTestCtx({ llm, ...context }), CheckpointStore.layer(store)))
      )
      driven(result)
      expect(toolMessages(llm.requests[0]!.messages)).toEqual([
        ["c1", Seed.STATUS, false],
        ["c2", "order B-102: shipped 2026-08-14, arriving Tuesday", false]
      ])
    }))

  it.effect("suspended-approval: resumed with an approval of its entry, the call runs and the run finishes", () =>
    Effect.gen(function*() {
      const store = CheckpointStore.makeMemory()
      const { context, state } = yield* plant(store, [fixture("suspended-approval")])
      const [entry] = state.pending
      expect(entry).toMatchObject({ kind: "Approval", reasons: ["autonomy_gated"] })
      const llm = FakeLLM.script([Turn({ content: "Cancelled." })])
      const result = yield* support
        .resume(context.runId, Approval.decisions([[entry!.id, Approval.approve(entry!.digest)]]))
        .pipe(
          Effect.provide(Layer.merge(makeTestCtx({ llm, autonomy: "gated", ...context }), CheckpointStore.layer(store)))
        )
      driven(result)
      expect(toolMessages(llm.requests[0]!.messages)).toEqual([[
        "c1",
        "order A-771 cancelled (duplicate order)",
        false
      ]])
    }))

  it.effect("suspended-in-doubt: resumed with markDone, the model sees the outcome and the call does not run", () =>
    Effect.gen(function*() {
      const store = CheckpointStore.makeMemory()
      const { context, state } = yield* plant(store, [fixture("suspended-in-doubt")])
      const [entry] = state.pending
      expect(entry).toMatchObject({
        kind: "InDoubt",
        reasons: ["in_doubt"],
        request: { key: `${context.runId}/t0/c0` }
      })
      const llm = FakeLLM.script([Turn({ content: "It was cancelled." })])
      const result = yield* support
        .resume(
          context.runId,
          Approval.decisions([[
            entry!.id,
            Approval.markDone(entry!.digest, "order A-771 cancelled (seen in the order system)")
          ]])
        )
        .pipe(Effect.provide(Layer.merge(makeTestCtx({ llm, ...context }), CheckpointStore.layer(store))))
      driven(result)
      expect(toolMessages(llm.requests[0]!.messages)).toEqual([[
        "c1",
        "order A-771 cancelled (seen in the order system)",
        false
      ]])
    }))

  it.effect("sub-run-waiting: the parent re-drives its call, the sub-run goes on from its own state (its round not repeated)", () =>
    Effect.gen(function*() {
      const store = CheckpointStore.makeMemory()
      const { context } = yield* plant(store, [fixture("sub-run-waiting"), fixture("sub-run-waiting.child")])
      const llm = FakeLLM.script([
        Turn({ content: "A-771 shipped on 14 August." }), // the researcher, from its saved round
        Turn({ content: "It shipped." }) // the coordinator
      ])
      const result = yield* coordinator.run("ignored").pipe(
        Effect.provide(Layer.merge(makeTestCtx({ llm, ...context }), CheckpointStore.layer(store)))
      )
      driven(result)
      expect(llm.requests[0]!.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"])
      expect(toolMessages(llm.requests[0]!.messages)).toEqual([["s1", Seed.STATUS, false]])
      expect(toolMessages(llm.requests[1]!.messages)).toEqual([["r1", "A-771 shipped on 14 August.", false]])
      expect((yield* recordOf(store, `${context.runId}/research#r1`)).status).toBe("done")
    }))

  it.effect("coordinator-mid-turn: taken over in turn 1; the finished turn's child is not run again", () =>
    Effect.gen(function*() {
      const store = CheckpointStore.makeMemory()
      const { context, state } = yield* plant(store, [fixture("coordinator-mid-turn")])
      expect(Schema.decodeUnknownSync(Coordinator.StateV1)(state.cognitionState)).toMatchObject({
        turn: 1,
        results: [{ child: "drafter" }]
      })
      const desk = Agent.make({
        name: "desk",
        model: Seed.MODEL,
        cognition: Coordinator.roundRobin({
          children: [
            Agent.make({ name: "drafter", model: "claude-haiku-4-5" }),
            Agent.make({ name: "checker", model: "claude-haiku-4-5" })
          ],
          maxTurns: 2
        })
      })
      const llm = FakeLLM.script([Turn({ content: "Checked: A-771 shipped." })])
      const result = yield* desk.run("ignored").pipe(
        Effect.provide(Layer.merge(makeTestCtx({ llm, ...context }), CheckpointStore.layer(store)))
      )
      expect([result.output, result.stopReason]).toEqual(["Checked: A-771 shipped.", "max_turns"])
      expect(llm.requests[0]!.messages.at(-1)!.content).toContain("[drafter]: Draft: A-771 shipped.")
      expect((yield* recordOf(store, context.runId)).status).toBe("done")
    }))

  it.effect("graph-suspended-gate: resumed with an approval of its gate, the rest of the graph runs", () =>
    Effect.gen(function*() {
      const store = CheckpointStore.makeMemory()
      const { context, state } = yield* plant(store, [fixture("graph-suspended-gate")])
      const [entry] = state.pending
      expect(entry).toMatchObject({ kind: "Gate", reasons: ["gate"], call: { arguments: { node: "review" } } })
      const refunds = Graph.make({
        name: "refunds",
        nodes: {
          research: Graph.agent(Agent.make({ name: "researcher", model: "claude-haiku-4-5" })),
          review: Graph.gate({ after: ["research"] }),
          answer: Graph.agent(Agent.make({ name: "writer", model: "claude-haiku-4-5" }), {
            after: ["review", "research"]
          })
        }
      })
      const llm = FakeLLM.script([Turn({ content: "Refund approved for A-771." })])
      const result = yield* refunds
        .resume(context.runId, Approval.decisions([[entry!.id, Approval.approve(entry!.digest)]]))
        .pipe(Effect.provide(Layer.merge(makeTestCtx({ llm, ...context }), CheckpointStore.layer(store))))
      expect(result.stopReason).toBe("complete")
      expect(result.outputs).toEqual({
        research: "A-771 shipped on 14 August.",
        review: "approved",
        answer: "Refund approved for A-771."
      })
      expect(llm.calls).toBe(1)
    }))
})
