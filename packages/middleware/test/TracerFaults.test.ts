/**
 * Tracer faults are contained: a real `Tracer.make` tracer that throws in `span`, in a span's
 * `end`, `attribute`, `event` or `addLinks`, or when a span's fields are read, never breaks a
 * whole agent run (issue 13); with tracing off the tracer is not even called.
 */
import { Agent, ReActCognition } from "@agentkit/agents"
import { Tracing } from "@agentkit/core"
import { Telemetry } from "@agentkit/middleware"
import { FakeLLM, makeTestCtx, Seed, Turn } from "@agentkit/testing"
import { asTool, Tool, type ToolRegistry } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Option, Schema, Stream, Tracer } from "effect"

const { ANSWER, lookupCall, lookupOrder, MODEL, PROMPT, STATUS, TASK } = Seed

type Fault = "span" | "end" | "attribute" | "event" | "addLinks" | "fields" | "everything"

/** A tracer made with `Tracer.make` whose `fault` throws; it counts the calls that reached it. */
const faulty = (fault: Fault) => {
  const calls = { span: 0, end: 0, attribute: 0, event: 0 }
  const boom = (): never => {
    throw new Error(`tracer ${fault} down`)
  }
  const tracer = Tracer.make({
    span(name, parent, context, links, startTime, kind) {
      calls.span++
      if (fault === "span" || fault === "everything") boom()
      const span: Tracer.Span = {
        _tag: "Span",
        name,
        get spanId(): string {
          return fault === "fields" ? boom() : calls.span.toString(16).padStart(16, "0")
        },
        get traceId(): string {
          return fault === "fields" ? boom() : Option.isSome(parent) ? parent.value.traceId : "1".padStart(32, "0")
        },
        parent,
        context,
        get status(): Tracer.SpanStatus {
          return fault === "fields" ? boom() : { _tag: "Started", startTime }
        },
        get attributes(): ReadonlyMap<string, unknown> {
          return fault === "fields" ? boom() : new Map()
        },
        links,
        sampled: true,
        kind,
        end() {
          calls.end++
          if (fault === "end") boom()
        },
        attribute() {
          calls.attribute++
          if (fault === "attribute") boom()
        },
        event() {
          calls.event++
          if (fault === "event") boom()
        },
        addLinks() {
          if (fault === "addLinks") boom()
        }
      }
      return span
    },
    context: (f) => f()
  })
  return { tracer, calls }
}

const react = (tools: ReadonlyArray<ToolRegistry.AnyTool>) =>
  Agent.make({ name: "support", model: MODEL, prompt: PROMPT, cognition: ReActCognition.make({ tools }) })

// A tool that touches the span itself: an event, attributes, links, a span of its own.
const traced = Tool.make("traced_lookup", {
  description: "Look up an order and annotate the current span while doing so.",
  parameters: { order_id: Schema.String },
  sideEffecting: false,
  handler: ({ order_id }) =>
    Effect.gen(function*() {
      yield* Effect.annotateCurrentSpan("order", order_id)
      const span = yield* Effect.currentSpan
      span.event("looked up", 0n)
      span.addLinks([])
      return yield* Effect.succeed(`order ${order_id}: shipped`).pipe(Effect.withSpan("db query"))
    })
})

