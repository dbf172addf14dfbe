/**
 * A response cache for the chat pipeline, partitioned by tenant.
 *
 * @since 0.1.0
 */
import { CanonicalJson, ConfigurationError, Tracing } from "@agentkit/core"
import type { Chat, ChatCall, ChatError, ChatHandler, ChatMiddleware } from "@agentkit/core"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { flightsOf } from "./internal/singleFlight.js"

/**
 * Where cached responses are kept: the port. `memoryStore()` is the in-process default.
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
export interface CacheStore {
  readonly get: (key: string) => Effect.Effect<Option.Option<Chat.ChatResponse>>
  /** Stores a response; `ttl` (when given) is how long it stays valid. */
  readonly set: (key: string, response: Chat.ChatResponse, ttl?: Duration.Duration) => Effect.Effect<void>
}

/**
 * The in-memory store: a `CacheStore` that tells how many entries it holds.
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
export interface MemoryStore extends CacheStore {
  readonly size: number
}

/**
 * Makes an in-memory store: entries expire after their TTL (read from Effect's `Clock`), and past
 * `maxEntries` (default 1000) the least recently used entry is dropped.
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
export const memoryStore = (options: { readonly maxEntries?: number | undefined } = {}): MemoryStore => {
  const maxEntries = options.maxEntries ?? 1000
  if (!Number.isInteger(maxEntries) || maxEntries < 1) {
    throw new ConfigurationError({
      field: "memoize.maxEntries",
      message: `memoize.maxEntries must be a positive integer; got ${String(options.maxEntries)}`
    })
  }
  const entries = new Map<string, { readonly response: Chat.ChatResponse; readonly expiresAt: number }>()
  return {
    get: (key) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const entry = entries.get(key)
        if (entry === undefined) return Option.none()
        entries.delete(key)
        if (entry.expiresAt <= now) return Option.none()
        entries.set(key, entry) // most recently used last
        return Option.some(entry.response)
      }),
    set: (key, response, ttl) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        entries.delete(key)
        entries.set(key, { response, expiresAt: ttl === undefined ? Infinity : now + Duration.toMillis(ttl) })
        if (entries.size > maxEntries) entries.delete(entries.keys().next().value!)
      }),
    get size() {
      return entries.size
    }
  }
}

/**
 * The default key material of a call: its model, messages, tools and sampling settings, as
 * canonical JSON. `memoize` always adds the tenant scope key to it.
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
  /** What identifies a call (default `defaultKey`). The tenant scope key is always added. */
  readonly key?: ((call: ChatCall) => string) | undefined
  /** How long an entry stays valid (default: as long as the store keeps it). */
  readonly ttl?: Duration.DurationInput | undefined
  /** Where entries are kept (default: a fresh `memoryStore()`). */
  readonly store?: CacheStore | undefined
}

/**
 * Serves repeated model calls from a cache. The key always includes the run's tenant scope key,
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
  const store = options.store ?? memoryStore()
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
  const flights = flightsOf<Chat.ChatResponse>(store)

  return (next: ChatHandler): ChatHandler =>
    (call) => {
      let key: string
      try {
        key = `memo:${CanonicalJson.sha256(JSON.stringify([call.context.scope.key, keyOf(call)]))}`
      } catch {
        return next(call) // a request that cannot be read has no key: it is not cached
      }
      const hit = (response: Chat.ChatResponse): Effect.Effect<Chat.ChatResponse> => {
        call.meta.cacheHit = true
        if (response.content !== "") call.emit({ text: response.content })
        return call.context.tracing
          ? Effect.as(Tracing.addEvent(Tracing.EventName.cacheHit, { [Tracing.EventAttribute.cacheKey]: key }), response)
          : Effect.succeed(response)
      }
      let found = false
      const lead: Effect.Effect<Chat.ChatResponse, ChatError> = Effect.flatMap(store.get(key), (cached) => {
        if (Option.isSome(cached)) {
          found = true
          return Effect.succeed(cached.value)
        }
        return Effect.tap(next(call), (response) => store.set(key, response, ttl))
      })
      return Effect.flatMap(flights.run(key, lead), (outcome) =>
        outcome.shared || found ? hit(outcome.value) : Effect.succeed(outcome.value)
      )
    }
}
