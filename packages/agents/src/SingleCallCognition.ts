/**
 * The default cognition: one model call, no tools.
 *
 * @since 0.1.0
 */
import { Cancellation, Invoker, Message, RunContext } from "@agentkit/core"
import { ToolRegistry } from "@agentkit/tools"
import * as Effect from "effect/Effect"
import * as AgentEvent from "./AgentEvent.js"
import type { Cognition, Drive } from "./Cognition.js"

const drive = ({ agent, emit, messages }: Drive) =>
  Effect.flatMap(RunContext, (context) =>
    Effect.flatMap(Invoker, (invoker) =>
      Cancellation.check(context.cancellation).pipe(
        Effect.zipRight(
          invoker.chat(
            {
              model: agent.model,
              messages,
              tools: [],
              ...(agent.maxTokens === undefined ? {} : { maxTokens: agent.maxTokens }),
              ...(agent.temperature === undefined ? {} : { temperature: agent.temperature })
            },
            emit === undefined ? undefined : { emit: (delta) => emit(AgentEvent.MessageDelta({ text: delta.text })) }
          )
        ),
        Effect.map((response) => ({
          output: response.content,
          usage: response.usage,
          partial: false,
          stopReason: response.finishReason === "tool_use" ? ("end_turn" as const) : response.finishReason,
          transcript: [...messages, Message.assistant(response.content)]
        }))
      )
    )
  )

/**
 * One model call with no tools: the answer is the output.
 *
 * @example
 * ```ts
 * import { Agent, SingleCallCognition } from "@agentkit/agents"
 *
 * const summarizer = Agent.make({
 *   name: "summarizer",
 *   model: "claude-sonnet-4-6",
 *   prompt: "Summarize in one sentence.",
 *   cognition: SingleCallCognition.make()
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (): Cognition<never> => singleCall

const singleCall: Cognition<never> = { name: "single_call", tools: ToolRegistry.empty, drive }
