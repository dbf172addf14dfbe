/**
 * Whether the Postgres half of the suite runs. Outside CI, without DATABASE_URL, it is skipped
 * with the reason printed; under CI (CI=true) a skip is a failure: CI must test Postgres.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { pgClient } from "../src/internal/stores.js"
import { postgresSkipReason, postgresUrl } from "./databases.js"

describe("Postgres", () => {
  if (postgresUrl !== undefined) {
    it.effect("DATABASE_URL reaches a Postgres server: the Postgres tests run", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ readonly version: string }>`SELECT version() AS version`
        expect(rows[0]?.version).toMatch(/^PostgreSQL \d+/)
      }).pipe(Effect.provide(pgClient({ url: postgresUrl! }))))
  } else if (process.env["CI"] === "true") {
    it("runs under CI", () => {
      throw new Error(
        `CI=true and DATABASE_URL is not set: ${postgresSkipReason}. Under CI the Postgres tests must run, not skip.`
      )
    })
  } else {
    console.warn(`@agentkit/sql: skipping the Postgres tests: ${postgresSkipReason}`)
    it.skip(`skipped: ${postgresSkipReason}`, () => {})
  }
})
