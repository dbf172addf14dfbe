/**
 * An agent to a user's screen over AG-UI 1.0 (https://docs.ag-ui.com): routes on your own
 * `@effect/platform` router (`AgUi.layer`), beside your app's, as the console is mounted.
 *
 * - `POST <basePath>` takes AG-UI's `RunAgentInput` (JSON) and answers server-sent AG-UI events:
 *   `RUN_STARTED`, a `STATE_SNAPSHOT` and `STATE_DELTA`s of the run's state (`status`, `steps`,
 *   `waitingOn`), `TEXT_MESSAGE_START`/`CONTENT`/`END` as the model streams,
 *   `TOOL_CALL_START`/`ARGS`/`END` and `TOOL_CALL_RESULT`, then `RUN_FINISHED` (its `result` the
 *   run's result without the transcript) or `RUN_ERROR`. Each request is one run, with a fresh
 *   `RunContext` (the request's `runId` and `threadId`, the user's scope, the configured autonomy
 *   tier). A client that disconnects cancels its run: the run is interrupted and a running tool's
 *   abort signal fires.
 * - A call that waits for approval (an `Approval` pending entry) ends the run with AG-UI's
 *   interrupt outcome: one interrupt per call, its `id` naming the run and the entry, its
 *   `metadata` the tool, the arguments and the digest. The page answers with a new run whose
 *   `resume` entries carry `{ approved: boolean, reason?: string }` (or `status: "cancelled"`,
 *   a rejection). The answer is recorded by the operator service (`Operator.decide`: checked
 *   against the entry's digest, audited with the user as `by`, first decision wins), with the
 *   user who started the run allowed to decide in this path, and the run resumes from the
 *   checkpoint store, in this process or, with a durable store (`@agentkit/sql`), after a
 *   restart. A call in doubt or a policy gate never reaches the user: it stays an operator's.
 * - `GET <basePath>/threads/:threadId` answers the thread's latest run as AG-UI messages and its
 *   open interrupts, so a page reloaded in the middle of a suspended run can show it and answer.
 *
 * Every request is identified by your `identify` function (the request to a scope with a
 * `userId`); a run or interrupt of another user, or of another tenant, is answered 404, the same
 * as a missing one.
 *
 * @since 0.1.0
 */
import type { Agent, Operator } from "@agentkit/agents"
import { autonomyTiers, ConfigurationError } from "@agentkit/core"
import type { Autonomy, Invoker, Scope } from "@agentkit/core"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { Unauthenticated } from "./Errors.js"
import * as server from "./internal/server.js"

/**
 * Who a request is from: the request to the user's scope (its `userId` names the user; runs are
 * kept under the scope's tenant key), or `Unauthenticated` (answered 401).
 *
 * @example
 * ```ts
 * import { AgUi, Unauthenticated } from "@agentkit/ag-ui"
 * import { Scope } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const users: Record<string, string> = { "token-of-alice": "alice" }
 * const identify: AgUi.Identify = (request) => {
 *   const user = users[(request.headers["authorization"] ?? "").replace(/^Bearer /, "")]
 *   return user === undefined
 *     ? Effect.fail(new Unauthenticated({ message: "sign in first" }))
 *     : Effect.succeed(Scope.make({ orgId: "shop", userId: user }))
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Identify = (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<Scope.Scope, Unauthenticated>

/**
 * How the endpoint is mounted and runs the agent.
 *
 * @example
 * ```ts
 * import type { AgUi } from "@agentkit/ag-ui"
 * import { Agent } from "@agentkit/agents"
 * import { Scope } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const agent = Agent.make({ name: "support", model: "claude-sonnet-4-6" })
 * const options: AgUi.Options<never> = {
 *   agent,
 *   basePath: "/agent",
 *   autonomy: "gated",
 *   identify: () => Effect.succeed(Scope.make({ userId: "local" }))
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<R> {
  /** The agent every run runs. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- an agent of any structured output
  readonly agent: Agent.Agent<R, any>
  /** Who a request is from. */
  readonly identify: Identify
  /** Where the endpoint lives on your router: a path such as `/agent` (the default). */
  readonly basePath?: string | undefined
  /** The runs' autonomy tier. Default `gated`: a side-effecting call waits for the user's approval. */
  readonly autonomy?: Autonomy | undefined
}

