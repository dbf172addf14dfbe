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
 * Tenant scoping is the caller's: pass the tenants (scope `storeKey`s) an operator may see to
 * `list` and `audit`, and as `{ tenants }` to the run operations, which then refuse another
 * tenant's run with `OtherTenant` before reading or writing anything of it.
 *
 * @since 0.1.0
 */
import {
  AlreadyDecided,
  AuditStore,
  CanonicalJson,
  CheckpointStore,
  Message,
  PythonText,
  RunNotFound,
  StoreError
} from "@agentkit/core"
import type { CorruptEntry, RunFinished, ToolArgumentError } from "@agentkit/core"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Approval from "./Approval.js"
import { DigestMismatch, InvalidDecision, OtherTenant, UnknownPending } from "./Errors.js"
import type { RunStateCorrupt, RunStateVersionUnsupported } from "./Errors.js"
import { check } from "./internal/arguments.js"
import { lazy } from "./internal/lazy.js"
import * as RunState from "./RunState.js"

/**
 * The statuses `list` filters by: the store's, plus `in_doubt` (a suspended run with an `InDoubt`
 * entry).
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/agents"
 * import { Schema } from "effect"
 *
 * Schema.is(Operator.RunStatus)("in_doubt") // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const RunStatus = Schema.Literal("suspended", "in_doubt", "running", "done", "failed", "cancelled")

/**
 * A run's status as the operator sees it.
 *
 * @example
 * ```ts
 * import type { Operator } from "@agentkit/agents"
 *
 * const waiting = (status: Operator.RunStatus) => status === "suspended" || status === "in_doubt"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type RunStatus = Schema.Schema.Type<typeof RunStatus>

/**
 * A decision as the store recorded it: the first for its pending entry, decoded.
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/agents"
 * import { Schema } from "effect"
 *
 * Schema.is(Operator.RecordedDecision)({ rootRunId: "r", pendingId: "p", decision: { verdict: "approve", digest: "d" }, by: "alice", at: 0 }) // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const RecordedDecision = Schema.Struct({
  rootRunId: Schema.String,
  pendingId: Schema.String,
  decision: Approval.Decision,
  by: Schema.String,
  at: Schema.Number
})

/**
 * A recorded decision.
 *
 * @example
 * ```ts
 * import type { Operator } from "@agentkit/agents"
 *
 * const who = (recorded: Operator.RecordedDecision) => `${recorded.decision.verdict} by ${recorded.by}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface RecordedDecision extends Schema.Schema.Type<typeof RecordedDecision> {}

/**
 * One run as a list shows it: who started it (`requestedBy`, the scope's user), its autonomy tier
 * and trifecta legs (why a call waits), usage so far, what it waits on and what was decided.
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/agents"
 * import { Schema } from "effect"
 *
 * const decode = Schema.decodeUnknownSync(Operator.RunSummary)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const RunSummary = Schema.Struct({
  runId: Schema.String,
  rootRunId: Schema.String,
  agent: Schema.String,
  tenant: Schema.String,
  threadId: Schema.optional(Schema.String),
  status: RunStatus,
  createdAt: Schema.Number,
  updatedAt: Schema.Number,
  usage: Schema.Struct({ inputTokens: Schema.Number, outputTokens: Schema.Number, costUsd: Schema.Number }),
  pending: Schema.Array(Approval.PendingEntry),
  decided: Schema.Array(RecordedDecision),
  /** Who started the run (the run context's `scope.userId`): the "a requester may not approve" rule reads it. */
  requestedBy: Schema.optional(Schema.String),
  /** The run's autonomy tier. */
  autonomy: Schema.optional(Schema.Literal("auto", "gated", "manual")),
  /** The lethal-trifecta legs the run has touched so far. */
  legs: Schema.optional(
    Schema.Struct({ privateData: Schema.Boolean, untrustedContent: Schema.Boolean, egress: Schema.Boolean })
  )
})

