/**
 * The console's server side: the API handlers (tenant scoping, roles, the requester rule, the
 * argument check, error mapping), the web app's files and the live stream, as layers on an
 * `HttpLayerRouter`. @internal
 */
import type { Approval, DigestMismatch, InvalidDecision, UnknownPending } from "@agentkit/agents"
import { DurableRunsPort, Operator as Op } from "@agentkit/agents"
import type { AlreadyDecided, StoreError, ToolArgumentError } from "@agentkit/core"
import { Scope, SpanStore } from "@agentkit/core"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { readFileSync } from "node:fs"
import * as ConsoleApi from "../ConsoleApi.js"
import * as Errors from "../Errors.js"
import * as OperatorAuth from "../OperatorAuth.js"
import * as live from "./live.js"
import * as security from "./security.js"

/** What the console layer is configured with. */
export interface Settings {
  readonly basePath: string
  readonly pollInterval: Duration.Duration
  readonly requesterMayApprove: boolean
  readonly title: string
}

const unavailable = (error: StoreError, cursor: string | undefined) =>
  cursor !== undefined && !error.retryable
    ? new Errors.BadRequest({ message: error.message })
    : new Errors.Unavailable({
      message: `the operator service failed (${error.operation}): ${error.message}`,
      retryable: error.retryable
    })

const notFound = (runId: string) => new Errors.NotFound({ message: `no run '${runId}' that you may see` })

/** What the operator service is told of the tenants a principal may see. */
const accessOf = (
  principal: OperatorAuth.Principal
): Op.Access => (principal.tenants === "*" ? {} : { tenants: principal.tenants })

/** The run, when the principal may see its tenant; else the same 404 as a missing run. */
const visibleRun = (operator: Op.Service, principal: OperatorAuth.Principal, runId: string) =>
  operator.show(runId, accessOf(principal)).pipe(
    Effect.catchTags({
      RunNotFound: () => Effect.fail(notFound(runId)),
      OtherTenant: () => Effect.fail(notFound(runId)),
      RunStateCorrupt: (error) => Effect.fail(new Errors.Unavailable({ message: error.message, retryable: false })),
      RunStateVersionUnsupported: (error) =>
        Effect.fail(new Errors.Unavailable({ message: error.message, retryable: false })),
      StoreError: (error) => Effect.fail(unavailable(error, undefined))
    }),
    Effect.filterOrFail(
      (run) => OperatorAuth.canSee(principal, run.tenant),
      () => notFound(runId)
    )
  )

/**
 * The grants a list may cover: the principal's, narrowed by a requested tenant or pattern (a
 * requested pattern wider than a grant narrows to that grant; one outside every grant, to none).
 */
const scopeOf = (
  principal: OperatorAuth.Principal,
  requested: string | undefined
): ReadonlyArray<string> | undefined => {
  if (principal.tenants === "*") return requested === undefined ? undefined : [requested]
  if (requested === undefined) return principal.tenants
  if (Scope.coveredBy(principal.tenants, requested)) return [requested]
  return principal.tenants.filter((grant) => Scope.covers(requested, grant))
}

/** The requester rule: whoever started a run may not approve, edit or resolve its calls, whatever their grant. */
const mayDecideOwn = (
  settings: Settings,
  principal: OperatorAuth.Principal,
  run: Op.RunSummary
): Effect.Effect<void, Errors.Forbidden> =>
  !settings.requesterMayApprove && run.requestedBy !== undefined && run.requestedBy === principal.id
    ? Effect.fail(
      new Errors.Forbidden({
        message: `operator '${principal.id}' requested run '${run.runId}' and may not approve it: another operator must`
      })
    )
    : Effect.void

const mustApprove = (principal: OperatorAuth.Principal) =>
  principal.role === "approver"
    ? Effect.void
    : Effect.fail(
      new Errors.Forbidden({ message: `operator '${principal.id}' is a viewer: deciding needs the approver role` })
    )

