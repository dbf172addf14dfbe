/**
 * The model catalog: per model its provider, context window, output limit, prices (USD per
 * million tokens) and capabilities (tools, images, structured output, reasoning, caching).
 * Providers price their calls from it; an agent checks that its model has what it needs before
 * any request (`CapabilityMismatch`). The defaults cover the Anthropic, OpenAI and Gemini models
 * agentkit ships for; users add models and override entries with `ModelCatalog.layer`.
 *
 * A model id is looked up as given, then lower-cased, without a `provider/` prefix and without a
 * date suffix (`-20250514`, `-2025-05-14`), so dated and routed ids find their entry. A model the
 * catalog does not know has no price (never a guessed one) and no known capabilities.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { ErrorTypeId } from "./AgentkitError.js"
import * as Usage from "./Usage.js"

/**
 * What a model can do beyond plain text.
 *
 * @example
 * ```ts
 * import type { ModelCatalog } from "@agentkit/core"
 *
 * const needed: ModelCatalog.Capability = "tools"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Capability = "tools" | "images" | "structuredOutput" | "reasoning" | "caching"

/**
 * Every capability, in a fixed order.
 *
 * @example
 * ```ts
 * import { ModelCatalog } from "@agentkit/core"
 *
 * ModelCatalog.capabilities.length // 5
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const capabilities: ReadonlyArray<Capability> = ["tools", "images", "structuredOutput", "reasoning", "caching"]

/**
 * Prices in USD per million tokens: uncached input, output, cached input read, cache write.
 *
 * @example
 * ```ts
 * import type { ModelCatalog } from "@agentkit/core"
 *
 * const prices: ModelCatalog.Prices = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Prices {
  readonly input: number
  readonly output: number
  readonly cacheRead: number
  readonly cacheWrite: number
}

/**
 * One model's entry.
 *
 * @example
 * ```ts
 * import type { ModelCatalog } from "@agentkit/core"
 *
 * const local: ModelCatalog.Entry = {
 *   provider: "ollama",
 *   contextWindow: 131_072,
 *   maxOutputTokens: 8192,
 *   prices: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
 *   capabilities: ["tools", "structuredOutput"]
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Entry {
  readonly provider: string
  /** Tokens of input plus output one call may hold. */
  readonly contextWindow: number
  /** The most output tokens one call may produce. */
  readonly maxOutputTokens: number
  readonly prices: Prices
  readonly capabilities: ReadonlyArray<Capability>
}

