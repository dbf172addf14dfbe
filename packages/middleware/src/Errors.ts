/**
 * The typed errors of `@agentkit/middleware`: a call refused by an open circuit and a URL refused
 * by the egress policy. Each carries core's `ErrorTypeId` (so `isAgentkitError` recognises it and
 * retry never repeats it) and is a `Schema.TaggedError`.
 *
 * @since 0.1.0
 */
import { ErrorTypeId } from "@agentkit/core"
import * as Schema from "effect/Schema"

/**
 * A call was refused because its circuit is open.
 *
 * @example
 * ```ts
 * import { CircuitOpen } from "@agentkit/middleware"
 *
 * new CircuitOpen({ circuit: "claude-sonnet-4-6" }).message // "circuit open: claude-sonnet-4-6"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class CircuitOpen extends Schema.TaggedError<CircuitOpen>("@agentkit/middleware/CircuitOpen")("CircuitOpen", {
  circuit: Schema.String
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `circuit open: ${this.circuit}`
  }
}

/**
 * A URL was refused by the egress policy. `message` is the policy's text.
 *
 * @example
 * ```ts
 * import { EgressDenied } from "@agentkit/middleware"
 *
 * new EgressDenied({ url: "https://evil.com/x", message: "egress to 'evil.com' not allowed (not in egress allowlist)" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class EgressDenied
  extends Schema.TaggedError<EgressDenied>("@agentkit/middleware/EgressDenied")("EgressDenied", {
    url: Schema.String,
    message: Schema.String
  })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}