const decideErrors = (runId: string) => ({
  RunNotFound: () => Effect.fail(notFound(runId)),
  OtherTenant: () => Effect.fail(notFound(runId)),
  RunFinished: (error: { readonly message: string }) => Effect.fail(new Errors.Finished({ message: error.message })),
  RunStateCorrupt: (error: { readonly message: string }) =>
    Effect.fail(new Errors.Unavailable({ message: error.message, retryable: false })),
  RunStateVersionUnsupported: (error: { readonly message: string }) =>
    Effect.fail(new Errors.Unavailable({ message: error.message, retryable: false })),
  UnknownPending: (error: UnknownPending) => Effect.fail(new Errors.BadRequest({ message: error.message })),
  InvalidDecision: (error: InvalidDecision) => Effect.fail(new Errors.BadRequest({ message: error.message })),
  DigestMismatch: (error: DigestMismatch) =>
    Effect.fail(new Errors.StaleDigest({ message: error.message, expected: error.expected })),
  ToolArgumentError: (error: ToolArgumentError) =>
    Effect.fail(
      new Errors.InvalidArguments({
        message: error.message,
        toolName: error.toolName,
        unexpected: error.unexpected,
        missing: error.missing,
        invalid: error.invalid,
        accepted: error.accepted
      })
    ),
  AlreadyDecided: (error: AlreadyDecided) => {
    let verdict: string | undefined
    try {
      const parsed: unknown = JSON.parse(error.decision)
      if (
        typeof parsed === "object" && parsed !== null && typeof (parsed as { verdict?: unknown }).verdict === "string"
      ) {
        verdict = (parsed as { verdict: string }).verdict
      }
    } catch {
      verdict = undefined
    }
    return Effect.fail(
      new Errors.DecisionConflict({
        message: error.message,
        ...(error.by === undefined ? {} : { by: error.by }),
        ...(verdict === undefined ? {} : { verdict })
      })
    )
  },
  StoreError: (error: StoreError) => Effect.fail(unavailable(error, undefined))
})

const securityHeaders = HttpApp.appendPreResponseHandler((_request, response) =>
  Effect.succeed(security.secure(response))
)

const SecurityHeadersLive = Layer.succeed(ConsoleApi.SecurityHeaders, securityHeaders)

const AuthenticationLive = Layer.effect(
  ConsoleApi.Authentication,
  Effect.map(
    Effect.serviceOption(OperatorAuth.Authenticator),
    (authenticator) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => security.authenticate(request, authenticator))
  )
)

const cookieSecurity = HttpApiSecurity.apiKey({ in: "cookie", key: security.cookieName })

