/**
 * A second tenant cannot write into a tenant's trace view (an attacker's view): tenant globex
 * runs an agent under the correlation id of one of acme's runs (a correlation id is the caller's
 * choice); acme's trace, read by its tenant, holds acme's spans only, on the in-memory store and
 * on the SQL store over SQLite. Each run's spans carry its tenant (`SpanStore.tenantAttribute`).
 */
import { Agent, ReActCognition } from "@agentkit/agents"
import { SpanRecorder, SpanStore } from "@agentkit/console"
import { Scope as RunScope } from "@agentkit/core"
import { SqlSpanStore, SqlStores } from "@agentkit/sql"
import { FakeLLM, makeTestCtx, Seed, Turn } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const agentNamed = (name: string) =>
  Agent.make({
    name,
    model: Seed.MODEL,
    prompt: Seed.PROMPT,
    cognition: ReActCognition.make({ tools: [Seed.lookupOrder] })
  })

const runAs = (store: SpanStore.Service, agent: string, orgId: string) =>
  agentNamed(agent).run(Seed.TASK).pipe(
    Effect.provide(
      makeTestCtx({
        llm: FakeLLM.script([Turn({ toolCalls: [Seed.lookupCall()] }), Turn({ content: Seed.ANSWER })]),
        correlationId: "run-acme-1",
        scope: { orgId }
      })
    ),
    Effect.provide(SpanRecorder.layer.pipe(Layer.provide(SpanStore.SpanStore.layer(store))))
  )

const acme = RunScope.make({ orgId: "acme" }).storeKey

const attack = (store: SpanStore.Service, flush: Effect.Effect<unknown, unknown>) =>
  Effect.gen(function*() {
    yield* runAs(store, "support", "acme")
    yield* runAs(store, "intruder", "globex")
    yield* flush
    const spans = yield* store.trace("run-acme-1", acme)
    const agents = spans.filter((span) => span.name.startsWith("invoke_agent")).map((span) => span.name)
    expect(agents).toEqual(["invoke_agent support"])
    expect(spans.length).toBeGreaterThan(1)
  })

describe("a second tenant writing under a tenant's correlation id", () => {
  it.effect("the in-memory store: the tenant's trace holds its own spans only", () =>
    attack(SpanStore.makeMemory(), Effect.void))

  it.effect("the SQL store on SQLite: the tenant's trace holds its own spans only", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "agentkit-tenant-spans-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const context = yield* Layer.build(
        SqlSpanStore.layer().pipe(Layer.provide(SqlStores.layerSqlite({ filename: join(dir, "agentkit.db") })))
      )
      const store = Context.get(context, SqlSpanStore.SqlSpanStore)
      yield* attack(store, store.flush)
    }).pipe(Effect.scoped))
})
