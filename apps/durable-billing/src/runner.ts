/**
 * A runner process: `node dist/src/runner.js <port>`. Drives billing runs, sweeps decided runs
 * every second, and drains on SIGTERM. Start two on different ports over the same database.
 */
import { Operator } from "@agentkit/agents"
import { DurableRunner, DurableRuns } from "@agentkit/durable"
import { makeTestCtx } from "@agentkit/testing"
import { Layer } from "effect"
import { billing, model, stores } from "./billing.js"

const port = Number(process.argv[2] ?? "34601")

const Runner = Layer.mergeAll(billing.layer, DurableRunner.sweeper("1 second")).pipe(
  Layer.provideMerge(DurableRuns.layer([billing]).pipe(Layer.provideMerge(Operator.Operator.layer))),
  Layer.provideMerge(
    DurableRunner.layerCluster({
      host: "127.0.0.1",
      port,
      lockExpiration: "10 seconds",
      lockRefresh: "3 seconds",
      shardsPerGroup: 30
    })
  ),
  Layer.provideMerge(Layer.merge(stores(), makeTestCtx({ llm: model, autonomy: "gated" })))
)

DurableRunner.launch(Layer.discard(Runner) as Layer.Layer<never, unknown>)
