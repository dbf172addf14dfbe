/**
 * @agentkit/middleware: the middleware of agentkit's chat and tool pipelines (retry, fallback,
 * idempotency, egress, audit, metering, caching, telemetry, metrics) and their recommended order.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Audit from "./Audit.js"
/** @since 0.1.0 */
export * as CircuitBreaker from "./CircuitBreaker.js"
/** @since 0.1.0 */
export * as Egress from "./Egress.js"
/** @since 0.1.0 */
export * as EgressHttpClient from "./EgressHttpClient.js"
/** @since 0.1.0 */
export { CircuitOpen, EgressDenied } from "./Errors.js"
/** @since 0.1.0 */
export * as Fallback from "./Fallback.js"
/** @since 0.1.0 */
export * as Idempotency from "./Idempotency.js"
/** @since 0.1.0 */
export * as Memoize from "./Memoize.js"
/** @since 0.1.0 */
export * as Meter from "./Meter.js"
/** @since 0.1.0 */
export * as Metrics from "./Metrics.js"
/** @since 0.1.0 */
export * as Middleware from "./Middleware.js"
/** @since 0.1.0 */
export * as Retry from "./Retry.js"
/** @since 0.1.0 */
export * as Telemetry from "./Telemetry.js"
