/**
 * An in-memory `Operator` (DESIGN-NEXT §10) for the console's tests, kept faithful to the
 * contract: first decision wins (a second gets `AlreadyDecided` with the winner), digests bind
 * the run path, pending id, tool fingerprint and arguments, edits are checked against the
 * recorded JSON Schema, tenants are filters, cursors are opaque and stable
 * (`updatedAt`, `runId`), `changes` is a change log. When every pending entry of a run is decided
 * the "owner" (`owner: "auto"`) applies them: the run finishes `done`, as `RunRecovery` would.
 *
 * Deleted when `Operator` lands in `@agentkit/agents` (its own tests then cover the real one).
 */
import { CanonicalJson } from "@agentkit/core"
import { Clock, Effect, Layer } from "effect"
import { check } from "../../src/internal/arguments.js"
import * as Op from "../../src/Operator.js"

export interface PlantedRun {
  readonly runId: string
  readonly agent?: string
  readonly tenant: string
  readonly threadId?: string
  readonly status?: "running" | "suspended" | "done" | "failed" | "cancelled"
  readonly requestedBy?: string
  readonly autonomy?: "auto" | "gated" | "manual"
  readonly createdAt?: number
  readonly updatedAt?: number
  readonly usage?: { readonly inputTokens: number; readonly outputTokens: number; readonly costUsd: number }
  readonly pending?: ReadonlyArray<PlantedPending>
  readonly transcript?: Op.RunDetail["transcript"]
}

export interface PlantedPending {
  readonly kind?: Op.PendingEntry["kind"]
  readonly callId?: string
  readonly tool: string
  readonly arguments: Readonly<Record<string, unknown>>
  readonly parameters?: unknown
  readonly sideEffecting?: boolean
  readonly requiresApproval?: boolean
  readonly caps?: ReadonlyArray<"private_data" | "untrusted_content" | "egress">
  readonly reasons?: ReadonlyArray<string>
}

interface Run {
  summary: Op.RunSummary
  transcript: Op.RunDetail["transcript"]
  result: unknown
  decided: Map<string, Op.RecordedDecision>
}

export const digestOf = (input: { path: string; pendingId: string; fingerprint: string; arguments: unknown }) =>
  CanonicalJson.hash({ run: input.path, pending: input.pendingId, tool: input.fingerprint, arguments: input.arguments })

const defaultParameters = {
  type: "object",
  properties: { order_id: { type: "string" }, reason: { type: "string" } },
  required: ["order_id"],
  additionalProperties: false
}

const encodeCursor = (key: readonly [number, string, "asc" | "desc"]) => Buffer.from(JSON.stringify(key)).toString("base64url")
const decodeCursor = (cursor: string, order: "asc" | "desc"): readonly [number, string] | undefined => {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    if (Array.isArray(value) && value.length === 3 && typeof value[0] === "number" && typeof value[1] === "string" && value[2] === order) {
      return [value[0], value[1]]
    }
  } catch {
    // not a cursor made here
  }
  return undefined
}
const compare = (a: { updatedAt: number; runId: string }, b: { updatedAt: number; runId: string }) =>
  a.updatedAt - b.updatedAt || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0)
const badCursor = (operation: string, cursor: string) =>
  new Op.StoreError({ operation, message: `cursor ${JSON.stringify(cursor)} is not one this store returned`, retryable: false })

export interface MemoryOperator extends Op.Service {
  /** Adds a run (a test plants what an agent would have suspended). */
  readonly plant: (run: PlantedRun) => Op.RunSummary
  /** Changes a run's status, as its owner would (and logs the change). */
  readonly setStatus: (runId: string, status: Op.RunSummary["status"]) => void
  readonly audits: ReadonlyArray<Op.AuditRecord>
  readonly layer: Layer.Layer<Op.Operator>
  /** How many times each operation was called. */
  readonly calls: Record<string, number>
}

