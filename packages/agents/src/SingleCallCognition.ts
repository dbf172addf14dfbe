/**
 * The default cognition: one model call, no tools.
 *
 * @since 0.1.0
 */
import { Cancellation, Invoker, Message, RunContext, Usage } from "@agentkit/core"
import { ToolRegistry } from "@agentkit/tools"
import * as Effect from "effect/Effect"
import * as AgentEvent from "./AgentEvent.js"
import type { Cognition, Drive } from "./Cognition.js"
import * as Lifecycle from "./internal/lifecycle.js"

/** Its state under a store: the model call of iteration 0 is next. */
const freshState = (agent: string, messages: ReadonlyArray<Message.Message>) => (context: RunContext.Service) => {
  const usage = Lifecycle.usageState(Usage.zero)
  return {
    version: 1 as const,
    runId: context.runId,
    agent,
    cognition: "single_call" as const,
    phase: "model" as const,
    iteration: 0,
    transcript: [...messages],
    usage,
    treeUsage: usage,
    turn: { completed: [] },
    pending: [],
    legs: { privateData: context.legs.privateData, untrustedContent: context.legs.untrustedContent, egress: context.legs.egress },
    budget: context.budget.snapshot(),
    recoveries: 0,
    context: Lifecycle.contextState(context)
  }
}

const drive = ({ agent, emit, messages }: Drive) =>
  Lifecycle.drive({
    agent: agent.name,
    cognition: "single_call",
    fresh: freshState(agent.name, messages),
    // a taken-over single call asks again, from the saved conversation
    body: (start) => {
      const conversation = start.state === undefined ? messages : start.state.transcript
      return Effect.flatMap(RunContext, (context) =>
        Effect.flatMap(Invoker, (invoker) =>
          Cancellation.check(context.cancellation).pipe(
            Effect.zipRight(
              invoker.chat(
                {
                  model: agent.model,
                  messages: conversation,
                  tools: [],
                  ...(agent.maxTokens === undefined ? {} : { maxTokens: agent.maxTokens }),
                  ...(agent.temperature === undefined ? {} : { temperature: agent.temperature })
                },
                emit === undefined ? undefined : { emit: (delta) => emit(AgentEvent.MessageDelta({ text: delta.text })) }
              )
            ),
            Effect.map((response) => ({
              output: response.content,
              usage: context.tally.usage,
              ownUsage: response.usage,
              partial: false,
              stopReason: response.finishReason === "tool_use" ? ("end_turn" as const) : response.finishReason,
              transcript: [...conversation, Message.assistant(response.content)]
            }))
          )
        )
      )
    }
  })

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
