/**
 * The SQLite file as an operator handles it: a clean close checkpoints the WAL into the database
 * file (a copy of the `.db` alone holds every run), and a database that cannot be opened says why
 * in words, naming the path.
 */
import { CheckpointStore, StoreError } from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Schedule, Scope } from "effect"
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqlStores } from "../src/index.js"

const root = (runId: string) => ({ runId, rootRunId: runId, agent: "support", tenant: "", state: "{}" })
const owner = { owner: "a", ttlMs: 30_000 }

describe("the SQLite file", () => {
  it.effect("a clean close checkpoints the WAL: a copy of the .db alone holds every run", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "agentkit-wal-"))
      const db = join(dir, "runs.db")
      try {
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(SqlStores.layerSqlite({ filename: db }), scope)
        const store = Context.get(context, CheckpointStore)
        for (let i = 0; i < 20; i++) yield* store.create(root(`r-${i}`), owner)
        yield* Scope.close(scope, Effect.void as never)
        // the WAL is empty (or gone) after the close
        expect(!existsSync(`${db}-wal`) || statSync(`${db}-wal`).size === 0).toBe(true)
        const copy = join(dir, "copy.db")
        copyFileSync(db, copy)
        const records = yield* Effect.scoped(
          Effect.flatMap(Layer.build(SqlStores.layerSqlite({ filename: copy })), (built) =>
            Context.get(built, CheckpointStore).list({ limit: 100 }))
        )
        expect(records.records.length).toBe(20)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }))

  it.effect("a database that cannot be opened (its directory is a file): the error names the path and says why in words", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "agentkit-cantopen-"))
      const notADirectory = join(dir, "plain-file")
      writeFileSync(notADirectory, "not a directory")
      try {
        const filename = join(notADirectory, "runs.db")
        const error = yield* Effect.flip(
          Effect.scoped(Layer.build(SqlStores.layerSqlite({ filename, retry: Schedule.recurs(0) })))
        )
        expect(error).toBeInstanceOf(StoreError)
        expect(error.message).toContain(filename)
        expect(error.message).toContain("could not be opened (its directory is missing or not writable")
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }))
})
