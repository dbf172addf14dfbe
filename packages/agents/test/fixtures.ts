/**
 * What only the agents tests share: the seed's agent, built from the seed's world in
 * `@agentkit/testing`. (Not a test file: vitest only collects `*.test.ts`.)
 */
import { Agent, Approval, ReActCognition } from "@agentkit/agents"
import type { RunState } from "@agentkit/agents"
import { CheckpointStore } from "@agentkit/core"
import { Fixture, Seed } from "@agentkit/testing"
import { Effect, Option } from "effect"

/** The seed's agent. */
export const support = Agent.make({
  name: "support",
  model: Seed.MODEL,
  prompt: Seed.PROMPT,
  cognition: ReActCognition.make({ tools: [Seed.lookupOrder, Seed.cancelOrder] })
})

/** A tool call literal: `call(id, name, args)`. */
export const call = Fixture.toolCall

/** A long-enough description for test-only tools. */
export const DESCRIPTION = "A test tool whose description is long enough to pass the rule."

/**
 * `Effect.never`, typed as a string result. A tool whose Success type is `never` (a handler that
 * only waits, only fails or only dies) is not assignable to `ToolRegistry.AnyTool`, so
 * `ReActCognition.make` rejects it at compile time: the tests give such handlers a string type.
 */
export const forever: Effect.Effect<string> = Effect.never

/** What a test reads of a checkpointed state: the decoded `RunState`. */
export type SavedState = RunState.RunState

/**
 * A checkpoint store that records every save (its status and state, decoded), over an in-memory
 * store (or `inner`).
 */
export const recordingStore = (inner: CheckpointStore.MemoryStore = CheckpointStore.makeMemory()) => {
  const saves: Array<{ readonly runId: string; readonly status: "running" | "suspended"; readonly state: SavedState }> =
    []
  const store: CheckpointStore.MemoryStore = Object.assign(Object.create(inner) as CheckpointStore.MemoryStore, {
    save: (lease: CheckpointStore.Lease, request: Parameters<CheckpointStore.Service["save"]>[1]) =>
      Effect.tap(
        inner.save(lease, request),
        () =>
          Effect.sync(() =>
            saves.push({ runId: request.runId, status: request.status, state: JSON.parse(request.state) as SavedState })
          )
      )
  })
  return { store, saves }
}

/** The record of a run, and its state decoded. */
export const recordOf = (store: CheckpointStore.Service, runId = "test-run") =>
  Effect.map(store.load(runId), (found) => {
    const record = Option.getOrThrow(found)
    return { record, status: record.status, state: JSON.parse(record.state) as SavedState }
  })

/** The digest a pending entry must carry, recomputed from its fields. */
export const expectedDigest = (entry: Approval.PendingEntry) =>
  Approval.digest({
    path: entry.path,
    pendingId: entry.id,
    fingerprint: entry.tool.fingerprint,
    arguments: entry.call.arguments
  })

/** Approve every pending entry of a suspension (decisions by pending id). */
export const approveAll = (pending: ReadonlyArray<Approval.PendingEntry>): Approval.Decisions =>
  Approval.decideEach(pending, (entry) => Approval.approve(entry.digest))

/** What plain JavaScript hands over as decisions: nothing checks its type, so it may be anything. */
export const untyped = (value: unknown): Approval.Decisions => value as Approval.Decisions
