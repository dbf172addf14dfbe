/**
 * The durable engine for the agents package's shared suites (`packages/agents/test/suites`): the
 * agent as a workflow on `WorkflowEngine.layerMemory` over the suite's stores; each suspension's
 * decisions recorded through `DurableRuns.decide` (the Operator) and applied by a sweep, as a
 * runner does. A suspended workflow journals no result (it waits): its entries are the root
 * record's, and its stop reason the one the lifecycle gives a suspended ReAct run.
 */
import { RunState } from "@agentkit/agents"
import { DurableAgent, DurableRuns } from "@agentkit/durable"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { SuiteEngine, SuiteOutcome } from "../../agents/test/suites/engine.js"
import { harness } from "./support.js"

/** Polls until the run stops (suspended or complete); the tools of a suite may wait on real I/O. */
const stopped = (durable: DurableAgent.DurableAgent<never>, runId: string) =>
  Effect.gen(function*() {
    for (;;) {
      const polled = yield* durable.poll(runId)
      if (polled !== undefined) return polled
      yield* Effect.sleep("2 millis")
    }
  })

export const durableEngine: SuiteEngine = {
  name: "durable",
  conversationInput: false,
  drive: (run) => {
    if (typeof run.input !== "string") {
      return Promise.reject(new TypeError("the durable engine takes a task, not a conversation"))
    }
    const input = run.input
    const durable = DurableAgent.make(run.agent, { version: 1, context: { legs: run.legs } })
    const { layer } = harness([durable], { llm: run.llm, store: run.store, audit: run.audit })
    const program = Effect.gen(function*() {
      const runs = yield* DurableRuns.DurableRuns
      yield* durable.start({ runId: run.runId, input })
      let resumes = 0
      for (;;) {
        const polled = yield* stopped(durable, run.runId)
        if (polled._tag === "Complete") {
          if (Exit.isFailure(polled.exit)) return yield* Effect.die(polled.exit.cause)
          const { output, stopReason } = polled.exit.value
          return { output, stopReason, pending: undefined, resumes } satisfies SuiteOutcome
        }
        const record = yield* Effect.orDie(run.store.load(run.runId))
        if (record._tag === "None" || record.value.status !== "suspended") {
          return yield* Effect.die(`run ${run.runId}: suspended without a suspended record`)
        }
        const pending = (yield* Effect.orDie(RunState.decode(run.runId, record.value.state))).pending
        const decisions = resumes < run.maxResumes ? run.decide(pending) : undefined
        if (decisions === undefined) {
          return { output: "", stopReason: "awaiting_approval", pending, resumes } satisfies SuiteOutcome
        }
        for (const [pendingId, decision] of Object.entries(decisions)) {
          const by =
            typeof decision === "object" && decision !== null && "by" in decision && typeof decision.by === "string"
              ? decision.by
              : "suite"
          const recorded = yield* Effect.either(runs.decide(run.runId, pendingId, decision, by))
          if (recorded._tag === "Left") {
            return {
              output: "",
              stopReason: "awaiting_approval",
              pending,
              resumes,
              refused: recorded.left._tag
            } satisfies SuiteOutcome
          }
        }
        resumes++
        // the sweep wakes the run: the memory engine re-drives its body before it returns
        const swept = yield* Effect.orDie(runs.sweep)
        if (!swept.woken.includes(run.runId)) {
          return yield* Effect.die(`run ${run.runId}: decided, not woken (${JSON.stringify(swept)})`)
        }
      }
    })
    return Effect.runPromise(Effect.scoped(Effect.provide(program, layer)))
  }
}
