/**
 * The console's HTTP API, as an `@effect/platform` `HttpApi`: the same definition serves it
 * (`Console.layer`) and calls it (`HttpApiClient.make(ConsoleApi.ConsoleApi, { baseUrl })`, as
 * the CLI does). Paths are relative to where the console is mounted (`/ops/api/runs` under
 * `basePath: "/ops"`). The live stream (`GET <base>/api/live`, server-sent events) is served
 * beside it.
 *
 * Statuses: 400 a malformed request (the schema issues), 401 no or a wrong token, 403 a viewer
 * deciding, a request without the CSRF header, or a requester approving their own run, 404 an
 * unknown run (or one of a tenant the operator may not see: the same answer), 409 a decision
 * after another (naming who decided) or for a stale digest, 422 edited arguments the tool's
 * schema refuses, 503 the store is unavailable.
 *
 * @since 0.1.0
 */
import { Operator } from "@agentkit/agents"
import { SpanStore } from "@agentkit/core"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as Context from "effect/Context"
import * as Schema from "effect/Schema"
import {
  BadRequest,
  DecisionConflict,
  Finished,
  Forbidden,
  InvalidArguments,
  NotFound,
  StaleDigest,
  Unauthorized,
  Unavailable
} from "./Errors.js"

const { AuditRecord, RecordedDecision, RunDetail, RunStatus, RunSummary } = Operator
const { SpanRecord } = SpanStore
import { Principal } from "./OperatorAuth.js"

/**
 * The authenticated operator of the current request (provided by the `Authentication`
 * middleware).
 *
 * @example
 * ```ts
 * import { ConsoleApi } from "@agentkit/console"
 * import { Effect } from "effect"
 *
 * const who = Effect.map(ConsoleApi.CurrentOperator, (current) => current.principal.id)
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class CurrentOperator extends Context.Tag("@agentkit/console/CurrentOperator")<
  CurrentOperator,
  { readonly principal: Principal; readonly csrf: string }
>() {}

/**
 * The authentication middleware of the API: a bearer token or the session cookie (with the CSRF
 * header on every write), or the local principal on a console without an authenticator.
 *
 * @example
 * ```ts
 * import { ConsoleApi } from "@agentkit/console"
 *
 * ConsoleApi.Authentication.key // "@agentkit/console/Authentication"
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("@agentkit/console/Authentication", {
  failure: Schema.Union(Unauthorized, Forbidden),
  provides: CurrentOperator
}) {}

/**
 * Security headers on every API response (`Cache-Control: no-store`, `nosniff`, the CSP).
 *
 * @example
 * ```ts
 * import { ConsoleApi } from "@agentkit/console"
 *
 * ConsoleApi.SecurityHeaders.key // "@agentkit/console/SecurityHeaders"
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class SecurityHeaders extends HttpApiMiddleware.Tag<SecurityHeaders>()("@agentkit/console/SecurityHeaders") {}

/**
 * What `GET /api/session` answers: the operator and the CSRF token every write must carry in the
 * `x-agentkit-csrf` header (cookie sessions only).
 *
 * @example
 * ```ts
 * import { ConsoleApi } from "@agentkit/console"
 * import { Schema } from "effect"
 *
 * const decode = Schema.decodeUnknownSync(ConsoleApi.Session)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Session = Schema.Struct({ operator: Principal, csrf: Schema.String })

const Limit = Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 500))
const Millis = Schema.NumberFromString.pipe(Schema.int(), Schema.nonNegative())
const Statuses = Schema.compose(Schema.split(","), Schema.Array(RunStatus))

/**
 * The filters of `GET /api/runs` (query parameters): `status` is comma-separated.
 *
 * @example
 * ```ts
 * import { ConsoleApi } from "@agentkit/console"
 * import { Schema } from "effect"
 *
 * Schema.decodeUnknownSync(ConsoleApi.RunsQuery)({ status: "suspended,in_doubt", limit: "50" })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const RunsQuery = Schema.Struct({
  status: Schema.optional(Statuses),
  tenant: Schema.optional(Schema.String),
  agent: Schema.optional(Schema.String),
  tool: Schema.optional(Schema.String),
  thread: Schema.optional(Schema.String),
  updatedAfter: Schema.optional(Millis),
  updatedBefore: Schema.optional(Millis),
  cursor: Schema.optional(Schema.String),
  limit: Schema.optional(Limit),
  order: Schema.optional(Schema.Literal("asc", "desc")),
  /** `"true"`: the page also says how many runs match over all pages. */
  total: Schema.optional(Schema.Literal("true", "false"))
})

