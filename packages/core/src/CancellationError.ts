/**
 * The error of a cancelled run (`Cancelled`) and its guard.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"
import { ErrorTypeId } from "./AgentkitError.js"
import { isTagged } from "./internal/errors.js"

/**
 * The run was cancelled through its cancellation handle.
 *
 * @example
 * ```ts
 * import { Cancelled } from "@agentkit/core"
 *
 * new Cancelled().message // "run cancelled"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class Cancelled extends Schema.TaggedError<Cancelled>("@agentkit/core/Cancelled")("Cancelled", {}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return "run cancelled"
  }
}

/**
 * Whether a value is a `Cancelled`.
 *
 * @example
 * ```ts
 * import { Cancelled, isCancelled } from "@agentkit/core"
 *
 * isCancelled(new Cancelled()) // true
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isCancelled: (u: unknown) => u is Cancelled = isTagged("Cancelled")
