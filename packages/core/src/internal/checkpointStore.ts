/**
 * The in-memory checkpoint store. Each record is kept as an encoded entry (canonical JSON text),
 * as a SQL store keeps its rows: a corrupt entry fails the same way, and the state text comes back
 * byte for byte. An entry is decoded once per text it holds: the decoded row is kept beside the
 * text it came from (or was written as), so reads and lists decode only entries that changed
 * outside the store's own writes. Every operation is one synchronous step, so concurrent callers
 * never interleave inside one. @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { stringify } from "../CanonicalJson.js"
import type {
  CheckpointStatus,
  Lease,
  ListQuery,
  MemoryStore,
  RecordedDecision,
  RunRecord
} from "../CheckpointStore.js"
import {
  AlreadyDecided,
  LeaseHeld,
  RunExists,
  RunFinished,
  RunNotFound,
  StaleLease,
  VersionConflict
} from "../CheckpointStoreError.js"
import { CorruptEntry, StoreError } from "../StoreError.js"

const Row = Schema.Struct({
  runId: Schema.String,
  rootRunId: Schema.String,
  parentRunId: Schema.optional(Schema.String),
  agent: Schema.String,
  tenant: Schema.String,
  threadId: Schema.optional(Schema.String),
  status: Schema.Literal("running", "suspended", "done", "failed", "cancelled"),
  version: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)),
  state: Schema.String,
  result: Schema.optional(Schema.String),
  createdAt: Schema.Number,
  updatedAt: Schema.Number,
  lease: Schema.optional(Schema.Struct({ owner: Schema.String, token: Schema.Int, expiresAt: Schema.Number })),
  cancelRequested: Schema.optional(Schema.Struct({ by: Schema.String, at: Schema.Number }))
})
type Row = Schema.Schema.Type<typeof Row>

// built on the first read, not at import: making a decoder compiles its parser (import cost, issue 19)
let rowDecoder: ((input: unknown) => Either.Either<Row, ParseResult.ParseError>) | undefined
const decodeRow = (input: unknown) => {
  decodes.rows++
  return (rowDecoder ??= Schema.decodeUnknownEither(Schema.parseJson(Row)))(input)
}

/**
 * How many entries the memory stores of this module instance have decoded: a test hook (not
 * public API) that lets a test show a read decodes what changed, not what exists.
 */
export const decodes = { rows: 0 }

const toRecord = (row: Row): RunRecord => ({
  runId: row.runId,
  rootRunId: row.rootRunId,
  parentRunId: row.parentRunId,
  agent: row.agent,
  tenant: row.tenant,
  threadId: row.threadId,
  status: row.status,
  version: row.version,
  state: row.state,
  result: row.result,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
  lease: row.lease,
  cancelRequested: row.cancelRequested
})

const isTerminal = (status: CheckpointStatus): status is "done" | "failed" | "cancelled" =>
  status === "done" || status === "failed" || status === "cancelled"

const live = (row: Row, now: number): boolean => row.lease !== undefined && row.lease.expiresAt > now

const leaseOf = (row: Row): Lease => ({
  rootRunId: row.runId,
  owner: row.lease!.owner,
  token: row.lease!.token,
  expiresAt: row.lease!.expiresAt
})

const badTtl = (operation: string, ttlMs: unknown): StoreError | undefined =>
  typeof ttlMs === "number" && Number.isFinite(ttlMs) && ttlMs > 0
    ? undefined
    : new StoreError({
      operation,
      message: `ttlMs must be a positive number of milliseconds; got ${String(ttlMs)}`,
      retryable: false
    })

/** The cursor of a page: the sort key of its last record. */
const encodeCursor = (row: Row, order: "asc" | "desc"): string =>
  Buffer.from(JSON.stringify(order === "asc" ? [row.updatedAt, row.runId] : [row.updatedAt, row.runId, "desc"]))
    .toString("base64url")

