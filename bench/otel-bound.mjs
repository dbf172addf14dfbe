// The least `@effect/opentelemetry` can cost a traced run of the minimal workload, whatever the
// framework around it does, beside what it costs agentkit (the `otel` case). Two costs are
// `@effect/opentelemetry`'s and the OpenTelemetry SDK's own, and every Effect program pays them:
//   - its tracer's `context` hook, which Effect's run loop calls around every step of a fiber that
//     has a span (it makes that span OpenTelemetry's active one for the step), times the steps a
//     traced run takes with a span open (counted: the calls of `context.with` the hook makes);
//   - its spans: the ones a traced run exports (read from one run: name, kind, attributes), each
//     started, given its attributes and ended through the tracer, as `Effect.withSpan` would.
// Both are timed in tight loops (warm, no other allocation): a lower bound. Their sum over the
// untraced run's CPU, plus one, is the least "tracing on ÷ off" any framework making these spans
// in this many steps can reach. Run after `pnpm bench` (or `tsc -b bench`) has built it.
//   node bench/otel-bound.mjs [pairs] [runs per block]
import { Resource, Tracer as OtelTracer } from "@effect/opentelemetry"
import * as OtelApi from "@opentelemetry/api"
import { resourceFromAttributes } from "@opentelemetry/resources"
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Context, Effect, Exit, Layer, Option } from "effect"

const [pairsText = "20", blockText = "1000"] = process.argv.slice(2)
const pairs = Number(pairsText)
const block = Number(blockText)
const { minimal } = await import("./dist/Workload.js")
const MockModel = await import("./dist/MockModel.js")
const { otelCase } = await import("./dist/cases/otel.js")
const runner = await otelCase(minimal).setup(MockModel.make(minimal))
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

const run = async (tracing) => {
  if ((await runner.run(tracing)) !== minimal.answer) throw new Error("a run did not finish the workload")
}
for (let i = 0; i < 3000; i++) {
  await run(false)
  await run(true)
}

// 1. What a traced run does: its steps with a span open, and the spans it exports.
const contextApi = OtelApi.context
const withOriginal = contextApi.with
let steps = 0
contextApi.with = function(...args) {
  steps++
  return withOriginal.apply(this, args)
}
const counted = 1000
for (let i = 0; i < counted; i++) await run(true)
contextApi.with = withOriginal
const stepsPerRun = steps / counted
const exported = []
const onEnd = BatchSpanProcessor.prototype.onEnd
BatchSpanProcessor.prototype.onEnd = function(span) {
  exported.push({ name: span.name, kind: span.kind, attributes: { ...span.attributes } })
  return onEnd.call(this, span)
}
await run(true)
BatchSpanProcessor.prototype.onEnd = onEnd
// (not quite a whole number: now and then the run loop yields, a step more)
if (exported.length === 0 || stepsPerRun < 1) {
  throw new Error(`a traced run exported ${exported.length} spans in ${stepsPerRun} steps`)
}

// 2. The hook and the spans, through a tracer of their own over the same pipeline as the case's.
const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ "service.name": "agentkit-bench" }),
  spanProcessors: [
    new BatchSpanProcessor({ export: (_spans, done) => done({ code: 0 }), shutdown: () => Promise.resolve() })
  ]
})
const tracer = await Effect.runPromise(
  Effect.provide(
    OtelTracer.make,
    Layer.provide(
      OtelTracer.layerTracer,
      Layer.mergeAll(Layer.succeed(OtelTracer.OtelTracerProvider, provider), Resource.layerEmpty)
    )
  )
)
const kinds = ["internal", "server", "client", "producer", "consumer"] // OpenTelemetry's SpanKind order
const root = tracer.span("root", Option.none(), Context.empty(), [], 0n, "internal", {})
const fiber = { currentSpan: root }
const step = () => 1
const nsPer = (count, body) => {
  const start = process.hrtime.bigint()
  body(count)
  return Number(process.hrtime.bigint() - start) / count
}
const hookNs = []
const spansUs = []
for (let round = 0; round < 15; round++) {
  let sink = 0
  const hooked = nsPer(1_000_000, (n) => {
    for (let i = 0; i < n; i++) sink += tracer.context(step, fiber)
  })
  const bare = nsPer(1_000_000, (n) => {
    for (let i = 0; i < n; i++) sink += step()
  })
  hookNs.push(hooked - bare)
  spansUs.push(
    nsPer(20_000, (n) => {
      for (let i = 0; i < n; i++) {
        for (const { name, kind, attributes } of exported) {
          const span = tracer.span(
            name,
            Option.some(root),
            Context.empty(),
            [],
            process.hrtime.bigint(),
            kinds[kind],
            {}
          )
          for (const key in attributes) span.attribute(key, attributes[key])
          span.end(process.hrtime.bigint(), Exit.void)
        }
      }
    }) / 1000
  )
  if (sink === 0) throw new Error("unreachable")
  await provider.forceFlush()
}

// 3. agentkit's untraced and traced runs (CPU), in alternating blocks.
const cpuPerRun = async (tracing) => {
  const start = process.cpuUsage()
  for (let i = 0; i < block; i++) await run(tracing)
  const used = process.cpuUsage(start)
  return (used.user + used.system) / block
}
const off = []
const ratios = []
for (let pair = 0; pair < pairs; pair++) {
  const first = pair % 2 === 0
  const a = await cpuPerRun(!first)
  const b = await cpuPerRun(first)
  const [untraced, traced] = first ? [a, b] : [b, a]
  off.push(untraced)
  ratios.push(traced / untraced)
}
await runner.dispose()
await provider.shutdown()

const hook = median(hookNs)
const spans = median(spansUs)
const untraced = median(off)
const least = (stepsPerRun * hook) / 1000 + spans
const names = exported.map((span) => `${span.name} (${Object.keys(span.attributes).length})`).join(", ")
console.log(`a traced run: ${stepsPerRun.toFixed(1)} steps with a span open; spans (attributes): ${names}`)
console.log(
  `@effect/opentelemetry's context hook: ${hook.toFixed(0)} ns a step, ${
    ((stepsPerRun * hook) / 1000).toFixed(1)
  } µs a run`
)
console.log(`its spans, made directly: ${spans.toFixed(1)} µs a run`)
console.log(`agentkit untraced: ${untraced.toFixed(1)} µs a run (CPU)`)
console.log(
  `least tracing on ÷ off with these spans in these steps: ${(1 + least / untraced).toFixed(2)}×; agentkit's: ${
    median(ratios).toFixed(2)
  }× (median of ${pairs} pairs of ${block} runs each)`
)
