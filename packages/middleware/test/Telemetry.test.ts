import { Agent, ReActCognition } from "@agentkit/agents"
import { ConfigurationError, Invoker, Message, Tracing, Usage } from "@agentkit/core"
import type { Chat } from "@agentkit/core"
import { Audit, Middleware, Telemetry } from "@agentkit/middleware"
import { FakeLLM, Fixture, makeTestCtx, Turn } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Metric, TestClock, Tracer } from "effect"
import { call, countingTool, setup } from "./fixtures.js"

const { replying: model } = FakeLLM
const { request, response, timeoutError: timeout } = Fixture

/** The state of a metric with this name whose tags include all of `tags`, if any. */
const metricState = (name: string, tags: Record<string, string>) =>
  Effect.map(Metric.snapshot, (pairs) => {
    const found = pairs.filter(
      (pair) =>
        pair.metricKey.name === name &&
        Object.entries(tags).every(([key, value]) =>
          pair.metricKey.tags.some((tag) => tag.key === key && tag.value === value)
        )
    )
    return found.map((pair) => pair.metricState as unknown as { readonly count: number; readonly sum: number })
  })

const chatOnce = (
  req: Chat.ChatRequest,
  options: { readonly reply?: Chat.ChatResponse; readonly telemetry?: Telemetry.Options } = {}
) => {
  const llm = model((_n, r, emit) => {
    const answer = options.reply ?? response({ model: r.model })
    if (answer.content !== "") emit({ text: answer.content })
    return Effect.succeed(answer)
  })
  return Effect.flatMap(Invoker, (i) => i.chat(req)).pipe(
    Effect.provide(
      setup({ chatModel: llm.layer, chatMiddleware: [Telemetry.telemetry(options.telemetry)], scope: { orgId: 42 } })
    )
  )
}

