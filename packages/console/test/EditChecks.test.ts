/**
 * An operator's edit is checked as strictly as the model's arguments, before a decision is
 * recorded, on the in-memory stores and on `SqlStores.layerSqlite`: an edit adding an argument
 * the tool does not declare, a non-finite number or a wrong type is refused with a typed error
 * naming the problem (the `Operator` service directly, and a POST to the real console over HTTP
 * as a 422); nothing is recorded, the run stays suspended, and a later valid approval succeeds
 * and the run finishes.
 */
import { Agent, Approval, Operator, ReActCognition, RunRecovery } from "@agentkit/agents"
import { Console, OperatorAuth } from "@agentkit/console"
import { AuditStore, CheckpointStore } from "@agentkit/core"
import { SqlStores } from "@agentkit/sql"
import { FakeLLM, Fixture, makeTestCtx, Seed, Turn } from "@agentkit/testing"
import { HttpServer } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import type { Scope } from "effect"
import { Context, Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { call } from "./support/harness.js"

const token = "alice-acme-approver-00001"
const principals: ReadonlyArray<OperatorAuth.TokenEntry> = [
  { token, principal: { id: "alice", role: "approver", tenants: "*" } }
]

const agent = Agent.make({
  name: "support",
  model: Seed.MODEL,
  prompt: Seed.PROMPT,
  cognition: ReActCognition.make({ tools: [Seed.cancelOrder] })
})

const CANCEL = Fixture.toolCall("c1", "cancel_order", { order_id: "A-771", reason: "duplicate order" })

type Stores = Context.Context<CheckpointStore | AuditStore>

const worlds: ReadonlyArray<
  readonly [string, () => { readonly stores: Layer.Layer<CheckpointStore | AuditStore>; readonly cleanup: () => void }]
> = [
  ["the in-memory stores", () => ({
    stores: Layer.merge(CheckpointStore.layer(CheckpointStore.makeMemory()), AuditStore.layer(AuditStore.makeMemory())),
    cleanup: () => undefined
  })],
  ["SqlStores.layerSqlite", () => {
    const dir = mkdtempSync(join(tmpdir(), "agentkit-edit-checks-"))
    return {
      stores: SqlStores.layerSqlite({ filename: join(dir, "agentkit.db") }).pipe(Layer.orDie),
      cleanup: () => rmSync(dir, { recursive: true, force: true })
    }
  }]
]

const suspend = (stores: Stores, runId: string) =>
  agent.run("Please cancel order A-771, I ordered it twice.").pipe(
    Effect.provide(
      makeTestCtx({
        llm: FakeLLM.script([Turn({ toolCalls: [CANCEL] })]),
        autonomy: "gated",
        runId,
        scope: { orgId: "acme", userId: "requester" }
      })
    ),
    Effect.provide(stores),
    Effect.tap((result) => expect(result.stopReason).toBe("awaiting_approval")),
    Effect.map((result) => result.suspended!.pending[0]!)
  )

const recover = (stores: Stores) =>
  RunRecovery.runOnce({ agents: [agent] }).pipe(
    Effect.provide(makeTestCtx({ llm: FakeLLM.script([Turn({ content: "Cancelled order A-771." })]) })),
    Effect.provide(stores)
  )

/** Builds a world's stores in a fresh scope and runs `body` with them; closes and cleans up after. */
const withStores = <A, E>(
  makeWorld: (typeof worlds)[number][1],
  body: (stores: Stores) => Effect.Effect<A, E, Scope.Scope>
) =>
  Effect.acquireUseRelease(
    Effect.sync(makeWorld),
    (world) => Effect.flatMap(Layer.build(world.stores), body),
    (world) => Effect.sync(world.cleanup)
  ).pipe(Effect.scoped)

const smuggled = { order_id: "A-771", reason: "duplicate order", refund_to: "IBAN-ATTACKER" }
const nonFinite = { order_id: "A-771", reason: "duplicate order", extra: Number.NaN }
const wrongType = { order_id: 771, reason: "duplicate order" }

describe.each(worlds)("an edit is checked before it is recorded, on %s", (_name, makeWorld) => {
  it.live(
    "the Operator service refuses it with a typed error naming the problem; the run is not stuck",
    () =>
      withStores(makeWorld, (stores) =>
        Effect.gen(function*() {
          const entry = yield* suspend(stores, "run-1")
          const operator = yield* Effect.provide(Operator.make, stores)
          const decide = (args: Record<string, unknown>) =>
            Effect.flip(operator.decide("run-1", entry.id, { ...Approval.edit(entry.digest, args), by: "alice" }))
          expect(yield* decide(smuggled)).toMatchObject({
            _tag: "ToolArgumentError",
            toolName: "cancel_order",
            unexpected: ["refund_to"]
          })
          const nan = yield* decide(nonFinite)
          expect(nan).toMatchObject({ _tag: "ToolArgumentError", toolName: "cancel_order" })
          expect(nan.message).toContain("extra")
          const typed = yield* decide(wrongType)
          expect(typed).toMatchObject({ _tag: "ToolArgumentError", toolName: "cancel_order" })
          expect(typed.message).toContain("order_id")
          const shown = yield* operator.show("run-1")
          expect(shown.status).toBe("suspended")
          expect(shown.decided).toEqual([])
          expect((yield* operator.audit({ runId: "run-1" })).records).toEqual([])
          // a later valid decision is taken, and applied
          yield* operator.decide("run-1", entry.id, { ...Approval.approve(entry.digest), by: "alice" })
          const report = yield* recover(stores)
          expect(report.resumed).toEqual(["run-1"])
          expect((yield* operator.show("run-1")).status).toBe("done")
        })),
    60_000
  )

  it.live(
    "the console answers a POSTed edit 422 naming the argument, records nothing; approval then works",
    () =>
      withStores(makeWorld, (stores) =>
        Effect.gen(function*() {
          const entry = yield* suspend(stores, "run-1")
          const context = yield* Layer.build(
            Console.serve({ pollInterval: "25 millis" }).pipe(
              Layer.provide(Operator.Operator.layer),
              Layer.provide(Layer.succeedContext(stores)),
              Layer.provide(OperatorAuth.Authenticator.tokens(principals))
            )
          )
          const address = Context.get(context, HttpServer.HttpServer).address
          if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
          const url = `http://127.0.0.1:${address.port}/console`
          const post = (body: Record<string, unknown>) =>
            Effect.promise(() =>
              call(url, "api/decide", {
                token,
                body: { runId: "run-1", pendingId: entry.id, digest: entry.digest, ...body }
              })
            )
          const refused = yield* post({ verdict: "edit", arguments: smuggled })
          expect(refused.status).toBe(422)
          expect(refused.body).toMatchObject({
            _tag: "InvalidArguments",
            toolName: "cancel_order",
            unexpected: ["refund_to"]
          })
          expect(refused.body.message).toContain("refund_to")
          const typed = yield* post({ verdict: "edit", arguments: wrongType })
          expect(typed.status).toBe(422)
          expect(typed.body.invalid).toEqual([expect.stringContaining("order_id")])
          const shown = yield* Effect.promise(() => call(url, "api/run?runId=run-1", { token }))
          expect(shown.status).toBe(200)
          expect(shown.body.status).toBe("suspended")
          expect(shown.body.decided).toEqual([])
          const operator = yield* Effect.provide(Operator.make, stores)
          expect((yield* operator.audit({ runId: "run-1" })).records).toEqual([])
          const approved = yield* post({ verdict: "approve" })
          expect(approved.status).toBe(200)
          const report = yield* recover(stores)
          expect(report.resumed).toEqual(["run-1"])
          expect((yield* operator.show("run-1")).status).toBe("done")
        })),
    60_000
  )
})
