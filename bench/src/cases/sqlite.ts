/**
 * agentkit over the SQLite store (`SqlStores.layerSqlite` on a fresh file in the temp directory):
 * every run is created, checkpointed at each step and finished in the store, otherwise as the
 * default case. Reported beside the targets, not as one. The file is removed on dispose.
 */
import { Invoker } from "@agentkit/core"
import { SqlStores } from "@agentkit/sql"
import { Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Case } from "../Case.js"
import type { Workload } from "../Workload.js"
import { mockModel, runnerOf } from "./agentkit.js"

export const sqliteCase = (workload: Workload): Case => ({
  id: "sqlite",
  title: "agentkit + SQLite store",
  workload,
  floor: false,
  // opt-in: a run over the store costs milliseconds (a durable write per checkpoint), so the
  // default sizes would take long: `pnpm bench --case sqlite --runs 200 ...`
  optIn: true,
  setup: (model) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agentkit-bench-"))
    return runnerOf(
      workload,
      Layer.merge(
        Layer.provide(Invoker.layer(), mockModel(model)),
        SqlStores.layerSqlite({ filename: path.join(dir, "bench.db") })
      ),
      () => Promise.resolve(fs.rmSync(dir, { recursive: true, force: true }))
    )
  }
})
