/**
 * The operator service (DESIGN-NEXT §10) over the in-memory stores, with real agent runs: a gated
 * run suspends, the operator lists and shows it, records a decision by pending id (checked for
 * kind, digest, edited arguments and tenant before anything is written), concurrent deciders
 * race (exactly one wins, the others learn who), the decision is audited with the operator and
 * applied by the recovery worker in "another process", cancels reach the run, and `changes`
 * reports what was written. The SQL stores run the same service in `@agentkit/sql`'s tests.
 */
import { Agent, Approval, Operator, ReActCognition, RunRecovery } from "@agentkit/agents"
import { AuditStore, CheckpointStore, Scope } from "@agentkit/core"
import { FakeLLM, Fixture, makeTestCtx, Seed, Turn } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Schema } from "effect"

const TASK = "Please cancel order A-771, I ordered it twice."
const CANCEL = Fixture.toolCall("c1", "cancel_order", { order_id: "A-771", reason: "duplicate order" })

const world = () => {
  const cancelled: Array<string> = []
  const agent = Agent.make({
    name: "support",
    model: Seed.MODEL,
    prompt: Seed.PROMPT,
    cognition: ReActCognition.make({
      tools: [
        Tool.make("cancel_order", {
          description: "Cancel an order. This really cancels it; there is no undo.",
          parameters: { order_id: Schema.String, reason: Schema.String },
          sideEffecting: true,
          handler: ({ order_id, reason }) => {
            cancelled.push(`${order_id}:${reason}`)
            return `order ${order_id} cancelled (${reason})`
          }
        })
      ]
    })
  })
  return { agent, cancelled }
}

const makeStores = () => ({ checkpoints: CheckpointStore.makeMemory(), audit: AuditStore.makeMemory() })
type Stores = ReturnType<typeof makeStores>

const storesLayer = (stores: Stores) =>
  Layer.merge(CheckpointStore.layer(stores.checkpoints), AuditStore.layer(stores.audit))
const operatorOf = (stores: Stores) => Effect.provide(Operator.make, storesLayer(stores))

/** One "process" that starts a gated run and suspends on the cancel. */
const suspend = (stores: Stores, runId: string, options: { readonly orgId?: string; readonly userId?: string } = {}) =>
  world().agent.run(TASK).pipe(
    Effect.provide(
      Layer.merge(
        storesLayer(stores),
        makeTestCtx({
          llm: FakeLLM.script([Turn({ toolCalls: [CANCEL] })]),
          autonomy: "gated",
          runId,
          scope: { orgId: options.orgId ?? "acme", userId: options.userId ?? "requester" }
        })
      )
    )
  )

/** Another "process": the recovery worker applies recorded decisions. */
const recover = (stores: Stores, finalText = "Cancelled order A-771.") => {
  const w = world()
  return RunRecovery.runOnce({ agents: [w.agent] }).pipe(
    Effect.provide(
      Layer.merge(storesLayer(stores), makeTestCtx({ llm: FakeLLM.script([Turn({ content: finalText })]) }))
    ),
    Effect.map((report) => ({ report, cancelled: w.cancelled }))
  )
}

