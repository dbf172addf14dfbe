/**
 * The real operator service (`Operator` from `@agentkit/agents`) over the in-memory stores, with
 * what the console's tests need around it: `plant` writes run records as an agent would have
 * left them (a `RunState` with its pending entries, digests made by `Approval`), the store's
 * clock ticks strictly (so the (`updatedAt`, `runId`) order follows the planting order),
 * `setStatus` moves a run as its owner would, and with `owner: "auto"` a run whose every pending
 * entry is decided is finished `done` at once (what `RunRecovery` does in an app). `calls` counts
 * the operations the console asked for; `audits` is the audit store's records.
 */
import { Approval, Operator, RunState } from "@agentkit/agents"
import { AuditStore, CanonicalJson, CheckpointStore } from "@agentkit/core"
import type { Message } from "@agentkit/core"
import { Clock, Duration, Effect, Layer } from "effect"

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
  readonly transcript?: ReadonlyArray<Message.Message>
}

export interface PlantedPending {
  readonly kind?: Approval.PendingKind
  readonly callId?: string
  readonly tool: string
  readonly arguments: Readonly<Record<string, unknown>>
  readonly parameters?: unknown
  readonly sideEffecting?: boolean
  readonly requiresApproval?: boolean
  readonly caps?: ReadonlyArray<"private_data" | "untrusted_content" | "egress">
  readonly reasons?: ReadonlyArray<string>
}

const defaultParameters = {
  type: "object",
  properties: { order_id: { type: "string" }, reason: { type: "string" } },
  required: ["order_id"],
  additionalProperties: false
}

export interface MemoryOperator extends Operator.Service {
  /** Adds a run (a test plants what an agent would have suspended). */
  readonly plant: (run: PlantedRun) => Operator.RunSummary
  /** Changes a run's status, as its owner would. */
  readonly setStatus: (runId: string, status: Operator.RunSummary["status"]) => void
  readonly audits: ReadonlyArray<AuditStore.AuditRecord>
  readonly layer: Layer.Layer<Operator.Operator>
  /** How many times each operation was called. */
  readonly calls: Record<string, number>
  /** The checkpoint store the runs are planted in. */
  readonly checkpoints: CheckpointStore.MemoryStore
}

