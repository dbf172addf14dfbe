/**
 * The case registry: every case the benchmark knows, in report order. Each workload has exactly
 * one floor case (listed first); every other case of the workload is reported as a ratio to it.
 * The issue-19 targets are stated for `agentkit` (the default configuration); `recommended` and
 * `sqlite` are reported beside it, not as targets.
 *
 * To add a case: write a `Case` (usually a variant of `agentkitCase` in its own module under
 * `cases/`) and list it here. To add a workload: add it to `Workload.workloads` and list its
 * `floorCase(workload)` with its other cases.
 */
import type { Case } from "../Case.js"
import { workloads } from "../Workload.js"
import { agentkitCase } from "./agentkit.js"
import { agentsCase } from "./agents.js"
import { ceilingsCase } from "./ceilings.js"
import { floorCase } from "./floor.js"
import { otelCase, otelFloorCase } from "./otel.js"
import { recommendedCase } from "./recommended.js"
import { sqliteCase } from "./sqlite.js"

export const cases: ReadonlyArray<Case> = workloads.flatMap((workload) => [
  floorCase(workload),
  agentkitCase(workload),
  agentsCase(workload),
  ceilingsCase(workload),
  recommendedCase(workload),
  otelFloorCase(workload),
  otelCase(workload),
  sqliteCase(workload)
])
