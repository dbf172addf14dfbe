/**
 * The error of invalid options, limits or layer configuration (`ConfigurationError`).
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"
import { ErrorTypeId } from "./AgentkitError.js"

/**
 * Options, limits or a layer's configuration were invalid. The message names the field and what
 * is accepted.
 *
 * @example
 * ```ts
 * import { ConfigurationError } from "@agentkit/core"
 *
 * new ConfigurationError({ field: "autonomy", message: "autonomy must be one of 'auto', 'gated', 'manual'; got 'yolo'" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ConfigurationError extends Schema.TaggedError<ConfigurationError>("@agentkit/core/ConfigurationError")(
  "ConfigurationError",
  { field: Schema.String, message: Schema.String }
) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}