const handlers = (settings: Settings) => {
  const ReadLive = HttpApiBuilder.group(ConsoleApi.ConsoleApi, "read", (h) =>
    Effect.gen(function*() {
      const operator = yield* Op.Operator
      const spans = yield* Effect.serviceOption(SpanStore.SpanStore)
      const durable = yield* Effect.serviceOption(DurableRunsPort.DurableRunsPort)
      return h
        .handle("session", () =>
          Effect.map(ConsoleApi.CurrentOperator, (current) => ({ operator: current.principal, csrf: current.csrf })))
        .handle("runs", ({ urlParams: q }) =>
          Effect.gen(function*() {
            const { principal } = yield* ConsoleApi.CurrentOperator
            const tenant = scopeOf(principal, q.tenant)
            if (tenant !== undefined && tenant.length === 0) {
              return q.total === "true" ? { runs: [], total: 0 } : { runs: [] }
            }
            const page = yield* operator
              .list({
                status: q.status,
                tenant,
                agent: q.agent,
                tool: q.tool,
                threadId: q.thread,
                updatedAfter: q.updatedAfter,
                updatedBefore: q.updatedBefore,
                cursor: q.cursor,
                limit: q.limit,
                order: q.order,
                withTotal: q.total === "true"
              })
              .pipe(Effect.mapError((error) =>
                unavailable(error, q.cursor)
              ))
            // the service filters by tenant; the console checks again (fail closed)
            const runs = page.runs.filter((run) => OperatorAuth.canSee(principal, run.tenant))
            return {
              runs,
              ...(page.cursor === undefined ? {} : { cursor: page.cursor }),
              ...(page.total === undefined ? {} : { total: page.total })
            }
          }))
        .handle("run", ({ urlParams }) =>
          Effect.flatMap(ConsoleApi.CurrentOperator, ({ principal }) =>
            visibleRun(operator, principal, urlParams.runId)))
        .handle("trace", ({ urlParams }) =>
          Effect.gen(function*() {
            const { principal } = yield* ConsoleApi.CurrentOperator
            const run = yield* visibleRun(operator, principal, urlParams.runId)
            if (Option.isNone(spans)) {
              return { spans: [] }
            }
            const found = yield* spans.value
              // by the run's tenant too: a correlation id is the caller's choice, another tenant's run may share it
              .trace(run.correlationId ?? run.rootRunId, run.tenant)
              .pipe(Effect.mapError((error) =>
                new Errors.Unavailable({
                  message: `the span store failed (${error.operation}): ${error.message}`,
                  retryable: error.retryable
                })
              ))
            return { spans: found }
          }))
        .handle("durable", ({ urlParams: q }) =>
          Effect.gen(function*() {
            const { principal } = yield* ConsoleApi.CurrentOperator
            if (Option.isNone(durable)) {
              return { available: false, runs: [], problems: [] }
            }
            const port = durable.value
            const failed = (error: { readonly message: string }) =>
              new Errors.Unavailable({ message: `the durable runs port failed: ${error.message}`, retryable: true })
            // one exact grant is asked of the port; the rest is filtered here (fail closed)
            const exact = principal.tenants !== "*" && principal.tenants.length === 1 &&
                Scope.isExact(principal.tenants[0]!)
              ? { tenant: principal.tenants[0] }
              : {}
            const page = yield* port.list({
              ...exact,
              ...(q.status === undefined ? {} : { status: q.status }),
              ...(q.cursor === undefined ? {} : { cursor: q.cursor }),
              limit: q.limit ?? 50
            }).pipe(Effect.mapError(failed))
            const problems = yield* port.reconcile.pipe(Effect.mapError(failed))
            const shown = (run: DurableRunsPort.RunView) => ({
              runId: run.runId,
              agent: run.agent,
              tenant: run.tenant,
              store: {
                status: run.store.status,
                updatedAt: run.store.updatedAt,
                ...(run.store.lease === undefined ? {} : { lease: run.store.lease }),
                pending: run.store.pending,
                decided: run.store.decided
              },
              engine: run.engine,
              ...(run.version === undefined ? {} : { version: run.version }),
              ...(run.problem === undefined ? {} : { problem: run.problem })
            })
            const visible = (run: DurableRunsPort.RunView) =>
              OperatorAuth.canSee(principal, run.tenant)
            return {
              available: true,
              runs: page.runs.filter(visible).map(shown),
              ...(page.cursor === undefined ? {} : { cursor: page.cursor }),
              problems: problems.filter(visible).map(shown)
            }
          }))
        .handle("audit", ({ urlParams: q }) =>
          Effect.gen(function*() {
            const { principal } = yield* ConsoleApi.CurrentOperator
            if (q.runId !== undefined) {
              yield* visibleRun(operator, principal, q.runId)
            }
            const tenant = principal.tenants === "*" ? undefined : principal.tenants
            const page = yield* operator
              .audit({ runId: q.runId, tenant, cursor: q.cursor, limit: q.limit })
              .pipe(Effect.mapError((error) =>
                unavailable(error, q.cursor)
              ))
            const records = page.records.filter((record) => OperatorAuth.canSee(principal, record.tenant))
            return page.cursor === undefined ? { records } : { records, cursor: page.cursor }
          }))
    }))

  const DecideLive = HttpApiBuilder.group(ConsoleApi.ConsoleApi, "decide", (h) =>
    Effect.gen(function*() {
      const operator = yield* Op.Operator
      return h
        .handle("decide", ({ payload }) =>
          Effect.gen(function*() {
            const { principal } = yield* ConsoleApi.CurrentOperator
            yield* mustApprove(principal)
            const run = yield* visibleRun(operator, principal, payload.runId)
            if (payload.verdict !== "reject") {
              yield* mayDecideOwn(settings, principal, run)
              // the decision lands on the run tree: its root's requester is bound by the rule too
              if (run.rootRunId !== run.runId) {
                yield* mayDecideOwn(settings, principal, yield* visibleRun(operator, principal, run.rootRunId))
              }
            }
            const by = principal.id
            const reason = payload.reason === undefined ? {} : { reason: payload.reason }
            let decision: Approval.Decision & { readonly by: string }
            if (payload.verdict === "edit") {
              if (payload.arguments === undefined) {
                return yield* new Errors.BadRequest({ message: "an edit carries the new `arguments` (an object)" })
              }
              // the operator service checks them against the JSON Schema recorded on the entry
              decision = { verdict: "edit", digest: payload.digest, by, arguments: payload.arguments, ...reason }
            } else {
              decision = { verdict: payload.verdict, digest: payload.digest, by, ...reason }
            }
            return yield* operator.decide(run.rootRunId, payload.pendingId, decision, accessOf(principal)).pipe(
              Effect.catchTags(decideErrors(run.runId))
            )
          }))
        .handle("resolve", ({ payload }) =>
          Effect.gen(function*() {
            const { principal } = yield* ConsoleApi.CurrentOperator
            yield* mustApprove(principal)
            const run = yield* visibleRun(operator, principal, payload.runId)
            if (payload.verdict !== "markFailed") yield* mayDecideOwn(settings, principal, run)
            if (payload.verdict === "markDone" && payload.outcome === undefined) {
              return yield* new Errors.BadRequest({
                message: "markDone carries the call's `outcome` (the text the model sees)"
              })
            }
            if (payload.verdict === "markFailed" && payload.reason === undefined) {
              return yield* new Errors.BadRequest({ message: "markFailed carries a `reason`" })
            }
            return yield* operator
              .resolve(
                run.rootRunId,
                payload.pendingId,
                {
                  verdict: payload.verdict,
                  digest: payload.digest,
                  by: principal.id,
                  ...(payload.outcome === undefined ? {} : { outcome: payload.outcome }),
                  ...(payload.reason === undefined ? {} : { reason: payload.reason })
                },
                accessOf(principal)
              )
              .pipe(Effect.catchTags(decideErrors(run.runId)))
          }))
        .handle("cancel", ({ payload }) =>
          Effect.gen(function*() {
            const { principal } = yield* ConsoleApi.CurrentOperator
            yield* mustApprove(principal)
            const run = yield* visibleRun(operator, principal, payload.runId)
            yield* operator.cancel(run.runId, principal.id, accessOf(principal)).pipe(
              Effect.catchTags({
                RunNotFound: () => Effect.fail(notFound(payload.runId)),
                OtherTenant: () => Effect.fail(notFound(payload.runId)),
                RunFinished: (error) => Effect.fail(new Errors.Finished({ message: error.message })),
                StoreError: (error) => Effect.fail(unavailable(error, undefined))
              })
            )
            return { cancelled: run.runId }
          }))
    }))

  const LoginLive = HttpApiBuilder.group(ConsoleApi.ConsoleApi, "login", (h) =>
    Effect.gen(function*() {
      const authenticator = yield* Effect.serviceOption(OperatorAuth.Authenticator)
      return h
        .handle("login", ({ payload }) =>
          Effect.gen(function*() {
            const request = yield* HttpServerRequest.HttpServerRequest
            yield* security.checkLogin(request)
            if (Option.isNone(authenticator)) {
              return yield* new Errors.Forbidden({
                message: "this console has no authenticator: it serves loopback peers without signing in"
              })
            }
            const principal = yield* authenticator.value
              .authenticate(payload.token)
              .pipe(Effect.mapError((error) => new Errors.Unauthorized({ message: error.message })))
            yield* HttpApiBuilder.securitySetCookie(
              cookieSecurity,
              payload.token,
              security.cookieOptions(settings.basePath, security.isHttps(request))
            )
            return { operator: principal, csrf: security.csrfOf(Redacted.value(payload.token)) }
          }))
        .handle("logout", () =>
          Effect.gen(function*() {
            const request = yield* HttpServerRequest.HttpServerRequest
            yield* security.checkLogin(request)
            yield* HttpApp.appendPreResponseHandler((_request, response) =>
              Effect.orDie(
                HttpServerResponse.setCookie(response, security.cookieName, "", {
                  ...security.cookieOptions(settings.basePath, security.isHttps(request)),
                  maxAge: 0
                })
              )
            )
            return { signedOut: true }
          }))
    }))

  return Layer.mergeAll(ReadLive, DecideLive, LoginLive)
}