/**
 * A page of runs and the cursor of the next one (and, when asked, how many runs match in all).
 *
 * @example
 * ```ts
 * import { ConsoleApi } from "@agentkit/console"
 * import { Schema } from "effect"
 *
 * Schema.is(ConsoleApi.RunPage)({ runs: [] }) // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const RunPage = Schema.Struct({
  runs: Schema.Array(RunSummary),
  cursor: Schema.optional(Schema.String),
  total: Schema.optional(Schema.Number)
})

/**
 * A page of audit records and the cursor of the next one.
 *
 * @example
 * ```ts
 * import { ConsoleApi } from "@agentkit/console"
 * import { Schema } from "effect"
 *
 * Schema.is(ConsoleApi.AuditPage)({ records: [] }) // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const AuditPage = Schema.Struct({ records: Schema.Array(AuditRecord), cursor: Schema.optional(Schema.String) })

/**
 * What `POST /api/decide` takes: a verdict on one pending entry of a run, with the digest shown.
 *
 * @example
 * ```ts
 * import { ConsoleApi } from "@agentkit/console"
 * import { Schema } from "effect"
 *
 * Schema.decodeUnknownSync(ConsoleApi.DecideRequest)({ runId: "run-1", pendingId: "p-1", verdict: "approve", digest: "ab" })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const DecideRequest = Schema.Struct({
  runId: Schema.String,
  pendingId: Schema.String,
  verdict: Schema.Literal("approve", "reject", "edit"),
  digest: Schema.String,
  reason: Schema.optional(Schema.String.pipe(Schema.maxLength(2000))),
  arguments: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})

/**
 * What `POST /api/resolve` takes: the resolution of a call in doubt.
 *
 * @example
 * ```ts
 * import { ConsoleApi } from "@agentkit/console"
 * import { Schema } from "effect"
 *
 * Schema.decodeUnknownSync(ConsoleApi.ResolveRequest)({ runId: "run-1", pendingId: "p-1", verdict: "markDone", digest: "ab", outcome: "charged" })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ResolveRequest = Schema.Struct({
  runId: Schema.String,
  pendingId: Schema.String,
  verdict: Schema.Literal("markDone", "markFailed", "retry"),
  digest: Schema.String,
  outcome: Schema.optional(Schema.String.pipe(Schema.maxLength(100_000))),
  reason: Schema.optional(Schema.String.pipe(Schema.maxLength(2000)))
})

const RunId = Schema.Struct({ runId: Schema.String })

/**
 * One durable run as `GET /api/durable` shows it: the store's record beside the workflow
 * engine's execution (through the operator port `DurableRunsPort`), and the problem when they
 * disagree for good.
 *
 * @example
 * ```ts
 * import { ConsoleApi } from "@agentkit/console"
 * import { Schema } from "effect"
 *
 * Schema.is(ConsoleApi.DurableRun)({
 *   runId: "run-1",
 *   agent: "billing",
 *   tenant: "acme",
 *   store: { status: "suspended", updatedAt: 0, pending: [{ id: "p-1", kind: "InDoubt" }], decided: 0 },
 *   engine: "suspended"
 * }) // true
 * ```
 *
 * @since 0.2.0
 * @category schemas
 */
export const DurableRun = Schema.Struct({
  runId: Schema.String,
  agent: Schema.String,
  tenant: Schema.String,
  store: Schema.Struct({
    status: Schema.String,
    updatedAt: Schema.Number,
    lease: Schema.optional(Schema.Struct({ owner: Schema.String, expiresAt: Schema.Number })),
    pending: Schema.Array(Schema.Struct({ id: Schema.String, kind: Schema.String })),
    decided: Schema.Number
  }),
  engine: Schema.Literal("suspended", "done", "failed", "none"),
  version: Schema.optional(Schema.Number),
  problem: Schema.optional(Schema.String)
})

/**
 * What `GET /api/durable` answers: whether the app serves durable runs (`available`), a page of
 * them and the cursor of the next, and the runs whose store and engine disagree for good.
 *
 * @example
 * ```ts
 * import { ConsoleApi } from "@agentkit/console"
 * import { Schema } from "effect"
 *
 * Schema.is(ConsoleApi.DurablePage)({ available: false, runs: [], problems: [] }) // true
 * ```
 *
 * @since 0.2.0
 * @category schemas
 */
export const DurablePage = Schema.Struct({
  available: Schema.Boolean,
  runs: Schema.Array(DurableRun),
  cursor: Schema.optional(Schema.String),
  problems: Schema.Array(DurableRun)
})

