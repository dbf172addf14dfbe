/**
 * The recommended order of both pipelines, as one call.
 *
 * Chat pipeline (first is outermost):
 *
 * ```
 * telemetry → memoize → meter → fallback → retry → (model)
 * ```
 *
 * telemetry sees everything a call costs; a cache hit skips the quota, fallback and retry; one
 * logical call is metered once; each fallback model gets its own retries.
 *
 * Tool pipeline:
 *
 * ```
 * telemetry → meter → audit → egress → idempotent → retry → (tool)
 * ```
 *
 * audit sits outside egress and idempotent, so denials and deduplicated calls are audited too
 * (Python put it inside, and deduplicated calls vanished from the trail); a denied URL never
 * reaches the store or the tool; a call is stored once, after its retries.
 *
 * @since 0.1.0
 */
import type { ChatMiddleware, Quota, ToolMiddleware } from "@agentkit/core"
import * as Audit from "./Audit.js"
import * as Egress from "./Egress.js"
import * as Fallback from "./Fallback.js"
import * as Idempotency from "./Idempotency.js"
import * as Memoize from "./Memoize.js"
import * as Meter from "./Meter.js"
import * as Retry from "./Retry.js"
import * as Telemetry from "./Telemetry.js"

/**
 * The configuration of `recommended`. Every part has a default; `false` turns a part off.
 *
 * @example
 * ```ts
 * import type { Middleware } from "@agentkit/middleware"
 *
 * const config: Middleware.Config = { egress: { allow: ["example.com"] }, retry: { maxAttempts: 2 }, telemetry: false }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Config {
  /** Telemetry on both pipelines. Default on, without content capture. */
  readonly telemetry?: Telemetry.Options | false | undefined
  /** A response cache on the chat pipeline. Default off. */
  readonly memoize?: Memoize.Options | undefined
  /** Tenant quotas (chat pipeline; the tool pipeline too with `meterTools`). Default none. */
  readonly quotas?: ReadonlyArray<Quota.Quota> | undefined
  /** Extra meters, after the quotas. Default none. */
  readonly meters?: ReadonlyArray<Meter.Meter> | undefined
  /** Also guard the meters on tool calls (a quota then counts them as requests). Default false. */
  readonly meterTools?: boolean | undefined
  /** Fallback models, tried in order after the request's own. Default none. */
  readonly fallback?: ReadonlyArray<string> | undefined
  /** Retry on both pipelines (each pipeline gets its own breakers). Default on, 3 attempts, no breaker. */
  readonly retry?: Retry.Options | false | undefined
  /**
   * The egress policy for tools with `urlArg` (and a tool fetching through `EgressHttpClient`).
   * Default on, without an allowlist: schemes and non-public addresses are checked, a missing URL
   * is blocked.
   */
  readonly egress?: Egress.Options | Egress.Policy | false | undefined
  /** At-most-once side-effecting tool calls. Default on, with an in-memory store. */
  readonly idempotency?: Idempotency.Options | false | undefined
  /** An audit trail of tool calls. Default off (it needs a store). */
  readonly audit?: Audit.Options | undefined
}

/**
 * The two pipelines, ready for `Invoker.layer`.
 *
 * @example
 * ```ts
 * import { Invoker } from "@agentkit/core"
 * import { Middleware } from "@agentkit/middleware"
 *
 * const pipelines: Middleware.Pipelines = Middleware.recommended()
 * const InvokerLive = Invoker.layer(pipelines)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Pipelines {
  readonly chatMiddleware: ReadonlyArray<ChatMiddleware>
  readonly toolMiddleware: ReadonlyArray<ToolMiddleware>
}

/**
 * Builds both pipelines in the recommended order (see the module docs) from one configuration.
 * Bad options throw `ConfigurationError` here.
 *
 * @example
 * ```ts
 * import { Invoker, Quota } from "@agentkit/core"
 * import { Audit, Middleware } from "@agentkit/middleware"
 *
 * const pipelines = Middleware.recommended({
 *   egress: { allow: ["example.com"] },
 *   quotas: [Quota.unsafeMake({ maxRpm: 60, maxUsd: 5 })],
 *   fallback: ["claude-haiku-4-5"],
 *   retry: { maxAttempts: 3, breaker: { failureThreshold: 5, cooldown: "15 seconds" } },
 *   audit: { store: Audit.memoryStore() }
 * })
 * const InvokerLive = Invoker.layer(pipelines)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const recommended = (config: Config = {}): Pipelines => {
  const chatMiddleware: Array<ChatMiddleware> = []
  const toolMiddleware: Array<ToolMiddleware> = []
  if (config.telemetry !== false) {
    const telemetry = Telemetry.telemetry(config.telemetry ?? {})
    chatMiddleware.push(telemetry)
    toolMiddleware.push(telemetry)
  }
  if (config.memoize !== undefined) chatMiddleware.push(Memoize.memoize(config.memoize))
  if ((config.quotas ?? []).length > 0 || (config.meters ?? []).length > 0) {
    const meter = Meter.meter({ quotas: config.quotas, meters: config.meters })
    chatMiddleware.push(meter)
    if (config.meterTools === true) toolMiddleware.push(meter)
  }
  if (config.fallback !== undefined) chatMiddleware.push(Fallback.fallback(config.fallback))
  if (config.audit !== undefined) toolMiddleware.push(Audit.audit(config.audit))
  if (config.egress !== false) toolMiddleware.push(Egress.egress(config.egress ?? {}))
  if (config.idempotency !== false) toolMiddleware.push(Idempotency.idempotent(config.idempotency ?? {}))
  if (config.retry !== false) {
    chatMiddleware.push(Retry.retry(config.retry ?? {}))
    toolMiddleware.push(Retry.retry(config.retry ?? {}))
  }
  return { chatMiddleware, toolMiddleware }
}
