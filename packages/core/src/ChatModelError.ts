/**
 * The error of a failed model call (`ChatModelError`), why it failed (`ChatModelErrorReason`) and
 * its guard.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"
import { ErrorTypeId, ForeignValue } from "./AgentkitError.js"
import { isTagged } from "./internal/errors.js"

/**
 * Why a model call failed.
 *
 * @example
 * ```ts
 * import { ChatModelError, type ChatModelErrorReason } from "@agentkit/core"
 *
 * const reason: ChatModelErrorReason = "rate_limit"
 * new ChatModelError({ reason, retryable: true, message: "429 rate limited" })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type ChatModelErrorReason = Schema.Schema.Type<typeof ChatModelErrorReason>

/**
 * The accepted values of `ChatModelErrorReason`.
 *
 * @example
 * ```ts
 * import { ChatModelErrorReason } from "@agentkit/core"
 * import { Schema } from "effect"
 *
 * Schema.is(ChatModelErrorReason)("overloaded") // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatModelErrorReason = Schema.Literal(
  "rate_limit",
  "overloaded",
  "server",
  "timeout",
  "network",
  "auth",
  "permission",
  "invalid_request",
  "not_found",
  "too_large",
  "context_length",
  "stream",
  "configuration",
  "unknown"
)

/**
 * A model call failed. `retryable` is the provider's classification (rate limits, overload,
 * server errors and network failures are retryable; bad requests and auth are not).
 *
 * @example
 * ```ts
 * import { ChatModelError } from "@agentkit/core"
 *
 * const error = new ChatModelError({ reason: "overloaded", retryable: true, message: "529 overloaded" })
 * error.retryable // true
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ChatModelError
  extends Schema.TaggedError<ChatModelError>("@agentkit/core/ChatModelError")("ChatModelError", {
    reason: ChatModelErrorReason,
    retryable: Schema.Boolean,
    message: Schema.String,
    status: Schema.optional(Schema.Number),
    requestId: Schema.optional(Schema.String),
    retryAfter: Schema.optional(Schema.Duration),
    cause: Schema.optional(ForeignValue)
  })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * Whether a value is a `ChatModelError`.
 *
 * @example
 * ```ts
 * import { ChatModelError, isChatModelError } from "@agentkit/core"
 *
 * isChatModelError(new ChatModelError({ reason: "timeout", retryable: true, message: "timed out" })) // true
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isChatModelError: (u: unknown) => u is ChatModelError = isTagged("ChatModelError")
