/**
 * Retry for both pipelines, on `Effect.retry` with a `Schedule`: full-jitter exponential backoff
 * by default, or your own schedule; a provider's `retryAfter` is honoured; an optional circuit
 * breaker (`CircuitBreaker`) per model or tool.
 *
 * Errors are classified by their type, never by their text (`isRetryable`, shared with
 * `Fallback`). On the chat pipeline a call is retried only while no delta has reached `emit`
 * (once text is shown, a failure propagates). On the tool pipeline a call is re-run only when the
 * tool is declared `idempotent`, or when the failure happened before the tool started: a
 * side-effecting, non-idempotent tool runs at most once. Cancellation, budget and argument errors
 * and denials are never retried.
 *
 * Place it innermost in both pipelines (closest to the model and the tool), so everything outside
 * it sees one logical call.
 *
 * @since 0.1.0
 */
import {
  ChatModelError,
  ConfigurationError,
  errorMessage,
  errorType,
  isAgentkitError,
  Middleware,
  ToolDenied,
  ToolExecutionError,
  Tracing
} from "@agentkit/core"
import type {
  Chat,
  ChatError,
  ChatHandler,
  ChatMiddleware,
  ToolCallRequest,
  ToolHandler,
  ToolMiddleware,
  ToolOutcome,
  ToolPipelineError
} from "@agentkit/core"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Schedule from "effect/Schedule"
import * as CircuitBreaker from "./CircuitBreaker.js"
import { CircuitOpen } from "./Errors.js"
import { cut } from "./internal/text.js"

/**
 * The options of `retry`.
 *
 * @example
 * ```ts
 * import { Retry } from "@agentkit/middleware"
 *
 * const options: Retry.Options = { maxAttempts: 4, baseDelay: "200 millis", maxDelay: "10 seconds", breaker: { failureThreshold: 5 } }
 * const retry = Retry.retry(options)
 * ```
 *
 * @example
 * ```ts
 * import { Retry } from "@agentkit/middleware"
 * import { Schedule } from "effect"
 *
 * const steady = Retry.retry({ schedule: Schedule.spaced("1 second"), maxAttempts: 5 })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Attempts in all, the first included. Default 3 (without a `schedule`; with one, the schedule decides unless this is given). */
  readonly maxAttempts?: number | undefined
  /** The backoff base: attempt n waits uniform(0, min(maxDelay, baseDelay · 2^(n-1))). Default 500 ms. */
  readonly baseDelay?: Duration.DurationInput | undefined
  /**
   * The backoff cap. Default 30 seconds. A provider's `retryAfter` is honoured (the wait is at
   * least that long), but one longer than this cap is not waited for: the error propagates.
   */
  readonly maxDelay?: Duration.DurationInput | undefined
  /**
   * A circuit breaker. A `CircuitBreaker` instance is shared by every call; options make one
   * breaker per model (chat) or per tool (tool pipeline), created on first use and named after it.
   */
  readonly breaker?: CircuitBreaker.CircuitBreaker | CircuitBreaker.Options | undefined
  /**
   * Your own backoff, in place of the full-jitter exponential one (`baseDelay` and `maxDelay`
   * then only bound `retryAfter`): it is given each failure and decides the wait and when to
   * stop, e.g. `Schedule.spaced("1 second").pipe(Schedule.upTo("30 seconds"))`. A provider's
   * `retryAfter` still sets the least wait.
   */
  readonly schedule?: Schedule.Schedule<unknown, unknown> | undefined
}

/** Whether an error declares its own `retryable` verdict (a provider error, a timeout, or any error of yours). */
const declared = (error: object): error is { readonly retryable: boolean } =>
  "retryable" in error && typeof error.retryable === "boolean"

/** An `@effect/platform` HTTP error, read by its fields. */
const httpRetryable = (error: HttpClientError.HttpClientError): boolean => {
  if (error._tag === "RequestError") return error.reason === "Transport"
  if (error.reason !== "StatusCode") return false
  const status = error.response.status
  return status === 408 || status === 425 || status === 429 || status >= 500
}

