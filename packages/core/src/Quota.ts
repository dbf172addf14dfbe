/**
 * Per-tenant quotas over a rolling window: requests per minute, tokens per minute and USD per
 * window, partitioned by the run's `Scope` (its collision-free `storeKey`). Tenants never share a
 * partition, and a tenant's partition expires with its window. Quotas plug into the
 * chat pipeline through the `meter()` middleware.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { BudgetExceeded } from "./BudgetError.js"
import { ConfigurationError } from "./ConfigurationError.js"
import * as PythonText from "./PythonText.js"
import type * as Scope from "./Scope.js"
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
  charges: Array<Charge>
}

interface Charge {
  readonly at: number
  readonly tokens: number
  readonly costUsd: number
}

/**
 * Whom a quota counts for: a `Scope` (partitioned by its collision-free `storeKey`, named in the
 * texts by its display `key`), or a plain string (used as it is for both; a string never shares a
 * partition with a scope).
 *
 * @example
 * ```ts
 * import { Quota, Scope } from "@agentkit/core"
 *
 * const tenant: Quota.Tenant = Scope.make({ orgId: 1 })
 * const byName: Quota.Tenant = "batch-jobs"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Tenant = Scope.Scope | string

const partitionId = (tenant: Tenant): string => (typeof tenant === "string" ? `text:${tenant}` : tenant.storeKey)
const label = (tenant: Tenant): string => (typeof tenant === "string" ? tenant : tenant.key)

const NO_CHARGES: ReadonlyArray<Charge> = Object.freeze([])

/**
 * A quota shared by many runs. Time comes from Effect's `Clock`, so tests drive it with
 * `TestClock`. A tenant's partition lives as long as it holds a request or a charge inside the
 * window: partitions of tenants not seen for a whole window are dropped (swept at most once per
 * window, on the next call), so a long-lived server holding one quota for many tenants keeps only
 * the tenants of the last window or two.
 *
 * @example
 * ```ts
 * import { Quota, Scope } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const quota = Quota.unsafeMake({ maxRpm: 1 })
 * const tenant = Scope.make({ orgId: 1 })
 * Effect.runSync(quota.guard(tenant))
 * Effect.runSyncExit(quota.guard(tenant)) // fails: "org1:domNone: 1 req ≥ 1 rpm"
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
  #sweptAt = -Infinity

  constructor(limits: Limits) {
    this.maxRpm = limits.maxRpm
    this.maxTpm = limits.maxTpm
    this.maxUsd = limits.maxUsd
    this.windowMillis = Duration.toMillis(limits.window ?? Duration.seconds(60))
  }

  /**
   * Refuses the call when the tenant is over a limit, in the order requests, tokens (counting
   * `estimatedTokens` for the call about to run), cost; otherwise records the request (it counts
   * even if the call later fails). The texts name the tenant by its display key.
   */
  guard(tenant: Tenant, estimatedTokens = 0): Effect.Effect<void, BudgetExceeded> {
    return Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const id = partitionId(tenant)
      const partition = this.#live(id, now)
      const requests = partition?.requests.length ?? 0
      if (this.maxRpm !== undefined && requests >= this.maxRpm) {
        return Effect.fail(exceeded(`${label(tenant)}: ${requests} req ≥ ${this.maxRpm} rpm`))
      }
      const charges = partition?.charges ?? NO_CHARGES
      const tokens = charges.reduce((sum, c) => sum + c.tokens, 0)
      if (this.maxTpm !== undefined && tokens + estimatedTokens > this.maxTpm) {
        return Effect.fail(exceeded(`${label(tenant)}: ${tokens}+${estimatedTokens} tok > ${this.maxTpm} tpm`))
      }
      const cost = Usage.round6(charges.reduce((sum, c) => sum + c.costUsd, 0))
      if (this.maxUsd !== undefined && cost >= this.maxUsd) {
        return Effect.fail(
          exceeded(`${label(tenant)}: $${PythonText.float(cost)} ≥ $${PythonText.float(this.maxUsd)} per window`)
        )
      }
      this.#open(id, partition).requests.push(now)
      return Effect.void
    })
  }

  /** Records a finished call's tokens and cost for the tenant. Never fails. */
  charge(tenant: Tenant, usage: Usage.Usage): Effect.Effect<void> {
    return Effect.map(Clock.currentTimeMillis, (now) => {
      const id = partitionId(tenant)
      this.#open(id, this.#live(id, now)).charges.push({
        at: now,
        tokens: Usage.totalTokens(usage),
        costUsd: usage.costUsd
      })
    })
  }

  /** The charges recorded for a tenant inside the current window (for assertions and dashboards). */
  charges(tenant: Tenant): ReadonlyArray<Charge> {
    return this.#partitions.get(partitionId(tenant))?.charges ?? NO_CHARGES
  }

  /** How many tenants the quota holds a partition for (those seen in the last window or two). */
  get size(): number {
    return this.#partitions.size
  }

  /** The tenant's partition with what fell out of the window dropped; sweeps every tenant once per window. */
  #live(id: string, now: number): Partition | undefined {
    const floor = now - this.windowMillis
    if (this.#sweptAt <= floor) {
      this.#sweptAt = now
      for (const [key, partition] of this.#partitions) {
        if (key !== id && !trim(partition, floor)) this.#partitions.delete(key)
      }
    }
    const partition = this.#partitions.get(id)
    if (partition !== undefined) trim(partition, floor)
    return partition
  }

  #open(id: string, partition: Partition | undefined): Partition {
    if (partition !== undefined) return partition
    const opened: Partition = { requests: [], charges: [] }
    this.#partitions.set(id, opened)
    return opened
  }
}

/**
 * Drops the entries at or before `floor`; whether anything is left. Entries are appended in time
 * order, so the first one tells whether any is stale (with a clock that steps back, an entry may
 * outlive its window a little: it counts longer, never shorter).
 */
const trim = (partition: Partition, floor: number): boolean => {
  if (partition.requests.length > 0 && partition.requests[0]! <= floor) {
    partition.requests = partition.requests.filter((at) => at > floor)
  }
  if (partition.charges.length > 0 && partition.charges[0]!.at <= floor) {
    partition.charges = partition.charges.filter((c) => c.at > floor)
  }
  return partition.requests.length > 0 || partition.charges.length > 0
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
export const unsafeMake = (limits: Limits): Quota =>
  Effect.runSync(Effect.either(make(limits))).pipe((either) => {
    if (either._tag === "Left") throw either.left
    return either.right
  })
