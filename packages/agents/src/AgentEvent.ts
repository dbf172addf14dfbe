/**
 * The events of `agent.stream(input)`: a tagged union on `_tag`.
 *
 * @since 0.1.0
 */
import type { ToolCall } from "@agentkit/core"
import * as Data from "effect/Data"
import type { AgentResult } from "./AgentResult.js"
import type { PendingEntry } from "./Approval.js"

/**
 * One event of an agent run.
 *
 * - `MessageDelta`: a piece of the model's text, as it arrives.
 * - `ToolCall`: the model asked for a tool call (emitted for every call of a turn before any runs).
 * - `ToolResult`: a tool call finished; `content` is what the model sees.
 * - `Step`: a tool round finished (`iteration` counts from 1), or, with `repair: true`, the model
 *   is asked again because its structured answer did not decode.
 * - `Interrupt`: a call waits for a person (the pending entry: its id, kind, call and digest).
 * - `Final`: the run's result; always the last event. `A` is the agent's structured output (its
 *   `parsed` type).
 *
 * @example
 * ```ts
 * import { AgentEvent } from "@agentkit/agents"
 *
 * const event = AgentEvent.MessageDelta({ text: "Order A-771 " })
 * AgentEvent.$is("MessageDelta")(event) // true
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type AgentEvent<A = never> = Data.TaggedEnum<{
  MessageDelta: { readonly text: string }
  ToolCall: { readonly call: ToolCall.ToolCall }
  ToolResult: { readonly call: ToolCall.ToolCall; readonly content: string; readonly isError: boolean }
  Step: { readonly iteration: number; readonly repair?: true | undefined }
  Interrupt: PendingEntry
  Final: { readonly result: AgentResult<A> }
}>

const constructors = Data.taggedEnum<AgentEvent<unknown>>()

/**
 * Constructors and guards of the agent events.
 *
 * @example
 * ```ts
 * import { AgentEvent } from "@agentkit/agents"
 *
 * const event = AgentEvent.Step({ iteration: 1 })
 * AgentEvent.$is("Step")(event) // true
 * const text = AgentEvent.$match(AgentEvent.MessageDelta({ text: "hi" }), {
 *   MessageDelta: ({ text }) => text,
 *   ToolCall: ({ call }) => call.name,
 *   ToolResult: ({ content }) => content,
 *   Step: ({ iteration }) => `step ${iteration}`,
 *   Interrupt: ({ call }) => `waiting on ${call.name}`,
 *   Final: ({ result }) => result.output
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const { $is, $match, Final, Interrupt, MessageDelta, Step, ToolCall: ToolCallEvent, ToolResult } = constructors

/**
 * The `ToolCall` event constructor (also exported as `ToolCallEvent`).
 *
 * @example
 * ```ts
 * import { AgentEvent } from "@agentkit/agents"
 *
 * AgentEvent.ToolCall({ call: { id: "c1", name: "lookup_order", arguments: { order_id: "A-771" } } })._tag // "ToolCall"
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export { ToolCallEvent as ToolCall }
