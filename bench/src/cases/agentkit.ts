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
import { Tool } from "@agentkit/tools"
import { Layer, ManagedRuntime } from "effect"
import type { Case } from "../Case.js"
import { echoTool, type Workload } from "../Workload.js"

/** The workload's agent: its prompt, its model, the echo tool in a ReAct loop. */
export const makeAgent = (workload: Workload) =>
  Agent.make({
    name: "bench",
    model: workload.model,
    prompt: workload.prompt,
    cognition: ReActCognition.make({
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
  setup: async (model) => {
    const agent = makeAgent(workload)
    // Built once, as a server builds its layers; each run is one `runPromise` with a fresh context.
    const runtime = ManagedRuntime.make(Layer.provide(Invoker.layer(), ChatModel.layer({ chat: (request) => model.chat(request) })))
    await runtime.runtime()
    return {
      run: (tracing) =>
        runtime.runPromise(agent.run(workload.input).pipe(RunContext.provide({ tracing }))).then((result) => result.output),
      dispose: () => runtime.dispose()
    }
  }
})
