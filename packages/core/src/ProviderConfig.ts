/**
 * What every provider's layer checks before it builds a client: its API key (given, or read from
 * the environment) and its numeric options. One home, so each provider's errors read alike and
 * name the layer, the field and what is accepted.
 *
 * @since 0.2.0
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { ConfigurationError } from "./ConfigurationError.js"

/**
 * A `ConfigurationError` of a provider's layer: the message starts with the layer's name.
 *
 * @example
 * ```ts
 * import { ProviderConfig } from "@agentkit/core"
 *
 * ProviderConfig.error("OpenAIChatModel", "baseURL", "baseURL must be an http(s) URL; got 'ftp://x'").message
 * // "OpenAIChatModel: baseURL must be an http(s) URL; got 'ftp://x'"
 * ```
 *
 * @since 0.2.0
 * @category errors
 */
export const error = (layer: string, field: string, message: string): ConfigurationError =>
  new ConfigurationError({ field, message: `${layer}: ${message}` })

/**
 * The API key: `given` when set, else the first of `variables` present in the environment (read
 * through Effect's `Config`, so a `ConfigProvider` can supply it). A blank key fails like a
 * missing one, naming the option and the first variable.
 *
 * @example
 * ```ts
 * import { ProviderConfig } from "@agentkit/core"
 *
 * const key = ProviderConfig.apiKey({ layer: "OpenAIChatModel", variables: ["OPENAI_API_KEY"], given: undefined })
 * ```
 *
 * @since 0.2.0
 * @category getters
 */
export const apiKey = (options: {
  readonly layer: string
  readonly variables: readonly [string, ...Array<string>]
  readonly given: string | Redacted.Redacted<string> | undefined
}): Effect.Effect<Redacted.Redacted<string>, ConfigurationError> => {
  const [first, ...rest] = options.variables
  const fromEnv = Config.option(
    rest.reduce((config, name) => Config.orElse(config, () => Config.redacted(name)), Config.redacted(first))
  ).pipe(Effect.mapError(() => error(options.layer, "apiKey", `${first} could not be read`)))
  const given: Effect.Effect<Option.Option<Redacted.Redacted<string>>, ConfigurationError> = options.given === undefined
    ? fromEnv
    : Effect.succeed(Option.some(typeof options.given === "string" ? Redacted.make(options.given) : options.given))
  return Effect.flatMap(given, (key) =>
    Option.isSome(key) && Redacted.value(key.value).trim() !== ""
      ? Effect.succeed(key.value)
      : Effect.fail(
        error(
          options.layer,
          "apiKey",
          `no API key: pass { apiKey } to ${options.layer}.layer or set the ${first} environment variable`
        )
      ))
}

/**
 * Checks an optional integer option against its minimum.
 *
 * @example
 * ```ts
 * import { ProviderConfig } from "@agentkit/core"
 *
 * const check = ProviderConfig.integer("AnthropicChatModel", "maxTokens", 0, 1)
 * // fails: "AnthropicChatModel: maxTokens must be an integer >= 1; got 0"
 * ```
 *
 * @since 0.2.0
 * @category getters
 */
export const integer = (
  layer: string,
  field: string,
  value: number | undefined,
  min: number
): Effect.Effect<void, ConfigurationError> =>
  value === undefined || (Number.isInteger(value) && value >= min)
    ? Effect.void
    : Effect.fail(error(layer, field, `${field} must be an integer >= ${min}; got ${String(value)}`))
