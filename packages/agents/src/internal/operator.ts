/**
 * The operator service over the store ports: listing with its cursor, the tenant check, the
 * decision checks and the audit trail.
 */
import {
  AlreadyDecided,
  AuditStore,
  CanonicalJson,
  CheckpointStore,
  PythonText,
  RunNotFound,
  Scope,
  StoreError
} from "@agentkit/core"
import type { CorruptEntry } from "@agentkit/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Approval from "../Approval.js"
import { DigestMismatch, InvalidDecision, OtherTenant, UnknownPending } from "../Errors.js"
import type { Access, ChangedRun, ListFilter, Service } from "../Operator.js"
import type { AuditRecord, RecordedDecision, RunSummary, ScopeParts } from "../OperatorView.js"
import { RunStatus } from "../OperatorView.js"
import * as RunState from "../RunState.js"
import { check } from "./arguments.js"
import { lazy } from "./lazy.js"
import { beyond, decodeListCursor, decodeMark, encodeListCursor, encodeMark, written } from "./operatorCursor.js"

const maxLimit = 500
/** How many decoded run states the service keeps. */
const maxStates = 4096

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
const decodeResultUsage = lazy(() =>
  Schema.decodeUnknownOption(Schema.parseJson(Schema.Struct({ usage: RunState.UsageState })))
)
const decodeStoredResult = lazy(() => Schema.decodeUnknownOption(Schema.parseJson(Schema.Unknown)))

const describe = (value: unknown): string => {
  const text = typeof value === "string" ? PythonText.repr(value) : CanonicalJson.stringify(value ?? null)
  return text.length > 200 ? `${text.slice(0, 200)}…` : text
}

/** What a summary needs of a record's state; a state that does not decode shows with nothing pending. */
/** A tenant key's parts, when it is a scope's store key. */
const scopeOf = (tenant: string): { readonly scope?: ScopeParts } => {
  const fields = Scope.fieldsOf(tenant)
  return fields === undefined ? {} : { scope: fields }
}

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
  // a finished run's usage is its result's: the last checkpoint was taken before its last model call
  const finished = record.status === "done" && record.result !== undefined
    ? Option.getOrUndefined(decodeResultUsage(record.result))?.usage
    : undefined
  return {
    runId: record.runId,
    rootRunId: record.rootRunId,
    agent: record.agent,
    tenant: record.tenant,
    ...scopeOf(record.tenant),
    ...(record.threadId === undefined ? {} : { threadId: record.threadId }),
    status,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    usage: finished === undefined
      ? {
        inputTokens: usage?.inputTokens ?? 0,
        outputTokens: usage?.outputTokens ?? 0,
        costUsd: (usage?.costNanos ?? 0) / 1e9
      }
      : { inputTokens: finished.inputTokens, outputTokens: finished.outputTokens, costUsd: finished.costNanos / 1e9 },
    pending,
    // decisions are recorded on the run tree: the root shows them all
    decided: record.runId === record.rootRunId
      ? decided
      : decided.filter((d) => pending.some((entry) => entry.id === d.pendingId)),
    ...(state?.context.scope.userId === undefined ? {} : { requestedBy: state.context.scope.userId }),
    ...(state === undefined ? {} : { autonomy: state.context.autonomy, legs: { ...state.legs } })
  }
}

