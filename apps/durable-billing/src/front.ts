/**
 * The HTTP front: `node dist/src/front.js <port>`. Starts runs and serves the operator's part
 * (show a run, record a decision) over the store; it runs no workflow itself (a cluster client).
 *
 *   POST /runs                       { runId, input }               -> { runId, executionId }
 *   GET  /runs/:runId                                               -> { runId, status, pending, result? }
 *   POST /runs/:runId/decisions      { pendingId, decision, by }    -> the recorded decision
 *
 * A bad request is a 400 with the typed error's tag and message; an unknown run a 404.
 */
import { Operator, RunState } from "@agentkit/agents"
import { CheckpointStore } from "@agentkit/core"
import { DurableRunner, DurableRuns } from "@agentkit/durable"
import { HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Option, Schema } from "effect"
import { createServer } from "node:http"
import { billing, stores } from "./billing.js"

const port = Number(process.argv[2] ?? "8080")

const failure = (error: { readonly _tag: string; readonly message: string }) =>
  HttpServerResponse.unsafeJson({ error: error._tag, message: error.message }, {
    status: error._tag === "RunNotFound" ? 404 : 400
  })

const StartBody = Schema.Struct({ runId: Schema.String, input: Schema.String })
const DecideBody = Schema.Struct({ pendingId: Schema.String, decision: Schema.Unknown, by: Schema.String })

const router = HttpRouter.empty.pipe(
  HttpRouter.post(
    "/runs",
    Effect.gen(function*() {
      const body = yield* HttpServerRequest.schemaBodyJson(StartBody)
      const runs = yield* DurableRuns.DurableRuns
      const executionId = yield* runs.start("billing", 1, { runId: body.runId, input: body.input, autonomy: "gated" })
      return HttpServerResponse.unsafeJson({ runId: body.runId, executionId }, { status: 202 })
    })
  ),
  HttpRouter.get(
    "/runs/:runId",
    Effect.gen(function*() {
      const { runId } = yield* HttpRouter.schemaPathParams(Schema.Struct({ runId: Schema.String }))
      const store = yield* CheckpointStore
      const record = yield* store.load(runId)
      if (Option.isNone(record)) {
        return HttpServerResponse.unsafeJson({ error: "RunNotFound", message: `no run '${runId}'` }, { status: 404 })
      }
      const state = yield* RunState.decode(runId, record.value.state)
      return HttpServerResponse.unsafeJson({
        runId,
        status: record.value.status,
        pending: state.pending.map((entry) => ({
          id: entry.id,
          kind: entry.kind,
          digest: entry.digest,
          call: entry.call,
          reasons: entry.reasons
        })),
        ...(record.value.result === undefined ? {} : { result: JSON.parse(record.value.result) as unknown })
      })
    })
  ),
  HttpRouter.post(
    "/runs/:runId/decisions",
    Effect.gen(function*() {
      const { runId } = yield* HttpRouter.schemaPathParams(Schema.Struct({ runId: Schema.String }))
      const body = yield* HttpServerRequest.schemaBodyJson(DecideBody)
      const runs = yield* DurableRuns.DurableRuns
      const recorded = yield* runs.decide(runId, body.pendingId, body.decision, body.by)
      return HttpServerResponse.unsafeJson(recorded)
    })
  ),
  Effect.catchTags({
    RequestError: (error) => Effect.succeed(failure({ _tag: "RequestError", message: error.message })),
    ParseError: (error) => Effect.succeed(failure({ _tag: "ParseError", message: error.message }))
  }),
  Effect.catchAll((error) => Effect.succeed(failure(error as { readonly _tag: string; readonly message: string })))
)

const Front = router.pipe(
  HttpServer.serve(),
  Layer.provide(NodeHttpServer.layer(createServer, { port, host: "127.0.0.1" })),
  Layer.provide(DurableRuns.layer([billing]).pipe(Layer.provideMerge(Operator.Operator.layer))),
  Layer.provide(DurableRunner.layerClient({ shardsPerGroup: 30 })),
  Layer.provide(stores())
)

NodeRuntime.runMain(Layer.launch(Front))
