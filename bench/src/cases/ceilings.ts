/**
 * agentkit's default configuration under a cost and a call ceiling that the workload never
 * reaches: every model call reserves what it may cost at most before it is sent (its input counted
 * by the `TokenEstimator`, its output bounded by the catalog's output limit, priced from the
 * catalog: an entry for the mock's model), and its usage replaces the reservation when it answers.
 */
import { Invoker, ModelCatalog } from "@agentkit/core"
import { Layer } from "effect"
import type { Case } from "../Case.js"
import type { Workload } from "../Workload.js"
import { mockModel, runnerOf } from "./agentkit.js"

export const ceilingsCase = (workload: Workload): Case => ({
  id: "ceilings",
  title: "agentkit, maxCostUsd and maxModelCalls",
  workload,
  floor: false,
  setup: (model) =>
    runnerOf(
      workload,
      Layer.merge(
        Layer.provide(Invoker.layer(), mockModel(model)),
        ModelCatalog.layer({
          [workload.model]: {
            provider: "bench",
            contextWindow: 1_000_000,
            maxOutputTokens: 8192,
            prices: { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.25 },
            capabilities: ["tools"]
          }
        })
      ),
      undefined,
      { maxCostUsd: 1_000_000, maxModelCalls: 1_000_000 }
    )
})
