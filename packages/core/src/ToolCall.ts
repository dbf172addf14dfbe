/**
 * A model's request to run a tool.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * The schema of a tool call: the provider's call id, the tool name and the raw arguments.
 *
 * @example
 * ```ts
 * import { ToolCall } from "@agentkit/core"
 * import { Schema } from "effect"
 *
 * Schema.decodeUnknownSync(ToolCall.ToolCall)({ id: "c1", name: "lookup_order", arguments: { order_id: "A-771" } })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolCall = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  arguments: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})

/**
 * A tool call as the model sent it. The arguments are not validated yet: the tool does that.
 *
 * @example
 * ```ts
 * import { ToolCall } from "@agentkit/core"
 *
 * const call: ToolCall.ToolCall = ToolCall.make({ id: "c1", name: "lookup_order", arguments: { order_id: "A-771" } })
 * call.arguments.order_id // "A-771", typed unknown until the tool validates it
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolCall extends Schema.Schema.Type<typeof ToolCall> {}

/**
 * Makes a tool call.
 *
 * @example
 * ```ts
 * import { ToolCall } from "@agentkit/core"
 *
 * ToolCall.make({ id: "c1", name: "lookup_order", arguments: { order_id: "A-771" } }).name // "lookup_order"
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (fields: ToolCall): ToolCall => fields