const decodeCursor = (cursor: string, order: "asc" | "desc"): readonly [number, string] | undefined => {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    if (
      Array.isArray(parsed) &&
      parsed.length === (order === "asc" ? 2 : 3) &&
      (order === "asc" || parsed[2] === "desc") &&
      typeof parsed[0] === "number" &&
      typeof parsed[1] === "string"
    ) {
      return [parsed[0], parsed[1]]
    }
  } catch {
    // fall through: not a cursor this store made
  }
  return undefined
}

/** Sort order of `list`: `updatedAt`, then `runId` (code units: what a SQL `ORDER BY` on text gives for ASCII ids). */
const compareRows = (
  a: { readonly updatedAt: number; readonly runId: string },
  b: { readonly updatedAt: number; readonly runId: string }
): number =>
  a.updatedAt !== b.updatedAt ? a.updatedAt - b.updatedAt : a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0

/** Whether a record passes a list query's filters. */
const matches = (query: ListQuery, r: Row): boolean =>
  (query.status === undefined || r.status === query.status) &&
  (query.agent === undefined || r.agent === query.agent) &&
  (query.tenant === undefined || r.tenant === query.tenant) &&
  (query.threadId === undefined || r.threadId === query.threadId) &&
  (query.rootOnly !== true || r.runId === r.rootRunId) &&
  (query.leaseExpiredAt === undefined || (r.runId === r.rootRunId && !live(r, query.leaseExpiredAt))) &&
  (query.updatedBefore === undefined || r.updatedAt < query.updatedBefore) &&
  (query.updatedAfter === undefined || r.updatedAt > query.updatedAfter) &&
  (query.rootRunId === undefined || r.rootRunId === query.rootRunId)

/** Thrown inside one store step and turned into the step's typed failure. */
class Refused {
  constructor(readonly error: unknown) {}
}
const refuse = (error: unknown): never => {
  throw new Refused(error)
}

/** Runs one store operation as a single synchronous step; `refuse` inside it fails the step. */
const step = <A, E>(body: (now: number) => A): Effect.Effect<A, E> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.suspend(() => {
      try {
        return Effect.succeed(body(now))
      } catch (thrown) {
        if (thrown instanceof Refused) return Effect.fail(thrown.error as E)
        throw thrown
      }
    }))

