/**
 * @agentkit/durable (experimental): durable, distributed agent runs on `@effect/workflow` and
 * `@effect/cluster` (Effect 3).
 *
 * @since 0.2.0
 */

/** @since 0.2.0 */
export * as DurableAgent from "./DurableAgent.js"
/** @since 0.2.0 */
export * as DurableErrors from "./DurableErrors.js"
/** @since 0.2.0 */
export * as DurableMetrics from "./DurableMetrics.js"
/** @since 0.2.0 */
export * as DurableRunner from "./DurableRunner.js"
/** @since 0.2.0 */
export * as DurableRuns from "./DurableRuns.js"
