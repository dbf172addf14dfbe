/**
 * A runner process: `node dist/src/runner.js <port>`. Drives billing runs, sweeps decided runs
 * every second, and drains on SIGTERM. Start two on different ports over the same database. Its
 * run lease (10 s, renewed every 3 s) matches its shard lock expiry: a runner killed or stalled
 * past both has its runs taken over by the other.
 */
import { Operator, RunLease } from "@agentkit/agents"
import { DurableRunner, DurableRuns } from "@agentkit/durable"
import { makeTestCtx } from "@agentkit/testing"
import { Duration, Layer } from "effect"
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
  Layer.provideMerge(
    Layer.mergeAll(
      stores(),
      makeTestCtx({ llm: model, autonomy: "gated" }),
      RunLease.layer({
        ttl: Duration.seconds(10),
        heartbeat: Duration.seconds(3),
        owner: `billing-runner-${port}`,
        maxRecoveries: 5
      })
    )
  )
)

DurableRunner.launch(Layer.discard(Runner) as Layer.Layer<never, unknown>)
