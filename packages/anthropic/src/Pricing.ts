/**
 * Model prices and the cost of one call: USD per million tokens for input, output, cache reads
 * and cache writes, looked up by model id (dated ids resolve to their undated entry).
 *
 * @since 0.1.0
 */
import { ModelCatalog, Usage } from "@agentkit/core"
import * as Option from "effect/Option"

/**
 * The prices of one model, in USD per million tokens.
 *
 * @example
 * ```ts
 * import { Pricing } from "@agentkit/anthropic"
 *
 * const rates: Pricing.Rates = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Rates {
  readonly input: number
  readonly output: number
  readonly cacheRead: number
  readonly cacheWrite: number
}

/**
 * A price table: model id (lowercase, undated) to its rates.
 *
 * @example
 * ```ts
 * import { Pricing } from "@agentkit/anthropic"
 *
 * const table: Pricing.Table = {
 *   ...Pricing.defaultTable,
 *   "claude-next": { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 }
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Table = Readonly<Record<string, Rates>>

/**
 * The token counts of one call that a price is computed from (Anthropic's `input_tokens` does not
 * include the cached tokens, which are counted apart).
 *
 * @example
 * ```ts
 * import type { Pricing } from "@agentkit/anthropic"
 *
 * const tokens: Pricing.Tokens = { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 2000, cacheWriteTokens: 100 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Tokens {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cacheReadTokens: number
  readonly cacheWriteTokens: number
}

/**
 * A user-supplied price function: the cost in USD of one call to `model` (the model that served
 * the call) with these tokens. It replaces the table entirely.
 *
 * @example
 * ```ts
 * import type { Pricing } from "@agentkit/anthropic"
 *
 * // a flat negotiated rate
 * const pricing: Pricing.PriceFunction = (_model, tokens) => (tokens.inputTokens + tokens.outputTokens) * 2e-6
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type PriceFunction = (model: string, tokens: Tokens) => number

/**
 * The default price table: the prices of the default model catalog (`ModelCatalog.defaults`, USD
 * per 1M tokens: input, output, cache read, cache write). Models that are not in it cost 0: a
 * price is never guessed.
 *
 * @example
 * ```ts
 * import { Pricing } from "@agentkit/anthropic"
 *
 * Pricing.defaultTable["claude-sonnet-4-6"]?.output // 15
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultTable: Table = Object.freeze(
  Object.fromEntries(Object.entries(ModelCatalog.defaults).map(([model, entry]) => [model, entry.prices]))
)

const DATE_SUFFIX = /-\d{4}-?\d{2}-?\d{2}$/

const stripProvider = (name: string): string => {
  const slash = name.indexOf("/")
  return slash === -1 ? name : name.slice(slash + 1)
}

/**
 * Finds a model's rates: the id lowercased, then exactly, then without a `provider/` prefix, then
 * without a trailing date (`-20250929`, `-2025-09-29`), then without both. `None` for an unknown
 * or empty id.
 *
 * @example
 * ```ts
 * import { Pricing } from "@agentkit/anthropic"
 * import { Option } from "effect"
 *
 * Option.isSome(Pricing.lookup("claude-sonnet-4-6-20260115")) // true
 * Option.isSome(Pricing.lookup("anthropic/claude-haiku-4-5")) // true
 * Option.isNone(Pricing.lookup("claude-unknown")) // true
 * ```
 *
 * @since 0.1.0
 * @category getters
 */
export const lookup = (model: string, table: Table = defaultTable): Option.Option<Rates> => {
  const name = model.trim().toLowerCase()
  if (name === "") return Option.none()
  const bare = stripProvider(name)
  for (const candidate of [name, bare, name.replace(DATE_SUFFIX, ""), bare.replace(DATE_SUFFIX, "")]) {
    if (Object.hasOwn(table, candidate)) {
      const rates = table[candidate]
      if (rates !== undefined) return Option.some(rates)
    }
  }
  return Option.none()
}

/**
 * The cost in USD of tokens at these rates, to the nano-dollar (the unit budgets keep money in
 * exactly: a fraction of a cent per token is never rounded away).
 *
 * @example
 * ```ts
 * import { Pricing } from "@agentkit/anthropic"
 *
 * const rates = Pricing.defaultTable["claude-sonnet-4-6"]!
 * Pricing.costOf(rates, { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 2000, cacheWriteTokens: 100 }) // 0.011475
 * ```
 *
 * @since 0.1.0
 * @category metering
 */
export const costOf = (rates: Rates, tokens: Tokens): number =>
  Usage.usdOf(
    Math.round(
      tokens.inputTokens * rates.input * 1e3 +
        tokens.outputTokens * rates.output * 1e3 +
        tokens.cacheReadTokens * rates.cacheRead * 1e3 +
        tokens.cacheWriteTokens * rates.cacheWrite * 1e3
    )
  )

/**
 * The cost in USD of one call to `model`, from the table (the default one unless given); `None`
 * when the model has no price, so the caller can say so (the provider logs a warning once and
 * charges 0).
 *
 * @example
 * ```ts
 * import { Pricing } from "@agentkit/anthropic"
 *
 * Pricing.cost("claude-sonnet-4-6", { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 2000, cacheWriteTokens: 100 })
 * // Option.some(0.011475)
 * ```
 *
 * @since 0.1.0
 * @category metering
 */
export const cost = (model: string, tokens: Tokens, table: Table = defaultTable): Option.Option<number> =>
  Option.map(lookup(model, table), (rates) => costOf(rates, tokens))