describe("a tracer that throws never breaks a run", () => {
  for (const fault of ["span", "end", "attribute", "event", "addLinks", "fields", "everything"] as const) {
    it.effect(`a whole ReAct run (tools, a sub-agent, telemetry) completes when the tracer throws in ${fault}`, () =>
      Effect.gen(function*() {
        const { calls, tracer } = faulty(fault)
        const inner = react([lookupOrder])
        const llm = FakeLLM.script([
          Turn({
            toolCalls: [lookupCall("c1"), { id: "c2", name: "traced_lookup", arguments: { order_id: "A-771" } }, {
              id: "c3",
              name: "research",
              arguments: { task: "details" }
            }]
          }),
          Turn({ toolCalls: [lookupCall("s1")] }), // the sub-agent's first step
          Turn({ content: "sub-agent answer" }),
          Turn({ content: ANSWER })
        ])
        const agent = react([
          lookupOrder,
          traced,
          asTool(inner, { name: "research", description: "Ask the research agent about an order." })
        ])
        const result = yield* agent.run(TASK).pipe(
          Effect.provide(
            makeTestCtx({
              llm,
              toolMiddleware: [Telemetry.telemetry({ captureContent: true })],
              chatMiddleware: [Telemetry.telemetry({ captureContent: true })]
            })
          ),
          Effect.withTracer(tracer)
        )
        expect(result.output).toBe(ANSWER)
        const results = result.transcript.filter((m) => m.role === "tool").map((m) => m.content)
        expect(results).toEqual([STATUS, "order A-771: shipped", "sub-agent answer"])
        expect(calls.span).toBeGreaterThan(5) // the tracer was really used
        llm.assertConsumed()
      }))
  }

  it.effect("a stream ends with Final whatever the tracer does", () =>
    Effect.gen(function*() {
      const { tracer } = faulty("everything")
      const llm = FakeLLM.script([Turn({ toolCalls: [lookupCall()] }), Turn({ content: ANSWER })])
      const events = yield* react([lookupOrder]).stream(TASK).pipe(
        Stream.runCollect,
        Effect.provide(makeTestCtx({ llm })),
        Effect.withTracer(tracer)
      )
      expect(Chunk.last(events).pipe(Option.map((e) => e._tag))).toEqual(Option.some("Final"))
    }))

  it.effect("the tracer still records the run when it works: its own spans as parents, one wrapper per tracer", () =>
    Effect.gen(function*() {
      const tracer = Tracing.recording()
      const llm = FakeLLM.script([Turn({ toolCalls: [lookupCall()] }), Turn({ content: ANSWER })])
      const seen: Array<Tracer.Tracer> = []
      const spy = Tool.make("spy", {
        description: "Reads the tracer it runs under, for the test.",
        parameters: {},
        sideEffecting: false,
        handler: () =>
          Effect.map(Effect.tracer, (t) => {
            seen.push(t)
            return "ok"
          })
      })
      const run = react([lookupOrder, spy]).run(TASK)
      yield* run.pipe(Effect.provide(makeTestCtx({ llm })), Effect.provide(tracer.layer))
      const root = tracer.one("invoke_agent support")
      expect(tracer.childrenOf(root).map((s) => s.name)).toEqual([
        "chat claude-sonnet-4-6",
        "execute_tool lookup_order",
        "chat claude-sonnet-4-6"
      ])
      expect(Object.fromEntries(root.attributes)).toMatchObject({ "gen_ai.usage.input_tokens": 20 })
      // twice, under the same tracer: the same wrapper
      const llm2 = FakeLLM.script([
        Turn({ toolCalls: [{ id: "a", name: "spy", arguments: {} }] }),
        Turn({ content: "done" }),
        Turn({ toolCalls: [{ id: "b", name: "spy", arguments: {} }] }),
        Turn({ content: "done" })
      ])
      const twice = Effect.zipRight(react([spy]).run(TASK), react([spy]).run(TASK))
      yield* twice.pipe(Effect.provide(makeTestCtx({ llm: llm2 })), Effect.provide(tracer.layer))
      expect(seen).toHaveLength(2)
      expect(seen[0]).toBe(seen[1])
      expect(Symbol.for("@agentkit/core/Tracing/Contained") in seen[0]!).toBe(true)
    }))

  it.effect("with tracing off, the tracer is never called and never wrapped", () =>
    Effect.gen(function*() {
      const { calls, tracer } = faulty("everything")
      const seen: Array<Tracer.Tracer> = []
      const spy = Tool.make("spy", {
        description: "Reads the tracer it runs under, for the test.",
        parameters: {},
        sideEffecting: false,
        handler: () =>
          Effect.map(Effect.tracer, (t) => {
            seen.push(t)
            return "ok"
          })
      })
      const llm = FakeLLM.script([
        Turn({ toolCalls: [{ id: "a", name: "spy", arguments: {} }] }),
        Turn({ content: "done" })
      ])
      const result = yield* react([spy]).run(TASK).pipe(
        Effect.provide(makeTestCtx({ llm, tracing: false })),
        Effect.withTracer(tracer)
      )
      expect(result.output).toBe("done")
      expect(calls.span).toBe(0)
      expect(seen).toEqual([tracer])
    }))
})