const webDir = new URL("../../web/", import.meta.url)

interface Asset {
  readonly body: Uint8Array
  readonly contentType: string
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c] ?? c)

const loadAssets = (settings: Settings): Record<string, Asset> => {
  const read = (name: string) => readFileSync(new URL(name, webDir))
  const html = read("index.html")
    .toString("utf8")
    .replaceAll("{{title}}", escapeHtml(settings.title))
    .replaceAll("{{base}}", escapeHtml(settings.basePath))
  return {
    "/": { body: new TextEncoder().encode(html), contentType: "text/html; charset=utf-8" },
    "/app.js": { body: read("app.js"), contentType: "text/javascript; charset=utf-8" },
    "/app.css": { body: read("app.css"), contentType: "text/css; charset=utf-8" },
    "/favicon.svg": { body: read("favicon.svg"), contentType: "image/svg+xml" }
  }
}

const routes = (settings: Settings) =>
  HttpLayerRouter.use((router) =>
    Effect.gen(function*() {
      const operator = yield* Op.Operator
      const authenticator = yield* Effect.serviceOption(OperatorAuth.Authenticator)
      const hub = yield* live.start(operator, settings.pollInterval)
      const assets = loadAssets(settings)
      for (const [path, asset] of Object.entries(assets)) {
        const response = Effect.succeed(
          security.secure(
            HttpServerResponse.uint8Array(asset.body, { contentType: asset.contentType }),
            path === "/" ? "no-store" : "no-cache"
          )
        )
        yield* router.add("GET", path as HttpLayerRouter.PathInput, response)
        if (path === "/") yield* router.add("GET", "/index.html", response)
      }
      yield* router.add(
        "GET",
        "/api/live",
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const authenticated = yield* Effect.either(security.authenticate(request, authenticator))
          if (authenticated._tag === "Left") {
            const status = authenticated.left._tag === "Unauthorized" ? 401 : 403
            return security.secure(
              HttpServerResponse.unsafeJson({ _tag: authenticated.left._tag, message: authenticated.left.message }, {
                status
              })
            )
          }
          const url = new URL(request.url, "http://console.invalid")
          const runId = url.searchParams.get("runId") ?? undefined
          return security.secure(live.stream(hub, authenticated.right.principal, runId), "no-store")
        })
      )
    })
  )

