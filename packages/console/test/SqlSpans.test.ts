/**
 * The trace view over the SQL span store (the README's mounting): a runner's store records real
 * agent runs (FakeLLM, through the tee) in a SQLite file, and a console reads them through its own
 * store over the same file, as a console process reads what a runner process wrote. Tenant scoping
 * holds as for the in-memory store: another tenant's run's trace is 404, and a tenant's trace never
 * holds another run tree's spans. Hostile attribute values come back as the text they are, bounded.
 */
import type { SpanStore } from "@agentkit/console"
import { SqlSpanStore, SqlStores } from "@agentkit/sql"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { call, seed, start, tokens, traceRun } from "./support/harness.js"
import * as MemoryOperator from "./support/MemoryOperator.js"

const script = `<script>window.__pwned = true</script><img src=x onerror="alert(1)">`

/** A store over the file, in its own scope: what one process opens. */
const openStore = async (filename: string, scope: Scope.Scope) =>
  Context.get(
    await Effect.runPromise(
      Layer.buildWithScope(SqlSpanStore.layer().pipe(Layer.provide(SqlStores.layerSqlite({ filename }))), scope)
    ),
    SqlSpanStore.SqlSpanStore
  )

describe("the trace view over the SQL span store", () => {
  const dir = mkdtempSync(join(tmpdir(), "agentkit-console-spans-"))
  const filename = join(dir, "agentkit.db")
  const runnerScope = Effect.runSync(Scope.make())
  const consoleScope = Effect.runSync(Scope.make())
  let server: Awaited<ReturnType<typeof start>>

  beforeAll(async () => {
    const runner = await openStore(filename, runnerScope)
    await traceRun(runner, "run-acme-1")
    await traceRun(runner, "run-globex-1")
    runner.offer({
      traceId: "hostile-trace",
      spanId: "hostile-span",
      name: "execute_tool cancel_order",
      startMs: 1,
      durationMs: 1,
      status: "ok",
      attributes: {
        "gen_ai.conversation.id": "run-acme-1",
        "agentkit.tenant": "acme",
        "gen_ai.tool.call.arguments": script,
        huge: "x".repeat(100_000)
      },
      events: []
    })
    await Effect.runPromise(runner.flush)
    const operator = MemoryOperator.make()
    seed(operator)
    server = await start(operator, { spans: await openStore(filename, consoleScope) })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
    await Effect.runPromise(Scope.close(consoleScope, Exit.void))
    await Effect.runPromise(Scope.close(runnerScope, Exit.void))
    rmSync(dir, { recursive: true, force: true })
  })

  it("shows a run's span tree that another store wrote to the file", async () => {
    const reply = await call(server.url, "api/trace?runId=run-acme-1", { token: tokens.alice })
    expect(reply.status).toBe(200)
    const spans: Array<SpanStore.SpanRecord> = reply.body.spans
    const names = spans.filter((span) => span.traceId !== "hostile-trace").map((span) => span.name)
    expect(names).toEqual([
      "invoke_agent support",
      "chat claude-sonnet-4-6",
      "execute_tool lookup_order",
      "chat claude-sonnet-4-6"
    ])
    const root = spans.find((span) => span.name === "invoke_agent support")!
    expect(
      spans.filter((span) => span.traceId === root.traceId && span !== root).every((span) =>
        span.parentSpanId === root.spanId
      )
    ).toBe(true)
  })

  it("another tenant's run is 404, and a tenant's trace holds only its own run tree", async () => {
    expect((await call(server.url, "api/trace?runId=run-acme-1", { token: tokens.gina })).status).toBe(404)
    expect((await call(server.url, "api/trace?runId=run-globex-1", { token: tokens.alice })).status).toBe(404)
    const acme: Array<SpanStore.SpanRecord> =
      (await call(server.url, "api/trace?runId=run-acme-1", { token: tokens.alice })).body.spans
    const globex: Array<SpanStore.SpanRecord> =
      (await call(server.url, "api/trace?runId=run-globex-1", { token: tokens.gina })).body.spans
    expect(globex.length).toBe(4)
    const acmeTraces = new Set(acme.map((span) => span.traceId))
    expect(globex.some((span) => acmeTraces.has(span.traceId))).toBe(false)
  })

  it("a hostile attribute comes back as the text it is, and bounded", async () => {
    const spans: Array<SpanStore.SpanRecord> =
      (await call(server.url, "api/trace?runId=run-acme-1", { token: tokens.alice })).body.spans
    const hostile = spans.find((span) => span.spanId === "hostile-span")!
    expect(hostile.attributes["gen_ai.tool.call.arguments"]).toBe(script)
    expect(hostile.attributes["huge"]).toBe(`${"x".repeat(4096)}…`)
  })
})
