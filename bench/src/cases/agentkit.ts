/**
 * agentkit running a workload through its public API only (`Agent.make`, `ReActCognition.make`,
 * `Tool.make`, `Invoker.layer`, `ChatModel.layer`, `RunContext.provide`), so the case survives
 * refactors of the packages' insides.
 *
 * `agentkitCase` is the default configuration the issue-19 targets are stated for: no
 * middleware, the default policy and budget, no store. Later cases (the recommended middleware,
 * a store) are variants built with the same helper and different `Invoker.layer` options or
 * extra layers.
 */
import { Agent, ReActCognition } from "@agentkit/agents"
import { ChatModel, Invoker, RunContext } from "@agentkit/core"
import type { Budget } from "@agentkit/core"
import { Tool } from "@agentkit/tools"
import { Layer, ManagedRuntime } from "effect"
import type { Case, Runner } from "../Case.js"
import type { MockModel } from "../MockModel.js"
import { echoTool, type Workload } from "../Workload.js"

/** The workload's agent: its prompt, its model, the echo tool in a ReAct loop. */
export const makeAgent = (workload: Workload) =>
  Agent.make({
    name: "bench",
    model: workload.model,
    prompt: workload.prompt,
    cognition: ReActCognition.make({
      // the default (8) unless the workload has more steps
      maxIterations: Math.max(8, workload.toolRounds + 1),
      tools: [
        Tool.make(echoTool.name, {
          description: echoTool.description,
          parameters: echoTool.fields,
          sideEffecting: false,
          idempotent: true,
          handler: echoTool.handler
        })
      ]
    })
  })

/** agentkit's default configuration: no middleware, the default policy and budget, no store. */
export const agentkitCase = (workload: Workload): Case => ({
  id: "agentkit",
  title: "agentkit (default)",
  workload,
  floor: false,
  setup: (model) => runnerOf(workload, Layer.provide(Invoker.layer(), mockModel(model)))
})

/** The mock model as agentkit's `ChatModel`. */
export const mockModel = (model: MockModel) => ChatModel.layer({ chat: (request) => model.chat(request) })

/**
 * The runner of an agentkit case over `layer` (an Invoker and whatever else the case adds), with
 * `release` called on dispose. The runtime is built once, as a server builds its layers; each run
 * is one `runPromise` with a fresh context.
 */
export const runnerOf = async <E>(
  workload: Workload,
  layer: Layer.Layer<Invoker, E>,
  release: () => Promise<void> = () => Promise.resolve(),
  budget?: Budget.Limits
): Promise<Runner> => {
  const agent = makeAgent(workload)
  const runtime = ManagedRuntime.make(layer)
  await runtime.runtime()
  return {
    run: (tracing) =>
      runtime.runPromise(agent.run(workload.input).pipe(RunContext.provide({ tracing, budget }))).then((result) =>
        result.output
      ),
    dispose: () => runtime.dispose().then(release)
  }
}
