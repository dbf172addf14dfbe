/**
 * Retry for both pipelines, with full-jitter exponential backoff and an optional circuit breaker.
 *
 * Errors are classified by their type, never by their text. On the chat pipeline a call is
 * retried only while no delta has reached `emit` (once text is shown, a failure propagates). On
 * the tool pipeline a call is re-run only when the tool is declared `idempotent`, or when the
 * failure happened before the tool started: a side-effecting, non-idempotent tool runs at most
 * once. Cancellation, budget and argument errors and denials are never retried.
 *
 * Place it innermost in both pipelines (closest to the model and the tool), so everything outside
 * it sees one logical call.
 *
 * @since 0.1.0
 */
import { ChatModelError, ConfigurationError, Middleware, ToolDenied, Tracing } from "@agentkit/core"
import type {
  Chat,
  ChatCall,
  ChatError,
  ChatHandler,
  ChatMiddleware,
  ToolHandler,
  ToolInvocation,
  ToolMiddleware,
  ToolOutcome,
  ToolPipelineError
} from "@agentkit/core"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import { errorMessage, errorType, findInCauses } from "./internal/errors.js"
import { both } from "./internal/pipeline.js"
import { cut } from "./internal/text.js"

/**
 * A call was refused because its circuit is open.
 *
 * @example
 * ```ts
 * import { Retry } from "@agentkit/middleware"
 *
 * new Retry.CircuitOpen({ circuit: "claude-sonnet-4-6" }).message // "circuit open: claude-sonnet-4-6"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class CircuitOpen extends Data.TaggedError("CircuitOpen")<{ readonly circuit: string }> {
  override get message(): string {
    return `circuit open: ${this.circuit}`
  }
}

/**
 * The state of a circuit breaker.
 *
 * @example
 * ```ts
 * import { Retry } from "@agentkit/middleware"
 *
 * const state: Retry.CircuitState = Retry.circuitBreaker().state // "closed"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type CircuitState = "closed" | "open" | "half_open"

/**
 * The options of a circuit breaker.
 *
 * @example
 * ```ts
 * import { Retry } from "@agentkit/middleware"
 *
 * const options: Retry.CircuitBreakerOptions = { name: "payments", failureThreshold: 3, cooldown: "1 minute" }
 * const breaker = Retry.circuitBreaker(options)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface CircuitBreakerOptions {
  /** Shown in `circuit open: <name>`. Default `"circuit"` (per-key breakers use the key). */
  readonly name?: string | undefined
  /** Consecutive counted failures that open the circuit. Default 5. */
  readonly failureThreshold?: number | undefined
  /** How long the circuit stays open before one probe call is let through. Default 15 seconds. */
  readonly cooldown?: Duration.DurationInput | undefined
}

/**
 * A circuit breaker: closed (calls pass), open (calls are refused with `CircuitOpen` until the
 * cooldown has passed), half-open (exactly one probe call is in flight; every other call is
 * refused). A success closes the circuit; `failureThreshold` consecutive counted failures, or a
 * failed probe, open it. A call whose outcome says nothing about the downstream's health (an
 * uncounted failure, a defect, an interruption) changes nothing, except that a probe ending that
 * way frees the probe slot. Time comes from Effect's `Clock`, so tests drive it with `TestClock`.
 *
 * @example
 * ```ts
 * import { Retry } from "@agentkit/middleware"
 * import { Effect } from "effect"
 *
 * const breaker = Retry.circuitBreaker({ name: "payments", failureThreshold: 2, cooldown: "30 seconds" })
 * const guarded = breaker.protect(Effect.fail("timeout"), () => true)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export class CircuitBreaker {
  readonly name: string
  readonly failureThreshold: number
  readonly cooldownMillis: number
  #state: CircuitState = "closed"
  #failures = 0
  #openedAt = 0

  constructor(options: CircuitBreakerOptions = {}) {
    this.name = options.name ?? "circuit"
    this.failureThreshold = options.failureThreshold ?? 5
    const cooldown = Duration.decodeUnknown(options.cooldown ?? "15 seconds")
    if (!Number.isInteger(this.failureThreshold) || this.failureThreshold < 1) {
      throw new ConfigurationError({
        field: "breaker.failureThreshold",
        message: `breaker.failureThreshold must be a positive integer; got ${String(options.failureThreshold)}`
      })
    }
    if (Option.isNone(cooldown) || Duration.toMillis(cooldown.value) < 0) {
      throw new ConfigurationError({
        field: "breaker.cooldown",
        message: `breaker.cooldown must be a non-negative duration (e.g. "15 seconds"); got ${String(options.cooldown)}`
      })
    }
    this.cooldownMillis = Duration.toMillis(cooldown.value)
  }

  /** The current state (an open circuit whose cooldown has passed still reads `open` until a call probes it). */
  get state(): CircuitState {
    return this.#state
  }

  /** Consecutive counted failures since the last success. */
  get failures(): number {
    return this.#failures
  }

  /**
   * Runs `effect` through the breaker. Refused at once with `CircuitOpen` when the circuit is
   * open (or a probe is in flight); otherwise the outcome is recorded, a failure counting only
   * when `counts(error)` says it tells of an unhealthy downstream.
   */
  protect<A, E, R>(effect: Effect.Effect<A, E, R>, counts: (error: E) => boolean): Effect.Effect<A, E | CircuitOpen, R> {
    return Effect.flatMap(Clock.currentTimeMillis, (now): Effect.Effect<A, E | CircuitOpen, R> => {
      let probe = false
      if (this.#state === "half_open") return Effect.fail(new CircuitOpen({ circuit: this.name }))
      if (this.#state === "open") {
        if (now - this.#openedAt < this.cooldownMillis) return Effect.fail(new CircuitOpen({ circuit: this.name }))
        this.#state = "half_open"
        probe = true
      }
      return Effect.onExit(effect, (exit) =>
        Exit.isSuccess(exit)
          ? Effect.sync(() => {
              this.#failures = 0
              this.#state = "closed"
            })
          : Effect.flatMap(Clock.currentTimeMillis, (at) =>
              Effect.sync(() => {
                const failure = Cause.failureOption(exit.cause)
                if (Option.isSome(failure) && counts(failure.value)) {
                  this.#failures += 1
                  if (this.#state === "half_open" || this.#failures >= this.failureThreshold) {
                    this.#state = "open"
                    this.#openedAt = at
                  }
                } else if (probe && this.#state === "half_open") {
                  // the probe told nothing: free the slot (the cooldown has passed, so the next call probes)
                  this.#state = "open"
                }
              })
            )
      )
    })
  }
}

/**
 * Makes a circuit breaker (see `CircuitBreaker`). Bad options throw `ConfigurationError`.
 *
 * @example
 * ```ts
 * import { Retry } from "@agentkit/middleware"
 *
 * const breaker = Retry.circuitBreaker({ name: "llm", failureThreshold: 5, cooldown: "15 seconds" })
 * breaker.state // "closed"
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const circuitBreaker = (options: CircuitBreakerOptions = {}): CircuitBreaker => new CircuitBreaker(options)

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
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Attempts in all, the first included. Default 3. */
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
  readonly breaker?: CircuitBreaker | CircuitBreakerOptions | undefined
}

