/**
 * The databases every SQL test runs on: an embedded SQLite file (always) and Postgres (when
 * `DATABASE_URL` names one: `.ci/run` starts a throwaway server; `scripts/pg-test-start.sh` starts
 * one by hand). Each test gets a fresh, empty place (a new file in a temporary directory, or a new
 * Postgres schema), removed when the test ends.
 */
import { LibsqlClient } from "@effect/sql-libsql"
import { PgClient } from "@effect/sql-pg"
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer, Redacted, String } from "effect"
import type * as Scope from "effect/Scope"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { SqlStores } from "../src/index.js"
import { pgClient, sqliteClient } from "../src/internal/stores.js"

/** `DATABASE_URL`, when the Postgres tests are to run. */
export const postgresUrl: string | undefined = process.env["DATABASE_URL"] === ""
  ? undefined
  : process.env["DATABASE_URL"]

/** Why the Postgres tests do not run (printed, and fatal under CI). */
export const postgresSkipReason =
  "the Postgres tests need DATABASE_URL (a throwaway server: eval \"$(scripts/pg-test-start.sh)\"; .ci/run starts one)"

/** One fresh database: the stores over it (and its client), or a bare client. */
export interface Place {
  readonly name: "sqlite" | "postgres"
  /** Where it is (a file, or a schema), for messages and for opening it again. */
  readonly where: string
  readonly stores: (options?: SqlStores.Options) => Layer.Layer<SqlStores.Stores | SqlClient.SqlClient, unknown>
  readonly client: Layer.Layer<SqlClient.SqlClient, unknown>
  /** A client as an app may configure its own: rows come back camelCased, query names are snake_cased. */
  readonly transformingClient: Layer.Layer<SqlClient.SqlClient, unknown>
  /** The options that point the stores at this place (the schema, on Postgres). */
  readonly options: SqlStores.Options
}

export interface Target {
  readonly name: "sqlite" | "postgres"
  readonly fresh: Effect.Effect<Place, never, Scope.Scope>
}

let counter = 0
const unique = () => `${process.pid}_${Date.now().toString(36)}_${(counter++).toString(36)}`

export const sqlite: Target = {
  name: "sqlite",
  fresh: Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "agentkit-sql-"))),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    ),
    (dir): Place => {
      const filename = join(dir, "stores.db")
      return {
        name: "sqlite",
        where: filename,
        stores: (options = {}) => SqlStores.layerSqlite({ ...options, filename }),
        client: sqliteClient({ filename }),
        transformingClient: LibsqlClient.layer({
          url: pathToFileURL(filename).href,
          transformResultNames: String.snakeToCamel,
          transformQueryNames: String.camelToSnake
        }),
        options: {}
      }
    }
  )
}

export const postgres = (url: string): Target => ({
  name: "postgres",
  fresh: Effect.map(
    Effect.acquireRelease(Effect.sync(() => `t_${unique()}`), (schema) =>
      Effect.scoped(
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)).pipe(
          Effect.provide(pgClient({ url, maxConnections: 1 })),
          Effect.ignore
        )
      )),
    (schema): Place => ({
      name: "postgres",
      where: `${url} schema ${schema}`,
      stores: (options = {}) => SqlStores.layerPg({ schema, ...options, url }),
      client: pgClient({ url }),
      transformingClient: PgClient.layer({
        url: Redacted.make(url),
        transformResultNames: String.snakeToCamel,
        transformQueryNames: String.camelToSnake
      }),
      options: { schema }
    })
  )
})

/** Every database the tests run on here. */
export const targets: ReadonlyArray<Target> = [sqlite, ...(postgresUrl === undefined ? [] : [postgres(postgresUrl)])]

/** Builds a layer in the test's scope: its services, to provide. */
export const build = <A, E>(layer: Layer.Layer<A, E>) => Layer.build(layer)
