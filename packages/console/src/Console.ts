/**
 * The operator console: an approvals inbox, runs and their traces, and the audit trail, in the
 * browser, served by your own `@effect/platform` server under a base path (`Console.layer`), or
 * standalone (`Console.serve`). It adapts the `Operator` service; an optional `SpanStore` feeds
 * the trace view and an optional `Authenticator` signs operators in (without one only loopback
 * peers are served, and `serve` refuses to bind anything else).
 *
 * The web app is three static files (no build step, no inline script: a strict
 * Content-Security-Policy with Trusted Types, so no HTML is ever made from data).
 *
 * @since 0.1.0
 */
import type { Operator } from "@agentkit/agents"
import { ConfigurationError } from "@agentkit/core"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import type * as HttpServer from "@effect/platform/HttpServer"
import type * as HttpServerError from "@effect/platform/HttpServerError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createServer } from "node:http"
import { isLoopbackHost } from "./internal/security.js"
import * as server from "./internal/server.js"
import * as OperatorAuth from "./OperatorAuth.js"

/**
 * How the console is mounted and behaves.
 *
 * @example
 * ```ts
 * import type { Console } from "@agentkit/console"
 *
 * const options: Console.Options = { basePath: "/ops", pollInterval: "1 second", requesterMayApprove: false }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Where the console lives on your router: `""` (the root) or a path such as `/ops`. Default `/console`. */
  readonly basePath?: string | undefined
  /** How often the store is asked what changed (live updates). Default 1 second. */
  readonly pollInterval?: Duration.DurationInput | undefined
  /** Whether the operator who started a run (`requestedBy`) may approve or edit its calls. Default `false`. */
  readonly requesterMayApprove?: boolean | undefined
  /** The page title. Default `agentkit console`. */
  readonly title?: string | undefined
}

const normalize = (options: Options) => {
  const base = options.basePath ?? "/console"
  if (
    base !== "" && (!/^(\/[A-Za-z0-9._~-]+)+$/.test(base) || base.split("/").some((segment) => /^\.+$/.test(segment)))
  ) {
    throw new ConfigurationError({
      field: "basePath",
      message:
        `Console: basePath must be "" or a path like "/ops" (segments of letters, digits, '.', '_', '~', '-', not only dots); got ${
          JSON.stringify(base)
        }`
    })
  }
  const interval = Duration.decodeUnknown(options.pollInterval ?? "1 second")
  if (interval._tag === "None" || Duration.toMillis(interval.value) < 10) {
    throw new ConfigurationError({
      field: "pollInterval",
      message: `Console: pollInterval must be a Duration of at least 10 ms; got ${String(options.pollInterval)}`
    })
  }
  return {
    basePath: base,
    pollInterval: interval.value,
    requesterMayApprove: options.requesterMayApprove ?? false,
    title: options.title ?? "agentkit console"
  }
}

/**
 * The console as routes on your `HttpLayerRouter`, under `basePath`. Needs the `Operator`
 * service; reads an `Authenticator` and a `SpanStore` when they are provided. Bad options throw
 * `ConfigurationError` naming the field.
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/agents"
 * import { Console, OperatorAuth } from "@agentkit/console"
 * import { HttpLayerRouter, HttpServerResponse } from "@effect/platform"
 * import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
 * import { Layer } from "effect"
 * import { createServer } from "node:http"
 *
 * declare const OperatorLive: Layer.Layer<Operator.Operator>
 * const MyRoutes = HttpLayerRouter.add("GET", "/", HttpServerResponse.text("the shop"))
 * const App = Layer.mergeAll(MyRoutes, Console.layer({ basePath: "/ops" })).pipe(
 *   Layer.provide(OperatorLive),
 *   Layer.provide(OperatorAuth.Authenticator.fromConfig)
 * )
 * HttpLayerRouter.serve(App).pipe(
 *   Layer.provide(NodeHttpServer.layer(createServer, { port: 3000 })),
 *   Layer.launch,
 *   NodeRuntime.runMain
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}) => {
  const settings = normalize(options)
  const mounted = Layer.effect(
    HttpLayerRouter.HttpRouter,
    Effect.map(HttpLayerRouter.HttpRouter, (router) => server.mountedRouter(router, settings.basePath))
  )
  return Layer.provide(server.make(settings), mounted)
}

/**
 * Where the standalone console listens. `host` defaults to `127.0.0.1`, `port` to 0 (a free one).
 *
 * @example
 * ```ts
 * import type { Console } from "@agentkit/console"
 *
 * const options: Console.ServeOptions = { host: "127.0.0.1", port: 4100, basePath: "" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ServeOptions extends Options {
  readonly host?: string | undefined
  readonly port?: number | undefined
}

/**
 * The console on its own HTTP server (Node). It refuses to start (`ConfigurationError` on
 * `host`) on a non-loopback host without an `Authenticator`. The layer provides the
 * `HttpServer`, whose `address` tells the port.
 *
 * @example
 * ```ts
 * import { Operator } from "@agentkit/agents"
 * import { Console } from "@agentkit/console"
 * import { HttpServer } from "@effect/platform"
 * import { Effect, Layer } from "effect"
 *
 * declare const OperatorLive: Layer.Layer<Operator.Operator>
 * const main = HttpServer.addressFormattedWith((url) => Effect.log(`console at ${url}/console`)).pipe(
 *   Effect.zipRight(Effect.never),
 *   Effect.provide(Console.serve({ port: 4100 }).pipe(Layer.provide(OperatorLive)))
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const serve = (
  options: ServeOptions = {}
): Layer.Layer<HttpServer.HttpServer, ConfigurationError | HttpServerError.ServeError, Operator.Operator> => {
  const host = options.host ?? "127.0.0.1"
  const port = options.port ?? 0
  const routes = layer(options)
  return Layer.unwrapEffect(
    Effect.gen(function*() {
      const authenticator = yield* Effect.serviceOption(OperatorAuth.Authenticator)
      if (authenticator._tag === "None" && !isLoopbackHost(host)) {
        return yield* new ConfigurationError({
          field: "host",
          message:
            `Console.serve: binding ${host} needs an Authenticator (OperatorAuth.Authenticator.fromConfig reads AGENTKIT_CONSOLE_TOKEN); without one the console binds loopback only`
        })
      }
      return HttpLayerRouter.serve(routes, { disableLogger: true, disableListenLog: true }).pipe(
        Layer.provideMerge(NodeHttpServer.layer(createServer, { host, port }))
      )
    })
  )
}
