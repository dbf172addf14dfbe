/**
 * The error of a value that cannot be written as canonical JSON (`CanonicalJsonError`).
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"
import { ErrorTypeId } from "./AgentkitError.js"

/**
 * A value could not be written as canonical JSON (so not hashed): a getter, proxy trap or
 * `toJSON` threw while it was read, or its text would pass the engine's string limit. `path`
 * names where (`items.3.name`, `(root)` for the value itself); `reason` is what was thrown, cut to
 * 200 characters.
 *
 * @example
 * ```ts
 * import { CanonicalJsonError } from "@agentkit/core"
 *
 * new CanonicalJsonError({ path: "items.3", reason: "Error: revoked" }).message
 * // "cannot write the value at items.3 as canonical JSON: Error: revoked"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class CanonicalJsonError extends Schema.TaggedError<CanonicalJsonError>("@agentkit/core/CanonicalJsonError")(
  "CanonicalJsonError",
  { path: Schema.String, reason: Schema.String }
) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `cannot write the value at ${this.path} as canonical JSON: ${this.reason}`
  }
}