/** The largest request body the console reads (a sign-in, a decision with edited arguments). */
export const maxBodyBytes = 1024 * 1024

const limit = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  HttpIncomingMessage.withMaxBodySize(effect, Option.some(maxBodyBytes))

/** The router, prefixed by `basePath`, with every console route reading at most `maxBodyBytes`. */
export const mountedRouter = (router: HttpLayerRouter.HttpRouter, basePath: string): HttpLayerRouter.HttpRouter => {
  const inner = basePath === "" ? router : router.prefixed(basePath)
  return HttpLayerRouter.HttpRouter.of({
    ...inner,
    addAll: ((routes: ReadonlyArray<HttpLayerRouter.Route<unknown, unknown>>) =>
      inner.addAll(routes.map((route) => ({ ...route, handler: limit(route.handler) })))) as HttpLayerRouter.HttpRouter[
        "addAll"
      ],
    add: ((method, path, handler, options) =>
      inner.add(
        method,
        path,
        Effect.isEffect(handler)
          ? limit(handler)
          : (request: HttpServerRequest.HttpServerRequest) =>
            limit(handler(request)),
        options
      )) as HttpLayerRouter.HttpRouter["add"]
  })
}

/** The console's routes and API, on the router in context (already prefixed by the caller). */
export const make = (settings: Settings) =>
  Layer.mergeAll(HttpLayerRouter.addHttpApi(ConsoleApi.ConsoleApi), routes(settings)).pipe(
    Layer.provide(handlers(settings)),
    Layer.provide(AuthenticationLive),
    Layer.provide(SecurityHeadersLive)
  )
