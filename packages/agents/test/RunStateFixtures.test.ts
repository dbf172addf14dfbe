/**
 * The golden run-state fixtures (`fixtures/run-state/<version>/*.json`, written once by
 * `generate.ts` when that version was released): every one must keep decoding, and every run
 * must keep resuming, in every later release. A fixture is a stored state as an older process
 * left it; the test plants it in a store the way that process left its record, then drives it.
 */
import { Agent, Approval, Coordinator, Graph, ReActCognition, RunState } from "@agentkit/agents"
import type { AgentResult } from "@agentkit/agents"
import { Budget, CheckpointStore, Scope } from "@agentkit/core"
import type { Message } from "@agentkit/core"
import { FakeLLM, makeTestCtx, Seed, Turn } from "@agentkit/testing"
import { asTool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { recordingStore, recordOf } from "./fixtures.js"

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

/** The phases of a version's fixtures, and the names every version has. */
const phasesOf = (version: string) =>
  new Set(fixtures.filter((f) => f.version === version).map((f) => (JSON.parse(f.text) as RunState.RunState).phase))
const common = [
  "fresh-after-round",
  "tools-mid-round",
  "suspended-approval",
  "suspended-in-doubt",
  "sub-run-waiting",
  "sub-run-waiting.child",
  "coordinator-mid-turn",
  "graph-suspended-gate"
]

describe("golden run-state fixtures", () => {
  it("there is a fixture of every phase of versions 1 and 2, and version 2 has one holding a reservation", () => {
    expect(phasesOf("v1")).toEqual(new Set(["model", "tools", "suspended"]))
    expect(phasesOf("v2")).toEqual(new Set(["model", "tools", "suspended"]))
    for (const version of ["v1", "v2"]) {
      expect(fixtures.filter((f) => f.version === version).map((f) => f.name)).toEqual(expect.arrayContaining(common))
    }
    expect(JSON.parse(fixture("model-reserved", "v2")).budget.reservedNanos).toBeGreaterThan(0)
  })

  for (const { name, text, version } of fixtures.filter((f) => f.version === `v${RunState.currentVersion}`)) {
    it.effect(`${version}/${name} decodes, and re-encodes to the same state`, () =>
      Effect.gen(function*() {
        const runId = (JSON.parse(text) as { runId: string }).runId
        const state = yield* RunState.decode(runId, text)
        expect(state.version).toBe(RunState.currentVersion)
        expect(JSON.parse(RunState.encode(state))).toEqual(JSON.parse(text))
      }))
  }

  for (const { name, text, version } of fixtures.filter((f) => f.version === "v1")) {
    it.effect(`${version}/${name} decodes into version 2: no amounts reserved, what its phase had in flight counted as in flight`, () =>
      Effect.gen(function*() {
        const old = JSON.parse(text) as RunState.RunState
        const state = yield* RunState.decode(old.runId, text)
        expect(state.version).toBe(2)
        const turn = old.transcript.at(-1)
        const open = old.phase === "tools" && turn?.role === "assistant"
          ? turn.toolCalls.length - old.turn.completed.length
          : 0
        expect(JSON.parse(RunState.encode(state))).toEqual({
          ...old,
          version: 2,
          budget: {
            ...old.budget,
            inFlightModelCalls: Math.max(old.budget.inFlightModelCalls, old.phase === "model" ? 1 : 0),
            inFlightToolCalls: Math.max(old.budget.inFlightToolCalls, open),
            reservedNanos: 0,
            reservedTokens: 0
          }
        })
      }))
  }

  it.effect("v2/model-reserved: taken over, its open reservation is charged in full (the request may have been paid)", () =>
    Effect.gen(function*() {
      const saved = JSON.parse(fixture("model-reserved", "v2")) as RunState.RunState
      const spent = saved.budget.costNanos + saved.budget.reservedNanos
      // a ceiling the reservation used up: the next call no longer fits and is refused before it is sent
      {
        const store = CheckpointStore.makeMemory()
        const { context } = yield* plant(store, [fixture("model-reserved", "v2")])
        const llm = FakeLLM.script([Turn({ content: "Order A-771 shipped on 14 August." })])
        const budget = Budget.unsafeMake({ maxCostUsd: 1.5 })
        const error = yield* Effect.flip(
          support.run("ignored").pipe(
            Effect.provide(Layer.merge(makeTestCtx({ llm, budget, ...context }), CheckpointStore.layer(store)))
          )
        )
        expect(error).toMatchObject({ _tag: "BudgetExceeded", limit: "cost" })
        expect(llm.calls).toBe(0)
        expect([budget.modelCalls, budget.spentNanos]).toEqual([2, spent])
      }
      // with room for it, the run goes on; the takeover's save holds the reservation as spent
      {
        const { saves, store } = recordingStore()
        const { context } = yield* plant(store, [fixture("model-reserved", "v2")])
        const llm = FakeLLM.script([Turn({ content: "Order A-771 shipped on 14 August." })])
        const budget = Budget.unsafeMake({ maxCostUsd: 5 })
        driven(
          yield* support.run("ignored").pipe(
            Effect.provide(Layer.merge(makeTestCtx({ llm, budget, ...context }), CheckpointStore.layer(store)))
          )
        )
        expect(llm.calls).toBe(1)
        expect(saves[0]!.state.budget).toMatchObject({
          modelCalls: 2,
          costNanos: spent,
          inFlightModelCalls: 0,
          reservedNanos: 0
        })
        expect(budget.spentNanos).toBe(spent + 100_000) // the answer's own $0.0001
      }
    }))

  for (const version of ["v1", "v2"]) {
    it.effect(`${version}/fresh-after-round: driven again, one model call from the saved conversation; the round is not repeated`, () =>
      Effect.gen(function*() {
        const store = CheckpointStore.makeMemory()
        const { context } = yield* plant(store, [fixture("fresh-after-round", version)])
        const llm = FakeLLM.script([Turn({ content: "Order A-771 shipped on 14 August." })])
        const result = yield* support.run("ignored").pipe(
          Effect.provide(Layer.merge(makeTestCtx({ llm, ...context }), CheckpointStore.layer(store)))
        )
        driven(result)
        expect(llm.calls).toBe(1)
        expect(toolMessages(llm.requests[0]!.messages)).toEqual([["c1", Seed.STATUS, false]])
        expect((yield* recordOf(store, context.runId)).status).toBe("done")
      }))

    it.effect(`${version}/tools-mid-round: only the call without a result runs; results in call order`, () =>
      Effect.gen(function*() {
        const store = CheckpointStore.makeMemory()
        const { context } = yield* plant(store, [fixture("tools-mid-round", version)])
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

    it.effect(`${version}/suspended-approval: resumed with an approval of its entry, the call runs and the run finishes`, () =>
      Effect.gen(function*() {
        const store = CheckpointStore.makeMemory()
        const { context, state } = yield* plant(store, [fixture("suspended-approval", version)])
        const [entry] = state.pending
        expect(entry).toMatchObject({ kind: "Approval", reasons: ["autonomy_gated"] })
        const llm = FakeLLM.script([Turn({ content: "Cancelled." })])
        const result = yield* support
          .resume(context.runId, Approval.decisions([[entry!.id, Approval.approve(entry!.digest)]]))
          .pipe(
            Effect.provide(
              Layer.merge(makeTestCtx({ llm, autonomy: "gated", ...context }), CheckpointStore.layer(store))
            )
          )
        driven(result)
        expect(toolMessages(llm.requests[0]!.messages)).toEqual([[
          "c1",
          "order A-771 cancelled (duplicate order)",
          false
        ]])
      }))

    it.effect(`${version}/suspended-in-doubt: resumed with markDone, the model sees the outcome and the call does not run`, () =>
      Effect.gen(function*() {
        const store = CheckpointStore.makeMemory()
        const { context, state } = yield* plant(store, [fixture("suspended-in-doubt", version)])
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

    it.effect(`${version}/sub-run-waiting: the parent re-drives its call, the sub-run goes on from its own state (its round not repeated)`, () =>
      Effect.gen(function*() {
        const store = CheckpointStore.makeMemory()
        const { context } = yield* plant(store, [
          fixture("sub-run-waiting", version),
          fixture("sub-run-waiting.child", version)
        ])
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

    it.effect(`${version}/coordinator-mid-turn: taken over in turn 1; the finished turn's child is not run again`, () =>
      Effect.gen(function*() {
        const store = CheckpointStore.makeMemory()
        const { context, state } = yield* plant(store, [fixture("coordinator-mid-turn", version)])
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

    it.effect(`${version}/graph-suspended-gate: resumed with an approval of its gate, the rest of the graph runs`, () =>
      Effect.gen(function*() {
        const store = CheckpointStore.makeMemory()
        const { context, state } = yield* plant(store, [fixture("graph-suspended-gate", version)])
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
  }
})
