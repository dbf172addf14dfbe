/**
 * The memo store port: cached model responses for the `memoize` chat middleware. Entries expire
 * after their TTL, and the in-memory store keeps at most `maxEntries` (least recently used
 * dropped first), so a long-lived server's cache stays bounded.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type { ChatResponse } from "./Chat.js"
import { makeMemory as makeMemoryMemo } from "./internal/memoStore.js"
import type { StoreError } from "./StoreError.js"

/**
 * The store operations.
 *
 * @example
 * ```ts
 * import type { MemoStore } from "@agentkit/core"
 * import { Effect, Option } from "effect"
 *
 * const never: MemoStore.Service = { get: () => Effect.succeed(Option.none()), set: () => Effect.void }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly get: (key: string) => Effect.Effect<Option.Option<ChatResponse>, StoreError>
  /** Stores a response; `ttl` (when given) is how long it stays valid, else the store's default. */
  readonly set: (key: string, response: ChatResponse, ttl?: Duration.Duration) => Effect.Effect<void, StoreError>
}

/**
 * The in-memory store: the port plus how many entries it holds.
 *
 * @example
 * ```ts
 * import { MemoStore } from "@agentkit/core"
 *
 * const store: MemoStore.MemoryStore = MemoStore.makeMemory({ maxEntries: 500 })
 * store.size // 0
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryStore extends Service {
  readonly size: number
}

/**
 * The options of the in-memory store: at most `maxEntries` entries (default 1000), each valid for
 * `ttl` unless `set` says otherwise (default 1 hour).
 *
 * @example
 * ```ts
 * import type { MemoStore } from "@agentkit/core"
 *
 * const options: MemoStore.MemoryOptions = { maxEntries: 10_000, ttl: "10 minutes" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryOptions {
  readonly maxEntries?: number | undefined
  readonly ttl?: Duration.DurationInput | undefined
}

/**
 * Makes an in-memory store: an LRU with a TTL (times from Effect's `Clock`). Bad options throw
 * `ConfigurationError`.
 *
 * @example
 * ```ts
 * import { MemoStore } from "@agentkit/core"
 *
 * const store = MemoStore.makeMemory({ maxEntries: 10_000 })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory = (options: MemoryOptions = {}): MemoryStore => makeMemoryMemo(options)

/**
 * The memo store service, optional: the `memoize` middleware reads it from the context when it is
 * given no store.
 *
 * @example
 * ```ts
 * import { MemoStore } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const program = agent.run(task).pipe(Effect.provide(MemoStore.memory({ maxEntries: 500 })))
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class MemoStore extends Context.Tag("@agentkit/core/MemoStore")<MemoStore, Service>() {
  /** A layer of a fresh in-memory store. */
  static memory(options: MemoryOptions = {}): Layer.Layer<MemoStore> {
    return Layer.sync(MemoStore, () => makeMemory(options))
  }
  /** A layer of a given store value. */
  static layer(store: Service): Layer.Layer<MemoStore> {
    return Layer.succeed(MemoStore, store)
  }
  /** Makes an in-memory store value. */
  static readonly makeMemory = makeMemory
}

/**
 * The memo store's types, reachable through the `MemoStore` class.
 *
 * @example
 * ```ts
 * import type { MemoStore } from "@agentkit/core"
 *
 * const sizeOf = (store: MemoStore.MemoryStore) => store.size
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace MemoStore {
  /** @since 0.1.0 */
  export type Service = import("./MemoStore.js").Service
  /** @since 0.1.0 */
  export type MemoryStore = import("./MemoStore.js").MemoryStore
  /** @since 0.1.0 */
  export type MemoryOptions = import("./MemoStore.js").MemoryOptions
}
