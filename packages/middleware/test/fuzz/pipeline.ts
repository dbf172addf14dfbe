/**
 * Attack suite, the pipeline part (run by `pipelineHandWritten.test.ts` and
 * `pipelineRandom.test.ts`): the same classes of calls through the Invoker's tool pipeline with
 * every tool middleware (telemetry with content capture, audit, a quota meter, egress, idempotency,
 * retry), tracing on under a tracer that throws on every third span (contained). A call gets a
 * typed error or a valid result; every call is audited, whatever its arguments; the handler only
 * runs on valid input.
 */
import { Invoker, Quota, RunContext, Tracing } from "@agentkit/core"
import { Audit, Egress, Idempotency, Meter, Retry, Telemetry } from "@agentkit/middleware"
import { FakeLLM } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Tracer } from "effect"
import {
  callArb,
  classes,
  Figures,
  handWritten,
  judge,
  type Struct,
  structArb,
  toolFor,
  verdict,
  withUrl
} from "./model.js"

/** One half of the suite (so vitest runs the halves side by side): the hand-written or random schemas. */
export const pipelineSuite = (half: "hand-written" | "random") => {
  const RUNS_PER_SCHEMA = half === "hand-written" ? 1100 : 630
  const schemas: ReadonlyArray<readonly [string, Struct]> = half === "hand-written"
    ? handWritten
    : fc.sample(structArb, { numRuns: 12, seed: 777 }).map((s, i) => [`random_${i}`, s] as const)

  let spans = 0
  const down = new Error("exporter down") // made once: the suite is about containment, not stack traces
  const flaky = Tracer.make({
    span(name, parent, context, links, startTime, kind) {
      if (++spans % 3 === 0) throw down
      const span: Tracer.Span = {
        _tag: "Span",
        name,
        spanId: spans.toString(16).padStart(16, "0"),
        traceId: "1".padStart(32, "0"),
        parent,
        context,
        status: { _tag: "Started", startTime },
        attributes: new Map(),
        links,
        sampled: true,
        kind,
        end() {},
        attribute() {
          if (spans % 5 === 0) throw down
        },
        event() {
          throw down
        },
        addLinks() {}
      }
      return span
    },
    context: (f) => f()
  })

  const store = Audit.memoryStore()
  const invoker = Invoker.make(FakeLLM.replying().service, {
    toolMiddleware: [
      Telemetry.telemetry({ captureContent: true }),
      Audit.audit({ store }),
      Meter.meter({ quotas: [Quota.unsafeMake({ maxRpm: 1e12 })] }),
      Egress.egress({ allow: ["example.com"] }),
      Idempotency.idempotent(),
      Retry.retry({ maxAttempts: 2 })
    ]
  })
  const context = Effect.runSync(RunContext.make({ correlationId: "fuzz-pipeline", scope: { orgId: "acme" } }))
  const figures = new Figures()
  let badArguments = 0
  let id = 0

  describe(`attack suite: through every tool middleware (${half} schemas)`, () => {
    schemas.forEach(([name, schema], i) => {
      // every other schema has a URL argument, so egress checks (and snapshots) its calls
      const described = i % 2 === 0 ? withUrl(schema) : schema
      const { state, tool } = toolFor(`pipe_${name}`, described, { urlArg: i % 2 === 0 })
      it.prop(
        `${name}${
          i % 2 === 0 ? " (with a URL)" : ""
        }: a typed error or a valid result, audited, the handler only on valid input`,
        [callArb(described)],
        ([call]) => {
          const before = state.runs
          const records = store.records.length
          let exit
          try {
            const toolCall = { id: `c${++id}`, name: tool.name, arguments: call.input as Record<string, unknown> }
            exit = Effect.runSyncExit(
              invoker.tool(toolCall, tool).pipe(
                Effect.provideService(RunContext, context),
                Tracing.contain,
                Effect.withTracer(flaky)
              )
            )
          } catch (thrown) {
            exit = { thrown }
          }
          // audited, whatever the arguments
          expect(store.records.length).toBe(records + 1)
          const record = store.records[records]!
          expect(judge(figures, call, exit, state.runs - before, true, record.decision === "deduplicated"))
            .toBeUndefined()
          expect(record.tenant).toBe("[\"acme\",null,null,null]")
          if (state.runs > before) expect(record.decision).toBe("executed")
          badArguments += state.bad
          state.bad = 0
        },
        { timeout: 60_000, fastCheck: { numRuns: RUNS_PER_SCHEMA, seed: 5000 + i } }
      )
    })

    it("figures", () => {
      const result = verdict(
        figures,
        `the tool pipeline, ${schemas.length} ${half} schemas, every middleware`,
        badArguments
      )
      expect(result).toEqual({
        crashes: 0,
        handlerRunsOnInvalid: 0,
        handlerSawBadArguments: 0,
        validRejected: 0,
        unnamed: 0,
        failures: []
      })
      expect(figures.calls).toBe(RUNS_PER_SCHEMA * schemas.length)
      expect(store.records.length).toBe(figures.calls)
      const unhashable = store.records.filter((r) => r.argHash === "unhashable").length
      console.log(`  audit records: ${store.records.length} (arguments unhashable: ${unhashable})`)
      expect(unhashable).toBeGreaterThan(0)
      for (const c of classes) expect(figures.byClass.get(c), c).toBeGreaterThanOrEqual(figures.calls * 0.04)
    })
  })
}
