/**
 * Error mapping: what the `openai` SDK throws, as a `ChatModelError` with a reason, `retryable`,
 * the HTTP status, the request id (`x-request-id`) and `retryAfter` when the server sent one.
 *
 * | status / kind                                    | reason            | retryable |
 * | ------------------------------------------------ | ----------------- | --------- |
 * | code `context_length_exceeded` (or its wording)   | `context_length`  | no        |
 * | 400, 422 (`BadRequestError`, `Unprocessable…`)    | `invalid_request` | no        |
 * | 401 (`AuthenticationError`)                       | `auth`            | no        |
 * | 403 (`PermissionDeniedError`)                     | `permission`      | no        |
 * | 404 (`NotFoundError`)                             | `not_found`       | no        |
 * | 408, `APIConnectionTimeoutError`                  | `timeout`         | yes       |
 * | 409 (`ConflictError`)                             | `server`          | yes       |
 * | 413                                               | `too_large`       | no        |
 * | 429 (`RateLimitError`), not `insufficient_quota`  | `rate_limit`      | yes       |
 * | 429 `insufficient_quota`                          | `permission`      | no        |
 * | 503                                               | `overloaded`      | yes       |
 * | 504                                               | `timeout`         | yes       |
 * | other 5xx (`InternalServerError`)                 | `server`          | yes       |
 * | `APIConnectionError`                              | `network`         | yes       |
 * | an `error` event or `response.failed` after 200   | by its code       | only before the first text delta |
 *
 * A server's `x-should-retry: true|false` header wins over the table, as in the SDK's own policy.
 *
 * @internal
 */
import { ChatModelError, errorMessage, retryAfterOf, shouldRetryOf, statusReason } from "@agentkit/core"
import type { ChatModelErrorReason } from "@agentkit/core"
import type * as Duration from "effect/Duration"
import type { APIError } from "openai"
import OpenAI from "openai"

type Reason = ChatModelErrorReason

/** How the APIs and compatible servers word a prompt past the context window. */
const CONTEXT_LENGTH = /context[_ ]length|context window|maximum context|too many tokens|prompt is too long/i

/** An error code sent in a stream (`error` event, `response.failed`), which has no status. */
const byCode = (code: string | null | undefined): { readonly reason: Reason; readonly retryable: boolean } => {
  switch (code) {
    case "rate_limit_exceeded":
      return { reason: "rate_limit", retryable: true }
    case "server_error":
    case "internal_error":
      return { reason: "server", retryable: true }
    case "server_is_overloaded":
    case "slow_down":
      return { reason: "overloaded", retryable: true }
    case "invalid_prompt":
    case "invalid_request_error":
      return { reason: "invalid_request", retryable: false }
    default:
      return { reason: "stream", retryable: true }
  }
}

/** Context of the failed call. */
export interface FailureContext {
  /** The provider's name in messages (`OpenAI`, or the compatible server's label). */
  readonly label: string
  /** Whether a text delta had already been passed on (then nothing is retryable). */
  readonly emitted: boolean
  /** The request id, when the response headers had arrived. */
  readonly requestId?: string | undefined
}

const make = (
  fields: ConstructorParameters<typeof ChatModelError>[0],
  extra: {
    readonly status?: number | undefined
    readonly requestId?: string | undefined
    readonly retryAfter?: Duration.Duration | undefined
  }
): ChatModelError =>
  new ChatModelError({
    ...fields,
    ...(extra.status !== undefined ? { status: extra.status } : {}),
    ...(extra.requestId !== undefined ? { requestId: extra.requestId } : {}),
    ...(extra.retryAfter !== undefined ? { retryAfter: extra.retryAfter } : {})
  })

const isContextLength = (error: APIError): boolean =>
  error.code === "context_length_exceeded" || CONTEXT_LENGTH.test(error.message)

