/**
 * agentkit with the recommended middleware (`Middleware.recommended()`, its defaults: telemetry,
 * egress, idempotency and retry on both pipelines), otherwise as the default case. Reported beside
 * the targets, not as one: the targets are stated for the default configuration.
 */
import { Invoker } from "@agentkit/core"
import { Middleware } from "@agentkit/middleware"
import { Layer } from "effect"
import type { Case } from "../Case.js"
import type { Workload } from "../Workload.js"
import { mockModel, runnerOf } from "./agentkit.js"

export const recommendedCase = (workload: Workload): Case => ({
  id: "recommended",
  title: "agentkit + Middleware.recommended()",
  workload,
  floor: false,
  setup: (model) => runnerOf(workload, Layer.provide(Invoker.layer(Middleware.recommended()), mockModel(model)))
})
