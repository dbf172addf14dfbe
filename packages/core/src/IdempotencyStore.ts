/**
 * The idempotency store port: the outcomes of side-effecting calls within a run, keyed by the
 * `idempotent` middleware (tenant, run, tool and argument hash), so a repeated call returns the
 * stored outcome instead of running again. Outcomes expire by age after their run ends
 * (`endRun`), never by count: a run that is still going (or suspended, waiting for a person)
 * keeps every outcome.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import { makeMemory as makeMemoryIdempotency } from "./internal/idempotencyStore.js"
import type { ToolOutcome } from "./Middleware.js"
import type { StoreError } from "./StoreError.js"

/**
 * The store operations.
 *
 * @example
 * ```ts
 * import type { IdempotencyStore } from "@agentkit/core"
 * import { Effect, Option } from "effect"
 *
 * const none: IdempotencyStore.Service = {
 *   get: () => Effect.succeed(Option.none()),
 *   set: () => Effect.void,
 *   endRun: () => Effect.void
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly get: (key: string) => Effect.Effect<Option.Option<ToolOutcome>, StoreError>
  /** Stores an outcome for a key of run `runId`. */
  readonly set: (key: string, outcome: ToolOutcome, runId: string) => Effect.Effect<void, StoreError>
  /** The run ended: its outcomes expire once they are older than the store's retention from now. */
  readonly endRun: (runId: string) => Effect.Effect<void, StoreError>
}

/**
 * The in-memory store: the port plus how many outcomes it holds.
 *
 * @example
 * ```ts
 * import { IdempotencyStore } from "@agentkit/core"
 *
 * const store: IdempotencyStore.MemoryStore = IdempotencyStore.makeMemory({ retention: "10 minutes" })
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
 * The options of the in-memory store: how long an ended run's outcomes are kept (default 1 hour).
 *
 * @example
 * ```ts
 * import type { IdempotencyStore } from "@agentkit/core"
 *
 * const options: IdempotencyStore.MemoryOptions = { retention: "15 minutes" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryOptions {
  readonly retention?: Duration.DurationInput | undefined
}

/**
 * Makes an in-memory store. A bad `retention` throws `ConfigurationError`.
 *
 * @example
 * ```ts
 * import { IdempotencyStore } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const store = IdempotencyStore.makeMemory()
 * const program = agent.run(task).pipe(Effect.provide(IdempotencyStore.layer(store)))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory = (options: MemoryOptions = {}): MemoryStore => makeMemoryIdempotency(options)

/**
 * The idempotency store service, optional: the `idempotent` middleware reads it from the context
 * when it is given no store, and an agent tells it when a top-level run ends.
 *
 * @example
 * ```ts
 * import { IdempotencyStore } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const program = agent.run(task).pipe(Effect.provide(IdempotencyStore.memory()))
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class IdempotencyStore extends Context.Tag("@agentkit/core/IdempotencyStore")<IdempotencyStore, Service>() {
  /** A layer of a fresh in-memory store. */
  static memory(options: MemoryOptions = {}): Layer.Layer<IdempotencyStore> {
    return Layer.sync(IdempotencyStore, () => makeMemory(options))
  }
  /** A layer of a given store value. */
  static layer(store: Service): Layer.Layer<IdempotencyStore> {
    return Layer.succeed(IdempotencyStore, store)
  }
  /** Makes an in-memory store value. */
  static readonly makeMemory = makeMemory
}

/**
 * The idempotency store's types, reachable through the `IdempotencyStore` class.
 *
 * @example
 * ```ts
 * import type { IdempotencyStore } from "@agentkit/core"
 *
 * const sizeOf = (store: IdempotencyStore.MemoryStore) => store.size
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace IdempotencyStore {
  /** @since 0.1.0 */
  export type Service = import("./IdempotencyStore.js").Service
  /** @since 0.1.0 */
  export type MemoryStore = import("./IdempotencyStore.js").MemoryStore
  /** @since 0.1.0 */
  export type MemoryOptions = import("./IdempotencyStore.js").MemoryOptions
}
