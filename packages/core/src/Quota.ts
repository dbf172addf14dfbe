/**
 * Per-tenant quotas over a rolling window: requests per minute, tokens per minute and USD per
 * window, keyed by the run's `Scope` key. Tenants never share a partition. Quotas plug into the
 * chat pipeline through the `meter()` middleware.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { BudgetExceeded, ConfigurationError } from "./Errors.js"
import * as PythonText from "./PythonText.js"
import * as Usage from "./Usage.js"

/**
 * Quota limits. Absent limits are unlimited; the window defaults to 60 seconds.
 *
 * @example
 * ```ts
 * import { Quota } from "@agentkit/core"
 *
 * const limits: Quota.Limits = { maxRpm: 60, maxTpm: 100_000, maxUsd: 5, window: "1 minute" }
 * const quota = Quota.unsafeMake(limits)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Limits {
  readonly maxRpm?: number | undefined
  readonly maxTpm?: number | undefined
  readonly maxUsd?: number | undefined
  readonly window?: Duration.DurationInput | undefined
}

interface Partition {
  requests: Array<number>
  charges: Array<{ readonly at: number; readonly tokens: number; readonly costUsd: number }>
}

/**
 * A quota shared by many runs. Time comes from Effect's `Clock`, so tests drive it with
 * `TestClock`.
 *
 * @example
 * ```ts
 * import { Quota, Scope } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const quota = Quota.unsafeMake({ maxRpm: 1 })
 * const key = Scope.make({ orgId: 1 }).key
 * Effect.runSync(quota.guard(key))
 * Effect.runSyncExit(quota.guard(key)) // fails: "org1:domNone: 1 req ≥ 1 rpm"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export class Quota {
  readonly maxRpm: number | undefined
  readonly maxTpm: number | undefined
  readonly maxUsd: number | undefined
  readonly windowMillis: number
  #partitions = new Map<string, Partition>()

  constructor(limits: Limits) {
    this.maxRpm = limits.maxRpm
    this.maxTpm = limits.maxTpm
    this.maxUsd = limits.maxUsd
    this.windowMillis = Duration.toMillis(limits.window ?? Duration.seconds(60))
  }

  /**
   * Refuses the call when the tenant is over a limit, in the order requests, tokens (counting
   * `estimatedTokens` for the call about to run), cost; otherwise records the request (it counts
   * even if the call later fails).
   */
  guard(key: string, estimatedTokens = 0): Effect.Effect<void, BudgetExceeded> {
    return Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const partition = this.#prune(key, now)
      const requests = partition.requests.length
      if (this.maxRpm !== undefined && requests >= this.maxRpm) {
        return Effect.fail(exceeded(`${key}: ${requests} req ≥ ${this.maxRpm} rpm`))
      }
      const tokens = partition.charges.reduce((sum, c) => sum + c.tokens, 0)
      if (this.maxTpm !== undefined && tokens + estimatedTokens > this.maxTpm) {
        return Effect.fail(exceeded(`${key}: ${tokens}+${estimatedTokens} tok > ${this.maxTpm} tpm`))
      }
      const cost = Usage.round6(partition.charges.reduce((sum, c) => sum + c.costUsd, 0))
      if (this.maxUsd !== undefined && cost >= this.maxUsd) {
        return Effect.fail(exceeded(`${key}: $${PythonText.float(cost)} ≥ $${PythonText.float(this.maxUsd)} per window`))
      }
      partition.requests.push(now)
      return Effect.void
    })
  }

  /** Records a finished call's tokens and cost for the tenant. Never fails. */
  charge(key: string, usage: Usage.Usage): Effect.Effect<void> {
    return Effect.map(Clock.currentTimeMillis, (now) => {
      this.#prune(key, now).charges.push({ at: now, tokens: Usage.totalTokens(usage), costUsd: usage.costUsd })
    })
  }

  /** The charges recorded for a tenant inside the current window (for assertions and dashboards). */
  charges(key: string): ReadonlyArray<{ readonly at: number; readonly tokens: number; readonly costUsd: number }> {
    return this.#partitions.get(key)?.charges ?? []
  }

  #prune(key: string, now: number): Partition {
    let partition = this.#partitions.get(key)
    if (partition === undefined) {
      partition = { requests: [], charges: [] }
      this.#partitions.set(key, partition)
    }
    const floor = now - this.windowMillis
    partition.requests = partition.requests.filter((at) => at > floor)
    partition.charges = partition.charges.filter((c) => c.at > floor)
    return partition
  }
}

const exceeded = (message: string) => new BudgetExceeded({ limit: "quota", message })

/**
 * Makes a quota, checking that every limit is a non-negative finite number and the window is
 * positive.
 *
 * @example
 * ```ts
 * import { Quota } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const quota = Effect.runSync(Quota.make({ maxUsd: 0.05, window: "1 minute" }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (limits: Limits): Effect.Effect<Quota, ConfigurationError> =>
  Effect.suspend(() => {
    for (const field of ["maxRpm", "maxTpm", "maxUsd"] as const) {
      const value = limits[field]
      if (value !== undefined && !(typeof value === "number" && Number.isFinite(value) && value >= 0)) {
        return Effect.fail(
          new ConfigurationError({
            field: `quota.${field}`,
            message: `quota.${field} must be a non-negative finite number; got ${String(value)}`
          })
        )
      }
    }
    const window = limits.window === undefined ? undefined : Duration.decodeUnknown(limits.window)
    if (window !== undefined && (window._tag === "None" || Duration.toMillis(window.value) <= 0)) {
      return Effect.fail(
        new ConfigurationError({
          field: "quota.window",
          message: `quota.window must be a positive duration (e.g. "1 minute"); got ${String(limits.window)}`
        })
      )
    }
    return Effect.succeed(new Quota(limits))
  })

/**
 * Like `make`, but throws the `ConfigurationError`.
 *
 * @example
 * ```ts
 * import { Quota } from "@agentkit/core"
 *
 * const quota = Quota.unsafeMake({ maxRpm: 60 })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const unsafeMake = (limits: Limits): Quota => Effect.runSync(Effect.either(make(limits))).pipe((either) => {
  if (either._tag === "Left") throw either.left
  return either.right
})
