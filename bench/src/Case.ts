/**
 * A case: one way of running a workload (the hand-written Effect floor, agentkit's default
 * setup, agentkit with middleware, a store or an OpenTelemetry exporter). Every case is
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
  /**
   * The case's own check of what its runs did beyond their answers, called after every
   * measurement (the OpenTelemetry cases: every traced run's spans reached the exporter). Rejects
   * when the case is broken, which fails the benchmark.
   */
  readonly verify?: (() => Promise<void>) | undefined
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
  /** What opens the spans when tracing is on (the report's "tracer" row); Effect's default tracer when absent. */
  readonly tracer?: string | undefined
  /** `true` for the workload's floor: the one case every other case is divided by. */
  readonly floor: boolean
  /** Run only when asked for by `--case` (a case too slow, or too heavy, for every `pnpm bench`). */
  readonly optIn?: boolean | undefined
  /** Builds the case over the workload's mock model (once; not measured). */
  readonly setup: (model: MockModel) => Promise<Runner>
}
