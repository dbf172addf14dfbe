/** A real console server on 127.0.0.1 (a random port) over the in-memory operator, for tests. */
import { Agent, DurableRunsPort, type Operator, ReActCognition } from "@agentkit/agents"
import { Console, OperatorAuth, SpanRecorder, SpanStore } from "@agentkit/console"
import { FakeLLM, makeTestCtx, Seed, Turn } from "@agentkit/testing"
import { HttpServer } from "@effect/platform"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import type * as MemoryOperator from "./MemoryOperator.js"

export const tokens = {
  alice: "alice-approver-token-0001",
  bob: "bob-approver-token-00002",
  victor: "victor-viewer-token-0003",
  gina: "gina-globex-approver-004",
  root: "root-all-tenants-token-05"
} as const

export const principals: ReadonlyArray<OperatorAuth.TokenEntry> = [
  { token: tokens.alice, principal: { id: "alice", role: "approver", tenants: ["acme"] } },
  { token: tokens.bob, principal: { id: "bob", role: "approver", tenants: ["acme"] } },
  { token: tokens.victor, principal: { id: "victor", role: "viewer", tenants: ["acme"] } },
  { token: tokens.gina, principal: { id: "gina", role: "approver", tenants: ["globex"] } },
  { token: tokens.root, principal: { id: "root", role: "approver", tenants: "*" } }
]

export interface Running<O = MemoryOperator.MemoryOperator> {
  readonly url: string
  readonly port: number
  readonly operator: O
  readonly spans: SpanStore.Service
}

/** What a console serves: an operator service's layer. */
export interface Served {
  readonly layer: Layer.Layer<Operator.Operator>
}

export const layerOf = (
  operator: Served,
  options: Console.ServeOptions & {
    readonly auth?: boolean
    readonly spans?: SpanStore.Service
    readonly durable?: DurableRunsPort.Service
  } = {}
) => {
  const spans = options.spans ?? SpanStore.makeMemory()
  const auth = options.auth === false ? Layer.empty : OperatorAuth.Authenticator.tokens(principals)
  const durable = options.durable === undefined
    ? Layer.empty
    : Layer.succeed(DurableRunsPort.DurableRunsPort, options.durable)
  return Console.serve({ pollInterval: "25 millis", ...options }).pipe(
    Layer.provide(durable),
    Layer.provide(operator.layer),
    Layer.provide(auth),
    Layer.provide(SpanStore.SpanStore.layer(spans))
  )
}

/** Starts a console; the returned close() stops it. */
export const start = (
  operator: MemoryOperator.MemoryOperator,
  options: Console.ServeOptions & {
    readonly auth?: boolean
    readonly spans?: SpanStore.Service
    readonly durable?: DurableRunsPort.Service
  } = {}
): Promise<Running & { readonly close: () => Promise<void> }> => startWith(operator, options)

/** Starts a console over any operator service; the returned close() stops it. */
export const startWith = async <O extends Served>(
  operator: O,
  options: Console.ServeOptions & {
    readonly auth?: boolean
    readonly spans?: SpanStore.Service
    readonly durable?: DurableRunsPort.Service
  } = {}
): Promise<Running<O> & { readonly close: () => Promise<void> }> => {
  const scope = Effect.runSync(Scope.make())
  const spans = options.spans ?? SpanStore.makeMemory()
  const context = await Effect.runPromise(Layer.buildWithScope(layerOf(operator, { ...options, spans }), scope))
  const address = Context.get(context, HttpServer.HttpServer).address
  if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
  const base = options.basePath ?? "/console"
  return {
    url: `http://127.0.0.1:${address.port}${base}`,
    port: address.port,
    operator,
    spans,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

export interface Reply {
  readonly status: number
  // JSON as the server sent it: the tests read into it freely and assert its shape
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly body: any
  readonly headers: Headers
}

/** A JSON request with a bearer token (or none). */
export const call = async (
  url: string,
  path: string,
  options: {
    readonly token?: string
    readonly method?: string
    readonly body?: unknown
    readonly headers?: Record<string, string>
  } = {}
): Promise<Reply> => {
  const headers: Record<string, string> = { accept: "application/json", ...options.headers }
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
  if (options.body !== undefined) headers["content-type"] = "application/json"
  const response = await fetch(`${url}/${path}`, {
    method: options.method ?? (options.body === undefined ? "GET" : "POST"),
    headers,
    body: options.body === undefined ? null : JSON.stringify(options.body)
  })
  const text = await response.text()
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let body: any
  try {
    body = text === "" ? undefined : JSON.parse(text)
  } catch {
    body = text
  }
  return { status: response.status, body, headers: response.headers }
}

export const hostile =
  "<script>window.__pwned = true; document.title = \"pwned\"</script><img src=x onerror=\"window.__pwned=true\">"

/** The runs every test world starts with. */
export const seed = (operator: MemoryOperator.MemoryOperator) => ({
  acme: operator.plant({
    runId: "run-acme-1",
    tenant: "acme",
    threadId: "thread-7",
    requestedBy: "bob",
    usage: { inputTokens: 2100, outputTokens: 420, costUsd: 0.0123 },
    pending: [{
      tool: "cancel_order",
      arguments: { order_id: "A-771", reason: hostile },
      reasons: ["requires_approval", "autonomy_gated"]
    }]
  }),
  globex: operator.plant({
    runId: "run-globex-1",
    tenant: "globex",
    threadId: "thread-9",
    pending: [{ tool: "refund", arguments: { order_id: "G-1" } }]
  }),
  doubt: operator.plant({
    runId: "run-acme-doubt",
    tenant: "acme",
    pending: [{ kind: "InDoubt", tool: "charge_card", arguments: { order_id: "A-900" } }]
  })
})

/**
 * A store that records the spans of a run as the seed's tenant's (`acme`, or `globex` for a
 * `run-globex-*` run): the seed names tenants by word, a real run's spans name its scope's key.
 */
const asSeedTenant = (store: SpanStore.Service, runId: string): SpanStore.Service => {
  const tenant = runId.startsWith("run-globex") ? "globex" : "acme"
  return {
    offer: (span) =>
      store.offer(
        span.attributes[SpanStore.tenantAttribute] === undefined
          ? span
          : { ...span, attributes: { ...span.attributes, [SpanStore.tenantAttribute]: tenant } }
      ),
    trace: store.trace
  }
}

/**
 * A real agent run's spans (FakeLLM), teed into `store` under the run's id and its seed tenant:
 * over `tracer` when given, else over Effect's own tracer (random ids, as in production).
 */
export const traceRun = (store: SpanStore.Service, runId: string, tracer?: Layer.Layer<never>) => {
  const agent = Agent.make({
    name: "support",
    model: Seed.MODEL,
    prompt: Seed.PROMPT,
    cognition: ReActCognition.make({ tools: [Seed.lookupOrder, Seed.cancelOrder] })
  })
  const llm = FakeLLM.script([Turn({ toolCalls: [Seed.lookupCall()] }), Turn({ content: Seed.ANSWER })])
  const teed = SpanRecorder.layer.pipe(Layer.provide(SpanStore.SpanStore.layer(asSeedTenant(store, runId))))
  const tee = tracer === undefined ? teed : teed.pipe(Layer.provide(tracer))
  return Effect.runPromise(
    agent.run(Seed.TASK).pipe(Effect.provide(makeTestCtx({ llm, correlationId: runId })), Effect.provide(tee))
  )
}
