/**
 * The OpenTelemetry cases: tracing on goes through `@effect/opentelemetry`'s `Tracer` layer over
 * an `@opentelemetry/sdk-trace-base` `BasicTracerProvider` with a `BatchSpanProcessor` (its
 * defaults: batches of 512, a queue of 2,048) in front of an exporter that keeps nothing and
 * counts the spans it receives. Tracing off runs untraced in the same runtime.
 *
 * - `otelCase`: agentkit's default setup (as `agentkitCase`) with that tracer;
 * - `otelFloorCase`: the Effect floor's loop (`makeFloorRun`) with its spans on that tracer, so
 *   the report shows what OpenTelemetry costs a hand-written Effect loop.
 *
 * The issue-19 target is on the "tracing on ÷ off" row of `otelCase`: ≤ 2×.
 *
 * A broken tracer fails the benchmark: at setup one traced run must export at least the workload's
 * spans (one `invoke_agent`, a `chat` per model step, an `execute_tool` per tool call) and an
 * untraced run none; after every measurement, every traced run since must have exported exactly
 * as many spans as that first one (none dropped, none lost).
 */
import { Invoker } from "@agentkit/core"
import { Resource, Tracer } from "@effect/opentelemetry"
import { resourceFromAttributes } from "@opentelemetry/resources"
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter
} from "@opentelemetry/sdk-trace-base"
import { Layer, ManagedRuntime } from "effect"
import type { Case, Runner } from "../Case.js"
import type { MockModel } from "../MockModel.js"
import type { Workload } from "../Workload.js"
import { mockModel, runnerOf } from "./agentkit.js"
import { makeFloorRun } from "./floor.js"

/**
 * Opt-in: with the default sizes the two cases add about two minutes to `pnpm bench` for the
 * minimal workload alone (a traced run costs several times an untraced one), far over the ~15 s
 * a default case may add.
 */
const optIn = true

/** The tracer's name in the report's "tracer" row. */
const tracerName = "@effect/opentelemetry, batch exporter"

/** An exporter that keeps nothing: it counts the spans it gets (and, while `names` is set, their names). */
class CountingExporter implements SpanExporter {
  exported = 0
  names: Array<string> | undefined = undefined
  export(spans: Array<ReadableSpan>, resultCallback: Parameters<SpanExporter["export"]>[1]): void {
    this.exported += spans.length
    if (this.names !== undefined) { for (const span of spans) this.names.push(span.name) }
    resultCallback({ code: 0 }) // ExportResultCode.SUCCESS
  }
  shutdown(): Promise<void> {
    return Promise.resolve()
  }
}

/** The OpenTelemetry pipeline of a case: the Effect tracer layer, its exporter and provider. */
const makePipeline = () => {
  const exporter = new CountingExporter()
  const processor = new BatchSpanProcessor(exporter)
  const resource = resourceFromAttributes({ "service.name": "agentkit-bench" })
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] })
  const layer = Tracer.layer.pipe(
    Layer.provide(Layer.succeed(Resource.Resource, resource)),
    Layer.provide(Layer.succeed(Tracer.OtelTracerProvider, provider))
  )
  return { exporter, provider, layer }
}

/** The spans every traced run of `workload` must export at least (agentkit adds its own, such as `policy.check`). */
const requiredSpans = (workload: Workload): ReadonlyArray<string> => [
  "invoke_agent bench",
  ...Array.from({ length: workload.toolRounds + 1 }, () => `chat ${workload.model}`),
  ...Array.from({ length: workload.toolRounds }, () => "execute_tool echo")
]

/** The names of `required` not in `names` (as a multiset: each name as often as required). */
const missing = (required: ReadonlyArray<string>, names: ReadonlyArray<string>): ReadonlyArray<string> => {
  const left = [...names]
  return required.filter((name) => {
    const at = left.indexOf(name)
    if (at >= 0) left.splice(at, 1)
    return at < 0
  })
}

/**
 * Wraps a runner built over `pipeline`. At setup: a traced run must export the workload's spans
 * (their count is then the case's spans per traced run) and an untraced run none. `verify`
 * (after every measurement): the exporter has received exactly that many spans per traced run
 * since, none dropped and none from untraced runs (the batch processor is flushed first).
 */
const verified = async (
  workload: Workload,
  pipeline: ReturnType<typeof makePipeline>,
  inner: Runner
): Promise<Runner> => {
  const { exporter, provider } = pipeline
  let perTracedRun = 0
  try {
    exporter.names = []
    if ((await inner.run(true)) !== workload.answer) throw new Error("a traced run did not finish the workload")
    await provider.forceFlush()
    const absent = missing(requiredSpans(workload), exporter.names)
    if (absent.length > 0) {
      throw new Error(`a traced run exported the spans [${exporter.names.join(", ")}], without [${absent.join(", ")}]`)
    }
    perTracedRun = exporter.names.length
    exporter.names = []
    await inner.run(false)
    await provider.forceFlush()
    if (exporter.names.length > 0) throw new Error(`an untraced run exported the spans [${exporter.names.join(", ")}]`)
  } catch (error) {
    await inner.dispose()
    throw new Error(`the OpenTelemetry tracer is broken: ${error instanceof Error ? error.message : String(error)}`)
  } finally {
    exporter.names = undefined
  }
  let tracedRuns = 0
  const base = exporter.exported
  return {
    run: (tracing) => {
      if (tracing) tracedRuns++
      return inner.run(tracing)
    },
    verify: async () => {
      await provider.forceFlush()
      const received = exporter.exported - base
      if (received !== tracedRuns * perTracedRun) {
        throw new Error(
          `the OpenTelemetry exporter received ${received} spans for ${tracedRuns} traced runs of ${perTracedRun} spans each`
        )
      }
    },
    dispose: inner.dispose
  }
}

/** agentkit's default configuration with `@effect/opentelemetry` as the tracer. */
export const otelCase = (workload: Workload): Case => ({
  id: "otel",
  title: "agentkit + OpenTelemetry",
  tracer: tracerName,
  workload,
  floor: false,
  optIn,
  setup: async (model) => {
    const pipeline = makePipeline()
    const runner = await runnerOf(
      workload,
      Layer.merge(Layer.provide(Invoker.layer(), mockModel(model)), pipeline.layer),
      () => pipeline.provider.shutdown()
    )
    return verified(workload, pipeline, runner)
  }
})

/** The Effect floor's loop with its spans on `@effect/opentelemetry`. */
export const otelFloorCase = (workload: Workload): Case => ({
  id: "floor-otel",
  title: "Effect floor + OpenTelemetry",
  tracer: tracerName,
  workload,
  floor: false,
  optIn,
  setup: async (model: MockModel) => {
    const pipeline = makePipeline()
    const floorRun = makeFloorRun(model, workload)
    const runtime = ManagedRuntime.make(pipeline.layer)
    await runtime.runtime()
    return verified(workload, pipeline, {
      run: (tracing) => runtime.runPromise(floorRun(tracing)).then((result) => result.output),
      dispose: () => runtime.dispose().then(() => pipeline.provider.shutdown())
    })
  }
})