describe("Telemetry on the chat span", () => {
  it.effect("usage, cost, cache savings, tool calls, request settings and the conversation id", () => {
    const tracer = Tracing.recording()
    const toolCalls = Array.from({ length: 25 }, (_, i) => ({ id: `c${i}`, name: `t${i}`, arguments: {} }))
    return Effect.gen(function*() {
      yield* chatOnce(
        { ...request("tel-1"), maxTokens: 512, temperature: 0.2 },
        {
          reply: response({
            model: "tel-1-2026",
            requestId: "req_1",
            toolCalls,
            finishReason: "tool_use",
            usage: Usage.make({
              inputTokens: 100,
              outputTokens: 20,
              cacheReadTokens: 80,
              cacheWriteTokens: 5,
              costUsd: 0.002
            })
          })
        }
      )
      const span = tracer.one("chat tel-1")
      const attributes = Object.fromEntries(span.attributes)
      expect(attributes).toMatchObject({
        "gen_ai.conversation.id": "run-1",
        "gen_ai.request.max_tokens": 512,
        "gen_ai.request.temperature": 0.2,
        "gen_ai.response.model": "tel-1-2026",
        "gen_ai.response.id": "req_1",
        "gen_ai.response.finish_reasons": ["tool_use"],
        "gen_ai.usage.cost_usd": 0.002,
        "gen_ai.usage.cache_read_input_tokens": 80,
        "gen_ai.usage.cache_creation_input_tokens": 5,
        "gen_ai.response.tool_calls_count": 25
      })
      expect(attributes["gen_ai.usage.cost_saved_by_cache_usd"]).toBeCloseTo(80 * (0.002 / 100) * 0.9, 12)
      expect(attributes["gen_ai.response.tool_calls"]).toBe(
        `${toolCalls.slice(0, 16).map((c) => c.name).join(",")},+9 more`
      )
      expect(attributes["gen_ai.response.duration_ms"]).toBeGreaterThanOrEqual(0)
    }).pipe(Effect.provide(tracer.layer))
  })

  it.effect("no cache reads: no cost-saved attribute; 16 tool calls or fewer are listed plainly", () => {
    const tracer = Tracing.recording()
    return Effect.gen(function*() {
      yield* chatOnce(request("tel-2"), {
        reply: response({
          toolCalls: [{ id: "a", name: "lookup", arguments: {} }, { id: "b", name: "cancel", arguments: {} }]
        })
      })
      const attributes = Object.fromEntries(tracer.one("chat tel-2").attributes)
      expect(attributes["gen_ai.usage.cost_saved_by_cache_usd"]).toBeUndefined()
      expect(attributes["gen_ai.response.tool_calls"]).toBe("lookup,cancel")
      expect(attributes["gen_ai.response.tool_calls_count"]).toBe(2)
    }).pipe(Effect.provide(tracer.layer))
  })

  it.effect("first-token latency is at least the delay before the first text; duration at least that", () => {
    const tracer = Tracing.recording()
    const slow = model((_n, req, emit) =>
      Effect.gen(function*() {
        yield* Effect.sleep("50 millis")
        emit({ text: "" }) // an empty delta is not a token
        yield* Effect.sleep("10 millis")
        emit({ text: "hi" })
        yield* Effect.sleep("30 millis")
        return response({ model: req.model })
      })
    )
    const silent = model((_n, req) => Effect.as(Effect.sleep("20 millis"), response({ model: req.model, content: "" })))
    const run = (chatModel: typeof slow, name: string) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.fork(Effect.flatMap(Invoker, (i) => i.chat(request(name))))
        yield* TestClock.adjust("100 millis")
        yield* Fiber.join(fiber)
      }).pipe(Effect.provide(setup({ chatModel: chatModel.layer, chatMiddleware: [Telemetry.telemetry()] })))
    return Effect.gen(function*() {
      yield* run(slow, "tel-slow")
      yield* run(silent, "tel-silent")
      const slowSpan = Object.fromEntries(tracer.one("chat tel-slow").attributes)
      expect(slowSpan["gen_ai.response.first_token_latency_ms"]).toBe(60)
      expect(slowSpan["gen_ai.response.duration_ms"]).toBe(90)
      const silentSpan = Object.fromEntries(tracer.one("chat tel-silent").attributes)
      expect(silentSpan["gen_ai.response.first_token_latency_ms"]).toBeUndefined()
      expect(silentSpan["gen_ai.response.duration_ms"]).toBe(20)
    }).pipe(Effect.provide(tracer.layer))
  })

  it.effect("captureContent: one event per request message and a gen_ai.choice; off by default", () => {
    const tracer = Tracing.recording()
    const req: Chat.ChatRequest = {
      model: "tel-content",
      messages: [Message.system("Be brief."), Message.user("hello there"), Message.user("x".repeat(9000))],
      tools: []
    }
    return Effect.gen(function*() {
      yield* chatOnce(req, {
        reply: response({ content: "answer", usage: Usage.make({ inputTokens: 10, outputTokens: 5 }) }),
        telemetry: { captureContent: true }
      })
      yield* chatOnce({ ...req, model: "tel-no-content" })
      yield* chatOnce({ ...req, model: "tel-empty", messages: [] }, { telemetry: { captureContent: true } })
      const events = tracer.one("chat tel-content").events
      expect(events.map((e) => e.name)).toEqual([
        "gen_ai.system.message",
        "gen_ai.user.message",
        "gen_ai.user.message",
        "gen_ai.choice"
      ])
      expect(events[0]!.attributes).toEqual({
        "gen_ai.message.role": "system",
        "gen_ai.message.content": "Be brief.",
        "gen_ai.message.tokens": 2
      })
      const long = events[2]!.attributes["gen_ai.message.content"] as string
      expect(Buffer.byteLength(long)).toBeLessThanOrEqual(8192)
      expect(long.endsWith(" [truncated]")).toBe(true)
      expect(long.startsWith("xxxx")).toBe(true)
      expect(events[2]!.attributes["gen_ai.message.tokens"]).toBe(2250)
      expect(events[3]!.attributes).toEqual({
        "gen_ai.choice.role": "assistant",
        "gen_ai.choice.content": "answer",
        "gen_ai.choice.finish_reason": "end_turn",
        "gen_ai.choice.tokens": 5
      })
      expect(tracer.one("chat tel-no-content").events).toEqual([])
      expect(tracer.one("chat tel-empty").events.map((e) => e.name)).toEqual(["gen_ai.choice"])
    }).pipe(Effect.provide(tracer.layer))
  })

  it.effect("a tracer that throws never breaks the run", () => {
    // spans that throw on every event and on every attribute set after the span started
    const started = new Set([
      "gen_ai.operation.name",
      "gen_ai.request.model",
      "gen_ai.tool.name",
      "gen_ai.tool.call.id",
      "gen_ai.tool.type"
    ])
    class BrokenSpan extends Tracing.RecordedSpan {
      override attribute(key: string, value: unknown): void {
        if (!started.has(key)) throw new Error("tracer broke")
        super.attribute(key, value)
      }
      override event(): void {
        throw new Error("tracer broke")
      }
    }
    const broken = Tracer.make({
      span: (name, parent, context, links, startTime, kind) =>
        new BrokenSpan(name, "1", "1", parent, context, links, startTime, kind),
      context: (f) => f()
    })
    return Effect.gen(function*() {
      const answer = yield* chatOnce(request("tel-broken"), { telemetry: { captureContent: true } })
      expect(answer.content).toBe("ok")
      const lookup = countingTool("lookup", { sideEffecting: false })
      const outcome = yield* Effect.flatMap(Invoker, (i) => i.tool(call("lookup"), lookup.tool)).pipe(
        Effect.provide(setup({ toolMiddleware: [Telemetry.telemetry({ captureContent: true })] }))
      )
      expect(outcome.text).toBe("ok")
    }).pipe(Effect.provide(Layer.setTracer(broken)))
  })
})