/** Maps anything a call threw to a `ChatModelError`. */
export const toChatModelError = (error: unknown, context: FailureContext): ChatModelError => {
  if (error instanceof ChatModelError) return error
  const { label } = context
  const committed = context.emitted ? " (after text was streamed; not retryable)" : ""
  if (error instanceof OpenAI.APIConnectionTimeoutError) {
    return make(
      {
        reason: "timeout",
        retryable: !context.emitted,
        message: `${label} request timed out${committed}`,
        cause: error
      },
      { requestId: context.requestId }
    )
  }
  if (error instanceof OpenAI.APIUserAbortError) {
    return make(
      { reason: "network", retryable: false, message: `${label} request aborted`, cause: error },
      { requestId: context.requestId }
    )
  }
  if (error instanceof OpenAI.APIConnectionError) {
    return make(
      {
        reason: "network",
        retryable: !context.emitted,
        message: `${label} connection error: ${error.message}${committed}`,
        cause: error
      },
      { requestId: context.requestId }
    )
  }
  if (error instanceof OpenAI.APIError) {
    const requestId = error.requestID ?? context.requestId ?? undefined
    const headers = error.headers instanceof Headers ? error.headers : undefined
    const code = typeof error.code === "string" ? ` (${error.code})` : ""
    if (isContextLength(error)) {
      return make(
        {
          reason: "context_length",
          retryable: false,
          message: `${label} API error: ${error.message}${code}`,
          cause: error
        },
        { status: error.status, requestId }
      )
    }
    if (error.status === undefined) {
      // an `error` event after HTTP 200
      const { reason, retryable } = byCode(error.code ?? error.type)
      return make(
        {
          reason,
          retryable: retryable && !context.emitted,
          message: `${label} stream error: ${error.message}${code}${committed}`,
          cause: error
        },
        { requestId, retryAfter: retryAfterOf(headers) }
      )
    }
    const quota = error.status === 429 && error.code === "insufficient_quota"
    const { reason, retryable } = quota
      ? { reason: "permission" as const, retryable: false }
      : statusReason(error.status)
    return make(
      {
        reason,
        retryable: (shouldRetryOf(headers) ?? retryable) && !context.emitted,
        message: `${label} API error ${error.message}${code}`,
        cause: error
      },
      { status: error.status, requestId, retryAfter: retryAfterOf(headers) }
    )
  }
  if (error instanceof OpenAI.OpenAIError) {
    return make(
      { reason: "unknown", retryable: false, message: `${label} SDK error: ${error.message}`, cause: error },
      { requestId: context.requestId }
    )
  }
  // a read of the response body failed mid-stream (socket reset, bad SSE data)
  return make(
    {
      reason: "stream",
      retryable: !context.emitted,
      message: `${label} stream failed: ${errorMessage(error)}${committed}`,
      cause: error
    },
    { requestId: context.requestId }
  )
}

/** A stream that ended before its last event, or contradicted itself: never a silently wrong answer. */
export const brokenStream = (context: FailureContext, what: string): ChatModelError =>
  make(
    {
      reason: "stream",
      retryable: !context.emitted,
      message: `${context.label} stream ${what}${context.emitted ? " (after text was streamed; not retryable)" : ""}`
    },
    { requestId: context.requestId }
  )

/** A failure reported inside the stream (`response.failed`, `response.incomplete` is not one). */
export const streamFailure = (
  context: FailureContext,
  code: string | null | undefined,
  message: string
): ChatModelError => {
  if (code === "context_length_exceeded" || CONTEXT_LENGTH.test(message)) {
    return make({ reason: "context_length", retryable: false, message: `${context.label}: ${message}` }, {
      requestId: context.requestId
    })
  }
  const { reason, retryable } = byCode(code)
  return make(
    {
      reason,
      retryable: retryable && !context.emitted,
      message: `${context.label} response failed: ${message}${code ? ` (${code})` : ""}`
    },
    { requestId: context.requestId }
  )
}
