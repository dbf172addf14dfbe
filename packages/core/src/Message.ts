/**
 * The messages of a conversation: system, user, assistant (text and tool calls) and tool results.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { ToolCall } from "./ToolCall.js"

/**
 * A system instruction.
 *
 * @example
 * ```ts
 * import { Message } from "@agentkit/core"
 *
 * Message.system("Answer order questions.").role // "system"
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemMessage = Schema.Struct({ role: Schema.Literal("system"), content: Schema.String })

/**
 * A user's turn.
 *
 * @example
 * ```ts
 * import { Message } from "@agentkit/core"
 *
 * Message.user("What happened to order A-771?").content
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const UserMessage = Schema.Struct({ role: Schema.Literal("user"), content: Schema.String })

/**
 * The model's turn: its text and the tool calls it asked for.
 *
 * @example
 * ```ts
 * import { Message } from "@agentkit/core"
 *
 * Message.assistant("", [{ id: "c1", name: "lookup_order", arguments: { order_id: "A-771" } }]).toolCalls.length // 1
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const AssistantMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  content: Schema.String,
  toolCalls: Schema.Array(ToolCall)
})

/**
 * The result of one tool call, as the model sees it (`isError` marks a failure the model can fix).
 *
 * @example
 * ```ts
 * import { Message } from "@agentkit/core"
 *
 * Message.toolResult({ toolCallId: "c1", name: "lookup_order", content: "order A-771: shipped" }).isError // false
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolResultMessage = Schema.Struct({
  role: Schema.Literal("tool"),
  toolCallId: Schema.String,
  name: Schema.String,
  content: Schema.String,
  isError: Schema.Boolean
})

/**
 * Any message, discriminated on `role`.
 *
 * @example
 * ```ts
 * import { Message } from "@agentkit/core"
 * import { Schema } from "effect"
 *
 * Schema.decodeUnknownSync(Message.Message)({ role: "user", content: "hi" })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Message = Schema.Union(SystemMessage, UserMessage, AssistantMessage, ToolResultMessage)

/**
 * A system instruction: `role` `system` and its text.
 *
 * @example
 * ```ts
 * import { Message } from "@agentkit/core"
 *
 * const instruction: Message.SystemMessage = Message.system("Answer order questions.")
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface SystemMessage extends Schema.Schema.Type<typeof SystemMessage> {}
/**
 * A user's turn: `role` `user` and its text.
 *
 * @example
 * ```ts
 * import { Message } from "@agentkit/core"
 *
 * const task: Message.UserMessage = Message.user("What happened to order A-771?")
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface UserMessage extends Schema.Schema.Type<typeof UserMessage> {}
/**
 * The model's turn: its text and the tool calls it asked for.
 *
 * @example
 * ```ts
 * import { Message } from "@agentkit/core"
 *
 * const turn: Message.AssistantMessage = Message.assistant("", [{ id: "c1", name: "lookup_order", arguments: { order_id: "A-771" } }])
 * turn.toolCalls[0]?.name // "lookup_order"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface AssistantMessage extends Schema.Schema.Type<typeof AssistantMessage> {}
/**
 * The result of one tool call as the model sees it; `isError` marks a failure the model can fix.
 *
 * @example
 * ```ts
 * import { Message } from "@agentkit/core"
 *
 * const result: Message.ToolResultMessage = Message.toolResult({ toolCallId: "c1", name: "lookup_order", content: "order A-771: shipped" })
 * result.isError // false
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolResultMessage extends Schema.Schema.Type<typeof ToolResultMessage> {}

/**
 * A message of a conversation.
 *
 * @example
 * ```ts
 * import { Message } from "@agentkit/core"
 *
 * const transcript: ReadonlyArray<Message.Message> = [Message.system("Be brief."), Message.user("hi"), Message.assistant("Hello!")]
 * transcript.map((message) => message.role) // ["system", "user", "assistant"]
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Message = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage

/**
 * Makes a system message.
 *
 * @example
 * ```ts
 * import { Message } from "@agentkit/core"
 *
 * Message.system("Be brief.")
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const system = (content: string): SystemMessage => ({ role: "system", content })

/**
 * Makes a user message.
 *
 * @example
 * ```ts
 * import { Message } from "@agentkit/core"
 *
 * Message.user("hello")
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const user = (content: string): UserMessage => ({ role: "user", content })

/**
 * Makes an assistant message.
 *
 * @example
 * ```ts
 * import { Message } from "@agentkit/core"
 *
 * Message.assistant("Order A-771 shipped.")
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const assistant = (content: string, toolCalls: ReadonlyArray<ToolCall> = []): AssistantMessage => ({
  role: "assistant",
  content,
  toolCalls
})

/**
 * Makes a tool-result message.
 *
 * @example
 * ```ts
 * import { Message } from "@agentkit/core"
 *
 * Message.toolResult({ toolCallId: "c1", name: "x", content: "ERROR: no tool named 'x'. Available tools: (none).", isError: true })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const toolResult = (fields: {
  readonly toolCallId: string
  readonly name: string
  readonly content: string
  readonly isError?: boolean
}): ToolResultMessage => ({
  role: "tool",
  toolCallId: fields.toolCallId,
  name: fields.name,
  content: fields.content,
  isError: fields.isError ?? false
})
