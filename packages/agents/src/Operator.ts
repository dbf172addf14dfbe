/**
 * The operator service: what a person (through the console, a CLI or the durable engine) does
 * with runs kept in the stores. It lists suspended, in-doubt and finished runs, shows one, records
 * decisions on pending entries by id (checked against the entry's kind, digest and, for an edit,
 * the JSON Schema recorded on it, before anything is written), requests cancellation, resolves
 * calls in doubt, and reads the audit trail. The first decision on an entry wins; a second gets
 * `AlreadyDecided` naming who decided. Every decision and cancel writes an audit record with the
 * operator.
 *
 * The service only records: the process that owns the run (or `RunRecovery`, once every pending
 * entry of a run is decided) applies the decisions, so any process sharing the store can decide.
 * It works over the store ports alone (`CheckpointStore`, `AuditStore`), so the in-memory stores
 * and `@agentkit/sql` serve it alike.
 *
 * Tenant scoping is the caller's: pass the tenant grants an operator holds to `list` and `audit`,
 * and as `{ tenants }` to the run operations, which then refuse another tenant's run with
 * `OtherTenant` before reading or writing anything of it. A grant is a scope's `storeKey` (that
 * tenant exactly), a scope pattern (`Scope.pattern({ orgId: "acme" })`, `'["acme"]'`: the
 * organisation and every domain, user and session under it), or `"*"` (every tenant); see core
 * `Scope.covers`. Runs and audit records carry their scope as its parts (`scope`), for display.
 *
 * @since 0.1.0
 */
import { AuditStore, CheckpointStore } from "@agentkit/core"
import type { AlreadyDecided, RunFinished, RunNotFound, StoreError, ToolArgumentError } from "@agentkit/core"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Approval from "./Approval.js"
import type {
  DigestMismatch,
  InvalidDecision,
  OtherTenant,
  RunStateCorrupt,
  RunStateVersionUnsupported,
  UnknownPending
} from "./Errors.js"
import * as internal from "./internal/operator.js"
import type { AuditRecord, RecordedDecision, RunDetail, RunStatus, RunSummary } from "./OperatorView.js"

export * from "./OperatorView.js"

/**
 * The filters of `list`. `tenant` is the set of tenant grants the caller holds (store keys,
 * scope patterns or `"*"`, see core `Scope.covers`; an empty set sees nothing); `tool` matches
 * runs waiting on a call of that tool.
 *
 * @example
 * ```ts
 * import type { Operator } from "@agentkit/agents"
 * import { Scope } from "@agentkit/core"
 *
 * // every run of organisation acme: its domains', users' and sessions' too
 * const inbox: Operator.ListFilter = { status: ["suspended", "in_doubt"], tenant: [Scope.pattern({ orgId: "acme" })], limit: 50 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ListFilter {
  readonly status?: ReadonlyArray<RunStatus> | undefined
  readonly tenant?: ReadonlyArray<string> | undefined
  readonly agent?: string | undefined
  readonly tool?: string | undefined
  readonly threadId?: string | undefined
  /** Unix ms, exclusive. */
  readonly updatedAfter?: number | undefined
  /** Unix ms, exclusive. */
  readonly updatedBefore?: number | undefined
  readonly cursor?: string | undefined
  /** Default 50, at most 500. */
  readonly limit?: number | undefined
  /** `asc` (default, oldest change first: an inbox) or `desc` (newest first: recent runs). A cursor keeps its direction. */
  readonly order?: "asc" | "desc" | undefined
  /** Also count every run the filter matches, over all pages (`total` in the answer). */
  readonly withTotal?: boolean | undefined
}

/**
 * A run written since a `changes` cursor, as the change left it: enough to route and count the
 * change without reading the run again.
 *
 * @example
 * ```ts
 * import type { Operator } from "@agentkit/agents"
 *
 * const waits = (run: Operator.ChangedRun) => run.status === "suspended" && run.pending > 0
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface ChangedRun {
  readonly runId: string
  readonly rootRunId: string
  readonly tenant: string
  readonly status: RunStatus
  readonly updatedAt: number
  /** How many calls it waits on. */
  readonly pending: number
}

/**
 * The filters of `audit`.
 *
 * @example
 * ```ts
 * import type { Operator } from "@agentkit/agents"
 *
 * const trail: Operator.AuditFilter = { runId: "run-1", tenant: ["acme"] }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface AuditFilter {
  readonly runId?: string | undefined
  readonly tenant?: ReadonlyArray<string> | undefined
  readonly cursor?: string | undefined
  /** Default 50, at most 500. */
  readonly limit?: number | undefined
}

