/**
 * At-most-once execution of side-effecting tool calls within a run.
 *
 * @since 0.1.0
 */
import { CanonicalJson, errorMessage, IdempotencyStore as CoreIdempotencyStore, ToolDenied } from "@agentkit/core"
import type { ToolCallRequest, ToolHandler, ToolMiddleware, ToolOutcome, ToolPipelineError } from "@agentkit/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { flightsOf } from "./internal/singleFlight.js"

/**
 * Where the outcomes of side-effecting calls are kept: core's `IdempotencyStore` port (implement
 * it over Redis, SQL or anything else; `memoryStore()` is the in-process one).
 *
 * @example
 * ```ts
 * import type { Idempotency } from "@agentkit/middleware"
 * import { Effect, Option } from "effect"
 *
 * const map = new Map<string, { readonly value: unknown; readonly text: string }>()
 * const store: Idempotency.IdempotencyStore = {
 *   get: (key) => Effect.sync(() => Option.fromNullable(map.get(key))),
 *   set: (key, outcome) => Effect.sync(() => void map.set(key, outcome)),
 *   endRun: () => Effect.void
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type IdempotencyStore = CoreIdempotencyStore.Service

/**
 * The in-memory store (core's `IdempotencyStore.MemoryStore`): the port plus how many outcomes it
 * holds.
 *
 * @example
 * ```ts
 * import { Idempotency } from "@agentkit/middleware"
 *
 * const store: Idempotency.MemoryStore = Idempotency.memoryStore()
 * store.size // 0
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type MemoryStore = CoreIdempotencyStore.MemoryStore

/**
 * Makes an in-memory store (core's `IdempotencyStore.makeMemory`): an ended run's outcomes expire
 * after `retention` (default 1 hour), never by count.
 *
 * @example
 * ```ts
 * import { Idempotency } from "@agentkit/middleware"
 *
 * const store = Idempotency.memoryStore()
 * const idempotent = Idempotency.idempotent({ store })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const memoryStore = (options: CoreIdempotencyStore.MemoryOptions = {}): MemoryStore =>
  CoreIdempotencyStore.makeMemory(options)

/**
 * The idempotency key of a call: `idem:` + the SHA-256 of the run id, the tenant
 * key (`scope.storeKey`), the tool name and the hash of the arguments (canonical JSON, so key order does not
 * matter).
 *
 * @example
 * ```ts
 * import { Idempotency } from "@agentkit/middleware"
 *
 * // inside a tool middleware:
 * // const key = Idempotency.key(invocation) // "idem:3f1c…"
 * ```
 *
 * @since 0.1.0
 * @category hashing
 */
export const key = (invocation: ToolCallRequest<unknown, unknown>): string =>
  `idem:${
    CanonicalJson.sha256(
      JSON.stringify([
        invocation.context.runId,
        invocation.context.scope.storeKey,
        invocation.tool.name,
        CanonicalJson.hashOnce(invocation.call.arguments)
      ])
    )
  }`

/**
 * The options of `idempotent`.
 *
 * @example
 * ```ts
 * import { Idempotency } from "@agentkit/middleware"
 *
 * const options: Idempotency.Options = { store: Idempotency.memoryStore() }
 * const idempotent = Idempotency.idempotent(options)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * Where outcomes are kept. Default: the `IdempotencyStore` service in the context (an agent
   * tells it when each top-level run ends, so its outcomes expire), else a fresh in-memory store
   * for this middleware.
   */
  readonly store?: IdempotencyStore | undefined
}

/**
 * Runs a side-effecting tool call at most once per run, tenant, tool and arguments: a repeat
 * returns the stored outcome without running the tool and sets `meta.deduplicated = true`.
 * Concurrent identical calls share one execution (success or failure). Failures are never
 * stored, so a call that failed runs again when repeated. Read-only tools pass through untouched.
 *
 * Place: on the tool pipeline, inside `audit` and `egress` and outside `retry`:
 * `[telemetry, audit, egress, idempotent, retry]`, so a deduplicated call is audited and a retried
 * one is stored once.
 *
 * @example
 * ```ts
 * import { Invoker } from "@agentkit/core"
 * import { Idempotency } from "@agentkit/middleware"
 *
 * const InvokerLive = Invoker.layer({
 *   toolMiddleware: [Idempotency.idempotent({ store: Idempotency.memoryStore() })]
 * })
 * ```
 *
 * @since 0.1.0
 * @category middleware
 */
export const idempotent = (options: Options = {}): ToolMiddleware => {
  const fallback = options.store === undefined ? memoryStore() : undefined
  const storeOf: Effect.Effect<IdempotencyStore> = options.store !== undefined
    ? Effect.succeed(options.store)
    : Effect.map(Effect.serviceOption(CoreIdempotencyStore), (found) => Option.getOrElse(found, () => fallback!))
  return (next: ToolHandler): ToolHandler =>
  <E, R>(invocation: ToolCallRequest<E, R>): Effect.Effect<ToolOutcome, E | ToolPipelineError, R> => {
    if (!invocation.tool.sideEffecting) return next(invocation)
    return Effect.flatMap(storeOf, (store) => {
      const flights = flightsOf<ToolOutcome>(store)
      const meta = invocation.meta
      let k: string
      try {
        k = key(invocation as ToolCallRequest<unknown, unknown>)
      } catch (error) {
        // arguments that cannot be read cannot be deduplicated: refused, never run twice
        return Effect.fail(
          new ToolDenied({ toolName: invocation.tool.name, reason: "other", message: errorMessage(error) })
        )
      }
      const runId = invocation.context.runId
      let stored = false
      const lead: Effect.Effect<ToolOutcome, E | ToolPipelineError, R> = Effect.flatMap(store.get(k), (found) => {
        if (Option.isSome(found)) {
          stored = true
          return Effect.succeed(found.value)
        }
        return Effect.tap(next(invocation), (outcome) => store.set(k, outcome, runId))
      })
      return Effect.map(flights.run(k, lead), (outcome) => {
        if (outcome.shared || stored) meta.deduplicated = true
        return outcome.value
      })
    })
  }
}
