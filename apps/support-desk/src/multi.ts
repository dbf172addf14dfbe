/**
 * `pnpm demo:multi`: the support desk's escalation as a graph of agents, offline (a scripted
 * model, an in-memory checkpoint store).
 *
 * - `lookups`: two lookup agents fan out with `runAgents`, one per order, each on its own run;
 * - `draft`: a round-robin coordinator (a writer, then a checker) drafts the reply;
 * - `review`: a human gate: the graph suspends durably, waiting on a `Gate` entry;
 * - `send`: after the approval, the reply goes out.
 *
 * The operator approves the gate and a second runtime (a new process, the same store) resumes
 * the graph: the nodes that finished are not run again.
 */
import { Agent, Approval, Coordinator, Graph, ReActCognition, runAgents } from "@agentkit/agents"
import { CheckpointStore, Invoker, RunContext } from "@agentkit/core"
import { FakeLLM, Turn } from "@agentkit/testing"
import { Effect, Layer, ManagedRuntime } from "effect"
import { isEntry } from "./entry.js"
import { orderTools, seedOrders } from "./orders.js"

/** The customer's message. */
export const REQUEST = "Where are my orders A-771 and B-102?"

const { lookupOrder } = orderTools(seedOrders())

const lookup = (name: string) =>
  Agent.make({
    name,
    model: `lookup-${name}`,
    prompt: "Look the order up; answer with its status.",
    cognition: ReActCognition.make({ tools: [lookupOrder] })
  })

const writer = Agent.make({ name: "writer", model: "writer", prompt: "Draft a short reply to the customer." })
const checker = Agent.make({
  name: "checker",
  model: "checker",
  prompt: "Check the draft against the facts; return the final text."
})

/** The escalation graph. */
export const escalation = Graph.make({
  name: "escalation",
  nodes: {
    lookups: Graph.fn(
      () =>
        Effect.map(
          runAgents([
            [lookup("first"), "A-771"],
            [lookup("second"), "B-102"]
          ]),
          (results) => results.map((result) => result.output).join("; ")
        ),
      { caps: [] }
    ),
    draft: Graph.agent(
      Agent.make({
        name: "desk",
        model: "desk",
        cognition: Coordinator.roundRobin({ children: [writer, checker], maxTurns: 2 })
      }),
      { after: ["lookups"] }
    ),
    review: Graph.gate({ after: ["draft"] }),
    send: Graph.fn(({ outputs }) => `sent: ${outputs["draft"]}`, { after: ["review", "draft"], caps: [] })
  }
})

/** The scripted model: lookups call the tool then answer; the writer drafts; the checker signs off. */
export const scriptedModel = () =>
  FakeLLM.respond((request) => {
    const last = request.messages.at(-1)!
    if (request.model.startsWith("lookup-")) {
      return last.role === "tool"
        ? Turn({ content: last.content })
        : Turn({
          toolCalls: [{ id: `l-${request.model}`, name: "lookup_order", arguments: { order_id: last.content } }]
        })
    }
    if (request.model === "writer") {
      return Turn({ content: "A-771 has shipped and arrives Tuesday; B-102 ships in 2 days." })
    }
    return Turn({ content: "Hi! A-771 has shipped and arrives Tuesday; B-102 ships in 2 days." })
  }).layer

/** One process: a model, the shared store, a run context for the run `escalation-1`. */
const processLayer = (store: CheckpointStore.Service) =>
  Layer.mergeAll(
    Invoker.layer().pipe(Layer.provide(scriptedModel())),
    RunContext.layer({ runId: "escalation-1" }),
    CheckpointStore.layer(store)
  )

/** Runs the graph to its gate in one runtime, approves it, and finishes it in another. Returns the lines it prints. */
export const program = Effect.gen(function*() {
  const lines: Array<string> = []
  const store = CheckpointStore.makeMemory()

  const first = ManagedRuntime.make(processLayer(store))
  const suspended = yield* Effect.promise(() => first.runPromise(escalation.run(REQUEST)))
  yield* Effect.promise(() => first.dispose())
  lines.push(`${suspended.stopReason}: ${Object.keys(suspended.outputs).join(", ")} done`)
  const pending = suspended.suspended?.pending ?? []
  for (const entry of pending) lines.push(`waiting: ${entry.kind} on node '${String(entry.call.arguments["node"])}'`)

  const decisions = Approval.decideEach(pending, (entry) => Approval.approve(entry.digest, { by: "ops@example.com" }))
  const second = ManagedRuntime.make(processLayer(store))
  const result = yield* Effect.promise(() => second.runPromise(escalation.resume("escalation-1", decisions)))
  yield* Effect.promise(() => second.dispose())
  lines.push(`${result.stopReason}:`)
  for (const line of result.output.split("\n")) lines.push(`  ${line}`)
  return lines
})

if (isEntry(import.meta.url)) {
  Effect.runPromise(program).then(
    (lines) => {
      for (const line of lines) console.log(line)
    },
    (error: unknown) => {
      console.error(error)
      process.exitCode = 1
    }
  )
}
