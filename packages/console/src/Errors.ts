/**
 * The console's errors, in one module: what the HTTP API answers (each with its status), what
 * the authenticator refuses with, and what a CLI command fails with. Each carries core's
 * `ErrorTypeId`.
 *
 * @since 0.1.0
 */
import { ErrorTypeId } from "@agentkit/core"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Schema from "effect/Schema"

/**
 * No token, or one the authenticator refused (401).
 *
 * @example
 * ```ts
 * import { Unauthorized } from "@agentkit/console"
 *
 * new Unauthorized({ message: "sign in with an operator token" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class Unauthorized extends Schema.TaggedError<Unauthorized>("@agentkit/console/Unauthorized")(
  "Unauthorized",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 401 })
) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * Authenticated, but not allowed (403): a viewer deciding, a missing CSRF header, a requester
 * approving their own run, a cross-site request.
 *
 * @example
 * ```ts
 * import { Forbidden } from "@agentkit/console"
 *
 * new Forbidden({ message: "a viewer may not decide" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class Forbidden extends Schema.TaggedError<Forbidden>("@agentkit/console/Forbidden")(
  "Forbidden",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 403 })
) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * No such run, or none the operator may see (404: the two are the same answer).
 *
 * @example
 * ```ts
 * import { NotFound } from "@agentkit/console"
 *
 * new NotFound({ message: "no run 'run-1'" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class NotFound extends Schema.TaggedError<NotFound>("@agentkit/console/NotFound")(
  "NotFound",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 404 })
) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * Someone decided first (409): who, what and when.
 *
 * @example
 * ```ts
 * import { DecisionConflict } from "@agentkit/console"
 *
 * new DecisionConflict({ message: "decided already by alice", by: "alice", verdict: "approve" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class DecisionConflict extends Schema.TaggedError<DecisionConflict>("@agentkit/console/DecisionConflict")(
  "DecisionConflict",
  { message: Schema.String, by: Schema.optional(Schema.String), verdict: Schema.optional(Schema.String) },
  HttpApiSchema.annotations({ status: 409 })
) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * The decision names another digest than the pending entry's (409): it was made for other
 * arguments or another tool definition. Reload and decide again.
 *
 * @example
 * ```ts
 * import { StaleDigest } from "@agentkit/console"
 *
 * new StaleDigest({ message: "the digest does not match", expected: "ab" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class StaleDigest extends Schema.TaggedError<StaleDigest>("@agentkit/console/StaleDigest")(
  "StaleDigest",
  { message: Schema.String, expected: Schema.String },
  HttpApiSchema.annotations({ status: 409 })
) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * The run is finished (409): nothing left to decide or cancel.
 *
 * @example
 * ```ts
 * import { Finished } from "@agentkit/console"
 *
 * new Finished({ message: "run 'run-1' is finished (done)" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class Finished extends Schema.TaggedError<Finished>("@agentkit/console/Finished")(
  "Finished",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 409 })
) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * A request the operator service refused as malformed (400): an unknown pending id, a verdict
 * the entry does not accept, a cursor it did not make.
 *
 * @example
 * ```ts
 * import { BadRequest } from "@agentkit/console"
 *
 * new BadRequest({ message: "run 'run-1' has no pending entry 'p-9'" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class BadRequest extends Schema.TaggedError<BadRequest>("@agentkit/console/BadRequest")(
  "BadRequest",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 400 })
) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * Edited arguments the tool's recorded JSON Schema refuses (422), in core's
 * `ToolArgumentError` terms.
 *
 * @example
 * ```ts
 * import { InvalidArguments } from "@agentkit/console"
 *
 * new InvalidArguments({ message: "missing order_id", toolName: "cancel_order", unexpected: [], missing: ["order_id"], invalid: [], accepted: ["order_id"] })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidArguments extends Schema.TaggedError<InvalidArguments>("@agentkit/console/InvalidArguments")(
  "InvalidArguments",
  {
    message: Schema.String,
    toolName: Schema.String,
    unexpected: Schema.Array(Schema.String),
    missing: Schema.Array(Schema.String),
    invalid: Schema.Array(Schema.String),
    accepted: Schema.Array(Schema.String)
  },
  HttpApiSchema.annotations({ status: 422 })
) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * The store is unavailable (503; `retryable` from the store).
 *
 * @example
 * ```ts
 * import { Unavailable } from "@agentkit/console"
 *
 * new Unavailable({ message: "database is locked", retryable: true })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class Unavailable extends Schema.TaggedError<Unavailable>("@agentkit/console/Unavailable")(
  "Unavailable",
  { message: Schema.String, retryable: Schema.Boolean },
  HttpApiSchema.annotations({ status: 503 })
) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * A presented token was not accepted.
 *
 * @example
 * ```ts
 * import { Unauthenticated } from "@agentkit/console"
 *
 * new Unauthenticated({ message: "unknown token" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class Unauthenticated
  extends Schema.TaggedError<Unauthenticated>("@agentkit/console/Unauthenticated")("Unauthenticated", {
    message: Schema.String
  })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * A command failed: the console refused it (its status and message), or it could not be reached.
 *
 * @example
 * ```ts
 * import { CliError } from "@agentkit/console"
 *
 * new CliError({ message: "409 AlreadyDecided: decided already by alice" }).message
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class CliError
  extends Schema.TaggedError<CliError>("@agentkit/console/CliError")("CliError", { message: Schema.String })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}