/**
 * Entries by model id.
 *
 * @example
 * ```ts
 * import type { ModelCatalog } from "@agentkit/core"
 *
 * const none: ModelCatalog.Entries = {}
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Entries = Readonly<Record<string, Entry>>

/**
 * The tokens of one call, as `Usage` counts them (`inputTokens` excludes cached input).
 *
 * @example
 * ```ts
 * import type { ModelCatalog } from "@agentkit/core"
 *
 * const tokens: ModelCatalog.Tokens = { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 0, cacheWriteTokens: 0 }
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

const all: ReadonlyArray<Capability> = capabilities
const noImages: ReadonlyArray<Capability> = ["tools", "structuredOutput", "caching"]
const entry = (
  provider: string,
  contextWindow: number,
  maxOutputTokens: number,
  prices: Prices,
  caps: ReadonlyArray<Capability>
): Entry =>
  Object.freeze({ provider, contextWindow, maxOutputTokens, prices: Object.freeze(prices), capabilities: caps })
const rates = (input: number, output: number, cacheRead: number, cacheWrite = 0): Prices => ({
  input,
  output,
  cacheRead,
  cacheWrite
})
const openaiChat: ReadonlyArray<Capability> = ["tools", "images", "structuredOutput", "caching"]

/**
 * The entries agentkit ships: Anthropic (Claude), OpenAI (GPT and o-series), Google (Gemini) and
 * DeepSeek, at their list prices per million tokens.
 *
 * @example
 * ```ts
 * import { ModelCatalog } from "@agentkit/core"
 *
 * ModelCatalog.defaults["claude-sonnet-4-6"]?.prices.input // 3
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults: Entries = Object.freeze({
  "claude-sonnet-4-6": entry("anthropic", 200_000, 64_000, rates(3, 15, 0.3, 3.75), all),
  "claude-haiku-4-5": entry("anthropic", 200_000, 64_000, rates(0.8, 4, 0.08, 1), all),
  "claude-opus-4-1": entry("anthropic", 200_000, 32_000, rates(15, 75, 1.5, 18.75), all),
  "gpt-4o": entry("openai", 128_000, 16_384, rates(2.5, 10, 1.25), openaiChat),
  "gpt-4o-mini": entry("openai", 128_000, 16_384, rates(0.15, 0.6, 0.075), openaiChat),
  "gpt-4.1": entry("openai", 1_047_576, 32_768, rates(2, 8, 0.5), openaiChat),
  "gpt-4.1-mini": entry("openai", 1_047_576, 32_768, rates(0.4, 1.6, 0.1), openaiChat),
  "gpt-4.1-nano": entry("openai", 1_047_576, 32_768, rates(0.1, 0.4, 0.025), openaiChat),
  "gpt-5": entry("openai", 400_000, 128_000, rates(1.25, 10, 0.125), all),
  "gpt-5-mini": entry("openai", 400_000, 128_000, rates(0.25, 2, 0.025), all),
  "o3": entry("openai", 200_000, 100_000, rates(2, 8, 0.5), all),
  "o4-mini": entry("openai", 200_000, 100_000, rates(1.1, 4.4, 0.275), all),
  "gemini-2.5-pro": entry("google", 1_048_576, 65_536, rates(1.25, 10, 0.31), all),
  "gemini-2.5-flash": entry("google", 1_048_576, 65_536, rates(0.3, 2.5, 0.075), all),
  "gemini-2.5-flash-lite": entry("google", 1_048_576, 65_536, rates(0.1, 0.4, 0.025), all),
  "deepseek-chat": entry("deepseek", 64_000, 8_000, rates(0.27, 1.1, 0.07), noImages),
  "deepseek-reasoner": entry("deepseek", 64_000, 64_000, rates(0.55, 2.19, 0.14), [
    "structuredOutput",
    "reasoning",
    "caching"
  ])
})

const DATE_SUFFIX = /-\d{4}-?\d{2}-?\d{2}$/

const stripProvider = (name: string): string => {
  const slash = name.indexOf("/")
  return slash === -1 ? name : name.slice(slash + 1)
}

/**
 * The entry of a model in `entries`: the id as given, then lower-cased, without a `provider/`
 * prefix and without a date suffix.
 *
 * @example
 * ```ts
 * import { ModelCatalog } from "@agentkit/core"
 * import { Option } from "effect"
 *
 * Option.isSome(ModelCatalog.lookup(ModelCatalog.defaults, "anthropic/claude-sonnet-4-6-20260115")) // true
 * ```
 *
 * @since 0.1.0
 * @category getters
 */
export const lookup = (entries: Entries, model: string): Option.Option<Entry> => {
  if (Object.hasOwn(entries, model)) return Option.fromNullable(entries[model])
  const name = model.trim().toLowerCase()
  if (name === "") return Option.none()
  const bare = stripProvider(name)
  for (const candidate of [name, bare, name.replace(DATE_SUFFIX, ""), bare.replace(DATE_SUFFIX, "")]) {
    if (Object.hasOwn(entries, candidate)) {
      const found = entries[candidate]
      if (found !== undefined) return Option.some(found)
    }
  }
  return Option.none()
}