const classify = (error: unknown, depth: number): boolean => {
  if (typeof error !== "object" || error === null) return true
  if (declared(error)) return error.retryable
  // a tool failure is read through its cause (a provider error, an HTTP error, ...)
  if (error instanceof ToolExecutionError) return depth < 8 ? classify(error.cause, depth + 1) : true
  // every other agentkit error is a verdict: arguments, shape, budget, depth, cancellation, denials, ...
  if (isAgentkitError(error)) return false
  // a verdict anywhere in the cause chain (an egress denial under an HTTP error) is never retried
  const cause = "cause" in error ? error.cause : undefined
  if (cause !== undefined && depth < 8 && !classify(cause, depth + 1)) return false
  return HttpClientError.isHttpClientError(error) ? httpRetryable(error) : true
}

/**
 * Whether an error may be retried at all, by its type: an error that declares a boolean
 * `retryable` (a provider's `ChatModelError`, a `ToolTimeoutError`, any error of yours) is taken
 * at its word; a tool failure is read through its cause; every other agentkit error (argument,
 * shape, budget, depth, cancellation, circuit, configuration errors and every denial) never; an
 * `@effect/platform` transport error or a 408/425/429/5xx response yes, other HTTP errors no; an
 * error whose cause chain holds a verdict (an egress denial under an HTTP error) never; anything
 * else yes. `Fallback` reads the same rule; each pipeline adds its own condition (no delta shown
 * yet; the tool idempotent or not started).
 *
 * @example
 * ```ts
 * import { ChatModelError, ToolExecutionError, ToolDenied } from "@agentkit/core"
 * import { Retry } from "@agentkit/middleware"
 *
 * Retry.isRetryable(new ChatModelError({ reason: "overloaded", retryable: true, message: "529" })) // true
 * Retry.isRetryable(new ToolExecutionError({ toolName: "t", cause: new Error("ECONNRESET") })) // true
 * Retry.isRetryable(new ToolDenied({ toolName: "t", reason: "egress", message: "blocked" })) // false
 * ```
 *
 * @since 0.1.0
 * @category predicates
 */
export const isRetryable = (error: unknown): boolean => classify(error, 0)

interface Settings {
  readonly maxAttempts: number | undefined
  readonly baseMillis: number
  readonly maxMillis: number
  readonly breaker: CircuitBreaker.CircuitBreaker | CircuitBreaker.Options | undefined
  readonly schedule: Schedule.Schedule<unknown, unknown>
}

const millis = (field: string, input: Duration.DurationInput | undefined, fallback: number): number => {
  if (input === undefined) return fallback
  const decoded = Duration.decodeUnknown(input)
  if (Option.isNone(decoded) || !(Duration.toMillis(decoded.value) >= 0)) {
    throw new ConfigurationError({
      field: `retry.${field}`,
      message: `retry.${field} must be a non-negative duration (e.g. "500 millis"); got ${String(input)}`
    })
  }
  return Duration.toMillis(decoded.value)
}

/** Full jitter: attempt n waits uniform(0, min(maxDelay, baseDelay · 2^(n-1))). */
const fullJitter = (baseMillis: number, maxMillis: number): Schedule.Schedule<unknown, unknown> =>
  Schedule.exponential(Duration.millis(baseMillis)).pipe(
    Schedule.modifyDelayEffect((_, delay) =>
      Effect.map(Random.next, (r) => Duration.millis(Math.floor(r * Math.min(maxMillis, Duration.toMillis(delay)))))
    )
  )

