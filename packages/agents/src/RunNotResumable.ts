/**
 * @since 0.1.0
 */
import * as Data from "effect/Data"

/**
 * `agent.resume(runId, decisions)` found nothing to resume: no checkpoint store, no suspended run
 * under that id (it finished, or never suspended), or a cognition that cannot resume.
 *
 * @example
 * ```ts
 * import { RunNotResumable } from "@agentkit/agents"
 *
 * new RunNotResumable({ runId: "run-1", message: "no suspended run 'run-1' to resume" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class RunNotResumable extends Data.TaggedError("RunNotResumable")<{
  readonly runId: string
  readonly message: string
}> {}
