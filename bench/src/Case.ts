/**
 * A case: one way of running a workload (the hand-written Effect floor, agentkit's default
 * setup, and later agentkit with middleware, a store or an OpenTelemetry exporter). Every case is
 * measured the same way; every figure of a case is reported as a ratio to its workload's floor.
 */
import type { MockModel } from "./MockModel.js"
import type { Workload } from "./Workload.js"

/** A set-up case, ready to run. */
export interface Runner {
  /**
   * Starts one run as its own promise (one `runPromise`, as a server handles a request) and
   * resolves with the run's final text.
   */
  readonly run: (tracing: boolean) => Promise<string>
  /** Releases what `setup` acquired (a runtime, a store). */
  readonly dispose: () => Promise<void>
}

export interface Case {
  /** Short id, used in `--case` and in the JSON output. */
  readonly id: string
  /** The column heading in the report. */
  readonly title: string
  /** The workload it runs. */
  readonly workload: Workload
  /** `true` for the workload's floor: the one case every other case is divided by. */
  readonly floor: boolean
  /** Run only when asked for by `--case` (a case too slow, or too heavy, for every `pnpm bench`). */
  readonly optIn?: boolean | undefined
  /** Builds the case over the workload's mock model (once; not measured). */
  readonly setup: (model: MockModel) => Promise<Runner>
}
