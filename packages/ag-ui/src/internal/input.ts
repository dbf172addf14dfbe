/**
 * The request body: AG-UI's `RunAgentInput`, decoded (the fields the endpoint reads, checked;
 * the rest ignored), and its messages as the agent's conversation. @internal
 */
import { Message } from "@agentkit/core"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

const Text = Schema.Union(
  Schema.String,
  Schema.Array(Schema.Struct({ type: Schema.String, text: Schema.optional(Schema.String) }))
)

const ToolCall = Schema.Struct({
  id: Schema.String,
  type: Schema.optional(Schema.Literal("function")),
  function: Schema.Struct({ name: Schema.String, arguments: Schema.String })
})

const InputMessage = Schema.Struct({
  id: Schema.optional(Schema.String),
  role: Schema.String,
  content: Schema.optional(Schema.NullOr(Text)),
  toolCalls: Schema.optional(Schema.Array(ToolCall)),
  toolCallId: Schema.optional(Schema.String),
  error: Schema.optional(Schema.String)
})

const ResumeEntry = Schema.Struct({
  interruptId: Schema.String,
  status: Schema.Literal("resolved", "cancelled"),
  payload: Schema.optional(Schema.Unknown)
})

/** The fields of `RunAgentInput` the endpoint reads. */
export const RunInput = Schema.Struct({
  threadId: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  runId: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  messages: Schema.Array(InputMessage),
  tools: Schema.optional(Schema.Array(Schema.Unknown)),
  resume: Schema.optional(Schema.Array(ResumeEntry))
})

/** A decoded request body. */
export type RunInput = Schema.Schema.Type<typeof RunInput>

const decode = Schema.decodeUnknownEither(RunInput, { onExcessProperty: "ignore" })

/** The body decoded, or the problem as text. */
export const decodeInput = (body: unknown): Either.Either<RunInput, string> =>
  Either.mapLeft(decode(body), (error) => ParseResult.TreeFormatter.formatErrorSync(error))

const textOf = (content: Schema.Schema.Type<typeof Text> | null | undefined): string =>
  content === null || content === undefined
    ? ""
    : typeof content === "string"
    ? content
    : content.map((part) => (part.type === "text" ? part.text ?? "" : "")).join("")

const ACCEPTED = "user, assistant and tool"

/**
 * The conversation the agent is given: user, assistant (with its tool calls) and tool messages.
 * A system or developer message is refused (the agent's prompt is the server's), as is a tool
 * result for a call no assistant message made.
 */
export const conversation = (
  messages: RunInput["messages"]
): Either.Either<ReadonlyArray<Message.Message>, string> => {
  const out: Array<Message.Message> = []
  const names = new Map<string, string>()
  for (const [index, message] of messages.entries()) {
    switch (message.role) {
      case "user":
        out.push(Message.user(textOf(message.content)))
        break
      case "assistant": {
        const calls = []
        for (const call of message.toolCalls ?? []) {
          let parsed: unknown
          try {
            parsed = JSON.parse(call.function.arguments)
          } catch {
            return Either.left(`messages[${index}]: tool call '${call.id}' has arguments that are not JSON`)
          }
          if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
            return Either.left(`messages[${index}]: tool call '${call.id}' has arguments that are not a JSON object`)
          }
          names.set(call.id, call.function.name)
          calls.push({ id: call.id, name: call.function.name, arguments: parsed as Record<string, unknown> })
        }
        out.push(Message.assistant(textOf(message.content), calls))
        break
      }
      case "tool": {
        const name = message.toolCallId === undefined ? undefined : names.get(message.toolCallId)
        if (message.toolCallId === undefined || name === undefined) {
          return Either.left(
            `messages[${index}]: a tool message answers a tool call of an earlier assistant message (toolCallId)`
          )
        }
        out.push(
          Message.toolResult({
            toolCallId: message.toolCallId,
            name,
            content: textOf(message.content),
            isError: message.error !== undefined
          })
        )
        break
      }
      case "activity":
      case "reasoning":
        // the page's own records: not part of the conversation
        break
      default:
        return Either.left(`messages[${index}]: role '${message.role}' is not accepted (accepted: ${ACCEPTED})`)
    }
  }
  if (out.length === 0 || out.at(-1)?.role === "assistant") {
    return Either.left("messages: the conversation must end with a user message or a tool result")
  }
  return Either.right(out)
}

/** The conversation as AG-UI messages (a page's history after a reload). */
export const toAgUiMessages = (runId: string, transcript: ReadonlyArray<Message.Message>) => {
  const out: Array<Record<string, unknown>> = []
  for (const [index, message] of transcript.entries()) {
    const id = `${runId}:h${index}`
    if (message.role === "user") out.push({ id, role: "user", content: message.content })
    else if (message.role === "assistant") {
      out.push({
        id,
        role: "assistant",
        ...(message.content === "" ? {} : { content: message.content }),
        ...(message.toolCalls.length === 0 ? {} : {
          toolCalls: message.toolCalls.map((call) => ({
            id: call.id,
            type: "function",
            function: { name: call.name, arguments: JSON.stringify(call.arguments) }
          }))
        })
      })
    } else if (message.role === "tool") {
      out.push({ id, role: "tool", toolCallId: message.toolCallId, content: message.content })
    }
  }
  return out
}