export const make = (options: { readonly owner?: "auto" | "manual"; readonly now?: () => number } = {}): MemoryOperator => {
  const runs = new Map<string, Run>()
  const log: Array<string> = []
  const audits: Array<Op.AuditRecord> = []
  const calls: Record<string, number> = {}
  let tick = 0
  const wallNow = options.now ?? (() => Date.now())
  // Strictly increasing update times, so the (updatedAt, runId) order is total even within a ms.
  const stamp = () => (tick = Math.max(tick + 1, wallNow()))
  const count = (name: string) => (calls[name] = (calls[name] ?? 0) + 1)

  const touch = (run: Run, patch: Partial<Op.RunSummary>) => {
    run.summary = { ...run.summary, ...patch, updatedAt: stamp() }
    log.push(run.summary.runId)
  }

  const plant = (input: PlantedRun): Op.RunSummary => {
    const createdAt = input.createdAt ?? stamp()
    const pending: Array<Op.PendingEntry> = (input.pending ?? []).map((p, index) => {
      const kind = p.kind ?? "Approval"
      const id = `p-${CanonicalJson.sha256(CanonicalJson.stringify([input.runId, 0, index, p.callId ?? `c${index}`, kind])).slice(0, 16)}`
      const parameters = p.parameters ?? defaultParameters
      const facts = {
        name: p.tool,
        sideEffecting: p.sideEffecting ?? true,
        idempotent: false,
        requiresApproval: p.requiresApproval ?? true,
        caps: [...(p.caps ?? [])]
      }
      const fingerprint = CanonicalJson.hash({ schema: JSON.stringify(parameters), ...facts })
      return {
        id,
        kind,
        path: input.runId,
        call: { id: p.callId ?? `c${index}`, name: p.tool, arguments: p.arguments },
        digest: digestOf({ path: input.runId, pendingId: id, fingerprint, arguments: p.arguments }),
        reasons: [...(p.reasons ?? (kind === "InDoubt" ? ["in_doubt"] : ["requires_approval"]))],
        tool: { ...facts, fingerprint, parameters },
        createdAt
      }
    })
    const stored = input.status ?? (pending.length > 0 ? "suspended" : "done")
    const summary: Op.RunSummary = {
      runId: input.runId,
      rootRunId: input.runId,
      agent: input.agent ?? "support",
      tenant: input.tenant,
      ...(input.threadId === undefined ? {} : { threadId: input.threadId }),
      status: stored === "suspended" && pending.some((p) => p.kind === "InDoubt") ? "in_doubt" : stored,
      createdAt,
      updatedAt: input.updatedAt ?? stamp(),
      usage: input.usage ?? { inputTokens: 1200, outputTokens: 300, costUsd: 0.0042 },
      pending,
      decided: [],
      ...(input.requestedBy === undefined ? {} : { requestedBy: input.requestedBy }),
      autonomy: input.autonomy ?? "gated",
      legs: { privateData: false, untrustedContent: false, egress: false }
    }
    if (input.updatedAt !== undefined) tick = Math.max(tick, input.updatedAt)
    runs.set(input.runId, {
      summary,
      transcript: input.transcript ?? [{ role: "user", content: "cancel my order A-771" }],
      result: undefined,
      decided: new Map()
    })
    log.push(input.runId)
    return summary
  }

  const isTerminal = (status: Op.RunSummary["status"]) => status === "done" || status === "failed" || status === "cancelled"

  const record = (rootRunId: string, pendingId: string, decision: Op.Decision & { readonly by: string }, allowed: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      const run = runs.get(rootRunId)
      if (run === undefined) return yield* new Op.RunNotFound({ runId: rootRunId })
      // first writer wins: a recorded decision answers even after the owner applied it
      const first = run.decided.get(pendingId)
      if (first !== undefined) {
        return yield* new Op.AlreadyDecided({ rootRunId, pendingId, decision: CanonicalJson.stringify(first.decision), by: first.by })
      }
      const entry = run.summary.pending.find((p) => p.id === pendingId)
      if (entry === undefined) {
        return yield* new Op.UnknownPending({ runId: rootRunId, pendingId, expected: run.summary.pending.map((p) => p.id) })
      }
      const accepted = entry.kind === "InDoubt" ? ["markDone", "markFailed", "retry"] : ["approve", "reject", "edit"]
      const usable = accepted.filter((v) => allowed.includes(v))
      if (!usable.includes(decision.verdict)) {
        return yield* new Op.InvalidDecision({ runId: rootRunId, pendingId, kind: entry.kind, accepted: usable, received: decision.verdict })
      }
      if (decision.digest !== entry.digest) {
        return yield* new Op.DigestMismatch({ runId: rootRunId, pendingId, expected: entry.digest, received: decision.digest })
      }
      if (decision.verdict === "edit") {
        const problem = check(entry.tool, decision.arguments)
        if (problem !== undefined) return yield* problem
      }
      const at = yield* Clock.currentTimeMillis
      const { by, ...rest } = decision
      const recorded: Op.RecordedDecision = { rootRunId, pendingId, decision: { ...rest, by } as Op.Decision, by, at }
      run.decided.set(pendingId, recorded)
      audits.push({
        runId: entry.path,
        tenant: run.summary.tenant,
        tool: entry.call.name,
        callId: entry.call.id,
        decision: "operator",
        action: decision.verdict,
        argHash: CanonicalJson.hash(decision.verdict === "edit" ? decision.arguments : entry.call.arguments),
        by,
        ...(decision.reason === undefined ? {} : { reason: decision.reason }),
        at
      })
      const decided = [...run.decided.values()]
      if (options.owner !== "manual" && decided.length === run.summary.pending.length) {
        run.result = { output: `applied ${decided.map((d) => d.decision.verdict).join(", ")}` }
        touch(run, { status: "done", pending: [], decided })
      } else {
        touch(run, { decided })
      }
      return recorded
    })

  const service: Op.Service = {
    list: (filter) =>
      Effect.suspend(() => {
        count("list")
        const limit = Math.min(Math.max(1, Math.floor(filter.limit ?? 50)), 500)
        const order = filter.order ?? "asc"
        const after = filter.cursor === undefined ? undefined : decodeCursor(filter.cursor, order)
        if (filter.cursor !== undefined && after === undefined) return Effect.fail(badCursor("list", filter.cursor))
        const sign = order === "desc" ? -1 : 1
        const tenants = filter.tenant === undefined ? undefined : new Set(filter.tenant)
        const statuses = filter.status === undefined ? undefined : new Set(filter.status)
        const rows = [...runs.values()]
          .map((run) => run.summary)
          .filter(
            (s) =>
              (tenants === undefined || tenants.has(s.tenant)) &&
              (statuses === undefined || statuses.has(s.status)) &&
              (filter.agent === undefined || s.agent === filter.agent) &&
              (filter.tool === undefined || s.pending.some((p) => p.call.name === filter.tool)) &&
              (filter.threadId === undefined || s.threadId === filter.threadId) &&
              (filter.updatedAfter === undefined || s.updatedAt > filter.updatedAfter) &&
              (filter.updatedBefore === undefined || s.updatedAt < filter.updatedBefore) &&
              (after === undefined || sign * compare(s, { updatedAt: after[0], runId: after[1] }) > 0)
          )
          .sort((a, b) => sign * compare(a, b))
        const page = rows.slice(0, limit)
        const last = page[page.length - 1]
        return Effect.succeed(rows.length > limit && last !== undefined ? { runs: page, cursor: encodeCursor([last.updatedAt, last.runId, order]) } : { runs: page })
      }),
    show: (runId) =>
      Effect.suspend(() => {
        count("show")
        const run = runs.get(runId)
        if (run === undefined) return Effect.fail(new Op.RunNotFound({ runId }))
        return Effect.succeed({
          ...run.summary,
          transcript: run.transcript,
          children: [],
          correlationId: run.summary.rootRunId,
          ...(run.result === undefined ? {} : { result: run.result })
        })
      }),
    decide: (rootRunId, pendingId, decision) => {
      count("decide")
      return record(rootRunId, pendingId, decision, ["approve", "reject", "edit"])
    },
    resolve: (rootRunId, pendingId, decision) => {
      count("resolve")
      return record(rootRunId, pendingId, decision as Op.Decision & { readonly by: string }, ["markDone", "markFailed", "retry"])
    },
    cancel: (runId, by) =>
      Effect.gen(function* () {
        count("cancel")
        const run = runs.get(runId)
        if (run === undefined) return yield* new Op.RunNotFound({ runId })
        const status = run.summary.status
        if (status === "done" || status === "failed" || status === "cancelled") return yield* new Op.RunFinished({ runId, status })
        const at = yield* Clock.currentTimeMillis
        audits.push({ runId, tenant: run.summary.tenant, tool: "", callId: "", decision: "operator", action: "cancel", argHash: "", by, at })
        run.result = { reason: `cancelled by ${by}` }
        touch(run, { status: "cancelled", pending: [] })
      }),
    audit: (filter) =>
      Effect.suspend(() => {
        count("audit")
        const limit = Math.min(Math.max(1, Math.floor(filter.limit ?? 50)), 500)
        const start = filter.cursor === undefined ? 0 : Number.parseInt(filter.cursor, 10)
        if (!Number.isSafeInteger(start) || start < 0) return Effect.fail(badCursor("audit", filter.cursor ?? ""))
        const tenants = filter.tenant === undefined ? undefined : new Set(filter.tenant)
        const indexed = audits
          .map((record, index) => ({ record, index }))
          .filter(
            ({ record, index }) =>
              index >= start &&
              (tenants === undefined || tenants.has(record.tenant)) &&
              (filter.runId === undefined || record.runId === filter.runId || record.runId.startsWith(`${filter.runId}/`))
          )
        const page = indexed.slice(0, limit)
        const last = page[page.length - 1]
        return Effect.succeed(
          indexed.length > limit && last !== undefined
            ? { records: page.map((p) => p.record), cursor: String(last.index + 1) }
            : { records: page.map((p) => p.record) }
        )
      }),
    changes: (since) =>
      Effect.suspend(() => {
        count("changes")
        if (since === undefined) return Effect.succeed({ runIds: [], cursor: String(log.length) })
        const from = Number.parseInt(since, 10)
        if (!Number.isSafeInteger(from) || from < 0 || from > log.length) return Effect.fail(badCursor("changes", since))
        return Effect.succeed({ runIds: [...new Set(log.slice(from))], cursor: String(log.length) })
      })
  }

  return {
    ...service,
    plant,
    setStatus: (runId, status) => {
      const run = runs.get(runId)
      if (run !== undefined && !isTerminal(run.summary.status)) touch(run, { status })
    },
    audits,
    calls,
    layer: Layer.succeed(Op.Operator, service)
  }
}
