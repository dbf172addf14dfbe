/**
 * agentkit called in one expression: `Agents.run(agent, input)` over `Agents.layer()` and the
 * mock model, each run on the fresh run context the service makes. Otherwise as the default
 * case (`agentkit`), which provides `RunContext.provide({ tracing })` by hand over an
 * `Invoker.layer()` runtime: the two side by side are what the one-expression form costs.
 */
import { Agents } from "@agentkit/agents"
import { Layer, ManagedRuntime } from "effect"
import type { Case } from "../Case.js"
import type { Workload } from "../Workload.js"
import { makeAgent, mockModel } from "./agentkit.js"

export const agentsCase = (workload: Workload): Case => ({
  id: "agents",
  title: "agentkit, Agents.run",
  workload,
  floor: false,
  setup: async (model) => {
    const agent = makeAgent(workload)
    // tracing is a setting of the service: one runtime with it on, one with it off, built once
    const traced = ManagedRuntime.make(Layer.provide(Agents.layer({ tracing: true }), mockModel(model)))
    const untraced = ManagedRuntime.make(Layer.provide(Agents.layer({ tracing: false }), mockModel(model)))
    await traced.runtime()
    await untraced.runtime()
    return {
      run: (tracing) =>
        (tracing ? traced : untraced).runPromise(Agents.run(agent, workload.input)).then((result) => result.output),
      dispose: () => Promise.all([traced.dispose(), untraced.dispose()]).then(() => undefined)
    }
  }
})
