/**
 * A circuit breaker: stops calling a downstream that keeps failing, and lets one probe through
 * after a cooldown. `Retry.retry({ breaker })` puts one in front of each model or tool.
 *
 * @since 0.1.0
 */
import { ConfigurationError } from "@agentkit/core"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { CircuitOpen } from "./Errors.js"

/**
 * The state of a circuit breaker.
 *
 * @example
 * ```ts
 * import { CircuitBreaker } from "@agentkit/middleware"
 *
 * const state: CircuitBreaker.CircuitState = CircuitBreaker.make().state // "closed"
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
 * import { CircuitBreaker } from "@agentkit/middleware"
 *
 * const options: CircuitBreaker.Options = { name: "payments", failureThreshold: 3, cooldown: "1 minute" }
 * const breaker = CircuitBreaker.make(options)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
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
 * import { CircuitBreaker } from "@agentkit/middleware"
 * import { Effect } from "effect"
 *
 * const breaker = CircuitBreaker.make({ name: "payments", failureThreshold: 2, cooldown: "30 seconds" })
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

  constructor(options: Options = {}) {
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
  protect<A, E, R>(
    effect: Effect.Effect<A, E, R>,
    counts: (error: E) => boolean
  ): Effect.Effect<A, E | CircuitOpen, R> {
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
            })))
    })
  }
}

/**
 * Makes a circuit breaker (see `CircuitBreaker`). Bad options throw `ConfigurationError`.
 *
 * @example
 * ```ts
 * import { CircuitBreaker } from "@agentkit/middleware"
 *
 * const breaker = CircuitBreaker.make({ name: "llm", failureThreshold: 5, cooldown: "15 seconds" })
 * breaker.state // "closed"
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): CircuitBreaker => new CircuitBreaker(options)
