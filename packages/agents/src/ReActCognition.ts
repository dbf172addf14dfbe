/**
 * The ReAct loop: ask the model, run the tool calls it asks for, hand the results back, repeat
 * until the model answers without tool calls or the iterations run out.
 *
 * @since 0.1.0
 */
import { Cancellation, Invoker, Message, RunContext, Usage } from "@agentkit/core"
import type { ToolCall } from "@agentkit/core"
import { ToolRegistry } from "@agentkit/tools"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as AgentEvent from "./AgentEvent.js"
import { AgentDefinitionError } from "./AgentDefinitionError.js"
import type { AgentResult } from "./AgentResult.js"
import type { AgentError, Cognition, Drive } from "./Cognition.js"
import { failureText, isFatal, unknownTool } from "./internal/reflect.js"

/**
 * The options of `ReActCognition.make`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<T extends ToolRegistry.AnyTool> {
  /** A list of tools (registered in order; a duplicate name throws) or a registry. */
  readonly tools: ReadonlyArray<T> | ToolRegistry.ToolRegistry<T>
  /** How many model calls a run may make (default 8). */
  readonly maxIterations?: number | undefined
}

interface CallResult {
  readonly call: ToolCall.ToolCall
  readonly content: string
  readonly isError: boolean
}

/**
 * Makes a ReAct cognition. Each iteration checks cancellation, sends the transcript with the
 * registry's sorted schemas through the Invoker's chat pipeline (text deltas are passed on as
 * they arrive), and runs the turn's tool calls concurrently through the tool pipeline (bounded
 * by the run's concurrency limit, results kept in call order). Errors the model can fix come back
 * to it as `isError` tool results; budget exhaustion and cancellation end the run; a defect is
 * never shown to the model.
 *
 * @example
 * ```ts
 * import { Agent, ReActCognition } from "@agentkit/agents"
 *
 * const agent = Agent.make({
 *   name: "support",
 *   model: "claude-sonnet-4-6",
 *   prompt: "Answer order questions. Use the tools; never guess a status.",
 *   cognition: ReActCognition.make({ tools: [lookupOrder, cancelOrder] })
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <const T extends ToolRegistry.AnyTool>(
  options: Options<T>
): Cognition<ToolRegistry.Requirements<T>> => {
  const registry: ToolRegistry.ToolRegistry = ToolRegistry.isToolRegistry(options.tools)
    ? options.tools
    : ToolRegistry.fromTools(options.tools as ReadonlyArray<T>)
  const maxIterations = options.maxIterations ?? 8
  if (!Number.isInteger(maxIterations) || maxIterations < 1) {
    throw new AgentDefinitionError({
      message: `ReActCognition: maxIterations must be a positive integer; got ${String(options.maxIterations)}`
    })
  }
  const schemas = registry.schemas()
  const names = registry.names()

  const runCall = (invoker: Invoker["Type"], call: ToolCall.ToolCall): Effect.Effect<CallResult, AgentError, RunContext> => {
    const tool = registry.getOption(call.name)
    if (Option.isNone(tool)) return Effect.succeed({ call, content: unknownTool(call.name, names), isError: true })
    return Effect.matchEffect(invoker.tool(call, tool.value), {
      onSuccess: (outcome) => Effect.succeed({ call, content: outcome.text, isError: false }),
      onFailure: (error) =>
        isFatal(error) ? Effect.fail(error) : Effect.succeed({ call, content: failureText(call.name, error), isError: true })
    }) as Effect.Effect<CallResult, AgentError, RunContext>
  }

  const drive = ({ agent, emit, messages }: Drive) =>
    Effect.flatMap(Invoker, (invoker) =>
      Effect.flatMap(RunContext, (context) => {
        const transcript: Array<Message.Message> = [...messages]
        let usage = Usage.zero
        const onDelta = emit === undefined ? undefined : (delta: { readonly text: string }) => emit(AgentEvent.MessageDelta({ text: delta.text }))
        const chatOptions = onDelta === undefined ? undefined : { emit: onDelta }

        const finish = (output: string, stopReason: AgentResult["stopReason"], partial: boolean): AgentResult => ({
          output,
          usage,
          partial,
          stopReason,
          transcript
        })

        const runCalls = (calls: ReadonlyArray<ToolCall.ToolCall>) =>
          calls.length === 1
            ? Effect.map(runCall(invoker, calls[0]!), (result) => [result])
            : Effect.forEach(calls, (call) => runCall(invoker, call), { concurrency: "unbounded" })

        const iterate = (iteration: number): Effect.Effect<AgentResult, AgentError, RunContext> => {
          if (iteration >= maxIterations) {
            let last = ""
            for (let i = transcript.length - 1; i >= 0; i--) {
              const message = transcript[i]!
              if (message.role === "assistant") {
                last = message.content
                break
              }
            }
            return Effect.succeed(finish(last, "max_iterations", true))
          }
          const request = {
            model: agent.model,
            messages: transcript.slice(),
            tools: schemas,
            ...(agent.maxTokens === undefined ? {} : { maxTokens: agent.maxTokens }),
            ...(agent.temperature === undefined ? {} : { temperature: agent.temperature })
          }
          return Cancellation.check(context.cancellation).pipe(
            Effect.zipRight(invoker.chat(request, chatOptions)),
            Effect.flatMap((response) => {
              usage = Usage.add(usage, response.usage)
              if (response.toolCalls.length === 0) {
                transcript.push(Message.assistant(response.content))
                const reason = response.finishReason === "tool_use" ? "end_turn" : response.finishReason
                return Effect.succeed(finish(response.content, reason, false))
              }
              transcript.push(Message.assistant(response.content, response.toolCalls))
              if (emit !== undefined) for (const call of response.toolCalls) emit(AgentEvent.ToolCall({ call }))
              return Effect.flatMap(runCalls(response.toolCalls), (results) => {
                for (const result of results) {
                  transcript.push(
                    Message.toolResult({
                      toolCallId: result.call.id,
                      name: result.call.name,
                      content: result.content,
                      isError: result.isError
                    })
                  )
                  if (emit !== undefined) emit(AgentEvent.ToolResult(result))
                }
                if (emit !== undefined) emit(AgentEvent.Step({ iteration: iteration + 1 }))
                return iterate(iteration + 1)
              })
            })
          )
        }
        return iterate(0)
      })
    )

  return { name: "react", tools: registry, drive } as Cognition<ToolRegistry.Requirements<T>>
}
