/**
 * An `@effect/platform` `HttpClient` that applies the egress policy to every request, so a tool
 * that fetches through it is covered without declaring `urlArg`.
 *
 * @since 0.1.0
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as UrlParams from "@effect/platform/UrlParams"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Egress from "./Egress.js"

/**
 * Wraps a client: each request's final URL (query and fragment included) is checked before the
 * wrapped client runs, so a refused request opens no socket. A refusal is a `RequestError` with
 * reason `InvalidUrl`, the policy's text as its description and the `EgressDenied` as its cause
 * (never retried; the `egress` middleware turns it into a `ToolDenied`).
 *
 * Redirects: requests made with `fetch` are sent with `redirect: "manual"`, so the transport never
 * follows a redirect on its own. To follow redirects, apply `HttpClient.followRedirects` to the
 * wrapped client: every hop then goes through the check.
 *
 * @example
 * ```ts
 * import { FetchHttpClient, HttpClient } from "@effect/platform"
 * import { EgressHttpClient } from "@agentkit/middleware"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const client = EgressHttpClient.wrap({ allow: ["example.com"] })(yield* HttpClient.HttpClient)
 *   return yield* client.get("https://api.example.com/status")
 * }).pipe(Effect.provide(FetchHttpClient.layer))
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const wrap = (options: Egress.Options | Egress.Policy) => {
  const policy = Egress.isPolicy(options) ? options : Egress.policy(options)
  return <E, R>(
    client: HttpClient.HttpClient.With<E, R>
  ): HttpClient.HttpClient.With<E | HttpClientError.RequestError, R> =>
    HttpClient.transform(client, (effect, request) => {
      const url = UrlParams.makeUrl(request.url, request.urlParams, request.hash)
      return Effect.matchEffect(policy.check(Either.isRight(url) ? url.right.href : request.url), {
        onFailure: (denied) =>
          Effect.fail(
            new HttpClientError.RequestError({
              request,
              reason: "InvalidUrl",
              cause: denied,
              description: denied.message
            })
          ),
        onSuccess: () =>
          Effect.flatMap(
            Effect.serviceOption(FetchHttpClient.RequestInit),
            (init) =>
              Effect.provideService(effect, FetchHttpClient.RequestInit, {
                ...Option.getOrElse(init, () => ({})),
                redirect: "manual"
              })
          )
      })
    })
}

/**
 * A layer that replaces the `HttpClient` in context with one wrapped by `wrap(options)`. Provide
 * the underlying client below it (`FetchHttpClient.layer`, or `NodeHttpClient.layer` from
 * `@effect/platform-node`).
 *
 * Loopback and private addresses are refused by default; allow a service you run yourself with
 * `allowPrivate` (for example `allowPrivate: ["127.0.0.1"]`).
 *
 * @example
 * ```ts
 * import { FetchHttpClient } from "@effect/platform"
 * import { EgressHttpClient } from "@agentkit/middleware"
 * import { Layer } from "effect"
 *
 * const HttpLive = EgressHttpClient.layer({ allow: ["example.com"] }).pipe(Layer.provide(FetchHttpClient.layer))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Egress.Options | Egress.Policy
): Layer.Layer<HttpClient.HttpClient, never, HttpClient.HttpClient> => {
  const wrapClient = wrap(options)
  return Layer.effect(HttpClient.HttpClient, Effect.map(HttpClient.HttpClient, (client) => wrapClient(client)))
}