const neverRetried: ReadonlySet<string> = new Set([
  "ToolArgumentError",
  "ToolShapeError",
  "ToolDenied",
  "ToolNotFoundError",
  "ToolDefinitionError",
  "BudgetExceeded",
  "Cancelled",
  "ConfigurationError",
  "CircuitOpen",
  "EgressDenied",
  "AgentDefinitionError"
])

const classify = (error: unknown, depth: number): boolean => {
  if (typeof error !== "object" || error === null) return true
  if ("retryable" in error && typeof error.retryable === "boolean") return error.retryable
  const tag = "_tag" in error ? error._tag : undefined
  // @effect/platform HTTP errors, read by their fields
  if (tag === "RequestError") return "reason" in error && error.reason === "Transport"
  if (tag === "ResponseError") {
    if (!("reason" in error) || error.reason !== "StatusCode") return false
    const status = "response" in error && typeof error.response === "object" && error.response !== null && "status" in error.response
      ? Number(error.response.status)
      : 0
    return status === 408 || status === 425 || status === 429 || status >= 500
  }
  // a tool failure is read through its cause (a provider error, an HTTP error, ...)
  if (tag === "ToolExecutionError" && "cause" in error && depth < 4) return classify(error.cause, depth + 1)
  return true
}

/**
 * Whether an error may be retried at all, by its type: a provider error by its `retryable` flag
 * (any error carrying a boolean `retryable` is read the same way), an `@effect/platform` transport
 * error or a 408/425/429/5xx response yes, other HTTP errors no, a tool failure or timeout yes
 * (its cause is read when it has a known type); argument, shape, budget, cancellation and
 * circuit errors and every denial (egress included, wherever it sits in the cause chain) never.
 * Each pipeline adds its own condition (no delta shown yet; the tool idempotent or not started).
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
 * @category classification
 */
export const isRetryable = (error: unknown): boolean =>
  findInCauses(error, neverRetried) === undefined && classify(error, 0)

interface Settings {
  readonly maxAttempts: number
  readonly baseMillis: number
  readonly maxMillis: number
  readonly breaker: CircuitBreaker | CircuitBreakerOptions | undefined
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

const settingsOf = (options: Options): Settings => {
  const maxAttempts = options.maxAttempts ?? 3
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
    throw new ConfigurationError({
      field: "retry.maxAttempts",
      message: `retry.maxAttempts must be a positive integer; got ${String(options.maxAttempts)}`
    })
  }
  const breaker = options.breaker
  // check breaker options now: a wiring mistake fails when the pipeline is built
  if (breaker !== undefined && !(breaker instanceof CircuitBreaker)) new CircuitBreaker(breaker)
  return {
    maxAttempts,
    baseMillis: millis("baseDelay", options.baseDelay, 500),
    maxMillis: millis("maxDelay", options.maxDelay, 30_000),
    breaker
  }
}

