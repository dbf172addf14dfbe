/**
 * The store contract suite (the same tests the in-memory stores pass) on every database here:
 * an embedded SQLite file, and Postgres when DATABASE_URL is set.
 */
import { CheckpointStore, ExecutionLedger } from "@agentkit/core"
import { StoreContract } from "@agentkit/testing"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { SqlStores } from "../src/index.js"
import { targets } from "./databases.js"

/** A row whose status is no status: how a corrupt record is planted in the runs table. */
export const plantCorrupt =
  (context: Context.Context<SqlClient.SqlClient | SqlStores.Maintenance>) => (runId: string) => {
    const sql = Context.get(context, SqlClient.SqlClient)
    const { prefix, schema } = Context.get(context, SqlStores.Maintenance).tables
    const runs = schema === undefined ? `${prefix}runs` : `${schema}.${prefix}runs`
    return sql`INSERT INTO ${
      sql(runs)
    } (run_id, root_run_id, agent, tenant, status, version, state, created_at, updated_at)
    VALUES (${runId}, ${runId}, 'support', 'tenant-a', 'banana', 1, '{}', 0, 0)`
  }

for (const target of targets) {
  describe(`store contract on ${target.name}`, () => {
    StoreContract.register(it, {
      name: target.name,
      make: Effect.gen(function*() {
        const place = yield* target.fresh
        const context = yield* Layer.build(place.stores())
        return {
          checkpoints: Context.get(context, CheckpointStore),
          ledger: Context.get(context, ExecutionLedger),
          plantCorrupt: plantCorrupt(context)
        }
      })
    })
  })
}
