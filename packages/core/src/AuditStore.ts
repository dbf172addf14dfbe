/**
 * The audit store port: one record per tool call, whatever became of it. The `audit` tool
 * middleware (in `@agentkit/middleware`) writes them, to the store it is given or, when none is,
 * to the `AuditStore` service in the context; the agent loop writes denials and rejections.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { makeMemory as makeMemoryAudit } from "./internal/auditStore.js"
import type { StoreError } from "./StoreError.js"

/**
 * What happened to a call: it ran (`executed`), a stored outcome was returned (`deduplicated`),
 * it was refused (`denied`: egress, policy, approval, an open circuit), it failed or was
 * interrupted (`failed`), its outcome is unknown after a crash (`in_doubt`), or an operator acted
 * on it (`operator`: a decision, a resolution or a cancel, named by `action`), or a guardrail
 * rewrote what it checked (`rewritten`: `by` names the guardrail, `argHash` and `resultHash` are
 * the digests of the value before and after; a guardrail's trip is `denied`).
 *
 * @example
 * ```ts
 * import type { AuditStore } from "@agentkit/core"
 *
 * const decision: AuditStore.Decision = "in_doubt"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Decision = "executed" | "deduplicated" | "failed" | "denied" | "in_doubt" | "operator" | "rewritten"

/**
 * One audit record.
 *
 * @example
 * ```ts
 * import type { AuditStore } from "@agentkit/core"
 *
 * const line = (record: AuditStore.AuditRecord) => `${record.at} ${record.runId} ${record.tool}#${record.callId}: ${record.decision}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface AuditRecord {
  /** The run id (a sub-run's is path-derived). */
  readonly runId: string
  /** The tenant key of the run's scope. */
  readonly tenant: string
  readonly tool: string
  /** The model's tool call id. */
  readonly callId: string
  readonly decision: Decision
  /** SHA-256 of the arguments' canonical JSON (key order does not matter). */
  readonly argHash: string
  /** SHA-256 of the result text the model saw; absent when there is no result. */
  readonly resultHash?: string | undefined
  /** Who decided (a person's decision on an approval or an in-doubt call). */
  readonly by?: string | undefined
  /** For an `operator` record: what the operator did (a verdict, or `cancel`). */
  readonly action?: "approve" | "reject" | "edit" | "markDone" | "markFailed" | "retry" | "cancel" | undefined
  /** Why (a rejection's reason). */
  readonly reason?: string | undefined
  /** For a denied call: the denial's kind and the text the model saw. */
  readonly denial?: { readonly reason: string; readonly message: string } | undefined
  /** For a failed call: the error type (`Interrupted` for an interrupted call) and message. */
  readonly error?: { readonly type: string; readonly message: string } | undefined
  /** When the call ended (Unix ms, from Effect's `Clock`). */
  readonly at: number
}

/**
 * The filters of `list`: a run, a tenant, the cursor of the previous page.
 *
 * @example
 * ```ts
 * import type { AuditStore } from "@agentkit/core"
 *
 * const query: AuditStore.ListQuery = { runId: "run-1", limit: 50 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ListQuery {
  readonly runId?: string | undefined
  readonly tenant?: string | undefined
  readonly cursor?: string | undefined
  /** Default 100. */
  readonly limit?: number | undefined
}

/**
 * The store operations: append one record, list them in the order they were appended.
 *
 * @example
 * ```ts
 * import type { AuditStore } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const logOnly: AuditStore.Service = {
 *   append: (record) => Effect.log("audit", record),
 *   list: () => Effect.succeed({ records: [], cursor: undefined })
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly append: (record: AuditRecord) => Effect.Effect<void, StoreError>
  readonly list: (
    query?: ListQuery
  ) => Effect.Effect<{ readonly records: ReadonlyArray<AuditRecord>; readonly cursor: string | undefined }, StoreError>
}

/**
 * The in-memory store: the port plus its records, in order.
 *
 * @example
 * ```ts
 * import { AuditStore } from "@agentkit/core"
 *
 * const store: AuditStore.MemoryStore = AuditStore.makeMemory()
 * store.records.length // 0
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryStore extends Service {
  readonly records: ReadonlyArray<AuditRecord>
}

/**
 * Makes an in-memory audit store (tests, demos, single-process apps).
 *
 * @example
 * ```ts
 * import { AuditStore } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const store = AuditStore.makeMemory()
 * const program = agent.run(task).pipe(Effect.provide(AuditStore.layer(store)))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory = (): MemoryStore => makeMemoryAudit()

/**
 * The audit store service, optional: the `audit` middleware reads it from the context when it is
 * given no store.
 *
 * @example
 * ```ts
 * import { AuditStore } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const program = Effect.flatMap(AuditStore, (store) => store.list({ runId: "run-1" }))
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class AuditStore extends Context.Tag("@agentkit/core/AuditStore")<AuditStore, Service>() {
  /** A layer of a fresh in-memory store. */
  static memory(): Layer.Layer<AuditStore> {
    return Layer.sync(AuditStore, makeMemory)
  }
  /** A layer of a given store value. */
  static layer(store: Service): Layer.Layer<AuditStore> {
    return Layer.succeed(AuditStore, store)
  }
  /** Makes an in-memory store value. */
  static readonly makeMemory = makeMemory
}

/**
 * The audit store's types, reachable through the `AuditStore` class.
 *
 * @example
 * ```ts
 * import type { AuditStore } from "@agentkit/core"
 *
 * const denied = (records: ReadonlyArray<AuditStore.AuditRecord>) => records.filter((r) => r.decision === "denied")
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace AuditStore {
  /** @since 0.1.0 */
  export type Service = import("./AuditStore.js").Service
  /** @since 0.1.0 */
  export type MemoryStore = import("./AuditStore.js").MemoryStore
  /** @since 0.1.0 */
  export type AuditRecord = import("./AuditStore.js").AuditRecord
  /** @since 0.1.0 */
  export type Decision = import("./AuditStore.js").Decision
  /** @since 0.1.0 */
  export type ListQuery = import("./AuditStore.js").ListQuery
}
