/**
 * Operator scopes, attacked over HTTP on the real console: real agent runs suspend under scopes
 * of two organisations (and look-alikes), on the in-memory stores and on `SqlStores.layerSqlite`.
 * An operator granted organisation `acme` by pattern sees and decides its users' and sessions'
 * runs; it cannot see or decide `globex`'s, nor `acme2`'s, nor a run with `acme` in another part.
 * An operator may not approve a call their own request made, whatever the level of their grant.
 * A run's scope and an audit record's tenant come back as their parts, never the raw key.
 */
import { Agent, Operator, ReActCognition } from "@agentkit/agents"
import { Console, OperatorAuth } from "@agentkit/console"
import { AuditStore, CheckpointStore } from "@agentkit/core"
import { SqlStores } from "@agentkit/sql"
import { FakeLLM, Fixture, makeTestCtx, Seed, Turn } from "@agentkit/testing"
import { HttpServer } from "@effect/platform"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { call } from "./support/harness.js"

const tokens = {
  olga: "olga-acme-org-operator-01",
  ulla: "ulla-acme-user-operator-2",
  uma: "uma-acme-org-requester-03",
  vera: "vera-acme-org-viewer-0004",
  root: "root-super-operator-00005"
} as const

const principals: ReadonlyArray<OperatorAuth.TokenEntry> = [
  // an organisation's operator: acme/*/*/*
  { token: tokens.olga, principal: { id: "olga", role: "approver", tenants: ["[\"acme\"]"] } },
  // a user-level operator, who is also user u1 of acme: acme/-/u1/*
  { token: tokens.ulla, principal: { id: "u1", role: "approver", tenants: ["[\"acme\",null,\"u1\"]"] } },
  // an organisation-level operator who is also user u2 of acme
  { token: tokens.uma, principal: { id: "u2", role: "approver", tenants: ["[\"acme\"]"] } },
  { token: tokens.vera, principal: { id: "vera", role: "viewer", tenants: ["[\"acme\"]"] } },
  // a super-operator: what an attacker could learn of a run is its pending id and digest
  { token: tokens.root, principal: { id: "root", role: "approver", tenants: "*" } }
]

const runs = {
  "run-acme-u1": { orgId: "acme", userId: "u1", sessionId: "s1" },
  "run-acme-u2": { orgId: "acme", userId: "u2" },
  "run-acme-org": { orgId: "acme", domainId: 3 },
  "run-globex": { orgId: "globex", userId: "u1" },
  "run-acme2": { orgId: "acme2", userId: "u1" },
  "run-acme-as-domain": { domainId: "acme", userId: "u1" },
  "run-acme-as-user": { orgId: "globex", userId: "acme" }
} as const

const visibleToAcme = ["run-acme-org", "run-acme-u1", "run-acme-u2"]
const foreign = ["run-acme-as-domain", "run-acme-as-user", "run-acme2", "run-globex"]

const agent = Agent.make({
  name: "support",
  model: Seed.MODEL,
  prompt: Seed.PROMPT,
  cognition: ReActCognition.make({ tools: [Seed.cancelOrder] })
})

const CANCEL = Fixture.toolCall("c1", "cancel_order", { order_id: "A-771", reason: "duplicate order" })

type Stores = Layer.Layer<CheckpointStore | AuditStore>

const suspendAll = (stores: Context.Context<CheckpointStore | AuditStore>) =>
  Effect.forEach(
    Object.entries(runs),
    ([runId, scope]) =>
      agent.run("Please cancel order A-771, I ordered it twice.").pipe(
        Effect.provide(
          makeTestCtx({ llm: FakeLLM.script([Turn({ toolCalls: [CANCEL] })]), autonomy: "gated", runId, scope })
        ),
        Effect.provide(stores),
        Effect.tap((result) => expect(result.stopReason).toBe("awaiting_approval"))
      ),
    { discard: true }
  )

const worlds: ReadonlyArray<readonly [string, () => { readonly stores: Stores; readonly cleanup: () => void }]> = [
  ["the in-memory stores", () => ({
    stores: Layer.merge(CheckpointStore.layer(CheckpointStore.makeMemory()), AuditStore.layer(AuditStore.makeMemory())),
    cleanup: () => undefined
  })],
  ["SqlStores.layerSqlite", () => {
    const dir = mkdtempSync(join(tmpdir(), "agentkit-operator-scopes-"))
    return {
      stores: SqlStores.layerSqlite({ filename: join(dir, "agentkit.db") }).pipe(Layer.orDie),
      cleanup: () => rmSync(dir, { recursive: true, force: true })
    }
  }]
]

