/**
 * The run's budget: cost, model calls, tokens and tool calls, the depth of sub-agents and a
 * tree-wide concurrency limit. One budget is shared by a run and all its sub-runs.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import { BudgetExceeded, ConfigurationError } from "./Errors.js"
import * as PythonText from "./PythonText.js"
import * as Usage from "./Usage.js"

/**
 * The limits of a budget. Absent limits are unlimited, except `maxDepth` (default 4) and
 * `maxConcurrency` (default 8).
 *
 * @example
 * ```ts
 * import { Budget } from "@agentkit/core"
 *
 * const limits: Budget.Limits = { maxCostUsd: 0.5, maxModelCalls: 10, maxToolCalls: 20 }
 * const budget = Budget.unsafeMake(limits)
 * budget.maxDepth // 4 (the default)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Limits {
  /** Ceiling on the run's cost in USD. */
  readonly maxCostUsd?: number | undefined
  /** Ceiling on the number of model calls. */
  readonly maxModelCalls?: number | undefined
  /** Ceiling on input + output tokens. */
  readonly maxTokens?: number | undefined
  /** Ceiling on the number of tool calls. */
  readonly maxToolCalls?: number | undefined
  /** How deep sub-agents may nest (default 4: depths 0..4 are legal). */
  readonly maxDepth?: number | undefined
  /** How many tool calls may run at once across the whole run tree (default 8). */
  readonly maxConcurrency?: number | undefined
}

/**
 * A live budget. Charging is synchronous inside one Effect step, so concurrent charges never lose
 * an update. The call that crosses a ceiling is charged and then fails; every later call is
 * refused by `guard` before it starts.
 *
 * @example
 * ```ts
 * import { Budget, Usage } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const budget = Budget.unsafeMake({ maxCostUsd: 0.015 })
 * Effect.runSync(budget.charge(Usage.make({ costUsd: 0.01 })))
 * Effect.runSyncExit(budget.charge(Usage.make({ costUsd: 0.01 }))) // fails: "cost $0.02 > $0.015"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export class Budget {
  readonly maxCostUsd: number | undefined
  readonly maxModelCalls: number | undefined
  readonly maxTokens: number | undefined
  readonly maxToolCalls: number | undefined
  readonly maxDepth: number
  readonly maxConcurrency: number
  #free: number
  readonly #waiting: Array<() => void> = []
  #spentUsd = 0
  #modelCalls = 0
  #tokens = 0
  #toolCalls = 0

  /** Throws `ConfigurationError` on an invalid limit; `Budget.make` is the Effect way. */
  constructor(limits: Limits = {}) {
    const error = validate(limits)
    if (error !== undefined) throw error
    this.maxCostUsd = limits.maxCostUsd
    this.maxModelCalls = limits.maxModelCalls
    this.maxTokens = limits.maxTokens
    this.maxToolCalls = limits.maxToolCalls
    this.maxDepth = limits.maxDepth ?? 4
    this.maxConcurrency = limits.maxConcurrency ?? 8
    this.#free = this.maxConcurrency
  }

  /** USD spent so far, rounded to 6 decimal places. */
  get spentUsd(): number {
    return this.#spentUsd
  }
  /** Model calls charged so far. */
  get modelCalls(): number {
    return this.#modelCalls
  }
  /** Input + output tokens charged so far. */
  get tokens(): number {
    return this.#tokens
  }
  /** Tool calls started so far. */
  get toolCalls(): number {
    return this.#toolCalls
  }
  /** What is left of the cost ceiling, or `undefined` when there is none. */
  get remainingUsd(): number | undefined {
    return this.maxCostUsd === undefined ? undefined : Math.max(0, Usage.round6(this.maxCostUsd - this.#spentUsd))
  }

  /** Concurrency permits free right now. */
  get freePermits(): number {
    return this.#free
  }

  /**
   * Runs `self` holding one of the tree-wide concurrency permits (tool executions do). A permit is
   * taken without suspending when one is free; otherwise the caller waits in line, interruptibly.
   * (A small permit pool of our own: Effect's semaphore costs several µs per use on this path.)
   */
  withPermit<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    return Effect.uninterruptibleMask((restore) =>
      Effect.zipRight(this.#acquire(restore), Effect.ensuring(restore(self), this.#release))
    )
  }

  #acquire(restore: <X, Y, Z>(effect: Effect.Effect<X, Y, Z>) => Effect.Effect<X, Y, Z>): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (this.#free > 0) {
        this.#free -= 1
        return Effect.void
      }
      let granted = false
      return restore(
        Effect.async<void>((resume) => {
          const grant = () => {
            granted = true
            resume(Effect.void)
          }
          this.#waiting.push(grant)
          return Effect.sync(() => {
            const index = this.#waiting.indexOf(grant)
            if (index >= 0) this.#waiting.splice(index, 1)
            else if (granted) this.#handOver() // interrupted after the permit was handed over: pass it on
          })
        })
      )
    })
  }

  readonly #release: Effect.Effect<void> = Effect.sync(() => this.#handOver())

  #handOver(): void {
    const next = this.#waiting.shift()
    if (next === undefined) this.#free += 1
    else next()
  }

  /** Fails when a ceiling is already crossed; run before every model call. */
  get guard(): Effect.Effect<void, BudgetExceeded> {
    return Effect.suspend(() => this.#check())
  }

  /** Charges one model call's usage, then fails if a ceiling is now crossed. */
  charge(usage: Usage.Usage): Effect.Effect<void, BudgetExceeded> {
    return Effect.suspend(() => {
      this.#spentUsd = Usage.round6(this.#spentUsd + usage.costUsd)
      this.#modelCalls += 1
      this.#tokens += Usage.totalTokens(usage)
      return this.#check()
    })
  }

  /**
   * Counts one tool call before it runs. A call past `maxToolCalls` is counted and refused (it
   * never runs), and the run ends.
   */
  get startToolCall(): Effect.Effect<void, BudgetExceeded> {
    return Effect.suspend(() => {
      this.#toolCalls += 1
      if (this.maxToolCalls !== undefined && this.#toolCalls > this.maxToolCalls) {
        return Effect.fail(
          new BudgetExceeded({ limit: "toolCalls", message: `tool calls ${this.#toolCalls} > ${this.maxToolCalls}` })
        )
      }
      return Effect.void
    })
  }

  #check(): Effect.Effect<void, BudgetExceeded> {
    if (this.maxCostUsd !== undefined && this.#spentUsd > this.maxCostUsd) {
      return Effect.fail(
        new BudgetExceeded({ limit: "cost", message: `cost $${PythonText.float(this.#spentUsd)} > $${PythonText.float(this.maxCostUsd)}` })
      )
    }
    if (this.maxModelCalls !== undefined && this.#modelCalls > this.maxModelCalls) {
      return Effect.fail(
        new BudgetExceeded({ limit: "modelCalls", message: `calls ${this.#modelCalls} > ${this.maxModelCalls}` })
      )
    }
    if (this.maxTokens !== undefined && this.#tokens > this.maxTokens) {
      return Effect.fail(new BudgetExceeded({ limit: "tokens", message: `tokens ${this.#tokens} > ${this.maxTokens}` }))
    }
    return Effect.void
  }
}