/**
 * The cost in USD of tokens at prices, exact to the nano-dollar.
 *
 * @example
 * ```ts
 * import { ModelCatalog } from "@agentkit/core"
 *
 * ModelCatalog.costOf({ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }, {
 *   inputTokens: 1000, outputTokens: 500, cacheReadTokens: 2000, cacheWriteTokens: 100
 * }) // 0.011475
 * ```
 *
 * @since 0.1.0
 * @category metering
 */
export const costOf = (prices: Prices, tokens: Tokens): number =>
  Usage.usdOf(
    Math.round(
      tokens.inputTokens * prices.input * 1e3 +
        tokens.outputTokens * prices.output * 1e3 +
        tokens.cacheReadTokens * prices.cacheRead * 1e3 +
        tokens.cacheWriteTokens * prices.cacheWrite * 1e3
    )
  )

/**
 * The catalog service: its entries, a lookup and a price.
 *
 * @example
 * ```ts
 * import { ModelCatalog } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const price = Effect.map(ModelCatalog.ModelCatalog, (catalog) =>
 *   catalog.cost("gpt-4.1-mini", { inputTokens: 1000, outputTokens: 100, cacheReadTokens: 0, cacheWriteTokens: 0 }))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly entries: Entries
  readonly lookup: (model: string) => Option.Option<Entry>
  /** The cost of a call's tokens; `None` for a model the catalog does not know. */
  readonly cost: (model: string, tokens: Tokens) => Option.Option<number>
}

/**
 * The catalog as a service. Providers read it when their layer is built (the defaults when none
 * is provided), so one `ModelCatalog.layer` prices every provider.
 *
 * @example
 * ```ts
 * import { ModelCatalog } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const window = Effect.map(ModelCatalog.ModelCatalog, (catalog) => catalog.lookup("gpt-4.1"))
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class ModelCatalog extends Context.Tag("@agentkit/core/ModelCatalog")<ModelCatalog, Service>() {}

/**
 * A catalog of the defaults with `overrides` laid over them (an entry of the same id replaces
 * the default one). Entries are checked: limits positive integers, prices finite and
 * non-negative, capabilities known; a bad entry throws a `TypeError` naming the model and field.
 *
 * @example
 * ```ts
 * import { ModelCatalog } from "@agentkit/core"
 *
 * const catalog = ModelCatalog.make({
 *   "llama3.2": {
 *     provider: "ollama", contextWindow: 131_072, maxOutputTokens: 8192,
 *     prices: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, capabilities: ["tools"]
 *   }
 * })
 * catalog.lookup("llama3.2")
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (overrides: Entries = {}): Service => {
  for (const [model, given] of Object.entries(overrides)) check(model, given)
  const entries: Entries = Object.freeze({ ...defaults, ...overrides })
  const find = (model: string) => lookup(entries, model)
  return {
    entries,
    lookup: find,
    cost: (model, tokens) => Option.map(find(model), (found) => costOf(found.prices, tokens))
  }
}

const check = (model: string, given: Entry): void => {
  const bad = (field: string, accepted: string, value: unknown) => {
    throw new TypeError(`ModelCatalog: entry '${model}': ${field} must be ${accepted}; got ${String(value)}`)
  }
  for (const field of ["contextWindow", "maxOutputTokens"] as const) {
    const value = given[field]
    if (!Number.isInteger(value) || value <= 0) bad(field, "a positive integer", value)
  }
  for (const field of ["input", "output", "cacheRead", "cacheWrite"] as const) {
    const value = given.prices?.[field]
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
      bad(`prices.${field}`, "a finite number >= 0", value)
    }
  }
  for (const capability of given.capabilities ?? []) {
    if (!capabilities.includes(capability)) bad("capabilities", `some of ${capabilities.join(", ")}`, capability)
  }
}

/**
 * The default catalog (what a provider uses when no `ModelCatalog` is provided).
 *
 * @example
 * ```ts
 * import { ModelCatalog } from "@agentkit/core"
 *
 * ModelCatalog.standard.lookup("gemini-2.5-flash")
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const standard: Service = make()

/**
 * A catalog layer: the defaults with `overrides` over them.
 *
 * @example
 * ```ts
 * import { ModelCatalog } from "@agentkit/core"
 *
 * const CatalogLive = ModelCatalog.layer({
 *   "my-finetune": {
 *     provider: "openai", contextWindow: 128_000, maxOutputTokens: 16_384,
 *     prices: { input: 3, output: 12, cacheRead: 1.5, cacheWrite: 0 }, capabilities: ["tools", "structuredOutput"]
 *   }
 * })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (overrides: Entries = {}): Layer.Layer<ModelCatalog> =>
  Layer.sync(ModelCatalog, () => make(overrides))

/**
 * The catalog in context, else the default one.
 *
 * @example
 * ```ts
 * import { ModelCatalog } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const program = Effect.map(ModelCatalog.current, (catalog) => catalog.lookup("o4-mini"))
 * ```
 *
 * @since 0.1.0
 * @category getters
 */