describe.each(worlds)("operator scopes on %s", (_name, makeWorld) => {
  let url = ""
  let close: () => Promise<void> = async () => undefined

  beforeAll(async () => {
    const world = makeWorld()
    const scope = Effect.runSync(Scope.make())
    const stores = await Effect.runPromise(Layer.buildWithScope(world.stores, scope))
    await Effect.runPromise(suspendAll(stores))
    const context = await Effect.runPromise(
      Layer.buildWithScope(
        Console.serve({ pollInterval: "25 millis" }).pipe(
          Layer.provide(Operator.Operator.layer),
          Layer.provide(Layer.succeedContext(stores)),
          Layer.provide(OperatorAuth.Authenticator.tokens(principals))
        ),
        scope
      )
    )
    const address = Context.get(context, HttpServer.HttpServer).address
    if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
    url = `http://127.0.0.1:${address.port}/console`
    close = async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      world.cleanup()
    }
  }, 60_000)

  afterAll(() => close())

  const pendingOf = async (runId: string) => {
    const shown = await call(url, `api/run?runId=${runId}`, { token: tokens.root })
    expect(shown.status).toBe(200)
    return shown.body.pending[0] as { readonly id: string; readonly digest: string }
  }

  it("an organisation's operator lists its users' and sessions' runs, and no other's", async () => {
    const listed = await call(url, "api/runs?limit=500", { token: tokens.olga })
    expect(listed.status).toBe(200)
    expect(listed.body.runs.map((run: { runId: string }) => run.runId).sort()).toEqual(visibleToAcme)
  })

  it("an organisation's operator cannot see a look-alike's or another organisation's run", async () => {
    for (const runId of foreign) {
      const shown = await call(url, `api/run?runId=${runId}`, { token: tokens.olga })
      expect(shown.status).toBe(404)
      const trace = await call(url, `api/trace?runId=${runId}`, { token: tokens.olga })
      expect(trace.status).toBe(404)
      const audit = await call(url, `api/audit?runId=${runId}`, { token: tokens.olga })
      expect(audit.status).toBe(404)
    }
    const narrowed = await call(url, `api/runs?tenant=${encodeURIComponent("[\"globex\"]")}`, { token: tokens.olga })
    expect(narrowed.body.runs).toEqual([])
    // the org operator's own runs, so the 404s above are not a console that sees nothing
    expect((await call(url, "api/run?runId=run-acme-u1", { token: tokens.olga })).status).toBe(200)
  })

  it("an organisation's operator cannot decide a look-alike's or another organisation's run", async () => {
    for (const runId of foreign) {
      // the attacker knows the run's pending id and digest (leaked, or guessed)
      const entry = await pendingOf(runId)
      const reply = await call(url, "api/decide", {
        token: tokens.olga,
        body: { runId, pendingId: entry.id, verdict: "approve", digest: entry.digest }
      })
      expect(reply.status).toBe(404)
      const cancel = await call(url, "api/cancel", { token: tokens.olga, body: { runId } })
      expect(cancel.status).toBe(404)
      expect((await pendingOf(runId)).id).toBe(entry.id)
    }
    // the refusals above come from the scope, not from a console that lets the operator see nothing
    expect((await call(url, "api/run?runId=run-acme-org", { token: tokens.olga })).status).toBe(200)
  })

  it("a user-level operator cannot approve their own request; the org's operator can", async () => {
    const entry = await pendingOf("run-acme-u1")
    const body = { runId: "run-acme-u1", pendingId: entry.id, verdict: "approve", digest: entry.digest }
    // the user-level grant sees the run (its user and session), but the call is their own request
    expect((await call(url, "api/run?runId=run-acme-u1", { token: tokens.ulla })).status).toBe(200)
    const own = await call(url, "api/decide", { token: tokens.ulla, body })
    expect(own.status).toBe(403)
    expect(own.body.message).toBe(
      "operator 'u1' requested run 'run-acme-u1' and may not approve it: another operator must"
    )
    // and it cannot reach another user's run of its organisation
    expect((await call(url, "api/run?runId=run-acme-u2", { token: tokens.ulla })).status).toBe(404)
    const decided = await call(url, "api/decide", { token: tokens.olga, body })
    expect(decided.status).toBe(200)
    expect(decided.body.by).toBe("olga")
  })

  it("an organisation-level operator cannot approve their own request either", async () => {
    const entry = await pendingOf("run-acme-u2")
    const own = await call(url, "api/decide", {
      token: tokens.uma,
      body: { runId: "run-acme-u2", pendingId: entry.id, verdict: "approve", digest: entry.digest }
    })
    expect(own.status).toBe(403)
    const viewer = await call(url, "api/decide", {
      token: tokens.vera,
      body: { runId: "run-acme-u2", pendingId: entry.id, verdict: "approve", digest: entry.digest }
    })
    expect(viewer.status).toBe(403)
  })

  it("shows a run's scope and an audit record's tenant as their parts", async () => {
    const shown = await call(url, "api/run?runId=run-acme-u1", { token: tokens.olga })
    expect(shown.body.scope).toEqual({ orgId: "acme", userId: "u1", sessionId: "s1" })
    const org = await call(url, "api/run?runId=run-acme-org", { token: tokens.olga })
    expect(org.body.scope).toEqual({ orgId: "acme", domainId: 3 })
    const audit = await call(url, "api/audit?runId=run-acme-u1", { token: tokens.olga })
    expect(audit.status).toBe(200)
    expect(audit.body.records.length).toBeGreaterThan(0)
    for (const record of audit.body.records) {
      expect(record.scope).toEqual({ orgId: "acme", userId: "u1", sessionId: "s1" })
    }
  })
})
