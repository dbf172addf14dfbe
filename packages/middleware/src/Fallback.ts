/**
 * Model fallback for the chat pipeline.
 *
 * @since 0.1.0
 */
import { ConfigurationError, Middleware } from "@agentkit/core"
import type { Chat, ChatError, ChatHandler, ChatMiddleware } from "@agentkit/core"
import * as Effect from "effect/Effect"
import { isRetryable } from "./Retry.js"

/**
 * Falls over to the next model when a call fails with an error `Retry.isRetryable` accepts (a
 * retryable `ChatModelError`: a rate limit, an overload, a timeout, an open circuit) before any
 * delta has reached `emit`. The request's
 * own model is tried first, then `models` in order (a model already tried is skipped). A
 * non-retryable error, a budget error, or a failure after text was shown propagates at once. The
 * model that served is recorded in `meta.servedBy`.
 *
 * Place: on the chat pipeline, outside `retry` (each model gets its retries, then the next one):
 * `[telemetry, memoize, meter, fallback, retry]`. An empty list throws `ConfigurationError`.
 *
 * @example
 * ```ts
 * import { Invoker } from "@agentkit/core"
 * import { Fallback, Retry } from "@agentkit/middleware"
 *
 * const InvokerLive = Invoker.layer({
 *   chatMiddleware: [Fallback.fallback(["claude-haiku-4-5"]), Retry.retry()]
 * })
 * ```
 *
 * @since 0.1.0
 * @category middleware
 */
export const fallback = (models: ReadonlyArray<string>): ChatMiddleware => {
  if (!Array.isArray(models) || models.length === 0 || models.some((m) => typeof m !== "string" || m.length === 0)) {
    throw new ConfigurationError({
      field: "fallback.models",
      message: `fallback needs a non-empty list of model names; got ${JSON.stringify(models)}`
    })
  }
  const list = [...models]
  return (next: ChatHandler): ChatHandler => (call) => {
    const requested = call.request.model
    const order = list[0] === requested ? list : [requested, ...list.filter((model) => model !== requested)]
    let emitted = false
    const watched = Middleware.tapEmit(call, () => {
      emitted = true
    })
    const attempt = (index: number): Effect.Effect<Chat.ChatResponse, ChatError> => {
      const model = order[index]!
      const inner = model === call.request.model ? watched : { ...watched, request: { ...call.request, model } }
      return Effect.matchEffect(Effect.suspend(() => next(inner)), {
        onSuccess: (response) => {
          call.meta.servedBy = model
          return Effect.succeed(response)
        },
        onFailure: (error) =>
          index + 1 < order.length && !emitted && isRetryable(error)
            ? attempt(index + 1)
            : Effect.fail(error)
      })
    }
    return attempt(0)
  }
}