/**
 * Reading: the session, runs (filters and cursor pagination), one run, its trace, the audit trail,
 * durable runs.
 *
 * @example
 * ```ts
 * import { ConsoleApi } from "@agentkit/console"
 *
 * ConsoleApi.ReadGroup.identifier // "read"
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const ReadGroup = HttpApiGroup.make("read")
  .add(HttpApiEndpoint.get("session", "/api/session").addSuccess(Session))
  .add(HttpApiEndpoint.get("runs", "/api/runs").setUrlParams(RunsQuery).addSuccess(RunPage))
  .add(HttpApiEndpoint.get("run", "/api/run").setUrlParams(RunId).addSuccess(RunDetail))
  .add(
    HttpApiEndpoint.get("trace", "/api/trace").setUrlParams(RunId).addSuccess(
      Schema.Struct({ spans: Schema.Array(SpanRecord) })
    )
  )
  .add(
    HttpApiEndpoint.get("audit", "/api/audit")
      .setUrlParams(
        Schema.Struct({
          runId: Schema.optional(Schema.String),
          cursor: Schema.optional(Schema.String),
          limit: Schema.optional(Limit)
        })
      )
      .addSuccess(AuditPage)
  )
  .add(
    HttpApiEndpoint.get("durable", "/api/durable")
      .setUrlParams(
        Schema.Struct({
          status: Schema.optional(Schema.Literal("running", "suspended", "done", "failed", "cancelled")),
          cursor: Schema.optional(Schema.String),
          limit: Schema.optional(Limit)
        })
      )
      .addSuccess(DurablePage)
  )
  .middleware(Authentication)

/**
 * Deciding (approvers only): approve, reject or edit a pending call, resolve a call in doubt,
 * cancel a run.
 *
 * @example
 * ```ts
 * import { ConsoleApi } from "@agentkit/console"
 *
 * ConsoleApi.DecideGroup.identifier // "decide"
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const DecideGroup = HttpApiGroup.make("decide")
  .add(HttpApiEndpoint.post("decide", "/api/decide").setPayload(DecideRequest).addSuccess(RecordedDecision))
  .add(HttpApiEndpoint.post("resolve", "/api/resolve").setPayload(ResolveRequest).addSuccess(RecordedDecision))
  .add(
    HttpApiEndpoint.post("cancel", "/api/cancel").setPayload(RunId).addSuccess(
      Schema.Struct({ cancelled: Schema.String })
    )
  )
  .middleware(Authentication)
  .addError(DecisionConflict)
  .addError(StaleDigest)
  .addError(Finished)
  .addError(InvalidArguments)

/**
 * Signing in and out of a browser session: the token is exchanged for an HttpOnly,
 * `SameSite=Strict` cookie scoped to the console's path.
 *
 * @example
 * ```ts
 * import { ConsoleApi } from "@agentkit/console"
 *
 * ConsoleApi.LoginGroup.identifier // "login"
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const LoginGroup = HttpApiGroup.make("login")
  .add(
    HttpApiEndpoint.post("login", "/api/login")
      .setPayload(Schema.Struct({ token: Schema.Redacted(Schema.String.pipe(Schema.maxLength(4096))) }))
      .addSuccess(Session)
  )
  .add(HttpApiEndpoint.post("logout", "/api/logout").addSuccess(Schema.Struct({ signedOut: Schema.Boolean })))

/**
 * The console's API.
 *
 * @example
 * ```ts
 * import { ConsoleApi } from "@agentkit/console"
 * import { HttpApiClient } from "@effect/platform"
 *
 * const client = HttpApiClient.make(ConsoleApi.ConsoleApi, { baseUrl: "http://127.0.0.1:4100/ops" })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const ConsoleApi = HttpApi.make("agentkit-console").add(ReadGroup).add(DecideGroup).add(LoginGroup)
  .addError(Unauthorized)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(Unavailable)
  .addError(BadRequest)
  .middleware(SecurityHeaders)

/**
 * The request and response shapes of the API, by name.
 *
 * @example
 * ```ts
 * import type { ConsoleApi } from "@agentkit/console"
 *
 * const decide: ConsoleApi.DecideRequest = { runId: "run-1", pendingId: "p-1", verdict: "approve", digest: "ab" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type DecideRequest = Schema.Schema.Type<typeof DecideRequest>

/**
 * A resolution request.
 *
 * @example
 * ```ts
 * import type { ConsoleApi } from "@agentkit/console"
 *
 * const done: ConsoleApi.ResolveRequest = { runId: "run-1", pendingId: "p-1", verdict: "markDone", digest: "ab", outcome: "charged" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type ResolveRequest = Schema.Schema.Type<typeof ResolveRequest>

/**
 * A session.
 *
 * @example
 * ```ts
 * import type { ConsoleApi } from "@agentkit/console"
 *
 * const csrfOf = (session: ConsoleApi.Session) => session.csrf
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Session = Schema.Schema.Type<typeof Session>
