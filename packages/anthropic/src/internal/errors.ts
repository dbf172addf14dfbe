/**
 * Error mapping: what the SDK throws, as a `ChatModelError` with a reason, `retryable`, the HTTP
 * status, the request id and `retryAfter` when the server sent one.
 *
 * | status / kind                          | reason            | retryable |
 * | -------------------------------------- | ----------------- | --------- |
 * | 400 "prompt is too long"               | `context_length`  | no        |
 * | 400, 422                               | `invalid_request` | no        |
 * | 401                                    | `auth`            | no        |
 * | 402, 403                               | `permission`      | no        |
 * | 404                                    | `not_found`       | no        |
 * | 408, connection timeout                | `timeout`         | yes       |
 * | 409                                    | `server`          | yes       |
 * | 413                                    | `too_large`       | no        |
 * | 429                                    | `rate_limit`      | yes       |
 * | 529                                    | `overloaded`      | yes       |
 * | 504                                    | `timeout`         | yes       |
 * | other 5xx                              | `server`          | yes       |
 * | connection error                       | `network`         | yes       |
 * | `error` event after HTTP 200           | from its `type`   | by type, and only before the first text delta |
 *
 * A server's `x-should-retry: true|false` header wins over the table, as in the SDK's own policy.
 *
 * @internal
 */
import { ChatModelError, errorMessage, retryAfterOf, shouldRetryOf, statusReason } from "@agentkit/core"
import type { ChatModelErrorReason } from "@agentkit/core"
import * as Anthropic from "@anthropic-ai/sdk"
import type * as Duration from "effect/Duration"

type Reason = ChatModelErrorReason

/** The API's error `type` (as sent in an `error` event, which has no status). */
const byType = (type: string | null | undefined): { readonly reason: Reason; readonly retryable: boolean } => {
  switch (type) {
    case "invalid_request_error":
      return { reason: "invalid_request", retryable: false }
    case "authentication_error":
      return { reason: "auth", retryable: false }
    case "billing_error":
    case "permission_error":
      return { reason: "permission", retryable: false }
    case "not_found_error":
      return { reason: "not_found", retryable: false }
    case "request_too_large":
      return { reason: "too_large", retryable: false }
    case "rate_limit_error":
      return { reason: "rate_limit", retryable: true }
    case "timeout_error":
      return { reason: "timeout", retryable: true }
    case "overloaded_error":
      return { reason: "overloaded", retryable: true }
    case "api_error":
    case "conflict_error":
      return { reason: "server", retryable: true }
    default:
      return { reason: "stream", retryable: true }
  }
}

/** How the API words a prompt longer than the model's context window (a 400 `invalid_request_error`). */
const CONTEXT_LENGTH = /prompt is too long|context window|context length/i

const describe = (error: Anthropic.APIError): string => {
  const parts: Array<string> = []
  if (error.type) parts.push(error.type)
  const text = error.apiMessage ?? error.message
  return parts.length > 0 ? `${parts.join(" ")}: ${text}` : text
}

/** Context of the failed call. */
export interface FailureContext {
  /** Whether a text delta had already been passed on (then nothing is retryable). */
  readonly emitted: boolean
  /** The request id, when the response headers had arrived. */
  readonly requestId?: string | undefined
}

const withOptional = (
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

/** Maps anything a call threw to a `ChatModelError`. */
export const toChatModelError = (error: unknown, context: FailureContext): ChatModelError => {
  if (error instanceof ChatModelError) return error
  const committed = context.emitted ? " (after text was streamed; not retryable)" : ""

  if (error instanceof Anthropic.APIConnectionTimeoutError) {
    return withOptional(
      {
        reason: "timeout",
        retryable: !context.emitted,
        message: `Anthropic request timed out${committed}`,
        cause: error
      },
      { requestId: context.requestId }
    )
  }
  if (error instanceof Anthropic.APIUserAbortError) {
    return withOptional(
      { reason: "network", retryable: false, message: "Anthropic request aborted", cause: error },
      { requestId: context.requestId }
    )
  }
  if (error instanceof Anthropic.APIConnectionError) {
    return withOptional(
      {
        reason: "network",
        retryable: !context.emitted,
        message: `Anthropic connection error: ${error.message}${committed}`,
        cause: error
      },
      { requestId: context.requestId }
    )
  }
  if (error instanceof Anthropic.APIError) {
    const requestId = error.requestID ?? context.requestId ?? undefined
    const headers = error.headers instanceof Headers ? error.headers : undefined
    if (error.status === undefined) {
      // an `error` event after HTTP 200
      const { reason, retryable } = byType(error.type)
      return withOptional(
        {
          reason,
          retryable: retryable && !context.emitted,
          message: `Anthropic stream error: ${describe(error)}${committed}`,
          cause: error
        },
        { requestId, retryAfter: retryAfterOf(headers) }
      )
    }
    const { reason, retryable } = error.status === 400 && CONTEXT_LENGTH.test(describe(error))
      ? { reason: "context_length" as const, retryable: false }
      : statusReason(error.status)
    const serverSays = shouldRetryOf(headers)
    return withOptional(
      {
        reason,
        retryable: (serverSays ?? retryable) && !context.emitted,
        message: `Anthropic API error ${error.status} ${describe(error)}`,
        cause: error
      },
      { status: error.status, requestId, retryAfter: retryAfterOf(headers) }
    )
  }
  if (error instanceof Anthropic.AnthropicError) {
    return withOptional(
      { reason: "unknown", retryable: false, message: `Anthropic SDK error: ${error.message}`, cause: error },
      { requestId: context.requestId }
    )
  }
  // A read of the response body failed mid-stream (socket reset, bad SSE data).
  const message = errorMessage(error)
  return withOptional(
    {
      reason: "stream",
      retryable: !context.emitted,
      message: `Anthropic stream failed: ${message}${committed}`,
      cause: error
    },
    { requestId: context.requestId }
  )
}

/** The error for a stream that ended before `message_stop`: never a silently truncated answer. */
export const incompleteStream = (context: FailureContext): ChatModelError =>
  withOptional(
    {
      reason: "stream",
      retryable: !context.emitted,
      message: `Anthropic stream ended before message_stop${
        context.emitted ? " (after text was streamed; not retryable)" : ""
      }`
    },
    { requestId: context.requestId }
  )
