/**
 * The durable engine on a real `SingleRunner` over a SQLite file (the cluster's message storage in
 * the stores' database): a decided run whose request a stale runner marked read and skipped is
 * woken by the next sweep.
 */
import { Agent, Operator, ReActCognition, RunLease } from "@agentkit/agents"
import { CheckpointStore } from "@agentkit/core"
import { DurableAgent, DurableRunner, DurableRuns } from "@agentkit/durable"
import { SqlStores } from "@agentkit/sql"
import { FakeLLM, makeTestCtx, Turn } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Option, Schema } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const charge = Tool.make("charge_card", {
  description: "Charge the customer's card; not idempotent.",
  parameters: { run: Schema.String },
  sideEffecting: true,
  handler: ({ run }) => Effect.succeed(`charged ${run}`)
})

const model = FakeLLM.respond((request) =>
  request.messages.some((m) => m.role === "tool")
    ? Turn({ content: "billed" })
    : Turn({ toolCalls: [{ id: "c-1", name: "charge_card", arguments: { run: "w-1" } }] })
)

const billing = DurableAgent.make(
  Agent.make({ name: "billing", model: "fake", cognition: ReActCognition.make({ tools: [charge] }) }),
  { version: 1 }
)

/** Polls `check` every 50 ms until it holds (the runner works on its own fibers and timers). */
const until = <E, R>(check: Effect.Effect<boolean, E, R>) =>
  Effect.gen(function*() {
    while (!(yield* check)) yield* Effect.sleep("50 millis")
  })

describe("DurableRuns.sweep on a SingleRunner over SQLite", { timeout: 120_000 }, () => {
  it.live("a decided run whose request was marked read and skipped (a runner back from a pause) is woken by the next sweep", () => {
    const dir = mkdtempSync(join(tmpdir(), "agentkit-wake-"))
    const live = Layer.mergeAll(billing.layer).pipe(
      Layer.provideMerge(DurableRuns.layer([billing]).pipe(Layer.provideMerge(Operator.Operator.layer))),
      Layer.provideMerge(DurableRunner.layerSingle()),
      Layer.provideMerge(
        Layer.mergeAll(
          SqlStores.layerSqlite({ filename: join(dir, "runs.db") }),
          makeTestCtx({ llm: model, autonomy: "gated" }),
          RunLease.layer({ ttl: Duration.seconds(30) })
        )
      )
    )
    return Effect.gen(function*() {
      const runs = yield* DurableRuns.DurableRuns
      const store = yield* CheckpointStore
      const sql = yield* SqlClient.SqlClient
      const record = Effect.map(store.load("w-1"), Option.getOrThrow)
      const status = (wanted: string) =>
        Effect.map(store.load("w-1"), (found) => Option.isSome(found) && found.value.status === wanted)
      yield* runs.start("billing", 1, { runId: "w-1", input: "bill w-1", autonomy: "gated" })
      yield* until(status("suspended"))
      // and its execution suspended (its reply written)
      yield* until(Effect.map(billing.poll("w-1"), (polled) => polled?._tag === "Suspended"))
      const pending = (JSON.parse((yield* record).state) as { pending: Array<{ id: string; digest: string }> })
        .pending[0]!
      yield* runs.decide("w-1", pending.id, { verdict: "approve", digest: pending.digest }, "ops")
      // what a runner back from a pause leaves behind: the wake reset the run's request (its
      // reply gone, unprocessed again), and that runner read it (last_read now) and skipped it
      const executionId = yield* billing.executionId("w-1")
      yield* sql.unsafe(
        `DELETE FROM cluster_replies WHERE request_id IN (SELECT id FROM cluster_messages WHERE entity_id = ? AND tag = 'run')`,
        [executionId]
      )
      yield* sql.unsafe(
        `UPDATE cluster_messages SET processed = 0, last_reply_id = NULL, last_read = CURRENT_TIMESTAMP WHERE entity_id = ? AND tag = 'run'`,
        [executionId]
      )
      expect(yield* billing.poll("w-1")).toBeUndefined()
      // the shard's owner does not read a request marked read in the last 10 minutes; the sweep makes it readable
      const report = yield* runs.sweep
      expect(report.unknownVersion).toEqual(["w-1"])
      // the request read again, the body replays to its suspension, and a later sweep wakes it
      yield* until(Effect.zipRight(runs.sweep, status("done")))
      expect((yield* record).result).toContain("billed")
    }).pipe(
      Effect.provide(live),
      Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
    )
  })
})