export const make = (
  options: { readonly owner?: "auto" | "manual"; readonly now?: () => number } = {}
): MemoryOperator => {
  const checkpoints = CheckpointStore.makeMemory()
  const audit = AuditStore.makeMemory()
  const calls: Record<string, number> = {}
  const count = (name: string) => (calls[name] = (calls[name] ?? 0) + 1)
  let tick = 0
  const wallNow = options.now ?? (() => Date.now())
  // strictly increasing store times, so the (updatedAt, runId) order is total even within a ms
  let pinned: number | undefined
  const stamp = () => {
    if (pinned !== undefined) return pinned
    tick = Math.max(tick + 1, wallNow())
    return tick
  }
  const clock: Clock.Clock = {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: stamp,
    unsafeCurrentTimeNanos: () => BigInt(stamp()) * 1_000_000n,
    currentTimeMillis: Effect.sync(stamp),
    currentTimeNanos: Effect.sync(() => BigInt(stamp()) * 1_000_000n),
    sleep: (duration) => Effect.sleep(Duration.toMillis(duration)).pipe(Effect.withClock(Clock.make()))
  }
  const ticking = <A, E>(effect: Effect.Effect<A, E>) => Effect.withClock(effect, clock)
  const at = <A, E>(time: number | undefined, effect: Effect.Effect<A, E>): A => {
    pinned = time
    try {
      return Effect.runSync(ticking(effect))
    } finally {
      pinned = undefined
    }
  }
  const service = Effect.runSync(
    Operator.make.pipe(Effect.provide(Layer.merge(CheckpointStore.layer(checkpoints), AuditStore.layer(audit))))
  )
  const ownerLease = { owner: "the run's owner", ttlMs: 60_000 }

  const plant = (input: PlantedRun): Operator.RunSummary => {
    const createdAt = input.createdAt ?? stamp()
    const pending: Array<Approval.PendingEntry> = (input.pending ?? []).map((p, index) => {
      const kind = p.kind ?? "Approval"
      const call = { id: p.callId ?? `c${index}`, name: p.tool, arguments: p.arguments }
      return Approval.makeEntry({
        kind,
        path: input.runId,
        iteration: 0,
        index,
        call,
        tool: {
          name: p.tool,
          schema: { parameters: p.parameters ?? defaultParameters },
          sideEffecting: p.sideEffecting ?? true,
          idempotent: false,
          requiresApproval: p.requiresApproval ?? true,
          caps: [...(p.caps ?? [])]
        },
        reasons: p.reasons ?? (kind === "InDoubt" ? ["in_doubt"] : ["requires_approval"]),
        createdAt,
        ...(kind === "InDoubt" ? { request: { key: `${input.runId}/t0/c${index}`, claimedAt: createdAt } } : {})
      })
    })
    const usage = input.usage ?? { inputTokens: 1200, outputTokens: 300, costUsd: 0.0042 }
    const spent = {
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      costNanos: Math.round(usage.costUsd * 1e9)
    }
    const status = input.status ?? (pending.length > 0 ? "suspended" : "done")
    const state: RunState.RunState = {
      version: 2,
      runId: input.runId,
      agent: input.agent ?? "support",
      cognition: "react",
      phase: status === "suspended" ? "suspended" : "model",
      iteration: 0,
      transcript: input.transcript ?? [{ role: "user", content: "cancel my order A-771" }],
      usage: spent,
      treeUsage: spent,
      turn: { completed: [] },
      pending: status === "suspended" ? pending : [],
      legs: { privateData: false, untrustedContent: false, egress: false },
      budget: {
        modelCalls: 1,
        toolCalls: 0,
        tokens: 0,
        costNanos: spent.costNanos,
        inFlightModelCalls: 0,
        inFlightToolCalls: 0,
        reservedNanos: 0,
        reservedTokens: 0
      },
      recoveries: 0,
      context: {
        scope: input.requestedBy === undefined ? {} : { userId: input.requestedBy },
        autonomy: input.autonomy ?? "gated",
        limits: {},
        correlationId: input.runId,
        ...(input.threadId === undefined ? {} : { threadId: input.threadId })
      }
    }
    const text = RunState.encode(state)
    const run = {
      runId: input.runId,
      rootRunId: input.runId,
      agent: state.agent,
      tenant: input.tenant,
      threadId: input.threadId,
      state: text
    }
    const { lease } = at(createdAt, checkpoints.create(run, ownerLease))
    if (input.updatedAt !== undefined) tick = Math.max(tick, input.updatedAt)
    const last = input.updatedAt
    if (status === "suspended") {
      at(
        last,
        Effect.zipRight(
          checkpoints.save(lease, { runId: input.runId, expectedVersion: 1, status, state: text }),
          checkpoints.release(lease)
        )
      )
    } else if (status === "running") at(last, checkpoints.release(lease))
    else {
      const result = CanonicalJson.stringify(
        status === "done" ? { output: "done", transcript: state.transcript } : { reason: `${status} by the test` }
      )
      at(last, checkpoints.finish(lease, { runId: input.runId, expectedVersion: 1, status, result }))
    }
    // the summary as list shows it (built here: a lookup per plant would scan every record)
    const record = at(undefined, checkpoints.load(input.runId))
    const stored = record._tag === "Some" ? record.value : undefined
    const shown = status === "suspended" && pending.some((p) => p.kind === "InDoubt") ? "in_doubt" : status
    return {
      runId: input.runId,
      rootRunId: input.runId,
      agent: state.agent,
      tenant: input.tenant,
      ...(input.threadId === undefined ? {} : { threadId: input.threadId }),
      status: shown,
      createdAt: stored?.createdAt ?? createdAt,
      updatedAt: stored?.updatedAt ?? createdAt,
      usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, costUsd: spent.costNanos / 1e9 },
      pending: state.pending,
      decided: [],
      ...(input.requestedBy === undefined ? {} : { requestedBy: input.requestedBy }),
      autonomy: state.context.autonomy,
      legs: { ...state.legs }
    }
  }

  /** The owner applies a run's decisions once every entry has one (`owner: "auto"`). */
  const applyIfDecided = (rootRunId: string) =>
    Effect.gen(function*() {
      if (options.owner === "manual") return
      const run = yield* Effect.orDie(service.show(rootRunId))
      if (run.status !== "suspended" && run.status !== "in_doubt") return
      if (!run.pending.every((entry) => run.decided.some((d) => d.pendingId === entry.id))) return
      const claimed = yield* Effect.orDie(checkpoints.claim(rootRunId, ownerLease))
      const verdicts = run.pending.map((entry) => run.decided.find((d) => d.pendingId === entry.id)!.decision.verdict)
      yield* Effect.orDie(
        checkpoints.finish(claimed.lease, {
          runId: rootRunId,
          expectedVersion: claimed.record.version,
          status: "done",
          result: CanonicalJson.stringify({ output: `applied ${verdicts.join(", ")}` })
        })
      )
    })

  const counted: Operator.Service = {
    list: (filter) => ticking(Effect.suspend(() => (count("list"), service.list(filter)))),
    show: (runId, access) => ticking(Effect.suspend(() => (count("show"), service.show(runId, access)))),
    decide: (rootRunId, pendingId, decision, access) =>
      ticking(
        Effect.suspend(() => (count("decide"),
          Effect.tap(service.decide(rootRunId, pendingId, decision, access), () => applyIfDecided(rootRunId)))
        )
      ),
    resolve: (rootRunId, pendingId, decision, access) =>
      ticking(
        Effect.suspend(
          () => (count("resolve"),
            Effect.tap(service.resolve(rootRunId, pendingId, decision, access), () => applyIfDecided(rootRunId)))
        )
      ),
    cancel: (runId, by, access) =>
      ticking(
        Effect.suspend(() => {
          count("cancel")
          // the owner sees the request at its next heartbeat and finishes the run cancelled
          return Effect.tap(service.cancel(runId, by, access), () =>
            Effect.gen(function*() {
              const claimed = yield* Effect.orDie(checkpoints.claim(runId, ownerLease))
              yield* Effect.orDie(
                checkpoints.finish(claimed.lease, {
                  runId,
                  expectedVersion: claimed.record.version,
                  status: "cancelled",
                  result: CanonicalJson.stringify({ reason: `Cancelled: cancelled by ${by}` })
                })
              )
            }))
        })
      ),
    audit: (filter) => ticking(Effect.suspend(() => (count("audit"), service.audit(filter)))),
    changes: (since) => ticking(Effect.suspend(() => (count("changes"), service.changes(since))))
  }

  const setStatus = (runId: string, status: Operator.RunSummary["status"]) =>
    at(
      undefined,
      Effect.gen(function*() {
        const claimed = yield* Effect.either(checkpoints.claim(runId, ownerLease))
        if (claimed._tag === "Left") return
        const { lease, record } = claimed.right
        if (status === "done" || status === "failed" || status === "cancelled") {
          yield* Effect.orDie(
            checkpoints.finish(lease, {
              runId,
              expectedVersion: record.version,
              status,
              result: CanonicalJson.stringify({ reason: status })
            })
          )
        } else {
          yield* Effect.orDie(
            checkpoints.save(lease, {
              runId,
              expectedVersion: record.version,
              status: status === "running" ? "running" : "suspended",
              state: record.state
            })
          )
          yield* checkpoints.release(lease)
        }
      })
    )

  return {
    ...counted,
    plant,
    setStatus,
    get audits() {
      return audit.records
    },
    calls,
    checkpoints,
    layer: Layer.succeed(Operator.Operator, counted)
  }
}
