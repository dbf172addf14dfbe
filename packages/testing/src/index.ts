/**
 * @agentkit/testing: offline tests for agentkit programs by swapping one layer, and the fixtures every package's tests share (fake models and tools, response builders, the seed's world).
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
export * as Fixture from "./Fixture.js"
/** @since 0.1.0 */
export { makeTestCtx, runWithClock } from "./TestContext.js"
/** @since 0.1.0 */
export * as Seed from "./Seed.js"
/** @since 0.1.0 */
export * as StoreContract from "./StoreContract.js"
/** @since 0.1.0 */
export * as SpanStoreContract from "./SpanStoreContract.js"
/** @since 0.2.0 */
export * as SessionStoreContract from "./SessionStoreContract.js"
/** @since 0.1.0 */
export type { TestContextOptions } from "./TestContext.js"
/** @since 0.1.0 */
export { Tracing } from "@agentkit/core"
/** @since 0.1.0 */
export * as ChatModelContract from "./ChatModelContract.js"
/** @since 0.1.0 */
export * as Recorder from "./Recorder.js"
/** @since 0.1.0 */
export * as Recording from "./Recording.js"
/** @since 0.1.0 */
export * as Redaction from "./Redaction.js"
/** @since 0.1.0 */
export * as Replay from "./Replay.js"
