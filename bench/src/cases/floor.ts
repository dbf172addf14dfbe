/**
 * The Effect floor: the same workload as a hand-written Effect 3 loop, what any Effect framework
 * must at least do. A prebuilt `Schema.decodeUnknown` for the tool's arguments, an `Effect.gen`
 * loop of model steps and tool calls over one transcript, one `Effect.runPromise` per run.
 * Tracing on opens the same spans agentkit does (the run, each model call, each tool call) on
 * Effect's default tracer.
 */
import { Effect, Schema } from "effect"
import type { Case } from "../Case.js"
import type { MockModel, MockToolCall } from "../MockModel.js"
import { echoTool, type Workload } from "../Workload.js"

type FloorMessage =
  | { readonly role: "system" | "user"; readonly content: string }
  | { readonly role: "assistant"; readonly content: string; readonly toolCalls: ReadonlyArray<MockToolCall> }
  | { readonly role: "tool"; readonly toolCallId: string; readonly content: string }

interface FloorResult {
  readonly output: string
  readonly inputTokens: number
  readonly outputTokens: number
  readonly steps: number
}

/** A step limit, as any agent loop has (at least the workload's steps). */
const maxStepsOf = (workload: Workload) => Math.max(10, workload.toolRounds + 1)

const decodeEcho = Schema.decodeUnknown(Schema.Struct(echoTool.fields))

const callTool = (call: MockToolCall): Effect.Effect<string> =>
  call.name !== echoTool.name
    ? Effect.succeed(`unknown tool '${call.name}'`)
    : Effect.matchEffect(decodeEcho(call.arguments), {
      onFailure: (error) => Effect.succeed(`invalid arguments: ${error.message}`),
      onSuccess: echoTool.handler
    })

const spanOptions = (attributes: Record<string, string>) => ({ captureStackTrace: false, attributes }) as const

/** The floor's run of `workload` against `model`: what one run is, built per run. */
export const makeFloorRun = (
  model: MockModel,
  workload: Workload
): (tracing: boolean) => Effect.Effect<FloorResult> => {
  const tools = [{ name: echoTool.name, description: echoTool.description }]
  const chatName = `chat ${workload.model}`
  const chatSpan = spanOptions({ "gen_ai.operation.name": "chat", "gen_ai.request.model": workload.model })
  const runSpan = spanOptions({ "gen_ai.operation.name": "invoke_agent" })
  const maxSteps = maxStepsOf(workload)
  return (tracing) => {
    const loop = Effect.gen(function*() {
      const messages: Array<FloorMessage> = [
        { role: "system", content: workload.prompt },
        { role: "user", content: workload.input }
      ]
      let inputTokens = 0
      let outputTokens = 0
      for (let step = 1; step <= maxSteps; step++) {
        const request = { model: workload.model, messages, tools }
        const response = yield* tracing
          ? Effect.withSpan(model.chat(request), chatName, chatSpan)
          : model.chat(request)
        inputTokens += response.usage.inputTokens
        outputTokens += response.usage.outputTokens
        if (response.toolCalls.length === 0) return { output: response.content, inputTokens, outputTokens, steps: step }
        messages.push({ role: "assistant", content: response.content, toolCalls: response.toolCalls })
        for (const call of response.toolCalls) {
          const content = yield* tracing
            ? Effect.withSpan(
              callTool(call),
              `execute_tool ${call.name}`,
              spanOptions({ "gen_ai.tool.call.id": call.id })
            )
            : callTool(call)
          messages.push({ role: "tool", toolCallId: call.id, content })
        }
      }
      return { output: "", inputTokens, outputTokens, steps: maxSteps }
    })
    return tracing ? Effect.withSpan(loop, "invoke_agent bench", runSpan) : loop
  }
}

/** The floor case of a workload. */
export const floorCase = (workload: Workload): Case => ({
  id: "floor",
  title: "Effect floor",
  workload,
  floor: true,
  setup: (model) => {
    const floorRun = makeFloorRun(model, workload)
    return Promise.resolve({
      run: (tracing) => Effect.runPromise(floorRun(tracing)).then((result) => result.output),
      dispose: () => Promise.resolve()
    })
  }
})