/** Makes the service over the stores in the context. */
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

  // decoded states by run version: a record's state text never changes without its version, so a
  // list or a change decodes only the runs written since it was last read (bounded, oldest dropped)
  const states = new Map<string, RunState.RunState>()
  const stateOf = (record: CheckpointStore.RunRecord) => {
    const key = `${record.runId}@${record.version}`
    const known = states.get(key)
    if (known !== undefined) return Effect.succeed(Option.some(known))
    return Effect.tap(Effect.option(RunState.decode(record.runId, record.state)), (decoded) => {
      if (Option.isNone(decoded)) return
      if (states.size >= maxStates) states.delete(states.keys().next().value!)
      states.set(key, decoded.value)
    })
  }

  const summaryOf = (record: CheckpointStore.RunRecord) =>
    Effect.gen(function*() {
      const state = Option.getOrUndefined(yield* stateOf(record))
      return summarize(record, state, yield* decidedOf(record.rootRunId))
    })

  const loadVisible = (operation: string, runId: string, access: Access | undefined) =>
    Effect.gen(function*() {
      const found = yield* orStore(operation, store.load(runId))
      if (Option.isNone(found)) return yield* new RunNotFound({ runId })
      if (access?.tenants !== undefined && !Scope.coveredBy(access.tenants, found.value.tenant)) {
        return yield* new OtherTenant({ runId })
      }
      return found.value
    })

  const list: Service["list"] = (filter = {}) =>
    Effect.gen(function*() {
      const limit = yield* checkLimit("operator.list", filter.limit)
      if (filter.tenant !== undefined && filter.tenant.length === 0) {
        return filter.withTotal === true ? { runs: [], total: 0 } : { runs: [] }
      }
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
        ...(filter.tenant !== undefined && filter.tenant.length === 1 && Scope.isExact(filter.tenant[0]!)
          ? { tenant: filter.tenant[0] }
          : {}),
        ...(filter.agent === undefined ? {} : { agent: filter.agent }),
        ...(filter.threadId === undefined ? {} : { threadId: filter.threadId }),
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
      const total = filter.withTotal === true ? yield* countOf(filter, query, wanted, storeStatuses) : undefined
      const withTotal = <A extends object>(answer: A) => (total === undefined ? answer : { ...answer, total })
      // a filter the store answers whole reads one store page a little longer than the operator's
      // page; one filtered here reads full store pages
      const storeAnswers = filter.tool === undefined &&
        (storeStatuses === undefined ||
          (storeStatuses.size === 1 && !(wanted!.has("suspended") !== wanted!.has("in_doubt") &&
            storeStatuses.has("suspended")))) &&
        (filter.tenant === undefined || query.tenant !== undefined)
      const pageSize = storeAnswers ? Math.min(maxLimit, limit + 1) : maxLimit
      const runs: Array<RunSummary> = []
      // the operator's cursor is the store page it stopped in and the last record it consumed
      // there, so a page read in full serves several operator pages (filters applied here)
      let page = start.page
      let after = start.after
      for (;;) {
        const read = yield* orStore("operator.list", store.list({ ...query, cursor: page, limit: pageSize }))
        for (const record of read.records) {
          if (after !== undefined && !beyond(record, after, order)) continue
          after = [record.updatedAt, record.runId]
          if (filter.tenant !== undefined && !Scope.coveredBy(filter.tenant, record.tenant)) continue
          if (filter.threadId !== undefined && record.threadId !== filter.threadId) continue
          if (storeStatuses !== undefined && !storeStatuses.has(record.status)) continue
          const summary = yield* summaryOf(record)
          if (wanted !== undefined && !wanted.has(summary.status)) continue
          if (filter.tool !== undefined && !summary.pending.some((entry) => entry.call.name === filter.tool)) continue
          runs.push(summary)
          if (runs.length === limit) {
            const last = read.records[read.records.length - 1]!
            const more = last.runId !== record.runId || read.cursor !== undefined
            return withTotal(more ? { runs, cursor: encodeListCursor(page, after, order) } : { runs })
          }
        }
        if (read.cursor === undefined) return withTotal({ runs })
        page = read.cursor
      }
    })

  /**
   * How many runs a filter matches. The store counts when the filter is all its own (statuses it
   * keeps, exact tenants); otherwise the records are read and filtered here.
   */
  const countOf = (
    filter: ListFilter,
    query: CheckpointStore.ListQuery,
    wanted: ReadonlySet<RunStatus> | undefined,
    storeStatuses: ReadonlySet<string> | undefined
  ): Effect.Effect<number, StoreError> =>
    Effect.gen(function*() {
      const { cursor: _cursor, limit: _limit, order: _order, ...base } = query
      // suspended and in doubt are one store status: the store can count them only together
      const splitsSuspended = wanted !== undefined && wanted.has("suspended") !== wanted.has("in_doubt") &&
        (wanted.has("suspended") || wanted.has("in_doubt"))
      const tenants = filter.tenant === undefined ? [undefined] : filter.tenant
      const count = store.count
      if (
        count !== undefined && filter.tool === undefined && !splitsSuspended &&
        tenants.every((tenant) => tenant === undefined || Scope.isExact(tenant))
      ) {
        let n = 0
        for (const status of storeStatuses === undefined ? [undefined] : [...storeStatuses]) {
          for (const tenant of new Set(tenants)) {
            n += yield* orStore(
              "operator.list",
              count({
                ...base,
                ...(status === undefined ? {} : { status: status as CheckpointStore.Status }),
                ...(tenant === undefined ? {} : { tenant })
              })
            )
          }
        }
        return n
      }
      let n = 0
      let cursor: string | undefined
      do {
        const read = yield* orStore("operator.list", store.list({ ...base, cursor, limit: maxLimit }))
        for (const record of read.records) {
          if (filter.tenant !== undefined && !Scope.coveredBy(filter.tenant, record.tenant)) continue
          if (storeStatuses !== undefined && !storeStatuses.has(record.status)) continue
          if (splitsSuspended || filter.tool !== undefined) {
            const summary = summarize(record, Option.getOrUndefined(yield* stateOf(record)), [])
            if (wanted !== undefined && !wanted.has(summary.status)) continue
            if (filter.tool !== undefined && !summary.pending.some((entry) => entry.call.name === filter.tool)) continue
          }
          n++
        }
        cursor = read.cursor
      } while (cursor !== undefined)
      return n
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
          ...(filter.tenant !== undefined && filter.tenant.length === 1 && Scope.isExact(filter.tenant[0]!)
            ? { tenant: filter.tenant[0] }
            : {}),
          cursor,
          limit: limit - records.length
        })
        for (const entry of page.records) {
          if (filter.tenant !== undefined && !Scope.coveredBy(filter.tenant, entry.tenant)) continue
          records.push({
            runId: entry.runId,
            tenant: entry.tenant,
            ...scopeOf(entry.tenant),
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
      const latest = new Map<string, CheckpointStore.RunRecord>()
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
          latest.set(run.runId, run)
        }
        cursor = page.cursor
      } while (cursor !== undefined && latest.size < 5000)
      const runs: Array<ChangedRun> = []
      for (const record of latest.values()) {
        const summary = summarize(record, Option.getOrUndefined(yield* stateOf(record)), [])
        runs.push({
          runId: record.runId,
          rootRunId: record.rootRunId,
          tenant: record.tenant,
          status: summary.status,
          updatedAt: record.updatedAt,
          pending: summary.pending.length
        })
      }
      return { runIds: [...latest.keys()], runs, cursor: encodeMark({ at, seen: [...atNewest] }) }
    })

  return { list, show, decide, cancel, resolve, audit, changes }
})