/**
 * What the run operations take: the tenant grants the operator holds (omitted: every tenant):
 * store keys, scope patterns or `"*"` (see core `Scope.covers`).
 *
 * @example
 * ```ts
 * import type { Operator } from "@agentkit/agents"
 * import { Scope } from "@agentkit/core"
 *
 * // user u1 of acme, every session of theirs
 * const scoped: Operator.Access = { tenants: [Scope.pattern({ orgId: "acme", userId: "u1" })] }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Access {
  readonly tenants?: ReadonlyArray<string> | undefined
}

/**
 * What a resolution of a call in doubt carries.
 *
 * @example
 * ```ts
 * import type { Operator } from "@agentkit/agents"
 *
 * const done: Operator.Resolution = { verdict: "markDone", digest: "ab", by: "alice", outcome: "charged" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Resolution {
  readonly verdict: "markDone" | "markFailed" | "retry"
  readonly digest: string
  readonly by: string
  readonly outcome?: string | undefined
  readonly reason?: string | undefined
}

/**
 * The errors `decide` and `resolve` fail with.
 *
 * @example
 * ```ts
 * import type { Operator } from "@agentkit/agents"
 *
 * const conflict = (error: Operator.DecideError) => error._tag === "AlreadyDecided"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export type DecideError =
  | RunNotFound
  | RunFinished
  | OtherTenant
  | RunStateCorrupt
  | RunStateVersionUnsupported
  | UnknownPending
  | DigestMismatch
  | InvalidDecision
  | ToolArgumentError
  | AlreadyDecided
  | StoreError

/**
 * The operator service's operations (DESIGN-NEXT §10).
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/agents"
 * import { Effect } from "effect"
 *
 * const waiting = Effect.flatMap(Operator.Operator, (operator) => operator.list({ status: ["suspended"], tenant: ["acme"] }))
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export interface Service {
  /** Runs by filter, a page at a time, in (`updatedAt`, `runId`) order. */
  readonly list: (
    filter?: ListFilter
  ) => Effect.Effect<
    {
      readonly runs: ReadonlyArray<RunSummary>
      readonly cursor?: string | undefined
      /** How many runs match the filter over all pages (asked for with `withTotal`). */
      readonly total?: number | undefined
    },
    StoreError
  >
  /** One run in full. */
  readonly show: (
    runId: string,
    access?: Access
  ) => Effect.Effect<RunDetail, RunNotFound | OtherTenant | RunStateCorrupt | RunStateVersionUnsupported | StoreError>
  /** Checks kind, digest and (for `edit`) the arguments, records the decision (first one wins) and audits it. */
  readonly decide: (
    rootRunId: string,
    pendingId: string,
    decision: Approval.Decision & { readonly by: string },
    access?: Access
  ) => Effect.Effect<RecordedDecision, DecideError>
  /** Asks the run's owner (or the recovery worker) to cancel the run tree; audited. */
  readonly cancel: (
    runId: string,
    by: string,
    access?: Access
  ) => Effect.Effect<void, RunNotFound | RunFinished | OtherTenant | StoreError>
  /** Decides a call in doubt: `markDone` with its outcome, `markFailed` with a reason, or `retry`. */
  readonly resolve: (
    rootRunId: string,
    pendingId: string,
    decision: Resolution,
    access?: Access
  ) => Effect.Effect<RecordedDecision, DecideError>
  /** The audit trail, a page at a time, oldest first. */
  readonly audit: (
    filter?: AuditFilter
  ) => Effect.Effect<{ readonly records: ReadonlyArray<AuditRecord>; readonly cursor?: string | undefined }, StoreError>
  /**
   * The runs written since a cursor (polling, across processes). `changes(undefined)` answers no
   * runs and the cursor of now. `runs` holds each changed run as it was written (its cost follows
   * the runs that changed, not the runs that exist).
   */
  readonly changes: (
    since: string | undefined
  ) => Effect.Effect<
    {
      readonly runIds: ReadonlyArray<string>
      readonly cursor: string
      readonly runs?: ReadonlyArray<ChangedRun> | undefined
    },
    StoreError
  >
}

/**
 * Makes the service over the stores in the context.
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/agents"
 * import { AuditStore, CheckpointStore } from "@agentkit/core"
 * import { Effect, Layer } from "effect"
 *
 * const program = Operator.make.pipe(Effect.provide(Layer.merge(CheckpointStore.memory(), AuditStore.memory())))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, CheckpointStore | AuditStore> = internal.make

/**
 * The operator service tag.
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/agents"
 * import { Effect } from "effect"
 *
 * const show = (runId: string) => Effect.flatMap(Operator.Operator, (operator) => operator.show(runId, { tenants: ["acme"] }))
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class Operator extends Context.Tag("@agentkit/agents/Operator")<Operator, Service>() {
  /** The service over the `CheckpointStore` and `AuditStore` in the context (in memory or `@agentkit/sql`). */
  static readonly layer: Layer.Layer<Operator, never, CheckpointStore | AuditStore> = Layer.effect(Operator, make)
  /** The service with fresh in-memory stores, which it also provides (tests, demos). */
  static memory(): Layer.Layer<Operator | CheckpointStore | AuditStore> {
    return Operator.layer.pipe(Layer.provideMerge(Layer.merge(CheckpointStore.memory(), AuditStore.memory())))
  }
}