const settingsOf = (options: Options): Settings => {
  const custom = options.schedule
  const maxAttempts = options.maxAttempts ?? (custom === undefined ? 3 : undefined)
  if (maxAttempts !== undefined && (!Number.isInteger(maxAttempts) || maxAttempts < 1)) {
    throw new ConfigurationError({
      field: "retry.maxAttempts",
      message: `retry.maxAttempts must be a positive integer; got ${String(options.maxAttempts)}`
    })
  }
  if (custom !== undefined && !Schedule.isSchedule(custom)) {
    throw new ConfigurationError({ field: "retry.schedule", message: "retry.schedule must be an Effect Schedule" })
  }
  const breaker = options.breaker
  // check breaker options now: a wiring mistake fails when the pipeline is built
  if (breaker !== undefined && !(breaker instanceof CircuitBreaker.CircuitBreaker)) {
    new CircuitBreaker.CircuitBreaker(breaker)
  }
  const baseMillis = millis("baseDelay", options.baseDelay, 500)
  const maxMillis = millis("maxDelay", options.maxDelay, 30_000)
  const backoff = custom ?? fullJitter(baseMillis, maxMillis)
  return {
    maxAttempts,
    baseMillis,
    maxMillis,
    breaker,
    schedule: maxAttempts === undefined ? backoff : Schedule.intersect(backoff, Schedule.recurs(maxAttempts - 1))
  }
}

const breakers = (settings: Settings): (key: string) => CircuitBreaker.CircuitBreaker | undefined => {
  const configured = settings.breaker
  if (configured === undefined) return () => undefined
  if (configured instanceof CircuitBreaker.CircuitBreaker) return () => configured
  const byKey = new Map<string, CircuitBreaker.CircuitBreaker>()
  return (key) => {
    let breaker = byKey.get(key)
    if (breaker === undefined) {
      breaker = new CircuitBreaker.CircuitBreaker({
        ...configured,
        name: configured.name === undefined ? key : `${configured.name}:${key}`
      })
      byKey.set(key, breaker)
    }
    return breaker
  }
}

const retryAfterMillis = (error: unknown): number =>
  error instanceof ChatModelError && error.retryAfter !== undefined ? Duration.toMillis(error.retryAfter) : 0

/**
 * The schedule of one call: the backoff, given each failure; a `retryAfter` is the least wait,
 * and one past `maxDelay` is not waited for (the error propagates); each retry adds a
 * `retry.attempt` event with the upcoming attempt number.
 */
const policyFor = <E>(settings: Settings, tracing: boolean): Schedule.Schedule<unknown, E> =>
  Schedule.intersect(settings.schedule, Schedule.intersect(Schedule.identity<E>(), Schedule.count)).pipe(
    Schedule.whileOutput(([, [error]]) => retryAfterMillis(error) <= settings.maxMillis),
    Schedule.modifyDelayEffect(([, [error, retries]], delay) => {
      const wait = Math.max(retryAfterMillis(error), Duration.toMillis(delay))
      const event = tracing
        ? Tracing.addEvent(Tracing.EventName.retryAttempt, {
          [Tracing.EventAttribute.attempt]: retries + 2,
          [Tracing.EventAttribute.lastErrorType]: errorType(error),
          [Tracing.EventAttribute.lastErrorMessage]: cut(errorMessage(error), 500),
          [Tracing.EventAttribute.backoffMs]: wait
        })
        : Effect.void
      return Effect.as(event, Duration.millis(wait))
    })
  )

/**
 * `Effect.retry(once, { schedule: schedule(), while: retryable })`, with the schedule and its
 * driver made only when a call has failed and may be retried. The first attempt runs on its own;
 * its failure is replayed as the first attempt of the retry loop, so the schedule sees the same
 * failures, waits the same delays and counts the same attempts, and the first attempt sees the
 * same (default) iteration metadata. A call that succeeds at once pays for none of it (a retry
 * loop costs a run of Effect steps and a context write per call).
 */
const retrying = <A, E, R>(
  once: Effect.Effect<A, E, R>,
  schedule: () => Schedule.Schedule<unknown, E>,
  retryable: (error: E) => boolean
): Effect.Effect<A, E, R> =>
  Effect.catchAll(once, (first) => {
    if (!retryable(first)) return Effect.fail(first)
    let replayed = false
    const attempt = Effect.suspend(() => {
      if (replayed) return once
      replayed = true
      return Effect.fail(first)
    })
    return Effect.retry(attempt, { schedule: schedule(), while: retryable })
  })

