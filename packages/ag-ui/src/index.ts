/**
 * @agentkit/ag-ui: an agent to a user's screen over AG-UI 1.0, mounted on your own
 * `@effect/platform` router, with approvals asked in the chat as AG-UI interrupts.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as AgUi from "./AgUi.js"

/** @since 0.1.0 */
export { Unauthenticated } from "./Errors.js"
