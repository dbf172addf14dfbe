/**
 * The error of a failed model call (`ChatModelError`), why it failed (`ChatModelErrorReason`) and
 * its guard.
 *
 * @since 0.2.0
 */
import * as Duration from "effect/Duration"
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
 * What an HTTP status from a model API means: the reason a call failed and whether a retry may
 * succeed. One table for every provider (408 and 504 time out, 429 is a rate limit, 503 and 529
 * are overload, other 5xx and 409 are server errors, all retryable; 400 and 422 are invalid
 * requests, 401 auth, 402 and 403 permission, 404 not found, 413 too large, none retryable).
 * A provider maps what its API says more precisely (an error type, a context-length message)
 * before it falls back to this.
 *
 * @example
 * ```ts
 * import { statusReason } from "@agentkit/core"
 *
 * statusReason(429) // { reason: "rate_limit", retryable: true }
 * statusReason(400) // { reason: "invalid_request", retryable: false }
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const statusReason = (
  status: number
): { readonly reason: ChatModelErrorReason; readonly retryable: boolean } => {
  switch (status) {
    case 400:
    case 422:
      return { reason: "invalid_request", retryable: false }
    case 401:
      return { reason: "auth", retryable: false }
    case 402:
    case 403:
      return { reason: "permission", retryable: false }
    case 404:
      return { reason: "not_found", retryable: false }
    case 408:
    case 504:
      return { reason: "timeout", retryable: true }
    case 413:
      return { reason: "too_large", retryable: false }
    case 429:
      return { reason: "rate_limit", retryable: true }
    case 503:
    case 529:
      return { reason: "overloaded", retryable: true }
    default:
      return status >= 500 || status === 409
        ? { reason: "server", retryable: true }
        : { reason: "invalid_request", retryable: false }
  }
}

/**
 * How long the server asked a client to wait before retrying, from a response's headers:
 * `retry-after-ms`, then `retry-after` (seconds or an HTTP date). Undefined when it asked nothing
 * or the value does not parse; a date in the past is no wait.
 *
 * @example
 * ```ts
 * import { retryAfterOf } from "@agentkit/core"
 *
 * retryAfterOf(new Headers({ "retry-after": "2" })) // Duration.millis(2000)
 * retryAfterOf(new Headers({ "retry-after-ms": "150" })) // Duration.millis(150)
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const retryAfterOf = (
  headers: Headers | undefined,
  now: number = Date.now()
): Duration.Duration | undefined => {
  if (headers === undefined) return undefined
  const millis = headers.get("retry-after-ms")
  if (millis !== null) {
    const ms = Number.parseFloat(millis)
    if (Number.isFinite(ms) && ms >= 0) return Duration.millis(ms)
  }
  const after = headers.get("retry-after")
  if (after !== null) {
    const seconds = Number.parseFloat(after)
    if (Number.isFinite(seconds) && /^\s*[\d.]+\s*$/.test(after)) return Duration.millis(Math.max(0, seconds * 1000))
    const date = Date.parse(after)
    if (Number.isFinite(date)) return Duration.millis(Math.max(0, date - now))
  }
  return undefined
}

/**
 * What a server's `x-should-retry` header says about retrying: `true`, `false`, or undefined
 * when it says nothing (then the status decides).
 *
 * @example
 * ```ts
 * import { shouldRetryOf } from "@agentkit/core"
 *
 * shouldRetryOf(new Headers({ "x-should-retry": "false" })) // false
 * shouldRetryOf(new Headers()) // undefined
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const shouldRetryOf = (headers: Headers | undefined): boolean | undefined => {
  const value = headers?.get("x-should-retry")
  return value === "true" ? true : value === "false" ? false : undefined
}

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