export const current: Effect.Effect<Service> = Effect.map(
  Effect.serviceOption(ModelCatalog),
  Option.getOrElse(() => standard)
)

/**
 * An agent needs capabilities its model lacks (by the catalog), or its model is not in the
 * catalog at all. Raised before any request is sent; the message names the model and each
 * missing capability.
 *
 * @example
 * ```ts
 * import { ModelCatalog } from "@agentkit/core"
 *
 * const error = new ModelCatalog.CapabilityMismatch({ agent: "support", model: "deepseek-reasoner", missing: ["tools"] })
 * error.message // "agent 'support' needs tools, which model 'deepseek-reasoner' lacks (by the model catalog)"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class CapabilityMismatch extends Schema.TaggedError<CapabilityMismatch>(
  "@agentkit/core/CapabilityMismatch"
)("CapabilityMismatch", {
  agent: Schema.String,
  model: Schema.String,
  missing: Schema.Array(Schema.String),
  unknownModel: Schema.optional(Schema.Boolean)
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return this.unknownModel === true
      ? `agent '${this.agent}' needs ${
        this.missing.join(", ")
      }, but model '${this.model}' is not in the model catalog; add it with ModelCatalog.layer({ "${this.model}": { ... } })`
      : `agent '${this.agent}' needs ${
        this.missing.join(", ")
      }, which model '${this.model}' lacks (by the model catalog)`
  }
}

/**
 * Checks that `model` has every capability in `needs`, by the catalog in context (else the
 * default). Fails with `CapabilityMismatch` naming the agent, the model and what is missing; a
 * model the catalog does not know fails too when anything is needed (fail closed: add an entry),
 * unless `unknownModel: "pass"` (what an agent uses for the needs it infers from its tools).
 *
 * @example
 * ```ts
 * import { ModelCatalog } from "@agentkit/core"
 *
 * const check = ModelCatalog.requireCapabilities("support", "gpt-4.1-mini", ["tools", "structuredOutput"])
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const requireCapabilities = (
  agent: string,
  model: string,
  needs: ReadonlyArray<Capability>,
  options: { readonly unknownModel?: "fail" | "pass" | undefined } = {}
): Effect.Effect<void, CapabilityMismatch> =>
  needs.length === 0 ? Effect.void : Effect.flatMap(Effect.serviceOption(ModelCatalog), (given) => {
    const found = (Option.isSome(given) ? given.value : standard).lookup(model)
    if (Option.isNone(found)) {
      return options.unknownModel === "pass"
        ? Effect.void
        : Effect.fail(new CapabilityMismatch({ agent, model, missing: [...needs], unknownModel: true }))
    }
    const missing = needs.filter((need) => !found.value.capabilities.includes(need))
    return missing.length === 0 ? Effect.void : Effect.fail(new CapabilityMismatch({ agent, model, missing }))
  })