/**
 * One run as a list shows it.
 *
 * @example
 * ```ts
 * import type { Operator } from "@agentkit/agents"
 *
 * const cost = (run: Operator.RunSummary) => `$${run.usage.costUsd.toFixed(4)}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface RunSummary extends Schema.Schema.Type<typeof RunSummary> {}

/**
 * One run in full: its transcript, sub-runs, result (the `AgentResult` of a finished run, or
 * `{ reason }` of a failed or cancelled one) and `correlationId` (the key its spans are stored
 * under).
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/agents"
 * import { Schema } from "effect"
 *
 * const decode = Schema.decodeUnknownSync(Operator.RunDetail)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const RunDetail = Schema.Struct({
  ...RunSummary.fields,
  transcript: Schema.Array(Message.Message),
  children: Schema.Array(RunSummary),
  result: Schema.optional(Schema.Unknown),
  correlationId: Schema.optional(Schema.String)
})

/**
 * One run in full.
 *
 * @example
 * ```ts
 * import type { Operator } from "@agentkit/agents"
 *
 * const turns = (run: Operator.RunDetail) => run.transcript.length
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface RunDetail extends Schema.Schema.Type<typeof RunDetail> {}

/**
 * One audit record (core `AuditStore.AuditRecord`) as a schema, for adapters that serve it.
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/agents"
 * import { Schema } from "effect"
 *
 * const decode = Schema.decodeUnknownSync(Operator.AuditRecord)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const AuditRecord = Schema.Struct({
  runId: Schema.String,
  tenant: Schema.String,
  tool: Schema.String,
  callId: Schema.String,
  decision: Schema.Literal("executed", "deduplicated", "failed", "denied", "in_doubt", "operator"),
  /** For an `operator` record: what the operator did. */
  action: Schema.optional(Schema.Literal("approve", "reject", "edit", "markDone", "markFailed", "retry", "cancel")),
  argHash: Schema.String,
  resultHash: Schema.optional(Schema.String),
  by: Schema.optional(Schema.String),
  reason: Schema.optional(Schema.String),
  at: Schema.Number
})

/**
 * One audit record.
 *
 * @example
 * ```ts
 * import type { Operator } from "@agentkit/agents"
 *
 * const line = (record: Operator.AuditRecord) => `${record.runId} ${record.tool}: ${record.action ?? record.decision}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface AuditRecord extends Schema.Schema.Type<typeof AuditRecord> {}

/**
 * The filters of `list`. `tenant` is the set of tenant keys the caller may see (an empty set
 * sees nothing); `tool` matches runs waiting on a call of that tool.
 *
 * @example
 * ```ts
 * import type { Operator } from "@agentkit/agents"
 *
 * const inbox: Operator.ListFilter = { status: ["suspended", "in_doubt"], tenant: ["acme"], limit: 50 }
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
 * What the run operations take: the tenants the operator may see (omitted: every tenant).
 *
 * @example
 * ```ts
 * import type { Operator } from "@agentkit/agents"
 *
 * const scoped: Operator.Access = { tenants: ["acme"] }
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
  ) => Effect.Effect<{ readonly runs: ReadonlyArray<RunSummary>; readonly cursor?: string | undefined }, StoreError>
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
   * runs and the cursor of now.
   */
  readonly changes: (
    since: string | undefined
  ) => Effect.Effect<{ readonly runIds: ReadonlyArray<string>; readonly cursor: string }, StoreError>
}

const maxLimit = 500

const storeFailure = (operation: string, error: { readonly message: string }): StoreError =>
  new StoreError({ operation, message: error.message, retryable: false })

/** A corrupt record surfaces as the store failing (the port's `CorruptEntry` is not an operator outcome). */
const orStore = <A, E>(
  operation: string,
  effect: Effect.Effect<A, E | CorruptEntry>
): Effect.Effect<A, Exclude<E, CorruptEntry> | StoreError> =>
  Effect.catchIf(
    effect,
    (error): error is CorruptEntry =>
      typeof error === "object" && error !== null && (error as { _tag?: unknown })._tag === "CorruptEntry",
    (error) => Effect.fail(storeFailure(operation, error))
  ) as Effect.Effect<A, Exclude<E, CorruptEntry> | StoreError>

const badInput = (operation: string, message: string) =>
  Effect.fail(new StoreError({ operation, message, retryable: false }))

const checkLimit = (operation: string, limit: number | undefined): Effect.Effect<number, StoreError> => {
  const value = limit ?? 50
  return Number.isSafeInteger(value) && value >= 1 && value <= maxLimit
    ? Effect.succeed(value)
    : badInput(operation, `limit must be an integer from 1 to ${maxLimit}; got ${String(limit)}`)
}

const decodeDecision = lazy(() => Schema.decodeUnknownOption(Approval.Decision))
const decodeStoredResult = lazy(() => Schema.decodeUnknownOption(Schema.parseJson(Schema.Unknown)))

