/** Test helpers of the durable engine on `WorkflowEngine.layerMemory`. */
import { Operator } from "@agentkit/agents"
import { AuditStore, CheckpointStore, ExecutionLedger } from "@agentkit/core"
import { DurableRuns } from "@agentkit/durable"
import type { DurableAgent } from "@agentkit/durable"
import type { FakeLLM } from "@agentkit/testing"
import { makeTestCtx } from "@agentkit/testing"
import * as WorkflowEngine from "@effect/workflow/WorkflowEngine"
import { Effect, Exit, Layer } from "effect"

/**
 * The engine in memory with the durable agents registered, their `DurableRuns`, the Operator and
 * in-memory stores (given ones kept), and the test context over `llm`.
 */
export const harness = <R>(
  durables: ReadonlyArray<DurableAgent.DurableAgent<R>>,
  options: {
    readonly llm: FakeLLM.FakeLLM
    readonly store?: CheckpointStore.Service | undefined
    readonly ledger?: ExecutionLedger.Service | undefined
    readonly audit?: AuditStore.Service | undefined
  }
) => {
  const store = options.store ?? CheckpointStore.makeMemory()
  const ledger = options.ledger ?? ExecutionLedger.makeMemory()
  const audit = options.audit ?? AuditStore.makeMemory()
  const services = Layer.mergeAll(
    makeTestCtx({ llm: options.llm }),
    CheckpointStore.layer(store),
    ExecutionLedger.layer(ledger),
    AuditStore.layer(audit)
  )
  const layer = Layer.mergeAll(DurableRuns.layer(durables), ...durables.map((d) => d.layer)).pipe(
    Layer.provideMerge(
      Layer.mergeAll(WorkflowEngine.layerMemory, Operator.Operator.layer, services).pipe(Layer.provideMerge(services))
    )
  )
  return { store, ledger, audit, layer }
}

/**
 * A memory store whose `save` is interrupted once, the first time `when` holds: the body's process
 * "crashes" (or, with `crash`, fails that way once, e.g. a defect).
 */
export const crashingStore = (
  when: (state: { runId: string; phase: string; completed: number }) => boolean,
  crash: Effect.Effect<never> = Effect.interrupt
) => {
  const store = CheckpointStore.makeMemory()
  let crashed = false
  const service: CheckpointStore.Service = {
    ...store,
    save: (lease, request) => {
      const state = JSON.parse(request.state) as { phase: string; turn: { completed: ReadonlyArray<unknown> } }
      if (!crashed && when({ runId: request.runId, phase: state.phase, completed: state.turn.completed.length })) {
        crashed = true
        return crash // the runner stopped: no result, nothing completed
      }
      return store.save(lease, request)
    }
  }
  return { store: service, crashed: () => crashed }
}

/** Lets the engine run until the run stops (suspended, complete, or died); gives the poll's exit. */
export const settle = <R>(durable: DurableAgent.DurableAgent<R>, runId: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 2000; i++) {
      const polled = yield* Effect.exit(durable.poll(runId))
      if (Exit.isFailure(polled) || polled.value !== undefined) return polled
      yield* Effect.yieldNow()
    }
    return yield* Effect.die("the run did not stop")
  })
