/**
 * How many input tokens a model request holds: the one count budgets reserve against and
 * compaction measures a prompt's share of the context window with.
 *
 * The default, `utf8Bytes`, is a bound rather than a guess: it counts the UTF-8 bytes of the
 * request as JSON (messages, tool calls, advertised tools, response format). Every byte-level
 * tokenizer the providers use emits at most one token per byte, and the JSON's quotes, keys and
 * braces cover each message's framing tokens, so the real count is never higher. A provider with
 * a local tokenizer can supply a tighter count with `layer`.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { ChatRequest } from "./Chat.js"
import { byteLength } from "./Utf8.js"

/**
 * A token counter for model requests.
 *
 * @example
 * ```ts
 * import { TokenEstimator } from "@agentkit/core"
 *
 * const quarter: TokenEstimator.Service = {
 *   name: "bytes/4",
 *   inputTokens: (request) => Math.ceil(JSON.stringify(request.messages).length / 4)
 * }
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface Service {
  /** Names the counter in spans, audit and errors (`utf8-bytes` for the default). */
  readonly name: string
  /** The input tokens of `request`: for a budget, never fewer than the provider bills. */
  readonly inputTokens: (request: ChatRequest) => number
}

/**
 * The token counter in context; `current` falls back to `utf8Bytes` when none is provided.
 *
 * @example
 * ```ts
 * import { TokenEstimator } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const program = Effect.map(TokenEstimator.TokenEstimator, (estimator) => estimator.name)
 * ```
 *
 * @since 0.2.0
 * @category services
 */
export class TokenEstimator extends Context.Tag("@agentkit/core/TokenEstimator")<TokenEstimator, Service>() {}

/**
 * The UTF-8 bytes of the request as JSON: an upper bound on the input tokens of any byte-level
 * tokenizer.
 *
 * @example
 * ```ts
 * import { Message, TokenEstimator } from "@agentkit/core"
 *
 * TokenEstimator.utf8Bytes.inputTokens({ model: "m", messages: [Message.user("hi")], tools: [] })
 * // 56: {"messages":[{"role":"user","content":"hi"}],"tools":[]}
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const utf8Bytes: Service = {
  name: "utf8-bytes",
  inputTokens: (request) => {
    // the bytes of JSON.stringify({ messages, tools, toolChoice, responseFormat }), summed part by
    // part: a message or tool schema is measured once and remembered, so a growing transcript
    // costs only its new messages
    let bytes = 26 + separators(request.messages.length) + separators(request.tools.length) // {"messages":[],"tools":[]}
    for (const message of request.messages) bytes += measured(message)
    for (const tool of request.tools) bytes += measured(tool)
    if (request.toolChoice !== undefined) bytes += 14 + byteLength(JSON.stringify(request.toolChoice)) // ,"toolChoice":
    if (request.responseFormat !== undefined) bytes += 18 + measured(request.responseFormat) // ,"responseFormat":
    return bytes
  }
}

const separators = (count: number): number => (count > 0 ? count - 1 : 0)

/** The UTF-8 bytes of a value's JSON, once per value (requests share their messages and tools). */
const sizes = new WeakMap<object, number>()
const measured = (value: object): number => {
  let size = sizes.get(value)
  if (size === undefined) {
    size = byteLength(JSON.stringify(value))
    sizes.set(value, size)
  }
  return size
}

/**
 * Provides a token counter.
 *
 * @example
 * ```ts
 * import { TokenEstimator } from "@agentkit/core"
 *
 * const layer = TokenEstimator.layer(TokenEstimator.utf8Bytes)
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (service: Service): Layer.Layer<TokenEstimator> => Layer.succeed(TokenEstimator, service)

/**
 * The counter in context, else `utf8Bytes`.
 *
 * @example
 * ```ts
 * import { Message, TokenEstimator } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const tokens = Effect.map(
 *   TokenEstimator.current,
 *   (estimator) => estimator.inputTokens({ model: "m", messages: [Message.user("hi")], tools: [] })
 * )
 * ```
 *
 * @since 0.2.0
 * @category getters
 */
export const current: Effect.Effect<Service> = Effect.map(
  Effect.serviceOption(TokenEstimator),
  Option.getOrElse(() => utf8Bytes)
)
