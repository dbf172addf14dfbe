/**
 * Token and cost accounting for model calls.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * The schema of a usage record (tokens and cost in USD).
 *
 * @example
 * ```ts
 * import { Usage } from "@agentkit/core"
 * import { Schema } from "effect"
 *
 * Schema.decodeUnknownSync(Usage.Usage)({
 *   inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.0001
 * })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Usage = Schema.Struct({
  inputTokens: Schema.Number,
  outputTokens: Schema.Number,
  cacheReadTokens: Schema.Number,
  cacheWriteTokens: Schema.Number,
  costUsd: Schema.Number
})

/**
 * Tokens (input, output, cache read, cache write) and cost in USD of one or more model calls.
 *
 * @example
 * ```ts
 * import { Usage } from "@agentkit/core"
 *
 * const usage: Usage.Usage = Usage.make({ inputTokens: 100, outputTokens: 20, costUsd: 0.0006 })
 * Usage.totalTokens(usage) // 120
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Usage extends Schema.Schema.Type<typeof Usage> {}

/**
 * Rounds a dollar amount to 6 decimal places, for display (budgets and sums keep exact nano-USD).
 *
 * @example
 * ```ts
 * import { Usage } from "@agentkit/core"
 *
 * Usage.round6(0.1 + 0.2) // 0.3
 * ```
 *
 * @since 0.1.0
 * @category metering
 */
export const round6 = (usd: number): number => Math.round(usd * 1e6) / 1e6

/**
 * Makes a usage record; missing fields are 0.
 *
 * @example
 * ```ts
 * import { Usage } from "@agentkit/core"
 *
 * Usage.make({ inputTokens: 100, outputTokens: 20, costUsd: 0.0006 }).cacheReadTokens // 0
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (fields: Partial<Usage> = {}): Usage => ({
  inputTokens: fields.inputTokens ?? 0,
  outputTokens: fields.outputTokens ?? 0,
  cacheReadTokens: fields.cacheReadTokens ?? 0,
  cacheWriteTokens: fields.cacheWriteTokens ?? 0,
  costUsd: fields.costUsd ?? 0
})

/**
 * The usage of nothing: every field 0.
 *
 * @example
 * ```ts
 * import { Usage } from "@agentkit/core"
 *
 * Usage.zero.costUsd // 0
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const zero: Usage = make()

/**
 * The cost of a usage record in integer nano-USD (units of 1e-9 USD): how budgets and sums keep
 * money exactly. A cost given with at most 9 decimal places converts without loss.
 *
 * @example
 * ```ts
 * import { Usage } from "@agentkit/core"
 *
 * Usage.nanos(Usage.make({ costUsd: 0.0000125 })) // 12500
 * ```
 *
 * @since 0.1.0
 * @category metering
 */
export const nanos = (self: Usage): number => Math.round(self.costUsd * 1e9)

/**
 * Dollars from integer nano-USD: the exact sum as a `number` (rounded only when shown).
 *
 * @example
 * ```ts
 * import { Usage } from "@agentkit/core"
 *
 * Usage.usdOf(12_500_000) // 0.0125
 * ```
 *
 * @since 0.1.0
 * @category metering
 */
export const usdOf = (nanoUsd: number): number => nanoUsd / 1e9

/**
 * Sums two usage records field by field. Money is summed exactly, in integer nano-USD, so a
 * thousand calls of $0.0000125 total exactly $0.0125.
 *
 * @example
 * ```ts
 * import { Usage } from "@agentkit/core"
 *
 * const total = Usage.add(Usage.make({ inputTokens: 10, costUsd: 0.1 }), Usage.make({ inputTokens: 5, costUsd: 0.2 }))
 * total.inputTokens // 15
 * total.costUsd // 0.3 (exact: no float drift)
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const add = (self: Usage, that: Usage): Usage => ({
  inputTokens: self.inputTokens + that.inputTokens,
  outputTokens: self.outputTokens + that.outputTokens,
  cacheReadTokens: self.cacheReadTokens + that.cacheReadTokens,
  cacheWriteTokens: self.cacheWriteTokens + that.cacheWriteTokens,
  costUsd: usdOf(nanos(self) + nanos(that))
})

/**
 * Input plus output tokens (cache tokens are not counted, as in the Python agentkit).
 *
 * @example
 * ```ts
 * import { Usage } from "@agentkit/core"
 *
 * Usage.totalTokens(Usage.make({ inputTokens: 100, outputTokens: 20, cacheReadTokens: 999 })) // 120
 * ```
 *
 * @since 0.1.0
 * @category getters
 */
export const totalTokens = (self: Usage): number => self.inputTokens + self.outputTokens