const isAmount = (n: unknown): boolean => typeof n === "number" && Number.isFinite(n) && n >= 0
const isCount = (n: unknown): boolean => isAmount(n) && Number.isInteger(n)

/**
 * Checks a set of limits: every limit must be a non-negative finite number (counts and depth
 * non-negative integers, `maxConcurrency` a positive integer).
 *
 * @example
 * ```ts
 * import { Budget } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * Effect.runSyncExit(Budget.make({ maxCostUsd: -1 }))
 * // fails: "budget.maxCostUsd must be a non-negative finite number (USD); got -1"
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (limits: Limits = {}): Effect.Effect<Budget, ConfigurationError> =>
  Effect.try({
    // the constructor checks the limits (once)
    try: () => new Budget(limits),
    catch: (error) =>
      error instanceof ConfigurationError ? error : new ConfigurationError({ field: "budget", message: String(error) })
  })

/**
 * Like `make`, but throws the `ConfigurationError`. For module-level constants and tests.
 *
 * @example
 * ```ts
 * import { Budget } from "@agentkit/core"
 *
 * Budget.unsafeMake({ maxModelCalls: 10 }).maxDepth // 4
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const unsafeMake = (limits: Limits = {}): Budget => new Budget(limits)

const validate = (limits: Limits): ConfigurationError | undefined => {
  if (typeof limits !== "object" || limits === null) {
    return new ConfigurationError({ field: "budget", message: `budget must be an object of limits; got ${String(limits)}` })
  }
  const rules: ReadonlyArray<readonly [keyof Limits, (n: unknown) => boolean, string]> = [
    ["maxCostUsd", isAmount, "a non-negative finite number (USD)"],
    ["maxModelCalls", isCount, "a non-negative integer"],
    ["maxTokens", isCount, "a non-negative integer"],
    ["maxToolCalls", isCount, "a non-negative integer"],
    ["maxDepth", isCount, "a non-negative integer"],
    ["maxConcurrency", (n) => isCount(n) && (n as number) >= 1, "a positive integer"]
  ]
  for (const [field, ok, accepted] of rules) {
    const value = limits[field]
    if (value !== undefined && !ok(value)) {
      return new ConfigurationError({
        field: `budget.${field}`,
        message: `budget.${field} must be ${accepted}; got ${String(value)}`
      })
    }
  }
  return undefined
}
