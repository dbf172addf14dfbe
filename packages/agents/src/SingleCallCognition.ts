/**
 * The default cognition: one model call, no tools.
 *
 * With structured output (`Agent.make({ output })`), an object answer is asked for in the
 * provider's native JSON-schema format where it honours one (`features.responseFormat`: OpenAI's
 * strict `json_schema`) and its text is decoded; otherwise the model is made to answer with the
 * output tool where the provider honours a forced tool choice (`features.toolChoice`: Anthropic
 * sends `tool_choice: { type: "tool", name: "structured_output" }`), and its input is decoded;
 * elsewhere a schema block tells it the shape and its text is decoded. An answer that does not decode is
 * repaired up to `maxRepairs` times (default 1): the model is told why (`Your previous response
 * was invalid (<error>). Return ONLY output matching the required format.`) and asked again; then
 * the run ends `partial` with stop reason `invalid_output` and the error. The output tool is the
 * answer, not a tool call: it is never gated, never counted in `maxToolCalls`, never a `ToolCall`
 * event, and the transcript holds its input as the assistant's text (no tool result).
 *
 * @since 0.1.0
 */
import { Cancellation, CanonicalJson, Invoker, Message, RunContext, Usage } from "@agentkit/core"
import type { Chat } from "@agentkit/core"
import { ToolRegistry } from "@agentkit/tools"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as AgentEvent from "./AgentEvent.js"
import type { AgentResult } from "./AgentResult.js"
import type { AgentError, Cognition, Drive } from "./Cognition.js"
import * as Lifecycle from "./internal/lifecycle.js"
import * as Recorded from "./internal/runRecord.js"
import * as StructuredOutput from "./StructuredOutput.js"

/** Its state under a store: the model call of iteration 0 is next. */
const freshState = (agent: string, messages: ReadonlyArray<Message.Message>) => (context: RunContext.Service) => {
  const usage = Recorded.usageState(Usage.zero)
  return {
    version: 2 as const,
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
    legs: {
      privateData: context.legs.privateData,
      untrustedContent: context.legs.untrustedContent,
      egress: context.legs.egress
    },
    budget: context.budget.snapshot(),
    recoveries: 0,
    context: Recorded.contextState(context)
  }
}

/** What one call of the model answered, read as structured output: the answer's text and its decoding. */
/**
 * What a reply without the output tool's call answered, as the repair turn shows it to the model:
 * its text, and the tool calls it made instead (`called name({...})`), or `(an empty reply)`.
 */
const shownAnswer = (response: Chat.ChatResponse): string => {
  const calls = response.toolCalls.map((c) => `called ${c.name}(${CanonicalJson.stringify(c.arguments)})`)
  const parts = response.content === "" ? calls : [response.content, ...calls]
  return parts.length === 0 ? "(an empty reply)" : parts.join("\n")
}

const readAnswer = (
  output: StructuredOutput.StructuredOutput<unknown>,
  forced: boolean,
  response: Chat.ChatResponse
): { readonly text: string; readonly decoded: Either.Either<unknown, string> } => {
  if (!forced) return { text: response.content, decoded: output.decodeText(response.content) }
  const call = response.toolCalls.find((c) => c.name === output.tool.name)
  if (call === undefined) {
    return {
      text: shownAnswer(response),
      decoded: Either.left(`expected a call of the output tool '${output.tool.name}'; the reply had none`)
    }
  }
  const { text, value } = output.fromToolInput(call.arguments)
  return { text, decoded: output.decode(value) }
}

const drive = ({ agent, emit, messages, output }: Drive) =>
  Lifecycle.drive({
    agent: agent.name,
    cognition: "single_call",
    output,
    fresh: freshState(agent.name, messages),
    // a taken-over single call asks again, from the saved conversation
    body: (start) => {
      const conversation = start.state === undefined ? messages : start.state.transcript
      return Effect.flatMap(RunContext, (context) =>
        Effect.flatMap(Invoker, (invoker) => {
          // structured output: the provider's native JSON-schema format where it honours one (for
          // an object answer), else a forced output tool where it honours that, else a schema block
          const native = output !== undefined && invoker.features?.responseFormat === true &&
            output.jsonSchema["type"] === "object"
          const forced = !native && output !== undefined && invoker.features?.toolChoice === true
          const tools = forced ? [output.tool] : []
          const responseFormat = native
            ? { type: "json_schema" as const, name: output.tool.name, schema: output.jsonSchema }
            : undefined
          // a literal per call that starts with its keys (one that starts with a spread, as
          // `{ ...settings, messages }`, is a slow path of V8's: microseconds a call)
          const request = (messages: ReadonlyArray<Message.Message>) => ({
            model: agent.model,
            tools,
            ...(forced ? { toolChoice: { type: "tool" as const, name: output.tool.name } } : {}),
            ...(responseFormat === undefined ? {} : { responseFormat }),
            ...(agent.maxTokens === undefined ? {} : { maxTokens: agent.maxTokens }),
            ...(agent.temperature === undefined ? {} : { temperature: agent.temperature }),
            messages
          })
          const callOptions = emit === undefined
            ? undefined
            : { emit: (delta: Chat.ChatDelta) => emit(AgentEvent.MessageDelta({ text: delta.text })) }
          const ask = (
            transcript: ReadonlyArray<Message.Message>,
            usage: Usage.Usage,
            repairs: number
          ): Effect.Effect<AgentResult<unknown>, AgentError, RunContext> =>
            Cancellation.check(context.cancellation).pipe(
              Effect.zipRight(invoker.chat(request(transcript), callOptions)),
              Effect.flatMap((response) => {
                const own = Usage.add(usage, response.usage)
                const stopReason = response.finishReason === "tool_use" ? ("end_turn" as const) : response.finishReason
                if (output === undefined) {
                  return Effect.succeed({
                    output: response.content,
                    usage: context.tally.usage,
                    ownUsage: own,
                    partial: false,
                    stopReason,
                    transcript: [...transcript, Message.assistant(response.content)]
                  })
                }
                // the forced call is the answer, never a tool call: the transcript holds its JSON as text
                const { decoded, text } = readAnswer(output, forced, response)
                const answered = [...transcript, Message.assistant(text)]
                if (Either.isRight(decoded)) {
                  return Effect.succeed({
                    output: text,
                    usage: context.tally.usage,
                    ownUsage: own,
                    partial: false,
                    stopReason,
                    transcript: answered,
                    parsed: decoded.right
                  })
                }
                if (repairs >= output.maxRepairs) {
                  return Effect.succeed({
                    output: text,
                    usage: context.tally.usage,
                    ownUsage: own,
                    partial: true,
                    stopReason: "invalid_output" as const,
                    transcript: answered,
                    error: decoded.left
                  })
                }
                emit?.(AgentEvent.Step({ iteration: repairs + 1, repair: true }))
                return ask(
                  [...answered, Message.user(StructuredOutput.repairText("single_call", decoded.left))],
                  own,
                  repairs + 1
                )
              })
            )
          const first = output === undefined || forced || native
            ? conversation
            : StructuredOutput.withSchemaBlock(conversation, output)
          return ask(first, Usage.zero, 0)
        }))
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
