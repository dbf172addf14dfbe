/**
 * How the shared suites drive a run, so that one suite runs against every engine: in process
 * (`agent.run`, then `agent.resume` over the same store, each in its own runtime) here, and the
 * durable engine in `@agentkit/durable`'s tests (a workflow on `WorkflowEngine.layerMemory`,
 * decisions recorded through `DurableRuns.decide` and applied by a sweep).
 */
import type { Agent, AgentResult, Approval } from "@agentkit/agents"
import type { AuditStore, Capability, CheckpointStore } from "@agentkit/core"
import { AuditStore as AuditStoreTag, CheckpointStore as CheckpointStoreTag } from "@agentkit/core"
import type { FakeLLM } from "@agentkit/testing"
import { makeTestCtx } from "@agentkit/testing"
import { Cause, Effect, Exit, Layer, Option } from "effect"

/** One run for an engine to drive. */
export interface SuiteRun {
  readonly agent: Agent.Agent<never>
  /** A conversation only when the engine takes one (`conversationInput`). */
  readonly input: Agent.Input
  readonly runId: string
  readonly llm: FakeLLM.FakeLLM
  /** Legs the caller declares for its input. */
  readonly legs?: ReadonlyArray<Capability> | undefined
  readonly store: CheckpointStore.MemoryStore
  readonly audit: AuditStore.MemoryStore
  /** The decisions for a suspension's entries, or `undefined` to leave the run suspended. */
  readonly decide: (pending: ReadonlyArray<Approval.PendingEntry>) => Approval.Decisions | undefined
  /** At most this many resumes. */
  readonly maxResumes: number
}

/** Where a driven run ended: its answer and stop reason, and its entries while it is suspended. */
export interface SuiteOutcome {
  readonly output: string
  readonly stopReason: string
  /** The entries the run waits on; `undefined` when it is not suspended. */
  readonly pending: ReadonlyArray<Approval.PendingEntry> | undefined
  readonly resumes: number
  /** The tag of the typed error that refused the last decisions (nothing ran; the run still waits). */
  readonly refused?: string | undefined
}

/** An engine the shared suites run against. */
export interface SuiteEngine<O extends SuiteOutcome = SuiteOutcome> {
  readonly name: string
  /** Whether a run's input may be a conversation (a durable run's payload is a string). */
  readonly conversationInput: boolean
  readonly drive: (run: SuiteRun) => Promise<O>
}

/** The in-process engine: its outcome carries the whole `AgentResult`. */
export const inProcess: SuiteEngine<SuiteOutcome & { readonly result: AgentResult.AgentResult }> = {
  name: "in-process",
  conversationInput: true,
  drive: async (run) => {
    const layer = Layer.mergeAll(
      makeTestCtx({ llm: run.llm, runId: run.runId, legs: run.legs }),
      CheckpointStoreTag.layer(run.store),
      Layer.succeed(AuditStoreTag, run.audit)
    )
    let result = await Effect.runPromise(run.agent.run(run.input).pipe(Effect.provide(layer)))
    let resumes = 0
    while (result.suspended !== undefined && resumes < run.maxResumes) {
      const decisions = run.decide(result.suspended.pending)
      if (decisions === undefined) break
      const resumed = await Effect.runPromiseExit(run.agent.resume(run.runId, decisions).pipe(Effect.provide(layer)))
      const refused = Exit.isFailure(resumed) ? Option.getOrUndefined(Cause.failureOption(resumed.cause)) : undefined
      if (refused !== undefined) {
        return {
          output: "",
          stopReason: result.stopReason,
          pending: result.suspended.pending,
          resumes,
          refused: refused._tag,
          result
        }
      }
      if (Exit.isFailure(resumed)) throw Cause.squash(resumed.cause)
      resumes++
      result = resumed.value
    }
    return { output: result.output, stopReason: result.stopReason, pending: result.suspended?.pending, resumes, result }
  }
}
