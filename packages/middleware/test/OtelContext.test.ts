/**
 * OpenTelemetry code inside an agent run sees the run's spans: a tool that uses the OpenTelemetry
 * API directly (as an instrumented client library does) finds the `execute_tool` span active, a
 * recording span that keeps what it sets, and the spans it starts are children of it. An agent
 * run wraps the tracer (`Tracing.contain`); the wrapper must not hide the spans from
 * OpenTelemetry's context.
 *
 * The provider is registered globally (as `NodeSDK.start()` does in an application: the
 * AsyncLocalStorage context manager), and unregistered when the test ends.
 */
import { Agent, ReActCognition } from "@agentkit/agents"
import { FakeLLM, makeTestCtx, Turn } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import { Resource, Tracer } from "@effect/opentelemetry"
import { describe, expect, it } from "@effect/vitest"
import * as OtelApi from "@opentelemetry/api"
import { resourceFromAttributes } from "@opentelemetry/resources"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node"
import { Effect, Layer, Schema } from "effect"

/** A provider registered globally for the scope, and the Effect tracer over it. */
const registered = Effect.acquireRelease(
  Effect.sync(() => {
    const exporter = new InMemorySpanExporter()
    const resource = resourceFromAttributes({ "service.name": "otel-context-test" })
    const provider = new NodeTracerProvider({ resource, spanProcessors: [new SimpleSpanProcessor(exporter)] })
    provider.register()
    const layer = Tracer.layer.pipe(
      Layer.provide(Layer.succeed(Resource.Resource, resource)),
      Layer.provide(Layer.succeed(Tracer.OtelTracerProvider, provider))
    )
    return { exporter, provider, layer }
  }),
  ({ provider }) =>
    Effect.promise(() => provider.shutdown()).pipe(
      Effect.ensuring(
        Effect.sync(() => {
          OtelApi.trace.disable()
          OtelApi.context.disable()
          OtelApi.propagation.disable()
        })
      )
    )
)

describe("OpenTelemetry code inside a run", () => {
  it.live("a tool using the OpenTelemetry API finds execute_tool active and recording; its spans are children of it", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const { exporter, layer } = yield* registered
        const seen: Array<{ readonly recording: boolean; readonly spanId: string | undefined }> = []
        const lookup = Tool.make("lookup_order", {
          description: "Look up an order through an instrumented client.",
          parameters: { order_id: Schema.String },
          sideEffecting: false,
          handler: async ({ order_id }) => {
            const active = OtelApi.trace.getActiveSpan()
            seen.push({ recording: active?.isRecording() ?? false, spanId: active?.spanContext().spanId })
            active?.setAttribute("app.order_id", order_id)
            await OtelApi.trace.getTracer("client").startActiveSpan("db.query", async (query) => {
              await Promise.resolve()
              query.end()
            })
            return `order ${order_id}: shipped`
          }
        })
        const agent = Agent.make({
          name: "support",
          model: "otel-model",
          cognition: ReActCognition.make({ tools: [lookup] })
        })
        const llm = FakeLLM.script([
          Turn({ toolCalls: [{ id: "c1", name: "lookup_order", arguments: { order_id: "A-771" } }] }),
          Turn({ content: "Shipped." })
        ])
        const result = yield* agent.run("Where is A-771?").pipe(
          Effect.provide(makeTestCtx({ llm })),
          Effect.provide(layer)
        )
        expect(result.output).toBe("Shipped.")

        const spans = exporter.getFinishedSpans()
        const tool = spans.find((span) => span.name === "execute_tool lookup_order")!
        const query = spans.find((span) => span.name === "db.query")!
        expect(seen).toEqual([{ recording: true, spanId: tool.spanContext().spanId }])
        expect(tool.attributes["app.order_id"]).toBe("A-771")
        expect(query.parentSpanContext?.spanId).toBe(tool.spanContext().spanId)
        expect(query.spanContext().traceId).toBe(tool.spanContext().traceId)
      })
    ))
})