export const makeMemory = (): MemoryStore => {
  const entries = new Map<string, unknown>()
  // the row each entry's text decodes to, keyed by that exact text (a planted entry misses it)
  const decoded = new Map<string, { readonly raw: string; readonly row: Row }>()
  const decisionsByRoot = new Map<string, Array<RecordedDecision>>()

  const read = (runId: string): Row | undefined => {
    if (!entries.has(runId)) return undefined
    const raw = entries.get(runId)
    if (typeof raw !== "string") {
      return refuse(
        new CorruptEntry({ store: "checkpoints", key: runId, detail: `expected an encoded record; got ${typeof raw}` })
      )
    }
    const known = decoded.get(runId)
    if (known !== undefined && known.raw === raw) return known.row
    const result = decodeRow(raw)
    if (Either.isLeft(result)) {
      return refuse(
        new CorruptEntry({
          store: "checkpoints",
          key: runId,
          detail: ParseResult.TreeFormatter.formatErrorSync(result.left)
        })
      )
    }
    if (result.right.runId !== runId) {
      return refuse(
        new CorruptEntry({ store: "checkpoints", key: runId, detail: `it holds run '${result.right.runId}'` })
      )
    }
    decoded.set(runId, { raw, row: result.right })
    return result.right
  }
  const readFound = (runId: string): Row => read(runId) ?? refuse(new RunNotFound({ runId }))
  const write = (row: Row): void => {
    const raw = stringify(row)
    entries.set(row.runId, raw)
    decoded.set(row.runId, { raw, row })
  }
  const refuseFinished = (row: Row): void => {
    if (isTerminal(row.status)) refuse(new RunFinished({ runId: row.runId, status: row.status }))
  }

  /** The record a lease-carrying write targets, once the lease is checked to be its root's live lease. */
  const leased = (lease: Lease, runId: string, now: number): Row => {
    const row = readFound(runId)
    refuseFinished(row)
    const root = row.runId === row.rootRunId ? row : readFound(row.rootRunId)
    if (row.rootRunId !== lease.rootRunId || !live(root, now) || root.lease!.token !== lease.token) {
      refuse(new StaleLease({ runId, token: lease.token }))
    }
    return row
  }
  const checkVersion = (row: Row, expected: number): void => {
    if (row.version !== expected) refuse(new VersionConflict({ runId: row.runId, expected, actual: row.version }))
  }

  const store: MemoryStore = {
    create: (run, request) =>
      step((now) => {
        const isRoot = run.runId === run.rootRunId
        if (read(run.runId) !== undefined) refuse(new RunExists({ runId: run.runId }))
        let lease: Lease
        if (isRoot) {
          if (!("ttlMs" in request)) {
            return refuse(
              new StoreError({
                operation: "create",
                message: "a top-level run is created with { owner, ttlMs }, not an existing lease",
                retryable: false
              })
            )
          }
          const invalid = badTtl("create", request.ttlMs)
          if (invalid !== undefined) refuse(invalid)
          lease = { rootRunId: run.runId, owner: request.owner, token: 1, expiresAt: now + request.ttlMs }
        } else {
          if (!("token" in request)) {
            return refuse(
              new StoreError({
                operation: "create",
                message: "a sub-run's record is created under its root's lease",
                retryable: false
              })
            )
          }
          const root = readFound(run.rootRunId)
          refuseFinished(root)
          if (request.rootRunId !== run.rootRunId || !live(root, now) || root.lease!.token !== request.token) {
            refuse(new StaleLease({ runId: run.runId, token: request.token }))
          }
          lease = request
        }
        write({
          runId: run.runId,
          rootRunId: run.rootRunId,
          parentRunId: run.parentRunId,
          agent: run.agent,
          tenant: run.tenant,
          threadId: run.threadId,
          status: "running",
          version: 1,
          state: run.state,
          createdAt: now,
          updatedAt: now,
          lease: isRoot ? { owner: lease.owner, token: lease.token, expiresAt: lease.expiresAt } : undefined
        })
        return { lease, version: 1 }
      }),

    claim: (rootRunId, request) =>
      step((now) => {
        const invalid = badTtl("claim", request.ttlMs)
        if (invalid !== undefined) refuse(invalid)
        const row = readFound(rootRunId)
        if (row.runId !== row.rootRunId) refuse(new RunNotFound({ runId: rootRunId }))
        refuseFinished(row)
        if (live(row, now)) {
          refuse(new LeaseHeld({ runId: rootRunId, owner: row.lease!.owner, expiresAt: row.lease!.expiresAt }))
        }
        const next: Row = {
          ...row,
          lease: { owner: request.owner, token: (row.lease?.token ?? 0) + 1, expiresAt: now + request.ttlMs }
        }
        write(next)
        return { lease: leaseOf(next), record: toRecord(next) }
      }),

    save: (lease, request) =>
      step((now) => {
        const row = leased(lease, request.runId, now)
        checkVersion(row, request.expectedVersion)
        const version = request.expectedVersion + 1
        write({ ...row, status: request.status, state: request.state, version, updatedAt: now })
        return version
      }),

    heartbeat: (lease, ttlMs) =>
      step((now) => {
        const invalid = badTtl("heartbeat", ttlMs)
        if (invalid !== undefined) refuse(invalid)
        const row = read(lease.rootRunId)
        if (row === undefined || isTerminal(row.status) || !live(row, now) || row.lease!.token !== lease.token) {
          return refuse(new StaleLease({ runId: lease.rootRunId, token: lease.token }))
        }
        const next: Row = { ...row, lease: { ...row.lease!, expiresAt: now + ttlMs } }
        write(next)
        return { lease: leaseOf(next), cancelRequested: row.cancelRequested }
      }),

    release: (lease) =>
      step((now) => {
        const row = read(lease.rootRunId)
        if (row === undefined || !live(row, now) || row.lease!.token !== lease.token) return
        write({ ...row, lease: { ...row.lease!, expiresAt: now } })
      }),

    finish: (lease, request) =>
      step((now) => {
        const row = leased(lease, request.runId, now)
        checkVersion(row, request.expectedVersion)
        write({
          ...row,
          status: request.status,
          result: request.result,
          version: request.expectedVersion + 1,
          updatedAt: now,
          // the lease of a top-level run ends with it
          lease: row.lease === undefined ? undefined : { ...row.lease, expiresAt: Math.min(row.lease.expiresAt, now) }
        })
      }),

    load: (runId) =>
      step(() => {
        const row = read(runId)
        return row === undefined ? Option.none() : Option.some(toRecord(row))
      }),

    list: (query: ListQuery = {}) =>
      step(() => {
        const limit = query.limit ?? 100
        if (!Number.isInteger(limit) || limit < 1) {
          refuse(
            new StoreError({
              operation: "list",
              message: `limit must be a positive integer; got ${String(limit)}`,
              retryable: false
            })
          )
        }
        const order = query.order ?? "asc"
        if (order !== "asc" && order !== "desc") {
          refuse(
            new StoreError({
              operation: "list",
              message: `order must be asc or desc; got ${JSON.stringify(order)}`,
              retryable: false
            })
          )
        }
        const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, order)
        if (query.cursor !== undefined && after === undefined) {
          refuse(
            new StoreError({
              operation: "list",
              message: `cursor ${JSON.stringify(query.cursor)} is not one this store returned`,
              retryable: false
            })
          )
        }
        const rows: Array<Row> = []
        for (const runId of entries.keys()) {
          const r = read(runId)!
          if (!matches(query, r)) continue
          if (after !== undefined) {
            const sign = compareRows(r, { updatedAt: after[0], runId: after[1] })
            if (order === "asc" ? sign <= 0 : sign >= 0) continue
          }
          rows.push(r)
        }
        rows.sort(order === "asc" ? compareRows : (a, b) => compareRows(b, a))
        const page = rows.slice(0, limit)
        return {
          records: page.map(toRecord),
          cursor: rows.length > limit ? encodeCursor(page[page.length - 1]!, order) : undefined
        }
      }),

    count: (query: ListQuery = {}) =>
      step(() => {
        let count = 0
        for (const runId of entries.keys()) if (matches(query, read(runId)!)) count++
        return count
      }),

    decide: (rootRunId, pendingId, decision) =>
      step((now) => {
        refuseFinished(readFound(rootRunId))
        const recorded = decisionsByRoot.get(rootRunId) ?? []
        const first = recorded.find((entry) => entry.pendingId === pendingId)
        if (first !== undefined) {
          refuse(new AlreadyDecided({ rootRunId, pendingId, decision: first.decision, by: first.by }))
        }
        const entry: RecordedDecision = { rootRunId, pendingId, decision: decision.decision, by: decision.by, at: now }
        recorded.push(entry)
        decisionsByRoot.set(rootRunId, recorded)
        return entry
      }),

    decisions: (rootRunId) => Effect.sync(() => [...(decisionsByRoot.get(rootRunId) ?? [])]),

    requestCancel: (rootRunId, by) =>
      step((now) => {
        const row = readFound(rootRunId)
        refuseFinished(row)
        if (row.cancelRequested === undefined) write({ ...row, cancelRequested: { by, at: now } })
      }),

    prune: ({ finishedBefore }) =>
      step(() => {
        let pruned = 0
        for (const runId of [...entries.keys()]) {
          const r = read(runId)!
          if (isTerminal(r.status) && r.updatedAt < finishedBefore) {
            entries.delete(runId)
            decoded.delete(runId)
            if (r.runId === r.rootRunId) decisionsByRoot.delete(runId)
            pruned++
          }
        }
        return pruned
      }),

    unsafePlant: (runId, raw) => {
      entries.set(runId, raw)
    },

    get size() {
      return entries.size
    }
  }
  return store
}