describe("Telemetry on the tool span", () => {
  it.effect("gen_ai.tool.result: name, size and duration; content only with captureContent (cut to 4 KB)", () => {
    const tracer = Tracing.recording()
    const big = countingTool("big_report", { sideEffecting: false }, () => "é".repeat(3000))
    const small = countingTool("small", { sideEffecting: false }, () => ({ status: "ok" }))
    return Effect.gen(function*() {
      yield* Effect.flatMap(
        Invoker,
        (i) => Effect.zipRight(i.tool(call("big_report", { q: 1 }), big.tool), i.tool(call("small"), small.tool))
      ).pipe(
        Effect.provide(setup({ toolMiddleware: [Telemetry.telemetry({ captureContent: true })] }))
      )
      yield* Effect.flatMap(Invoker, (i) => i.tool(call("small", {}, "c2"), small.tool)).pipe(
        Effect.provide(setup({ toolMiddleware: [Telemetry.telemetry()] }))
      )
      const [bigSpan] = tracer.named("execute_tool big_report")
      const result = bigSpan!.events.find((e) => e.name === "gen_ai.tool.result")!.attributes
      expect(result["gen_ai.tool.name"]).toBe("big_report")
      expect(result["gen_ai.tool.result_size_bytes"]).toBe(6000)
      expect(result["gen_ai.tool.duration_ms"]).toBeGreaterThanOrEqual(0)
      const content = result["gen_ai.tool.result_content"] as string
      expect(Buffer.byteLength(content)).toBeLessThanOrEqual(4096)
      expect(content.endsWith(" [truncated]")).toBe(true)
      expect(bigSpan!.attributes.get("gen_ai.tool.call.arguments")).toBe("{\"q\":1}")
      const [withContent, withoutContent] = tracer.named("execute_tool small")
      expect(withContent!.events[0]!.attributes["gen_ai.tool.result_content"]).toBe("{\"status\":\"ok\"}")
      expect(withoutContent!.events[0]!.attributes).toEqual({
        "gen_ai.tool.name": "small",
        "gen_ai.tool.result_size_bytes": 15,
        "gen_ai.tool.duration_ms": 0
      })
      expect(withoutContent!.attributes.has("gen_ai.tool.call.arguments")).toBe(false)
    }).pipe(Effect.provide(tracer.layer))
  })
})

