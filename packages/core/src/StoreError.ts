/**
 * The errors every store port shares: a backend that cannot do what it was asked (`StoreError`)
 * and a stored entry that cannot be read back (`CorruptEntry`).
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"
import { ErrorTypeId, ForeignValue } from "./AgentkitError.js"

/**
 * A store could not do what it was asked: its backend is unreachable or broken. `retryable` says
 * whether trying again may help (a lost connection) or not (a misconfigured table). The
 * compare-and-set outcomes of the store ports (`StaleLease`, `VersionConflict`, ...) are errors
 * of their own.
 *
 * @example
 * ```ts
 * import { StoreError } from "@agentkit/core"
 *
 * new StoreError({ operation: "save", message: "database is locked", retryable: true })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class StoreError extends Schema.TaggedError<StoreError>("@agentkit/core/StoreError")("StoreError", {
  operation: Schema.String,
  message: Schema.String,
  retryable: Schema.Boolean,
  cause: Schema.optional(ForeignValue)
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * A stored entry cannot be read back (a corrupt row): the store names it and leaves it untouched.
 *
 * @example
 * ```ts
 * import { CorruptEntry } from "@agentkit/core"
 *
 * new CorruptEntry({ store: "checkpoints", key: "run-1", detail: "status must be one of ...; got 'banana'" }).message
 * // "checkpoints entry 'run-1' is corrupt: status must be one of ...; got 'banana'"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class CorruptEntry extends Schema.TaggedError<CorruptEntry>("@agentkit/core/CorruptEntry")("CorruptEntry", {
  store: Schema.String,
  key: Schema.String,
  detail: Schema.String
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `${this.store} entry '${this.key}' is corrupt: ${this.detail}`
  }
}
