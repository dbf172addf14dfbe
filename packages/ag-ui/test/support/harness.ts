/** A real AG-UI endpoint on 127.0.0.1 (a random port) over a scripted support agent, for tests. */
import { AgUi, Unauthenticated } from "@agentkit/ag-ui"
import { Agent, Operator, ReActCognition } from "@agentkit/agents"
import type { AuditStore, CheckpointStore } from "@agentkit/core"
import { Invoker, Scope } from "@agentkit/core"
import { FakeLLM, Turn } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import { HttpLayerRouter, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Exit, Layer, Schema, Scope as EffectScope } from "effect"
import { createServer } from "node:http"

/** The order book the tools act on, and what the slow tool saw. */
export interface World {
  readonly orders: Map<string, string>
  readonly aborted: Array<string>
  readonly started: Array<string>
}

export const newWorld = (): World => ({
  orders: new Map([["A-771", "shipped 2026-08-14, arriving Tuesday"], ["B-102", "processing"]]),
  aborted: [],
  started: []
})

/** The scripted model: it reads the conversation, so a run resumed in another process gets the same answers. */
export const model = () =>
  FakeLLM.respond((request) => {
    const last = request.messages.at(-1)
    if (last?.role === "tool") {
      if (last.name === "lookup_order") return Turn({ content: `Order A-771 is ${last.content}.`, chunkSize: 4 })
      if (last.name === "cancel_order") {
        return Turn({
          content: last.isError ? `I did not cancel B-102 (${last.content}).` : `Done: ${last.content}.`,
          chunkSize: 4
        })
      }
      return Turn({ content: `The check said: ${last.content}` })
    }
    const text = last?.role === "user" ? last.content : ""
    if (/broken/i.test(text)) {
      return FakeLLM.failure({ reason: "invalid_request", retryable: false, message: "the model refused the request" })
    }
    if (/cancel/i.test(text)) {
      return Turn({
        content: "I'll cancel order B-102 for you.",
        chunkSize: 6,
        toolCalls: [{ id: "call-cancel", name: "cancel_order", arguments: { order_id: "B-102" } }]
      })
    }
    if (/slow/i.test(text)) {
      return Turn({ toolCalls: [{ id: "call-slow", name: "slow_check", arguments: { what: "warehouse" } }] })
    }
    return Turn({
      content: "Let me look that up. ",
      chunkSize: 5,
      toolCalls: [{ id: "call-look", name: "lookup_order", arguments: { order_id: "A-771" } }]
    })
  }).layer

export const agentOf = (world: World) => {
  const lookup = Tool.make("lookup_order", {
    description: "Look up an order by its id and return its status line.",
    parameters: { order_id: Schema.String },
    sideEffecting: false,
    idempotent: true,
    handler: ({ order_id }) => Effect.succeed(world.orders.get(order_id) ?? "unknown")
  })
  const cancel = Tool.make("cancel_order", {
    description: "Cancel an order by its id. This really cancels it: there is no undo.",
    parameters: { order_id: Schema.String },
    sideEffecting: true,
    handler: ({ order_id }) =>
      Effect.sync(() => {
        world.orders.set(order_id, "cancelled")
        return `order ${order_id} cancelled`
      })
  })
  const slow = Tool.make("slow_check", {
    description: "Run a slow warehouse check; it takes until it is cancelled.",
    parameters: { what: Schema.String },
    sideEffecting: false,
    idempotent: true,
    handler: ({ what }, { signal }) =>
      Effect.async<string>(() => {
        world.started.push(what)
        signal.addEventListener("abort", () => world.aborted.push(what))
        return Effect.void
      })
  })
  return Agent.make({
    name: "support",
    model: "claude-sonnet-4-6",
    prompt: "Answer order questions.",
    cognition: ReActCognition.make({ tools: [lookup, cancel, slow] })
  })
}

/** `Authorization: Bearer <user>` names the user, of organisation `shop`. */
export const identify: AgUi.Identify = (request) => {
  const user = /^Bearer ([a-z]+)$/.exec(request.headers["authorization"] ?? "")?.[1]
  return user === undefined
    ? Effect.fail(new Unauthenticated({ message: "send Authorization: Bearer <user>" }))
    : Effect.succeed(Scope.make({ orgId: "shop", userId: user }))
}

export interface Running {
  readonly url: string
  readonly close: () => Promise<void>
}

/** Serves the endpoint at `/agent` over the given stores; close() stops it. */
export const start = async (
  world: World,
  stores: Layer.Layer<CheckpointStore | AuditStore, unknown> = Operator.Operator.memory()
): Promise<Running> => {
  const scope = Effect.runSync(EffectScope.make())
  const app = HttpLayerRouter.serve(AgUi.layer({ agent: agentOf(world), identify }), {
    disableLogger: true,
    disableListenLog: true
  }).pipe(
    Layer.provide(Layer.mergeAll(Operator.Operator.layer, Layer.provide(Invoker.layer(), model()))),
    Layer.provide(stores),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: 0 }))
  )
  const context = await Effect.runPromise(Layer.buildWithScope(app, scope))
  const address = Context.get(context, HttpServer.HttpServer).address
  if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
  return {
    url: `http://127.0.0.1:${address.port}/agent`,
    close: () => Effect.runPromise(EffectScope.close(scope, Exit.void))
  }
}

/** The events of an SSE body, parsed (`data:` lines). */
export const parseSse = (text: string): Array<Record<string, unknown>> =>
  text
    .split("\n\n")
    .map((block) =>
      block.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5)).join("\n")
    )
    .filter((data) => data.trim() !== "")
    .map((data) => JSON.parse(data) as Record<string, unknown>)

/** Posts a RunAgentInput as `user`; answers the status and, for an event stream, its events. */
export const post = async (url: string, user: string | undefined, input: unknown) => {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "text/event-stream",
      ...(user === undefined ? {} : { authorization: `Bearer ${user}` })
    },
    body: JSON.stringify(input)
  })
  const text = await response.text()
  const events = response.headers.get("content-type")?.startsWith("text/event-stream") ? parseSse(text) : []
  return { status: response.status, text, events }
}
