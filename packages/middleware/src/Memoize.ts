/**
 * A response cache for the chat pipeline, partitioned by tenant.
 *
 * @since 0.1.0
 */
import { CanonicalJson, ConfigurationError, MemoStore, Tracing } from "@agentkit/core"
import type { Chat, ChatCall, ChatError, ChatHandler, ChatMiddleware } from "@agentkit/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { flightsOf } from "./internal/singleFlight.js"

/**
 * Where cached responses are kept: core's `MemoStore` port. `memoryStore()` is the in-process one.
 *
 * @example
 * ```ts
 * import type { Memoize } from "@agentkit/middleware"
 * import { Effect, Option } from "effect"
 *
 * const map = new Map<string, unknown>()
 * const store: Memoize.CacheStore = {
 *   get: (key) => Effect.sync(() => Option.fromNullable(map.get(key) as never)),
 *   set: (key, response) => Effect.sync(() => void map.set(key, response))
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type CacheStore = MemoStore.Service

/**
 * The in-memory store (core's `MemoStore.MemoryStore`): a `CacheStore` that tells how many entries
 * it holds.
 *
 * @example
 * ```ts
 * import { Memoize } from "@agentkit/middleware"
 *
 * const store: Memoize.MemoryStore = Memoize.memoryStore({ maxEntries: 500 })
 * store.size // 0
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type MemoryStore = MemoStore.MemoryStore

/**
 * Makes an in-memory store (core's `MemoStore.makeMemory`): an LRU of at most `maxEntries`
 * (default 1000) entries, each valid for its TTL (default 1 hour), read from Effect's `Clock`.
 *
 * @example
 * ```ts
 * import { Memoize } from "@agentkit/middleware"
 *
 * const store = Memoize.memoryStore({ maxEntries: 10_000 })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const memoryStore = (options: MemoStore.MemoryOptions = {}): MemoryStore => MemoStore.makeMemory(options)

/**
 * The default key material of a call: its model, messages, tools and sampling settings, as
 * canonical JSON. `memoize` always adds the tenant key (`scope.storeKey`) to it.
 *
 * @example
 * ```ts
 * import { Memoize } from "@agentkit/middleware"
 *
 * const byLastMessage = Memoize.memoize({ key: (call) => call.request.messages.at(-1)?.content ?? "" })
 * const byDefault = Memoize.memoize({ key: Memoize.defaultKey })
 * ```
 *
 * @since 0.1.0
 * @category hashing
 */
export const defaultKey = (call: ChatCall): string => {
  const { model, messages, tools, maxTokens, temperature } = call.request
  return CanonicalJson.stringify({ model, messages, tools, maxTokens, temperature })
}

/**
 * The options of `memoize`.
 *
 * @example
 * ```ts
 * import { Memoize } from "@agentkit/middleware"
 *
 * const options: Memoize.Options = { ttl: "10 minutes", store: Memoize.memoryStore() }
 * const memoize = Memoize.memoize(options)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** What identifies a call (default `defaultKey`). The tenant key (`scope.storeKey`) is always added. */
  readonly key?: ((call: ChatCall) => string) | undefined
  /** How long an entry stays valid (default: as long as the store keeps it). */
  readonly ttl?: Duration.DurationInput | undefined
  /** Where entries are kept. Default: the `MemoStore` service in the context, else a fresh `memoryStore()`. */
  readonly store?: CacheStore | undefined
}

/**
 * Serves repeated model calls from a cache. The key always includes the run's tenant key (`scope.storeKey`),
 * so two tenants never see each other's entries, whatever `key` returns. On a hit the model is
 * not called, `meta.cacheHit` is set (so neither the Invoker's Budget nor `meter` charges the
 * call: Python charged hits twice), the cached content is replayed to `emit` as one delta, and a
 * `cache.hit` span event records the key. Concurrent identical misses share one model call.
 * Failures are never cached.
 *
 * Place: on the chat pipeline, outside `meter`, `fallback` and `retry`:
 * `[telemetry, memoize, meter, fallback, retry]`. Bad options throw `ConfigurationError`.
 *
 * @example
 * ```ts
 * import { Invoker } from "@agentkit/core"
 * import { Memoize } from "@agentkit/middleware"
 *
 * const InvokerLive = Invoker.layer({ chatMiddleware: [Memoize.memoize({ ttl: "10 minutes" })] })
 * ```
 *
 * @since 0.1.0
 * @category middleware
 */
export const memoize = (options: Options = {}): ChatMiddleware => {
  const fallback = options.store === undefined ? memoryStore() : undefined
  const storeOf: Effect.Effect<CacheStore> = options.store !== undefined
    ? Effect.succeed(options.store)
    : Effect.map(Effect.serviceOption(MemoStore), (found) => Option.getOrElse(found, () => fallback!))
  const keyOf = options.key ?? defaultKey
  let ttl: Duration.Duration | undefined
  if (options.ttl !== undefined) {
    const decoded = Duration.decodeUnknown(options.ttl)
    if (Option.isNone(decoded) || Duration.toMillis(decoded.value) <= 0) {
      throw new ConfigurationError({
        field: "memoize.ttl",
        message: `memoize.ttl must be a positive duration (e.g. "10 minutes"); got ${String(options.ttl)}`
      })
    }
    ttl = decoded.value
  }
  return (next: ChatHandler): ChatHandler => (call) =>
    Effect.flatMap(storeOf, (store) => {
      const flights = flightsOf<Chat.ChatResponse>(store)
      let key: string
      try {
        key = `memo:${CanonicalJson.sha256(JSON.stringify([call.context.scope.storeKey, keyOf(call)]))}`
      } catch {
        return next(call) // a request that cannot be read has no key: it is not cached
      }
      const hit = (response: Chat.ChatResponse): Effect.Effect<Chat.ChatResponse> => {
        call.meta.cacheHit = true
        if (response.content !== "") call.emit({ text: response.content })
        return call.context.tracing
          ? Effect.as(
            Tracing.addEvent(Tracing.EventName.cacheHit, { [Tracing.EventAttribute.cacheKey]: key }),
            response
          )
          : Effect.succeed(response)
      }
      let found = false
      // a cache that fails is a miss (logged): it never fails the model call
      const cachedOf = Effect.catchAll(store.get(key), (error) =>
        Effect.as(
          Effect.logWarning(`memoize: cache read failed, calling the model: ${error.message}`),
          Option.none<Chat.ChatResponse>()
        ))
      const lead: Effect.Effect<Chat.ChatResponse, ChatError> = Effect.flatMap(cachedOf, (cached) => {
        if (Option.isSome(cached)) {
          found = true
          return Effect.succeed(cached.value)
        }
        return Effect.tap(next(call), (response) =>
          Effect.catchAll(store.set(key, response, ttl), (error) =>
            Effect.logWarning(`memoize: cache write failed: ${error.message}`)))
      })
      return Effect.flatMap(flights.run(key, lead), (outcome) =>
        outcome.shared || found ? hit(outcome.value) : Effect.succeed(outcome.value))
    })
}
