/**
 * The values of one model call: the tool schemas advertised, the request, the streamed deltas
 * and the response.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { Message } from "./Message.js"
import { ToolCall } from "./ToolCall.js"
import { Usage } from "./Usage.js"

/**
 * What the model is shown for a tool: its name, description and JSON Schema parameters.
 *
 * @example
 * ```ts
 * import { Chat } from "@agentkit/core"
 *
 * const schema: Chat.ToolSchema = {
 *   name: "lookup_order",
 *   description: "Look up an order by its id and return its status line.",
 *   parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] }
 * }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolSchema = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  parameters: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})

/**
 * What the model is shown for a tool: its name, description and JSON Schema parameters.
 *
 * @example
 * ```ts
 * import type { Chat } from "@agentkit/core"
 *
 * const advertised = (schemas: ReadonlyArray<Chat.ToolSchema>) => schemas.map((schema) => schema.name).join(", ")
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolSchema extends Schema.Schema.Type<typeof ToolSchema> {}

/**
 * A forced tool choice: the model must answer with a call of the named tool (one of the request's
 * `tools`). Only providers whose `ChatModel` declares `features.toolChoice` honour it (Anthropic
 * sends `tool_choice: { type: "tool", name }`); a structured-output cognition uses it for its
 * output tool and falls back to a schema block elsewhere.
 *
 * @example
 * ```ts
 * import { Chat } from "@agentkit/core"
 * import { Schema } from "effect"
 *
 * const choice: Chat.ToolChoice = { type: "tool", name: "structured_output" }
 * Schema.is(Chat.ToolChoice)(choice) // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolChoice = Schema.Struct({ type: Schema.Literal("tool"), name: Schema.String })

/**
 * A forced tool choice: the model must call the named tool.
 *
 * @example
 * ```ts
 * import type { Chat } from "@agentkit/core"
 *
 * const force = (name: string): Chat.ToolChoice => ({ type: "tool", name })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolChoice extends Schema.Schema.Type<typeof ToolChoice> {}

/**
 * A native structured-output request: the answer's text must be JSON matching `schema` (a JSON
 * Schema object), named `name`. Only providers whose `ChatModel` declares
 * `features.responseFormat` honour it (OpenAI sends `text.format` / `response_format` of type
 * `json_schema`, strict when the schema allows it); a structured-output cognition uses it where
 * declared, and a forced output tool or a schema block elsewhere.
 *
 * @example
 * ```ts
 * import { Chat } from "@agentkit/core"
 * import { Schema } from "effect"
 *
 * const format: Chat.ResponseFormat = {
 *   type: "json_schema",
 *   name: "structured_output",
 *   schema: { type: "object", properties: { status: { type: "string" } }, required: ["status"], additionalProperties: false }
 * }
 * Schema.is(Chat.ResponseFormat)(format) // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ResponseFormat = Schema.Struct({
  type: Schema.Literal("json_schema"),
  name: Schema.String,
  schema: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})

/**
 * A native structured-output request: the answer's text is JSON matching the schema.
 *
 * @example
 * ```ts
 * import type { Chat } from "@agentkit/core"
 *
 * const json = (schema: Record<string, unknown>): Chat.ResponseFormat => ({ type: "json_schema", name: "answer", schema })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ResponseFormat extends Schema.Schema.Type<typeof ResponseFormat> {}

/**
 * One model call: the model, the transcript, the advertised tools (in the registry's sorted order),
 * an optional forced tool choice and sampling settings.
 *
 * @example
 * ```ts
 * import { Chat, Message } from "@agentkit/core"
 *
 * const request: Chat.ChatRequest = { model: "claude-sonnet-4-6", messages: [Message.user("hi")], tools: [] }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatRequest = Schema.Struct({
  model: Schema.String,
  messages: Schema.Array(Message),
  tools: Schema.Array(ToolSchema),
  /** Forces a call of one of `tools` (honoured by providers with `features.toolChoice`). */
  toolChoice: Schema.optional(ToolChoice),
  /** Asks for JSON text matching a schema (honoured by providers with `features.responseFormat`). */
  responseFormat: Schema.optional(ResponseFormat),
  maxTokens: Schema.optional(Schema.Number),
  temperature: Schema.optional(Schema.Number)
})

