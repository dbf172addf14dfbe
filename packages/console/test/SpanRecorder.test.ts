/**
 * The tee tracer over a real agent run (FakeLLM): every span still reaches the app's tracer, with
 * the app's own span objects as parents; the span store gets a copy of each finished span,
 * grouped under the run's correlation id; with tracing off nothing is recorded or even asked.
 */
import { Agent, ReActCognition } from "@agentkit/agents"
import { SpanRecorder, SpanStore } from "@agentkit/console"
import { FakeLLM, makeTestCtx, Seed, Tracing, Turn } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Tracer } from "effect"

const support = Agent.make({
  name: "support",
  model: Seed.MODEL,
  prompt: Seed.PROMPT,
  cognition: ReActCognition.make({ tools: [Seed.lookupOrder, Seed.cancelOrder] })
})

const twoTurns = () => FakeLLM.script([Turn({ toolCalls: [Seed.lookupCall()] }), Turn({ content: Seed.ANSWER })])

describe("SpanRecorder", () => {
  it.effect("tees an agent run: the app's tracer sees every span, the store a copy under the correlation id", () =>
    Effect.gen(function*() {
      const app = Tracing.recording()
      const store = SpanStore.makeMemory()
      const tee = SpanRecorder.layer.pipe(Layer.provide(SpanStore.SpanStore.layer(store)), Layer.provide(app.layer))
      const result = yield* support.run(Seed.TASK).pipe(
        Effect.provide(makeTestCtx({ llm: twoTurns(), correlationId: "run-42" })),
        Effect.provide(tee)
      )
      expect(result.output).toBe(Seed.ANSWER)

      const names = [
        "invoke_agent support",
        "chat claude-sonnet-4-6",
        "execute_tool lookup_order",
        "chat claude-sonnet-4-6"
      ]
      expect(app.spans.map((span) => span.name)).toEqual(names)
      expect(app.spans.every((span) => span.ended)).toBe(true)
      // the app's tracer got its own spans as parents (the tee never hands it a wrapper)
      const root = app.one("invoke_agent support")
      expect(app.childrenOf(root)).toHaveLength(3)
      for (const child of app.childrenOf(root)) {
        expect(child.parent._tag === "Some" && child.parent.value === root).toBe(true)
      }

      const recorded = yield* store.trace("run-42")
      expect(recorded.map((span) => span.name).sort()).toEqual([...names].sort())
      const top = recorded.find((span) => span.name === "invoke_agent support")!
      expect(top.parentSpanId).toBeUndefined()
      expect(top.spanId).toBe(root.spanId)
      expect(top.attributes).toMatchObject({
        "gen_ai.conversation.id": "run-42",
        "gen_ai.agent.name": "support",
        "gen_ai.usage.input_tokens": 20,
        "gen_ai.usage.output_tokens": 10
      })
      for (const span of recorded.filter((s) => s !== top)) expect(span.parentSpanId).toBe(top.spanId)
      expect(recorded.every((span) => span.status === "ok" && span.durationMs >= 0)).toBe(true)
      expect(yield* store.trace("another-run")).toEqual([])
    }))

  it.effect("records a failed span's error, events and array attributes", () =>
    Effect.gen(function*() {
      const app = Tracing.recording()
      const store = SpanStore.makeMemory()
      const program = Effect.gen(function*() {
        yield* Tracing.annotate({
          "gen_ai.conversation.id": "run-7",
          "agentkit.policy.legs": ["private_data", "egress"]
        })
        yield* Tracing.addEvent("retry.attempt", { attempt: 1, last_error_type: "ChatModelError" })
        yield* Effect.fail("boom").pipe(Effect.withSpan("execute_tool charge"), Effect.ignore)
      }).pipe(Effect.withSpan("invoke_agent billing"))
      yield* program.pipe(
        Effect.provide(
          SpanRecorder.layer.pipe(Layer.provide(SpanStore.SpanStore.layer(store)), Layer.provide(app.layer))
        )
      )
      const spans = yield* store.trace("run-7")
      const failed = spans.find((span) => span.name === "execute_tool charge")!
      expect(failed.status).toBe("error")
      expect(failed.error).toContain("boom")
      const top = spans.find((span) => span.name === "invoke_agent billing")!
      expect(top.attributes["agentkit.policy.legs"]).toEqual(["private_data", "egress"])
      expect(top.events).toEqual([{
        name: "retry.attempt",
        atMs: expect.any(Number),
        attributes: { attempt: 1, last_error_type: "ChatModelError" }
      }])
      // the app's span got the same attributes
      expect(app.one("invoke_agent billing").attributes.get("agentkit.policy.legs")).toEqual(["private_data", "egress"])
    }))

  it.effect("costs nothing with tracing off: the tee is never called and nothing is stored", () =>
    Effect.gen(function*() {
      let asked = 0
      const app = Tracing.recording()
      const store = SpanStore.makeMemory()
      const counting = Layer.unwrapEffect(
        Effect.map(Effect.tracer, (inner) =>
          Layer.setTracer(
            SpanRecorder.tee(
              Tracer.make({
                span: (...args) => {
                  asked++
                  return inner.span(...args)
                },
                context: (f, fiber) => inner.context(f, fiber)
              }),
              store
            )
          ))
      ).pipe(Layer.provide(app.layer))
      yield* support.run(Seed.TASK).pipe(
        Effect.provide(makeTestCtx({ llm: twoTurns(), tracing: false })),
        Effect.provide(counting)
      )
      yield* Effect.void.pipe(Effect.withSpan("not traced"), Effect.withTracerEnabled(false), Effect.provide(counting))
      expect(asked).toBe(0)
      expect(app.spans).toHaveLength(0)
      expect(store.size).toBe(0)
      // and with tracing on, the same layer records
      yield* support.run(Seed.TASK).pipe(
        Effect.provide(makeTestCtx({ llm: twoTurns(), correlationId: "on" })),
        Effect.provide(counting)
      )
      expect(asked).toBe(4)
      expect(yield* store.trace("on")).toHaveLength(4)
    }))

  it("bounds the in-memory store: the oldest trace goes first, long values are cut", () => {
    const store = SpanStore.makeMemory({ maxTraces: 2, maxValueLength: 8 })
    const span = (traceId: string, key: string) => ({
      traceId,
      spanId: `${traceId}-s`,
      name: "invoke_agent a",
      startMs: 0,
      durationMs: 1,
      status: "ok" as const,
      attributes: { "gen_ai.conversation.id": key, note: "0123456789abcdef" },
      events: []
    })
    store.offer(span("t1", "k1"))
    store.offer(span("t2", "k2"))
    store.offer(span("t3", "k3"))
    expect(store.size).toBe(2)
    expect(Effect.runSync(store.trace("k1"))).toEqual([])
    expect(Effect.runSync(store.trace("k3"))[0]!.attributes.note).toBe("01234567…")
  })
})
