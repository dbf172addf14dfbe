/**
 * @agentkit/console: the operator console (an approvals inbox, runs and traces in the browser,
 * mounted on your own `@effect/platform` router) and the pieces it is made of.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Cli from "./Cli.js"

/** @since 0.1.0 */
export * as Console from "./Console.js"

/** @since 0.1.0 */
export * as ConsoleApi from "./ConsoleApi.js"

/** @since 0.1.0 */
export {
  BadRequest,
  CliError,
  DecisionConflict,
  Finished,
  Forbidden,
  InvalidArguments,
  NotFound,
  StaleDigest,
  Unauthenticated,
  Unauthorized,
  Unavailable
} from "./Errors.js"

/** @since 0.1.0 */
export * as OperatorAuth from "./OperatorAuth.js"

/** @since 0.1.0 */
export * as SpanRecorder from "./SpanRecorder.js"

/** @since 0.1.0 */
export { SpanStore } from "@agentkit/core"