describe("Telemetry sampling", () => {
  it("ratioSampler keeps a deterministic share of runs by correlation id", () => {
    const half = Tracing.ratioSampler(0.5)
    const ids = Array.from({ length: 2000 }, (_, i) => `run-${i}`)
    const kept = ids.filter((id) => half.shouldSample(id))
    expect(kept.length).toBeGreaterThan(850)
    expect(kept.length).toBeLessThan(1150)
    expect(ids.filter((id) => half.shouldSample(id))).toEqual(kept)
    expect(ids.every((id) => Tracing.ratioSampler(1).shouldSample(id))).toBe(true)
    expect(ids.some((id) => Tracing.ratioSampler(0).shouldSample(id))).toBe(false)
    // a smaller ratio keeps a subset of a larger one
    const tenth = ids.filter((id) => Tracing.ratioSampler(0.1).shouldSample(id))
    expect(tenth.every((id) => kept.includes(id))).toBe(true)
    expect(() => Tracing.ratioSampler(1.5)).toThrow(ConfigurationError)
    expect(() => Tracing.ratioSampler(Number.NaN)).toThrow(ConfigurationError)
  })

  it.effect("a dropped run gets no span additions, inner spans are no-ops, metrics are still recorded", () => {
    const tracer = Tracing.recording()
    const llm = model((_n, req) =>
      Effect.as(Effect.void.pipe(Effect.withSpan("provider.http")), response({ model: req.model }))
    )
    const telemetry = Telemetry.telemetry({ sampler: Tracing.ratioSampler(0) })
    return Effect.gen(function*() {
      yield* Effect.flatMap(Invoker, (i) => i.chat(request("tel-dropped"))).pipe(
        Effect.provide(setup({ chatModel: llm.layer, chatMiddleware: [telemetry] }))
      )
      const span = tracer.one("chat tel-dropped")
      expect(span.attributes.has("gen_ai.usage.cost_usd")).toBe(false)
      expect(tracer.named("provider.http")).toEqual([])
      const durations = yield* metricState("gen_ai.client.operation.duration", {
        "gen_ai.request.model": "tel-dropped"
      })
      expect(durations.map((d) => d.count)).toEqual([1])
    }).pipe(Effect.provide(tracer.layer))
  })

  it.effect("sampleRun drops every span of an unsampled run, and keeps a sampled one whole", () => {
    const tracer = Tracing.recording()
    const agent = Agent.make({ name: "sampled", model: "m" })
    const sampler = { shouldSample: (id: string) => id === "keep-me" }
    const runAs = (correlationId: string) =>
      agent.run("hi").pipe(
        Tracing.sampleRun(sampler),
        Effect.provide(makeTestCtx({ llm: FakeLLM.script([Turn({ content: "hello" })]), correlationId }))
      )
    return Effect.gen(function*() {
      yield* runAs("drop-me")
      expect(tracer.spans).toEqual([])
      yield* runAs("keep-me")
      expect(tracer.spans.map((s) => s.name)).toEqual(["invoke_agent sampled", "chat m"])
    }).pipe(Effect.provide(tracer.layer))
  })
})

describe("Telemetry metrics", () => {
  it.effect("token usage (input 100, output 20) and duration, tagged with the model, provider and org", () =>
    Effect.gen(function*() {
      yield* chatOnce(request("tel-metrics"))
      const tags = {
        "gen_ai.request.model": "tel-metrics",
        "gen_ai.provider.name": "fake",
        "agentkit.scope.org_id": "42"
      }
      const input = yield* metricState("gen_ai.client.token.usage", { ...tags, "gen_ai.token.type": "input" })
      const output = yield* metricState("gen_ai.client.token.usage", { ...tags, "gen_ai.token.type": "output" })
      expect(input.map((s) => [s.count, s.sum])).toEqual([[1, 100]])
      expect(output.map((s) => [s.count, s.sum])).toEqual([[1, 20]])
      const duration = yield* metricState("gen_ai.client.operation.duration", tags)
      expect(duration).toHaveLength(1)
      expect(duration[0]!.count).toBe(1)
      expect(duration[0]!.sum).toBeGreaterThanOrEqual(0)
      expect(duration[0]!.sum).toBeLessThan(5)
    }))

  it.effect("zero usage: no token samples, one duration", () =>
    Effect.gen(function*() {
      yield* chatOnce(request("tel-zero"), { reply: response({ usage: Usage.zero }) })
      expect(yield* metricState("gen_ai.client.token.usage", { "gen_ai.request.model": "tel-zero" })).toEqual([])
      expect((yield* metricState("gen_ai.client.operation.duration", { "gen_ai.request.model": "tel-zero" })).length)
        .toBe(1)
    }))

  it.effect("a failed call counts one error with its type, and the error propagates", () =>
    Effect.gen(function*() {
      const llm = model(() => Effect.fail(timeout()))
      const error = yield* Effect.flip(
        Effect.flatMap(Invoker, (i) => i.chat(request("tel-error"))).pipe(
          Effect.provide(setup({ chatModel: llm.layer, chatMiddleware: [Telemetry.telemetry()] }))
        )
      )
      expect(error._tag).toBe("ChatModelError")
      const errors = yield* metricState("gen_ai.client.error.count", {
        "gen_ai.request.model": "tel-error",
        "error.type": "ChatModelError"
      })
      expect(errors.map((s) => (s as unknown as { readonly count: number }).count)).toEqual([1])
    }))
})

