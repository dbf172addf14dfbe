/**
 * The upgrade test: a database made by an older migration set (schema version 1: runs,
 * decisions, ledger, audit) holding what an older release left in it (the golden run-state
 * fixtures of agents: a run suspended on an approval, one stopped mid-round, one stopped after a
 * round, written as rows the way that release wrote them), opened by this release's stores,
 * migrates to the newest version, and every run resumes: the suspended one through a decision
 * recorded by the operator service, the stopped ones taken over by the recovery worker.
 */
import { Agent, Approval, Operator, ReActCognition, RunRecovery } from "@agentkit/agents"
import type { RunState } from "@agentkit/agents"
import { CheckpointStore, Scope } from "@agentkit/core"
import { FakeLLM, makeTestCtx, Seed, Turn } from "@agentkit/testing"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { SqlMigrations } from "../src/index.js"
import { targets } from "./databases.js"

const fixture = (name: string) =>
  readFileSync(fileURLToPath(new URL(`../../agents/test/fixtures/run-state/v1/${name}.json`, import.meta.url)), "utf8")

const support = Agent.make({
  name: "support",
  model: Seed.MODEL,
  prompt: Seed.PROMPT,
  cognition: ReActCognition.make({ tools: [Seed.lookupOrder, Seed.cancelOrder] })
})

for (const target of targets) {
  describe(`upgrade on ${target.name}`, () => {
    it.live(
      "a schema-1 database with suspended and stopped runs migrates to the newest version; every run resumes and finishes",
      () =>
        Effect.gen(function*() {
          const place = yield* target.fresh
          const old = yield* Layer.build(place.client)
          const sql = Context.get(old, SqlClient.SqlClient)
          // the older release: its migration set, and its rows
          yield* SqlMigrations.run({ ...place.options, upTo: 1 }).pipe(Effect.provideService(SqlClient.SqlClient, sql))
          expect(yield* SqlMigrations.version(place.options).pipe(Effect.provideService(SqlClient.SqlClient, sql)))
            .toBe(1)
          const runsTable = place.options.schema === undefined
            ? "agentkit_runs"
            : `${place.options.schema}.agentkit_runs`
          const planted: Array<{ runId: string; status: string; state: RunState.RunState }> = []
          for (
            const [name, status] of [
              ["suspended-approval", "suspended"],
              ["tools-mid-round", "running"],
              ["fresh-after-round", "running"]
            ] as const
          ) {
            const text = fixture(name)
            const state = JSON.parse(text) as RunState.RunState
            // the fixture's own run id: a pending entry's digest binds its path, so renaming the run would be tampering
            const runId = state.runId
            const stored = text
            const tenant = Scope.make(state.context.scope).storeKey
            // a stopped process's lease: expired long ago
            yield* sql`INSERT INTO ${
              sql(runsTable)
            } (run_id, root_run_id, agent, tenant, status, version, state, created_at, updated_at, lease_owner, lease_token, lease_expires_at)
              VALUES (${runId}, ${runId}, ${state.agent}, ${tenant}, ${status}, 3, ${stored}, 1000, 2000, 'old-release', 1, 3000)`
            planted.push({ runId, status, state: JSON.parse(stored) as RunState.RunState })
          }

          // this release opens the same database: it migrates first
          const stores = yield* Layer.build(Operator.Operator.layer.pipe(Layer.provideMerge(place.stores())))
          expect(yield* SqlMigrations.version(place.options).pipe(Effect.provideService(SqlClient.SqlClient, sql)))
            .toBe(SqlMigrations.latest)
          const operator = Context.get(stores, Operator.Operator)
          const waiting = yield* operator.list({ status: ["suspended"] })
          expect(waiting.runs.map((r) => r.runId)).toEqual(["golden-suspended-approval"])
          const entry = waiting.runs[0]!.pending[0]!
          expect(entry).toMatchObject({ kind: "Approval", call: { name: "cancel_order" } })
          yield* operator.decide("golden-suspended-approval", entry.id, {
            ...Approval.approve(entry.digest),
            by: "upgrade-test"
          })

          const llm = FakeLLM.respond(() => Turn({ content: "All done." }))
          const report = yield* RunRecovery.runOnce({ agents: [support] }).pipe(
            Effect.provide(Layer.merge(Layer.succeedContext(stores), makeTestCtx({ llm })))
          )
          expect([...report.recovered].sort()).toEqual(["golden-fresh-after-round", "golden-tools-mid-round"])
          expect(report.resumed).toEqual(["golden-suspended-approval"])
          expect(report.failed).toEqual([])
          const checkpoints = Context.get(stores, CheckpointStore)
          for (const { runId } of planted) {
            const record = Option.getOrThrow(yield* checkpoints.load(runId))
            expect([runId, record.status]).toEqual([runId, "done"])
            expect(JSON.parse(record.result!)).toMatchObject({ output: "All done." })
          }
          const cancelled = (yield* operator.show("golden-suspended-approval")).transcript.filter((m) =>
            m.role === "tool"
          ).map((m) => m.content)
          expect(cancelled.at(-1)).toContain("cancelled")
        }).pipe(Effect.scoped),
      60_000
    )
  })
}