const refusedEvent = (tracing: boolean, breaker: CircuitBreaker.CircuitBreaker): Effect.Effect<void> =>
  tracing
    ? Tracing.addEvent(Tracing.EventName.circuitOpen, { [Tracing.EventAttribute.circuit]: breaker.name })
    : Effect.void

const chatRetry = (settings: Settings): ChatMiddleware => {
  const breakerFor = breakers(settings)
  return (next: ChatHandler): ChatHandler => (call) => {
    let emitted = false
    let refused = false
    const inner = Middleware.tapEmit(call, () => {
      emitted = true
    })
    const tracing = call.context.tracing
    const breaker = breakerFor(call.request.model)
    const once: Effect.Effect<Chat.ChatResponse, ChatError> = breaker === undefined
      ? Effect.suspend(() => next(inner))
      : Effect.catchIf(
        breaker.protect(Effect.suspend(() => next(inner)), isRetryable),
        (error): error is CircuitOpen => error instanceof CircuitOpen,
        (open) => {
          refused = true
          return Effect.zipRight(
            refusedEvent(tracing, breaker),
            Effect.fail(
              new ChatModelError({ reason: "overloaded", retryable: true, message: open.message, cause: open })
            )
          )
        }
      )
    // once text is shown, a failure propagates; a refusal is final here (an outer fallback moves on)
    return retrying(
      once,
      () => policyFor<ChatError>(settings, tracing),
      (error) => !emitted && !refused && isRetryable(error)
    )
  }
}

const toolRetry = (settings: Settings): ToolMiddleware => {
  const breakerFor = breakers(settings)
  return (next: ToolHandler): ToolHandler =>
  <E, R>(request: ToolCallRequest<E, R>): Effect.Effect<ToolOutcome, E | ToolPipelineError, R> => {
    const tool = request.tool
    let started = false
    // A non-idempotent tool is re-run only if it never started: watch it start.
    const inner = tool.idempotent ? request : Middleware.tapExecute(request, () => (started = true))
    const tracing = request.context.tracing
    const breaker = breakerFor(tool.name)
    const once: Effect.Effect<ToolOutcome, E | ToolPipelineError, R> = breaker === undefined
      ? Effect.suspend(() => next(inner))
      : Effect.catchIf(
        breaker.protect(Effect.suspend(() => next(inner)), isRetryable),
        (error): error is CircuitOpen => error instanceof CircuitOpen,
        (open) =>
          Effect.zipRight(
            refusedEvent(tracing, breaker),
            Effect.fail(new ToolDenied({ toolName: tool.name, reason: "other", message: open.message }))
          )
      )
    // a side-effecting, non-idempotent tool that started runs at most once
    return retrying(
      once,
      () => policyFor<E | ToolPipelineError>(settings, tracing),
      (error) => isRetryable(error) && !(started && !tool.idempotent)
    )
  }
}

/**
 * Retries failed calls, on either pipeline (put the value in either list, or both).
 *
 * Place: innermost (last in both lists), inside `fallback` on the chat pipeline and inside
 * `idempotent` on the tool pipeline.
 *
 * Before each retry a `retry.attempt` span event records the upcoming attempt number, the error
 * type, its message cut to 500 characters and the backoff in ms. With a breaker, a refused call
 * fails at once (a retryable `ChatModelError` on the chat pipeline, so an outer `fallback` moves
 * on; a `ToolDenied` with reason `other` on the tool pipeline, so the model is told) and a
 * `circuit.open` event is added. Bad options throw `ConfigurationError` when the middleware is
 * made.
 *
 * @example
 * ```ts
 * import { Invoker } from "@agentkit/core"
 * import { Retry } from "@agentkit/middleware"
 *
 * const retry = Retry.retry({ maxAttempts: 3, breaker: { failureThreshold: 5, cooldown: "15 seconds" } })
 * const InvokerLive = Invoker.layer({ chatMiddleware: [retry], toolMiddleware: [retry] })
 * ```
 *
 * @since 0.1.0
 * @category middleware
 */
export const retry = (options: Options = {}): Middleware.Both => {
  const settings = settingsOf(options)
  return Middleware.both(chatRetry(settings), toolRetry(settings))
}
