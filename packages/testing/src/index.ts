/**
 * @agentkit/testing: offline tests for agentkit programs by swapping one layer.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as FakeLLM from "./FakeLLM.js"
/** @since 0.1.0 */
export { failure, Turn } from "./FakeLLM.js"
/** @since 0.1.0 */
export * as FakeTool from "./FakeTool.js"
/** @since 0.1.0 */
export { makeTestCtx } from "./TestContext.js"
/** @since 0.1.0 */
export type { TestContextOptions } from "./TestContext.js"
/** @since 0.1.0 */
export { Tracing } from "@agentkit/core"