const breakers = (settings: Settings): ((key: string) => CircuitBreaker | undefined) => {
  const configured = settings.breaker
  if (configured === undefined) return () => undefined
  if (configured instanceof CircuitBreaker) return () => configured
  const byKey = new Map<string, CircuitBreaker>()
  return (key) => {
    let breaker = byKey.get(key)
    if (breaker === undefined) {
      breaker = new CircuitBreaker({ ...configured, name: configured.name === undefined ? key : `${configured.name}:${key}` })
      byKey.set(key, breaker)
    }
    return breaker
  }
}

/** The wait before attempt `attempt + 1`, or `undefined` when a `retryAfter` exceeds the cap. */
const backoff = (settings: Settings, attempt: number, error: unknown): Effect.Effect<number | undefined> => {
  const retryAfter =
    error instanceof ChatModelError && error.retryAfter !== undefined ? Duration.toMillis(error.retryAfter) : 0
  if (retryAfter > settings.maxMillis) return Effect.succeed(undefined)
  return Effect.map(Random.next, (r) =>
    Math.max(retryAfter, Math.floor(r * Math.min(settings.maxMillis, settings.baseMillis * 2 ** (attempt - 1))))
  )
}

const attemptEvent = (tracing: boolean, attempt: number, error: unknown, waitMillis: number): Effect.Effect<void> =>
  tracing
    ? Tracing.addEvent(Tracing.EventName.retryAttempt, {
        attempt,
        last_error_type: errorType(error),
        last_error_message: cut(errorMessage(error), 500),
        backoff_ms: waitMillis
      })
    : Effect.void

/**
 * Runs `once`, and again after a backoff while `final(error)` says the failure may be retried and
 * attempts remain; each retry adds a `retry.attempt` event.
 */
const retrying = <A, E, R>(
  settings: Settings,
  tracing: boolean,
  once: Effect.Effect<A, E, R>,
  final: (error: E) => boolean
): Effect.Effect<A, E, R> => {
  const loop = (attempt: number): Effect.Effect<A, E, R> =>
    Effect.catchAll(once, (error) => {
      if (attempt >= settings.maxAttempts || final(error)) return Effect.fail(error)
      return Effect.flatMap(backoff(settings, attempt, error), (wait) =>
        wait === undefined
          ? Effect.fail(error)
          : attemptEvent(tracing, attempt + 1, error, wait).pipe(
              Effect.zipRight(Effect.sleep(Duration.millis(wait))),
              Effect.zipRight(loop(attempt + 1))
            )
      )
    })
  return loop(1)
}

const refusedEvent = (tracing: boolean, breaker: CircuitBreaker): Effect.Effect<void> =>
  tracing ? Tracing.addEvent(Tracing.EventName.circuitOpen, { circuit: breaker.name }) : Effect.void

const chatRetry = (settings: Settings): ChatMiddleware => {
  const breakerFor = breakers(settings)
  return (next: ChatHandler): ChatHandler =>
    (call) => {
      let emitted = false
      const inner: ChatCall = {
        request: call.request,
        emit: (delta: Chat.ChatDelta) => {
          emitted = true
          call.emit(delta)
        },
        meta: call.meta,
        context: call.context
      }
      const tracing = call.context.tracing
      const breaker = breakerFor(call.request.model)
      const once: Effect.Effect<Chat.ChatResponse, ChatError> =
        breaker === undefined
          ? Effect.suspend(() => next(inner))
          : Effect.catchTag(breaker.protect(Effect.suspend(() => next(inner)), isRetryable), "CircuitOpen", (open) =>
              Effect.zipRight(
                refusedEvent(tracing, breaker),
                Effect.fail(new ChatModelError({ reason: "overloaded", retryable: true, message: open.message, cause: open }))
              )
            )
      // once text is shown, a failure propagates
      return retrying(settings, tracing, once, (error) => emitted || !isRetryable(error))
    }
}

const toolRetry = (settings: Settings): ToolMiddleware => {
  const breakerFor = breakers(settings)
  return (next: ToolHandler): ToolHandler =>
    <E, R>(invocation: ToolInvocation<E, R>): Effect.Effect<ToolOutcome, E | ToolPipelineError, R> => {
      const tool = invocation.tool
      let started = false
      // A non-idempotent tool is re-run only if it never started: watch it start.
      const inner: ToolInvocation<E, R> = tool.idempotent ? invocation : Middleware.tapExecute(invocation, () => (started = true))
      const tracing = invocation.context.tracing
      const breaker = breakerFor(tool.name)
      const once: Effect.Effect<ToolOutcome, E | ToolPipelineError, R> =
        breaker === undefined
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
      return retrying(settings, tracing, once, (error) => !isRetryable(error) || (started && !tool.idempotent))
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
export const retry = (options: Options = {}): ChatMiddleware & ToolMiddleware => {
  const settings = settingsOf(options)
  return both(chatRetry(settings), toolRetry(settings))
}