describe("Export with @effect/opentelemetry", () => {
  it.live("the spans, their GenAI attributes and events, and the metrics arrive at the exporters", () =>
    Effect.gen(function*() {
      const { NodeSdk } = yield* Effect.promise(() => import("@effect/opentelemetry"))
      const { InMemorySpanExporter, SimpleSpanProcessor } = yield* Effect.promise(() =>
        import("@opentelemetry/sdk-trace-base")
      )
      const { MetricReader } = yield* Effect.promise(() => import("@opentelemetry/sdk-metrics"))
      class TestReader extends MetricReader {
        protected override onForceFlush() {
          return Promise.resolve()
        }
        protected override onShutdown() {
          return Promise.resolve()
        }
      }
      const exporter = new InMemorySpanExporter()
      const reader = new TestReader()
      const audit = Audit.memoryStore()
      const lookup = countingTool(
        "lookup_order",
        { sideEffecting: false, idempotent: true },
        () => "order A-771: shipped"
      )
      const agent = Agent.make({
        name: "support",
        model: "otel-model",
        cognition: ReActCognition.make({ tools: [lookup.tool] })
      })
      const llm = FakeLLM.script([
        Turn({ toolCalls: [{ id: "c1", name: "lookup_order", arguments: { order_id: "A-771" } }] }),
        Turn({ content: "Shipped." })
      ])
      const pipelines = Middleware.recommended({ audit: { store: audit } })
      yield* Effect.gen(function*() {
        const result = yield* agent.run("Where is A-771?").pipe(Effect.provide(makeTestCtx({ llm, ...pipelines })))
        expect(result.output).toBe("Shipped.")
        // read inside the scope: shutting the SDK down clears the exporter
        const spans = exporter.getFinishedSpans()
        expect(spans.map((s) => s.name).sort()).toEqual([
          "chat otel-model",
          "chat otel-model",
          "execute_tool lookup_order",
          "invoke_agent support"
        ])
        const chat = spans.find((s) => s.name === "chat otel-model")!
        // an array attribute arrives as an array of strings, not as its JSON text
        expect(
          spans.filter((s) => s.name === "chat otel-model").map((s) => s.attributes["gen_ai.response.finish_reasons"])
        ).toEqual([
          ["tool_use"],
          ["end_turn"]
        ])
        expect(chat.attributes["gen_ai.usage.cost_usd"]).toBe(0.0001)
        expect(chat.attributes["gen_ai.response.tool_calls"]).toBe("lookup_order")
        expect(chat.attributes["gen_ai.conversation.id"]).toBe("test-run")
        const tool = spans.find((s) => s.name === "execute_tool lookup_order")!
        expect(tool.events.map((e) => e.name)).toContain("gen_ai.tool.result")
        const agentSpan = spans.find((s) => s.name === "invoke_agent support")!
        expect(tool.parentSpanContext?.spanId).toBe(agentSpan.spanContext().spanId)
        const { resourceMetrics } = yield* Effect.promise(() => reader.collect())
        const names = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics.map((m) => m.descriptor.name))
        expect(names).toEqual(expect.arrayContaining(["gen_ai.client.token.usage", "gen_ai.client.operation.duration"]))
        const usage = resourceMetrics.scopeMetrics
          .flatMap((scope) => scope.metrics)
          .filter((m) => m.descriptor.name === "gen_ai.client.token.usage")
          .flatMap((m): ReadonlyArray<{ readonly attributes: Record<string, unknown> }> => m.dataPoints)
          .filter((p) => p.attributes["gen_ai.request.model"] === "otel-model")
        expect(usage.length).toBeGreaterThan(0)
        expect(audit.records.map((r) => r.decision)).toEqual(["executed"])
      }).pipe(
        Effect.provide(
          NodeSdk.layer(() => ({
            resource: { serviceName: "t" },
            spanProcessor: new SimpleSpanProcessor(exporter),
            metricReader: reader
          }))
        )
      )
    }))
})
