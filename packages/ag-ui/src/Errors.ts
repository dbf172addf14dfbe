/**
 * The AG-UI endpoint's errors: what an `identify` function refuses a request with (answered as
 * 401). Each carries core's `ErrorTypeId`.
 *
 * @since 0.1.0
 */
import { ErrorTypeId } from "@agentkit/core"
import * as Schema from "effect/Schema"

/**
 * The request names no user the app knows (no token, a token it refused): answered 401 with the
 * message.
 *
 * @example
 * ```ts
 * import { Unauthenticated } from "@agentkit/ag-ui"
 *
 * new Unauthenticated({ message: "sign in first" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class Unauthenticated extends Schema.TaggedError<Unauthenticated>("@agentkit/ag-ui/Unauthenticated")(
  "Unauthenticated",
  { message: Schema.String }
) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}