describe("Operator", () => {
  it.effect("lists a suspended run with what it waits on and why, and shows it in full", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      const result = yield* suspend(stores, "run-1")
      expect(result.stopReason).toBe("awaiting_approval")
      const operator = yield* operatorOf(stores)
      const { runs, cursor } = yield* operator.list({ status: ["suspended"] })
      expect(cursor).toBeUndefined()
      expect(runs).toHaveLength(1)
      const run = runs[0]!
      expect(run).toMatchObject({
        runId: "run-1",
        rootRunId: "run-1",
        agent: "support",
        status: "suspended",
        requestedBy: "requester",
        autonomy: "gated"
      })
      expect(run.legs).toEqual({ privateData: false, untrustedContent: false, egress: false })
      expect(run.pending.map((entry) => [entry.kind, entry.call, entry.reasons])).toEqual([["Approval", CANCEL, [
        "autonomy_gated"
      ]]])
      expect(run.pending).toEqual(result.suspended!.pending)
      expect(run.decided).toEqual([])
      expect(Schema.is(Operator.RunSummary)(run)).toBe(true)
      const detail = yield* operator.show("run-1")
      expect(detail.transcript.map((m) => m.role)).toEqual(["system", "user", "assistant"])
      expect(detail.correlationId).toBe("test-run") // makeTestCtx fixes the correlation id
      expect(detail.children).toEqual([])
      expect(Schema.is(Operator.RunDetail)(detail)).toBe(true)
      expect(yield* operator.list({ status: ["in_doubt", "done"] })).toEqual({ runs: [] })
      expect((yield* operator.list({ tool: "cancel_order" })).runs.map((r) => r.runId)).toEqual(["run-1"])
      expect((yield* operator.list({ tool: "lookup_order" })).runs).toEqual([])
      expect((yield* operator.list({ tenant: [] })).runs).toEqual([])
      expect((yield* operator.list({ tenant: ["someone-else"] })).runs).toEqual([])
      expect((yield* operator.list({ tenant: ["someone-else", run.tenant] })).runs.map((r) => r.runId)).toEqual([
        "run-1"
      ])
    }))

  it.effect("refuses bad decisions with typed errors, records nothing, and the run stays suspended", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      const entry = (yield* suspend(stores, "run-1")).suspended!.pending[0]!
      const operator = yield* operatorOf(stores)
      const tenant = (yield* operator.show("run-1")).tenant
      const refused = <A, E>(effect: Effect.Effect<A, E>) => Effect.flip(effect)

      expect(
        yield* refused(operator.decide("no-such-run", entry.id, { ...Approval.approve(entry.digest), by: "alice" }))
      ).toMatchObject({
        _tag: "RunNotFound",
        runId: "no-such-run"
      })
      const unknown = yield* refused(
        operator.decide("run-1", "p-0000000000000000", { ...Approval.approve(entry.digest), by: "alice" })
      )
      expect(unknown).toMatchObject({ _tag: "UnknownPending", expected: [entry.id] })
      const stale = yield* refused(
        operator.decide("run-1", entry.id, { ...Approval.approve("0".repeat(64)), by: "alice" })
      )
      expect(stale).toMatchObject({ _tag: "DigestMismatch", expected: entry.digest, received: "0".repeat(64) })
      expect(stale.message).toContain("other arguments")
      expect(
        yield* refused(operator.decide("run-1", entry.id, { ...Approval.markDone(entry.digest, "done"), by: "alice" }))
      ).toMatchObject({
        _tag: "InvalidDecision",
        accepted: ["approve", "reject", "edit"]
      })
      expect(
        yield* refused(operator.resolve("run-1", entry.id, { verdict: "retry", digest: entry.digest, by: "alice" }))
      ).toMatchObject({
        _tag: "InvalidDecision"
      })
      const hostile = {
        verdict: "approve",
        digest: entry.digest,
        by: "alice",
        extra: "<script>alert(1)</script>"
      } as unknown as Approval.Decision & {
        by: string
      }
      // unknown fields are dropped by the schema; what is stored is the decision alone
      const badEdit = yield* refused(
        operator.decide("run-1", entry.id, { ...Approval.edit(entry.digest, { order_id: 42 }), by: "alice" })
      )
      expect(badEdit).toMatchObject({ _tag: "ToolArgumentError", toolName: "cancel_order", missing: ["reason"] })
      const typeEdit = yield* refused(
        operator.decide("run-1", entry.id, {
          ...Approval.edit(entry.digest, { order_id: ["A-1"], reason: "x" }),
          by: "alice"
        })
      )
      expect(typeEdit).toMatchObject({ _tag: "ToolArgumentError", invalid: ["order_id: must be string"] })
      expect(
        yield* refused(
          operator.decide("run-1", entry.id, { ...Approval.approve(entry.digest), by: "alice" }, { tenants: ["other"] })
        )
      ).toMatchObject({
        _tag: "OtherTenant",
        runId: "run-1"
      })
      expect(yield* refused(operator.show("run-1", { tenants: ["other"] }))).toMatchObject({ _tag: "OtherTenant" })
      expect(yield* refused(operator.cancel("run-1", "mallory", { tenants: ["other"] }))).toMatchObject({
        _tag: "OtherTenant"
      })
      expect(yield* refused(operator.decide("run-1", entry.id, { ...Approval.approve(entry.digest), by: " " })))
        .toMatchObject({ _tag: "StoreError" })

      expect(yield* stores.checkpoints.decisions("run-1")).toEqual([])
      expect(stores.audit.records).toEqual([])
      expect((yield* operator.show("run-1")).status).toBe("suspended")

      const ok = yield* operator.decide("run-1", entry.id, hostile, { tenants: [tenant] })
      expect(ok.decision).toEqual({ verdict: "approve", digest: entry.digest, by: "alice" })
    }))

  it.effect("scope patterns: an organisation's grant covers its users' runs, never a look-alike's", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      const u1 = (yield* suspend(stores, "run-u1", { orgId: "acme", userId: "u1" })).suspended!.pending[0]!
      const other = (yield* suspend(stores, "run-acme2", { orgId: "acme2", userId: "u1" })).suspended!.pending[0]!
      yield* suspend(stores, "run-globex", { orgId: "globex", userId: "acme" })
      const operator = yield* operatorOf(stores)
      const acme = { tenants: [Scope.pattern({ orgId: "acme" })] }
      const listed = yield* operator.list({ tenant: acme.tenants })
      expect(listed.runs.map((run) => [run.runId, run.scope])).toEqual([["run-u1", { orgId: "acme", userId: "u1" }]])
      expect((yield* operator.show("run-u1", acme)).scope).toEqual({ orgId: "acme", userId: "u1" })
      for (const runId of ["run-acme2", "run-globex"]) {
        expect(yield* Effect.flip(operator.show(runId, acme))).toMatchObject({ _tag: "OtherTenant" })
        expect(yield* Effect.flip(operator.cancel(runId, "olga", acme))).toMatchObject({ _tag: "OtherTenant" })
      }
      expect(
        yield* Effect.flip(
          operator.decide("run-acme2", other.id, { ...Approval.approve(other.digest), by: "olga" }, acme)
        )
      ).toMatchObject({ _tag: "OtherTenant" })
      yield* operator.decide("run-u1", u1.id, { ...Approval.approve(u1.digest), by: "olga" }, acme)
      const trail = yield* operator.audit({ tenant: acme.tenants })
      expect(trail.records.map((record) => [record.runId, record.action, record.scope])).toEqual([
        ["run-u1", "approve", { orgId: "acme", userId: "u1" }]
      ])
      // an exact key still covers that tenant only
      const exact = Scope.make({ orgId: "acme" }).storeKey
      expect((yield* operator.list({ tenant: [exact] })).runs).toEqual([])
      expect(yield* Effect.flip(operator.show("run-u1", { tenants: [exact] }))).toMatchObject({ _tag: "OtherTenant" })
    }))

  it.effect("totals over every page, by the store's count or by reading, and a thread filtered in the store", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      yield* suspend(stores, "run-a1", { orgId: "acme", userId: "u1" })
      yield* suspend(stores, "run-a2", { orgId: "acme", userId: "u2" })
      yield* suspend(stores, "run-g1", { orgId: "globex", userId: "u1" })
      const operator = yield* operatorOf(stores)
      const acme = [Scope.pattern({ orgId: "acme" })]
      const u1 = Scope.make({ orgId: "acme", userId: "u1" }).storeKey
      const waiting = ["suspended", "in_doubt"] as const
      // a pattern: read and filtered here; exact keys: counted by the store (one count each)
      expect((yield* operator.list({ status: waiting, tenant: acme, limit: 1, withTotal: true })).total).toBe(2)
      expect((yield* operator.list({ status: waiting, tenant: [u1], withTotal: true })).total).toBe(1)
      expect((yield* operator.list({ withTotal: true })).total).toBe(3)
      expect((yield* operator.list({ status: ["in_doubt"], withTotal: true })).total).toBe(0)
      expect((yield* operator.list({ tool: "cancel_order", withTotal: true })).total).toBe(3)
      expect((yield* operator.list({ tool: "refund", withTotal: true })).total).toBe(0)
      expect((yield* operator.list({})).total).toBeUndefined()
      expect(yield* operator.list({ tenant: [], withTotal: true })).toEqual({ runs: [], total: 0 })
      // the page is the same with or without the total
      const page = yield* operator.list({ status: waiting, tenant: acme, limit: 1, withTotal: true })
      expect(page.runs.map((run) => run.runId)).toEqual(["run-a1"])
      expect(
        (yield* operator.list({ status: waiting, tenant: acme, limit: 1, cursor: page.cursor })).runs.map((r) =>
          r.runId
        )
      ).toEqual(["run-a2"])
      expect(yield* operator.list({ threadId: "no-such-thread", withTotal: true })).toEqual({ runs: [], total: 0 })
    }))

  it.effect("concurrent deciders: exactly one wins, every other gets AlreadyDecided naming the winner; one audit record", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      const entry = (yield* suspend(stores, "run-1")).suspended!.pending[0]!
      const operator = yield* operatorOf(stores)
      const outcomes = yield* Effect.forEach(
        Array.from({ length: 20 }, (_, i) => i),
        (i) =>
          Effect.either(
            i % 2 === 0
              ? operator.decide("run-1", entry.id, { ...Approval.approve(entry.digest), by: `op-${i}` })
              : operator.decide("run-1", entry.id, { ...Approval.reject(entry.digest, "no"), by: `op-${i}` })
          ),
        { concurrency: "unbounded" }
      )
      const winners = outcomes.filter(Either.isRight).map((o) => o.right)
      expect(winners).toHaveLength(1)
      const winner = winners[0]!
      for (const lost of outcomes.filter(Either.isLeft).map((o) => o.left)) {
        expect(lost).toMatchObject({ _tag: "AlreadyDecided", pendingId: entry.id, by: winner.by })
        expect(lost.message).toContain(`by ${winner.by}`)
      }
      expect(stores.audit.records).toEqual([
        expect.objectContaining({
          runId: "run-1",
          tool: "cancel_order",
          callId: "c1",
          decision: "operator",
          action: winner.decision.verdict,
          by: winner.by
        })
      ])
      expect((yield* operator.list()).runs[0]!.decided).toEqual([winner])
    }))

  it.effect("a recorded approval is applied by another process: the tool runs once, the run finishes, changes report it", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      const entry = (yield* suspend(stores, "run-1")).suspended!.pending[0]!
      const operator = yield* operatorOf(stores)
      const start = yield* operator.changes(undefined)
      expect(start.runIds).toEqual([])
      expect((yield* operator.changes(start.cursor)).runIds).toEqual([])
      yield* operator.decide("run-1", entry.id, {
        ...Approval.edit(entry.digest, { order_id: "A-771", reason: "edited by alice" }),
        by: "alice"
      })
      const first = yield* recover(stores)
      expect(first.report.resumed).toEqual(["run-1"])
      expect(first.cancelled).toEqual(["A-771:edited by alice"])
      const second = yield* recover(stores)
      expect(second.report.resumed).toEqual([])
      expect(second.cancelled).toEqual([])
      const done = yield* operator.show("run-1")
      expect(done.status).toBe("done")
      expect(done.pending).toEqual([])
      expect(done.result).toMatchObject({ output: "Cancelled order A-771." })
      const changed = yield* operator.changes(start.cursor)
      expect(changed.runIds).toEqual(["run-1"])
      // each change as it was left: no read of the run needed to route or count it
      expect(changed.runs).toEqual([
        expect.objectContaining({ runId: "run-1", rootRunId: "run-1", status: "done", pending: 0 })
      ])
      expect(changed.runs![0]!.tenant).toBe(done.tenant)
      expect((yield* operator.changes(changed.cursor)).runIds).toEqual([])
      // decided and applied since: the conflict still names who decided
      expect(yield* Effect.flip(operator.decide("run-1", entry.id, { ...Approval.approve(entry.digest), by: "bob" })))
        .toMatchObject({
          _tag: "AlreadyDecided",
          by: "alice"
        })
      expect(yield* Effect.flip(operator.changes("forged"))).toMatchObject({ _tag: "StoreError" })
    }))

  it.effect("cancel: recorded with the operator, applied by the worker; a finished run refuses a second cancel", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      yield* suspend(stores, "run-1")
      const operator = yield* operatorOf(stores)
      yield* operator.cancel("run-1", "carol")
      const { report, cancelled } = yield* recover(stores)
      expect(report.cancelled).toEqual(["run-1"])
      expect(cancelled).toEqual([])
      expect((yield* operator.show("run-1")).status).toBe("cancelled")
      expect(yield* Effect.flip(operator.cancel("run-1", "carol"))).toMatchObject({
        _tag: "RunFinished",
        status: "cancelled"
      })
      expect(yield* Effect.flip(operator.cancel("nope", "carol"))).toMatchObject({ _tag: "RunNotFound" })
      const trail = yield* operator.audit({ runId: "run-1" })
      expect(trail.records).toEqual([expect.objectContaining({ decision: "operator", action: "cancel", by: "carol" })])
    }))

  it.effect("pages: every run once by cursor either way, filtered by tenant and status, limit checked", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      for (let i = 0; i < 12; i++) {
        yield* suspend(stores, `run-${String(i).padStart(2, "0")}`, { orgId: i % 3 === 0 ? "globex" : "acme" })
      }
      const operator = yield* operatorOf(stores)
      const all = (filter: Operator.ListFilter) =>
        Effect.gen(function*() {
          const ids: Array<string> = []
          let cursor: string | undefined
          do {
            const page = yield* operator.list({ ...filter, cursor, limit: 5 })
            expect(page.runs.length).toBeLessThanOrEqual(5)
            for (const run of page.runs) ids.push(run.runId)
            cursor = page.cursor
          } while (cursor !== undefined)
          return ids
        })
      const ids = Array.from({ length: 12 }, (_, i) => `run-${String(i).padStart(2, "0")}`)
      expect(yield* all({})).toEqual(ids)
      expect(yield* all({ order: "desc" })).toEqual([...ids].reverse())
      const globex = (yield* operator.show("run-00")).tenant
      const acme = (yield* operator.show("run-01")).tenant
      expect(yield* all({ tenant: [globex] })).toEqual(ids.filter((_, i) => i % 3 === 0))
      expect(yield* all({ tenant: [acme, globex], status: ["suspended"] })).toEqual(ids)
      expect(yield* Effect.flip(operator.list({ limit: 501 }))).toMatchObject({ _tag: "StoreError" })
      expect(yield* Effect.flip(operator.list({ status: ["waiting" as never] }))).toMatchObject({ _tag: "StoreError" })
      const audited = yield* operator.audit({ tenant: [globex] })
      expect(audited.records).toEqual([])
    }))
})