/**
 * One model call: the model, the transcript, the advertised tools and sampling settings.
 *
 * @example
 * ```ts
 * import type { Chat } from "@agentkit/core"
 *
 * const deterministic = (request: Chat.ChatRequest): Chat.ChatRequest => ({ ...request, temperature: 0 })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ChatRequest extends Schema.Schema.Type<typeof ChatRequest> {}

/**
 * One streamed increment of the model's text.
 *
 * @example
 * ```ts
 * import type { Chat } from "@agentkit/core"
 *
 * const delta: Chat.ChatDelta = { text: "Order A-771 " }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatDelta = Schema.Struct({ text: Schema.String })

/**
 * One streamed increment of the model's text.
 *
 * @example
 * ```ts
 * import type { Chat } from "@agentkit/core"
 *
 * const deltas: Array<Chat.ChatDelta> = []
 * const emit = (delta: Chat.ChatDelta) => void deltas.push(delta)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ChatDelta extends Schema.Schema.Type<typeof ChatDelta> {}

/**
 * Why the model stopped. Providers map their own reasons onto these; `other` covers anything new.
 *
 * @example
 * ```ts
 * import { Chat } from "@agentkit/core"
 * import { Schema } from "effect"
 *
 * Schema.is(Chat.FinishReason)("tool_use") // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const FinishReason = Schema.Literal(
  "end_turn",
  "tool_use",
  "max_tokens",
  "stop_sequence",
  "pause_turn",
  "refusal",
  "model_context_window_exceeded",
  "other"
)

/**
 * Why the model stopped: one of the provider-neutral finish reasons.
 *
 * @example
 * ```ts
 * import type { Chat } from "@agentkit/core"
 *
 * const wantsTools = (reason: Chat.FinishReason) => reason === "tool_use"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type FinishReason = Schema.Schema.Type<typeof FinishReason>

/**
 * What a provider reports about one call beside the answer: the response id and its own span
 * attributes (primitive values). The Invoker sets them on the call's `chat {model}` span, so a
 * provider never needs to find that span itself.
 *
 * @example
 * ```ts
 * import { Chat } from "@agentkit/core"
 *
 * const metadata: Chat.ResponseMetadata = { responseId: "msg_01", attributes: { "anthropic.request.id": "req_01" } }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ResponseMetadata = Schema.Struct({
  responseId: Schema.optional(Schema.String),
  attributes: Schema.optional(
    Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean) })
  )
})

/**
 * What a provider reports about one call beside the answer.
 *
 * @example
 * ```ts
 * import type { Chat } from "@agentkit/core"
 *
 * const idOf = (metadata: Chat.ResponseMetadata | undefined) => metadata?.responseId ?? "(none)"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ResponseMetadata extends Schema.Schema.Type<typeof ResponseMetadata> {}

/**
 * The model's whole answer to one call.
 *
 * @example
 * ```ts
 * import { Chat, Usage } from "@agentkit/core"
 *
 * const response: Chat.ChatResponse = {
 *   content: "Order A-771 shipped.", toolCalls: [], usage: Usage.zero,
 *   finishReason: "end_turn", model: "claude-sonnet-4-6", provider: "fake"
 * }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatResponse = Schema.Struct({
  content: Schema.String,
  toolCalls: Schema.Array(ToolCall),
  usage: Usage,
  finishReason: FinishReason,
  model: Schema.String,
  provider: Schema.String,
  requestId: Schema.optional(Schema.String),
  metadata: Schema.optional(ResponseMetadata)
})

/**
 * The model's whole answer to one call: text, tool calls, usage, finish reason and who served it.
 *
 * @example
 * ```ts
 * import type { Chat } from "@agentkit/core"
 *
 * const summary = (response: Chat.ChatResponse) =>
 *   `${response.model} (${response.provider}): ${response.finishReason}, $${response.usage.costUsd}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ChatResponse extends Schema.Schema.Type<typeof ChatResponse> {}