const describe = (value: unknown): string => {
  const text = typeof value === "string" ? PythonText.repr(value) : CanonicalJson.stringify(value ?? null)
  return text.length > 200 ? `${text.slice(0, 200)}…` : text
}

/** The list cursor: the store page it stopped in, the sort key of the last record consumed, the order. */
const encodeListCursor = (page: string | undefined, after: readonly [number, string], order: "asc" | "desc"): string =>
  Buffer.from(JSON.stringify(["list", page ?? null, after[0], after[1], order])).toString("base64url")
const decodeListCursor = (
  cursor: string,
  order: "asc" | "desc"
): { readonly page: string | undefined; readonly after: readonly [number, string] | undefined } | undefined => {
  if (cursor.length > 8192) return undefined
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    if (
      Array.isArray(parsed) &&
      parsed.length === 5 &&
      parsed[0] === "list" &&
      (parsed[1] === null || typeof parsed[1] === "string") &&
      Number.isSafeInteger(parsed[2]) &&
      typeof parsed[3] === "string" &&
      parsed[4] === order
    ) {
      return { page: parsed[1] === null ? undefined : (parsed[1] as string), after: [parsed[2] as number, parsed[3]] }
    }
  } catch {
    // not a cursor made here
  }
  return undefined
}
/** Whether a record comes after a sort key in the list's order (`updatedAt`, then `runId` in code units). */
const beyond = (
  record: CheckpointStore.RunRecord,
  after: readonly [number, string],
  order: "asc" | "desc"
): boolean => {
  const sign = record.updatedAt !== after[0]
    ? record.updatedAt - after[0]
    : record.runId < after[1]
    ? -1
    : record.runId > after[1]
    ? 1
    : 0
  return order === "asc" ? sign > 0 : sign < 0
}

/** The changes cursor: the newest write time seen and the run versions written at that time. */
interface ChangeMark {
  readonly at: number
  readonly seen: ReadonlyArray<string>
}
const encodeMark = (mark: ChangeMark): string =>
  Buffer.from(JSON.stringify(["changes", mark.at, mark.seen])).toString("base64url")
const decodeMark = (cursor: string): ChangeMark | undefined => {
  if (cursor.length > 65536) return undefined
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    if (
      Array.isArray(parsed) &&
      parsed.length === 3 &&
      parsed[0] === "changes" &&
      Number.isSafeInteger(parsed[1]) &&
      Array.isArray(parsed[2]) &&
      parsed[2].every((s) => typeof s === "string")
    ) {
      return { at: parsed[1] as number, seen: parsed[2] as Array<string> }
    }
  } catch {
    // not a cursor made here
  }
  return undefined
}
const written = (record: CheckpointStore.RunRecord): string => `${record.runId}@${record.version}`