/** The largest request body the endpoint reads (a conversation and its answers). */
const maxBodyBytes = 4 * 1024 * 1024

const normalize = <R>(options: Options<R>): server.Settings<R> => {
  const basePath = options.basePath ?? "/agent"
  if (!/^(\/[A-Za-z0-9._~-]+)+$/.test(basePath) || basePath.split("/").some((segment) => /^\.+$/.test(segment))) {
    throw new ConfigurationError({
      field: "basePath",
      message:
        `AgUi: basePath must be a path like "/agent" (segments of letters, digits, '.', '_', '~', '-', not only dots); got ${
          JSON.stringify(basePath)
        }`
    })
  }
  const autonomy = options.autonomy ?? "gated"
  if (!autonomyTiers.includes(autonomy)) {
    throw new ConfigurationError({
      field: "autonomy",
      message: `AgUi: autonomy must be one of ${autonomyTiers.join(", ")}; got ${String(autonomy)}`
    })
  }
  if (typeof options.identify !== "function") {
    throw new ConfigurationError({ field: "identify", message: "AgUi: identify must be a function of the request" })
  }
  return { basePath, agent: options.agent, identify: options.identify, autonomy }
}

/**
 * The endpoint as routes on your `HttpLayerRouter`. Needs the `Operator` service (over the
 * checkpoint and audit stores the runs use), the `Invoker`, and what the agent's tools need; the
 * runs see every service the layer is given. Bad options throw `ConfigurationError` naming the
 * field.
 *
 * @example
 * ```ts
 * import { AgUi } from "@agentkit/ag-ui"
 * import { Agent, Operator } from "@agentkit/agents"
 * import { Invoker, Scope } from "@agentkit/core"
 * import { HttpLayerRouter } from "@effect/platform"
 * import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
 * import { Effect, Layer } from "effect"
 * import { createServer } from "node:http"
 *
 * declare const agent: Agent.Agent
 * declare const InvokerLive: Layer.Layer<Invoker>
 * const Chat = AgUi.layer({ agent, identify: () => Effect.succeed(Scope.make({ userId: "local" })) })
 * HttpLayerRouter.serve(Chat).pipe(
 *   Layer.provide(Layer.mergeAll(Operator.Operator.memory(), InvokerLive)),
 *   Layer.provide(NodeHttpServer.layer(createServer, { port: 3000 })),
 *   Layer.launch,
 *   NodeRuntime.runMain
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <R>(
  options: Options<R>
): Layer.Layer<never, never, HttpLayerRouter.HttpRouter | Operator.Operator | Invoker | R> => {
  const settings = normalize(options)
  const limited = Layer.effect(
    HttpLayerRouter.HttpRouter,
    Effect.map(HttpLayerRouter.HttpRouter, (router) =>
      HttpLayerRouter.HttpRouter.of({
        ...router,
        add: ((method, path, handler, routeOptions) =>
          router.add(
            method,
            path,
            Effect.isEffect(handler)
              ? HttpIncomingMessage.withMaxBodySize(handler, Option.some(maxBodyBytes))
              : (request: HttpServerRequest.HttpServerRequest) =>
                HttpIncomingMessage.withMaxBodySize(handler(request), Option.some(maxBodyBytes)),
            routeOptions
          )) as HttpLayerRouter.HttpRouter["add"]
      }))
  )
  return Layer.provide(server.routes(settings), limited) as Layer.Layer<
    never,
    never,
    HttpLayerRouter.HttpRouter | Operator.Operator | Invoker | R
  >
}
