/**
 * The events of `agent.stream(input)`: a tagged union on `_tag`.
 *
 * @since 0.1.0
 */
import type { ToolCall } from "@agentkit/core"
import * as Data from "effect/Data"
import type { Summary } from "./AgentResult.js"
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
 *   `parsed` type). `Result` is what the event carries: the result without its transcript
 *   (`AgentResult.Summary`), or the whole `AgentResult` from `agent.stream(input, { transcript: true })`.
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
export type AgentEvent<A = never, Result extends Summary<A> = Summary<A>> = Data.TaggedEnum<{
  MessageDelta: { readonly text: string }
  ToolCall: { readonly call: ToolCall.ToolCall }
  ToolResult: { readonly call: ToolCall.ToolCall; readonly content: string; readonly isError: boolean }
  Step: { readonly iteration: number; readonly repair?: true | undefined }
  Interrupt: PendingEntry
  Final: { readonly result: Result }
}>

/**
 * The tags of the agent events.
 *
 * @example
 * ```ts
 * import type { AgentEvent } from "@agentkit/agents"
 *
 * const quiet: ReadonlyArray<AgentEvent.Tag> = ["MessageDelta", "Step"]
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export type Tag = AgentEvent["_tag"]

const constructors = Data.taggedEnum<AgentEvent<unknown>>()

/**
 * Constructors and matcher of the agent events.
 *
 * @example
 * ```ts
 * import { AgentEvent } from "@agentkit/agents"
 *
 * const event = AgentEvent.Step({ iteration: 1 })
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
export const { $match, Final, Interrupt, MessageDelta, Step, ToolCall: ToolCallEvent, ToolResult } = constructors

/**
 * A guard for one tag, as `AgentEvent.$is(tag)` returns it. Given an event, it narrows that
 * event's own type (so `Final` keeps the agent's output type); given any other value (`unknown`,
 * decoded from the wire), it narrows to the event of that tag.
 *
 * @example
 * ```ts
 * import { AgentEvent } from "@agentkit/agents"
 *
 * const isFinal: AgentEvent.Guard<"Final"> = AgentEvent.$is("Final")
 * const fromWire: unknown = JSON.parse("{\"_tag\":\"Step\",\"iteration\":1}")
 * if (AgentEvent.$is("Step")(fromWire)) fromWire.iteration // 1
 * ```
 *
 * @since 0.2.0
 * @category guards
 */
export type Guard<T extends Tag> = <E>(value: E) => value is E & Narrowed<E, T>

/**
 * What `Guard<T>` narrows a value of type `E` to: the member of `E` tagged `T`, or, for a value
 * of unknown type, the event tagged `T`.
 *
 * @example
 * ```ts
 * import type { AgentEvent } from "@agentkit/agents"
 *
 * type Step = AgentEvent.Narrowed<unknown, "Step"> // { readonly _tag: "Step"; readonly iteration: number; ... }
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export type Narrowed<E, T extends Tag> = unknown extends E ? Extract<AgentEvent<unknown>, { readonly _tag: T }>
  : Extract<E, { readonly _tag: T }>

/**
 * A guard for one tag that keeps the event's type: on the events of `agent.stream` of an agent
 * whose output is `A`, `$is("Final")` narrows to the `Final` event whose `result.parsed` is an
 * `A`, in `if`, `Array.find`/`filter` and `Stream.filter` alike. Any value may be tested: a
 * value that is not an object with that `_tag` is not the event.
 *
 * @example
 * ```ts
 * import { AgentEvent, type AgentResult } from "@agentkit/agents"
 *
 * declare const events: ReadonlyArray<AgentEvent.AgentEvent<{ readonly status: string }>>
 * const final = events.find(AgentEvent.$is("Final"))
 * const status: string | undefined = final?.result.parsed?.status
 * const calls = events.filter(AgentEvent.$is("ToolCall")).map((event) => event.call.name)
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const $is = <T extends Tag>(tag: T): Guard<T> =>
  ((value: unknown) =>
    typeof value === "object" && value !== null && (value as { readonly _tag?: unknown })._tag === tag) as Guard<T>

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