describe("an edit is checked as the model's arguments are, before it is recorded", () => {
  it.effect("an edit adding an undeclared argument is refused naming it; the run is not left stuck", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      const entry = (yield* suspend(stores, "run-1")).suspended!.pending[0]!
      const operator = yield* operatorOf(stores)
      const smuggled = yield* Effect.flip(
        operator.decide("run-1", entry.id, {
          ...Approval.edit(entry.digest, { order_id: "A-771", reason: "duplicate order", refund_to: "IBAN-ATTACKER" }),
          by: "alice"
        })
      )
      expect(smuggled).toMatchObject({ _tag: "ToolArgumentError", toolName: "cancel_order", unexpected: ["refund_to"] })
      const nonFinite = yield* Effect.flip(
        operator.decide("run-1", entry.id, {
          ...Approval.edit(entry.digest, { order_id: "A-771", reason: "duplicate order", extra: Number.NaN }),
          by: "alice"
        })
      )
      expect(nonFinite).toMatchObject({ _tag: "ToolArgumentError" })
      expect((yield* operator.show("run-1")).decided).toEqual([])
      // a valid decision is still taken, and applied
      yield* operator.decide("run-1", entry.id, { ...Approval.approve(entry.digest), by: "alice" })
      const applied = yield* recover(stores)
      expect(applied.cancelled).toEqual(["A-771:duplicate order"])
      expect((yield* operator.show("run-1")).status).toBe("done")
    }))
})

describe("a finished run's usage", () => {
  it.effect("is its result's, every model call counted (not its last checkpoint's)", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      const entry = (yield* suspend(stores, "run-1")).suspended!.pending[0]!
      const operator = yield* operatorOf(stores)
      yield* operator.decide("run-1", entry.id, { ...Approval.approve(entry.digest), by: "alice" })
      yield* recover(stores)
      const done = yield* operator.show("run-1")
      expect(done.status).toBe("done")
      // the recorded result keeps its cost in nanodollars
      const result = done.result as { readonly usage: { inputTokens: number; outputTokens: number; costNanos: number } }
      expect(result.usage.inputTokens).toBeGreaterThan(0)
      const expected = {
        inputTokens: result.usage.inputTokens,
        outputTokens: result.usage.outputTokens,
        costUsd: result.usage.costNanos / 1e9
      }
      expect(done.usage).toEqual(expected)
      expect((yield* operator.list({ status: ["done"] })).runs[0]!.usage).toEqual(expected)
    }))
})