/** What a summary needs of a record's state; a state that does not decode shows with nothing pending. */
const summarize = (
  record: CheckpointStore.RunRecord,
  state: RunState.RunState | undefined,
  decided: ReadonlyArray<RecordedDecision>
): RunSummary => {
  const pending = record.status === "suspended" || record.status === "running" ? (state?.pending ?? []) : []
  const status: RunStatus = record.status === "suspended" && pending.some((entry) => entry.kind === "InDoubt")
    ? "in_doubt"
    : record.status
  const usage = state?.usage
  return {
    runId: record.runId,
    rootRunId: record.rootRunId,
    agent: record.agent,
    tenant: record.tenant,
    ...(record.threadId === undefined ? {} : { threadId: record.threadId }),
    status,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    usage: {
      inputTokens: usage?.inputTokens ?? 0,
      outputTokens: usage?.outputTokens ?? 0,
      costUsd: (usage?.costNanos ?? 0) / 1e9
    },
    pending,
    // decisions are recorded on the run tree: the root shows them all
    decided: record.runId === record.rootRunId
      ? decided
      : decided.filter((d) => pending.some((entry) => entry.id === d.pendingId)),
    ...(state?.context.scope.userId === undefined ? {} : { requestedBy: state.context.scope.userId }),
    ...(state === undefined ? {} : { autonomy: state.context.autonomy, legs: { ...state.legs } })
  }
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
export const make: Effect.Effect<Service, never, CheckpointStore | AuditStore> = Effect.gen(function*() {
  const store = yield* CheckpointStore
  const auditStore = yield* AuditStore

  const decidedOf = (rootRunId: string) =>
    Effect.map(
      orStore("operator.decisions", store.decisions(rootRunId)),
      (recorded) =>
        recorded.flatMap((r): Array<RecordedDecision> => {
          const decoded = Either.flatMap(
            Either.try(() => JSON.parse(r.decision) as unknown),
            (value) => Either.fromOption(decodeDecision(value), () => "not a decision")
          )
          return Either.isRight(decoded)
            ? [{ rootRunId: r.rootRunId, pendingId: r.pendingId, decision: decoded.right, by: r.by ?? "", at: r.at }]
            : []
        })
    )

  const stateOf = (record: CheckpointStore.RunRecord) => Effect.option(RunState.decode(record.runId, record.state))

  const summaryOf = (record: CheckpointStore.RunRecord) =>
    Effect.gen(function*() {
      const state = Option.getOrUndefined(yield* stateOf(record))
      return summarize(record, state, yield* decidedOf(record.rootRunId))
    })

  const loadVisible = (operation: string, runId: string, access: Access | undefined) =>
    Effect.gen(function*() {
      const found = yield* orStore(operation, store.load(runId))
      if (Option.isNone(found)) return yield* new RunNotFound({ runId })
      if (access?.tenants !== undefined && !access.tenants.includes(found.value.tenant)) {
        return yield* new OtherTenant({ runId })
      }
      return found.value
    })

  const list: Service["list"] = (filter = {}) =>
    Effect.gen(function*() {
      const limit = yield* checkLimit("operator.list", filter.limit)
      if (filter.tenant !== undefined && filter.tenant.length === 0) return { runs: [] }
      const wanted = filter.status === undefined || filter.status.length === 0 ? undefined : new Set(filter.status)
      if (wanted !== undefined) {
        for (const status of wanted) {
          if (!RunStatus.literals.includes(status)) {
            return yield* badInput(
              "operator.list",
              `status must be among ${RunStatus.literals.join(", ")}; got ${describe(status)}`
            )
          }
        }
      }
      // push what the port can filter down to it; the rest is filtered here
      const storeStatuses = wanted === undefined
        ? undefined
        : new Set([...wanted].map((s) => (s === "in_doubt" ? "suspended" : s)))
      const query: CheckpointStore.ListQuery = {
        ...(storeStatuses !== undefined && storeStatuses.size === 1
          ? { status: [...storeStatuses][0] as CheckpointStore.Status }
          : {}),
        ...(filter.tenant !== undefined && filter.tenant.length === 1 ? { tenant: filter.tenant[0] } : {}),
        ...(filter.agent === undefined ? {} : { agent: filter.agent }),
        ...(filter.updatedAfter === undefined ? {} : { updatedAfter: filter.updatedAfter }),
        ...(filter.updatedBefore === undefined ? {} : { updatedBefore: filter.updatedBefore }),
        order: filter.order ?? "asc"
      }
      const order = query.order ?? "asc"
      const start = filter.cursor === undefined
        ? { page: undefined, after: undefined }
        : decodeListCursor(filter.cursor, order)
      if (start === undefined) {
        return yield* badInput(
          "operator.list",
          `cursor ${JSON.stringify(filter.cursor)} is not one this store returned`
        )
      }
      const runs: Array<RunSummary> = []
      // the operator's cursor is the store page it stopped in and the last record it consumed
      // there, so a page read in full serves several operator pages (filters applied here)
      let page = start.page
      let after = start.after
      for (;;) {
        const read = yield* orStore("operator.list", store.list({ ...query, cursor: page, limit: maxLimit }))
        for (const record of read.records) {
          if (after !== undefined && !beyond(record, after, order)) continue
          after = [record.updatedAt, record.runId]
          if (filter.tenant !== undefined && !filter.tenant.includes(record.tenant)) continue
          if (filter.threadId !== undefined && record.threadId !== filter.threadId) continue
          if (storeStatuses !== undefined && !storeStatuses.has(record.status)) continue
          const summary = yield* summaryOf(record)
          if (wanted !== undefined && !wanted.has(summary.status)) continue
          if (filter.tool !== undefined && !summary.pending.some((entry) => entry.call.name === filter.tool)) continue
          runs.push(summary)
          if (runs.length === limit) {
            const last = read.records[read.records.length - 1]!
            const more = last.runId !== record.runId || read.cursor !== undefined
            return more ? { runs, cursor: encodeListCursor(page, after, order) } : { runs }
          }
        }
        if (read.cursor === undefined) return { runs }
        page = read.cursor
      }
    })

  const show: Service["show"] = (runId, access) =>
    Effect.gen(function*() {
      const record = yield* loadVisible("operator.show", runId, access)
      const state = yield* RunState.decode(record.runId, record.state)
      const decided = yield* decidedOf(record.rootRunId)
      const tree = yield* listTree(record.rootRunId)
      const children: Array<RunSummary> = []
      for (const child of tree) {
        if (child.parentRunId === record.runId) children.push(yield* summaryOf(child))
      }
      const result = record.result === undefined ? Option.none() : decodeStoredResult(record.result)
      return {
        ...summarize(record, state, decided),
        transcript: state.transcript,
        children,
        ...(Option.isSome(result) ? { result: result.value } : {}),
        correlationId: state.context.correlationId
      }
    })

  const listTree = (rootRunId: string) =>
    Effect.gen(function*() {
      const records: Array<CheckpointStore.RunRecord> = []
      let cursor: string | undefined
      do {
        const page = yield* orStore("operator.show", store.list({ rootRunId, cursor, limit: maxLimit }))
        for (const record of page.records) records.push(record)
        cursor = page.cursor
      } while (cursor !== undefined)
      return records
    })

  const record = (rootRunId: string, pendingId: string, raw: unknown, by: string, access: Access | undefined) =>
    Effect.gen(function*() {
      if (typeof by !== "string" || by.trim() === "") {
        return yield* badInput("operator.decide", `a decision names the operator who made it (by); got ${describe(by)}`)
      }
      const run = yield* loadVisible("operator.decide", rootRunId, access)
      if (run.runId !== run.rootRunId) return yield* new RunNotFound({ runId: rootRunId })
      const state = yield* RunState.decode(run.runId, run.state)
      const pending = run.status === "suspended" || run.status === "running" ? state.pending : []
      const entry = pending.find((candidate) => candidate.id === pendingId)
      if (entry === undefined) {
        // decided already and applied since: the conflict names who decided
        const first = (yield* orStore("operator.decide", store.decisions(rootRunId))).find((d) =>
          d.pendingId === pendingId
        )
        if (first !== undefined) {
          return yield* new AlreadyDecided({ rootRunId, pendingId, decision: first.decision, by: first.by })
        }
        return yield* new UnknownPending({ runId: rootRunId, pendingId, expected: pending.map((p) => p.id) })
      }
      const accepted = Approval.verdictsFor(entry.kind)
      const decoded = decodeDecision(raw)
      if (Option.isNone(decoded) || !accepted.includes(decoded.value.verdict)) {
        return yield* new InvalidDecision({
          runId: rootRunId,
          pendingId,
          kind: entry.kind,
          accepted,
          received: describe(raw)
        })
      }
      const decision = decoded.value
      if (decision.digest !== entry.digest) {
        return yield* new DigestMismatch({
          runId: rootRunId,
          pendingId,
          expected: entry.digest,
          received: decision.digest
        })
      }
      if (decision.verdict === "edit") {
        const problem = yield* check(entry.tool, decision.arguments)
        if (problem !== undefined) return yield* Effect.fail(problem)
      }
      const stored = { ...decision, by }
      const recorded = yield* orStore(
        "operator.decide",
        store.decide(rootRunId, pendingId, { decision: CanonicalJson.stringify(stored), by })
      )
      yield* auditStore.append({
        runId: entry.path,
        tenant: run.tenant,
        tool: entry.call.name,
        callId: entry.call.id,
        decision: "operator",
        action: decision.verdict,
        by,
        ...(decision.reason === undefined ? {} : { reason: decision.reason }),
        argHash: CanonicalJson.hash(decision.verdict === "edit" ? decision.arguments : entry.call.arguments),
        at: recorded.at
      })
      return { rootRunId, pendingId, decision: stored, by, at: recorded.at } satisfies RecordedDecision
    })

  const decide: Service["decide"] = (rootRunId, pendingId, decision, access) =>
    record(rootRunId, pendingId, decision, decision.by, access)

  const resolve: Service["resolve"] = (rootRunId, pendingId, decision, access) =>
    Effect.gen(function*() {
      if (decision.verdict !== "markDone" && decision.verdict !== "markFailed" && decision.verdict !== "retry") {
        const run = yield* loadVisible("operator.resolve", rootRunId, access)
        return yield* new InvalidDecision({
          runId: run.runId,
          pendingId,
          kind: "InDoubt",
          accepted: Approval.verdictsFor("InDoubt"),
          received: describe(decision.verdict)
        })
      }
      return yield* record(rootRunId, pendingId, decision, decision.by, access)
    })

  const cancel: Service["cancel"] = (runId, by, access) =>
    Effect.gen(function*() {
      if (typeof by !== "string" || by.trim() === "") {
        return yield* badInput(
          "operator.cancel",
          `a cancel names the operator who asked for it (by); got ${describe(by)}`
        )
      }
      const run = yield* loadVisible("operator.cancel", runId, access)
      yield* orStore("operator.cancel", store.requestCancel(run.rootRunId, by))
      const at = yield* Clock.currentTimeMillis
      yield* auditStore.append({
        runId: run.rootRunId,
        tenant: run.tenant,
        tool: "",
        callId: "",
        decision: "operator",
        action: "cancel",
        by,
        argHash: "",
        at
      })
    })

  const audit: Service["audit"] = (filter = {}) =>
    Effect.gen(function*() {
      const limit = yield* checkLimit("operator.audit", filter.limit)
      if (filter.tenant !== undefined && filter.tenant.length === 0) return { records: [] }
      const records: Array<AuditRecord> = []
      let cursor = filter.cursor
      while (records.length < limit) {
        const page = yield* auditStore.list({
          ...(filter.runId === undefined ? {} : { runId: filter.runId }),
          ...(filter.tenant !== undefined && filter.tenant.length === 1 ? { tenant: filter.tenant[0] } : {}),
          cursor,
          limit: limit - records.length
        })
        for (const entry of page.records) {
          if (filter.tenant !== undefined && !filter.tenant.includes(entry.tenant)) continue
          records.push({
            runId: entry.runId,
            tenant: entry.tenant,
            tool: entry.tool,
            callId: entry.callId,
            decision: entry.decision,
            ...(entry.action === undefined ? {} : { action: entry.action }),
            argHash: entry.argHash,
            ...(entry.resultHash === undefined ? {} : { resultHash: entry.resultHash }),
            ...(entry.by === undefined ? {} : { by: entry.by }),
            ...(entry.reason === undefined ? {} : { reason: entry.reason }),
            at: entry.at
          })
        }
        cursor = page.cursor
        if (cursor === undefined) break
      }
      return cursor === undefined ? { records } : { records, cursor }
    })

  const changes: Service["changes"] = (since) =>
    Effect.gen(function*() {
      if (since === undefined) {
        const newest = yield* orStore("operator.changes", store.list({ order: "desc", limit: 1 }))
        const top = newest.records[0]
        if (top === undefined) return { runIds: [], cursor: encodeMark({ at: -1, seen: [] }) }
        const atTop = yield* orStore(
          "operator.changes",
          store.list({ updatedAfter: top.updatedAt - 1, limit: maxLimit })
        )
        return {
          runIds: [],
          cursor: encodeMark({
            at: top.updatedAt,
            seen: atTop.records.filter((r) => r.updatedAt === top.updatedAt).map(written)
          })
        }
      }
      const mark = decodeMark(since)
      if (mark === undefined) {
        return yield* badInput("operator.changes", `cursor ${describe(since)} is not one changes returned`)
      }
      const seen = new Set(mark.seen)
      const runIds: Array<string> = []
      let at = mark.at
      let atNewest = new Set(mark.seen)
      let cursor: string | undefined
      // everything written at or after the mark's time, less what the mark saw at that time
      do {
        const page = yield* orStore(
          "operator.changes",
          store.list({ updatedAfter: mark.at - 1, cursor, limit: maxLimit })
        )
        for (const run of page.records) {
          if (run.updatedAt === mark.at && seen.has(written(run))) {
            continue
          }
          if (run.updatedAt > at) {
            at = run.updatedAt
            atNewest = new Set()
          }
          if (run.updatedAt === at) atNewest.add(written(run))
          if (!runIds.includes(run.runId)) runIds.push(run.runId)
        }
        cursor = page.cursor
      } while (cursor !== undefined && runIds.length < 5000)
      return { runIds, cursor: encodeMark({ at, seen: [...atNewest] }) }
    })

  return { list, show, decide, cancel, resolve, audit, changes }
})

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
