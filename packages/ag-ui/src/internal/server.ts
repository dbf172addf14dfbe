/**
 * The endpoint's routes: `POST <base>` runs the agent (or answers its interrupts and resumes it)
 * and streams AG-UI events as server-sent events; `GET <base>/threads/:threadId` answers a
 * thread's history and open interrupts (a page after a reload). Every request is identified
 * first; a run or interrupt of another user is a 404, the same as a missing one. @internal
 */
import type { Event } from "@ag-ui/core"
import { EventEncoder } from "@ag-ui/encoder"
import type { Agent } from "@agentkit/agents"
import { Approval, Operator } from "@agentkit/agents"
import type { Autonomy, Scope } from "@agentkit/core"
import { Message, RunContext } from "@agentkit/core"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { Unauthenticated } from "../Errors.js"
import { conversation, decodeInput, type RunInput, toAgUiMessages } from "./input.js"
import { parseInterruptId, toInterrupt, Translator, userEntries } from "./translate.js"

/** What the layer is configured with. */
export interface Settings<R> {
  readonly basePath: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any structured output
  readonly agent: Agent.Agent<R, any>
  readonly identify: (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<Scope.Scope, Unauthenticated>
  readonly autonomy: Autonomy
}

const noStore = { "cache-control": "no-store", "x-content-type-options": "nosniff" }

const problem = (status: number, tag: string, message: string) =>
  HttpServerResponse.unsafeJson({ _tag: tag, message }, { status, headers: noStore })

const notFound = (what: string) => problem(404, "NotFound", `no ${what} that you may see`)

/** An error response, raised: it ends the handler with that response. */
class Respond {
  constructor(readonly response: HttpServerResponse.HttpServerResponse) {}
}

const respond = (status: number, tag: string, message: string) =>
  Effect.fail(new Respond(problem(status, tag, message)))

const encoder = new EventEncoder()
const bytes = new TextEncoder()

/** A body that pushes events, as an SSE response; the body is interrupted when the client goes away. */
const sse = (body: (push: (event: Event) => void) => Effect.Effect<void>) =>
  HttpServerResponse.stream(
    Stream.asyncPush<Uint8Array>((emit) =>
      Effect.forkScoped(
        body((event) => void emit.single(bytes.encode(encoder.encodeSSE(event)))).pipe(
          Effect.ensuring(Effect.sync(() => void emit.end()))
        )
      ), { bufferSize: "unbounded" }),
    { contentType: "text/event-stream", headers: { ...noStore, "x-accel-buffering": "no" } }
  )

/**
 * The run's failure as a `RUN_ERROR` (its tag as the code; a store's or a defect's details are
 * logged, not sent to the page); an interruption (the client left) stays one.
 */
const reportFailures = (translator: Translator) =>
<E extends { readonly _tag: string; readonly message: string }, R>(
  run: Effect.Effect<void, E, R>
) =>
  run.pipe(
    Effect.catchAll((error) =>
      error._tag === "StoreError"
        ? Effect.zipRight(
          Effect.logError("ag-ui: a run's store failed", error),
          Effect.sync(() => translator.error("the run's store is unavailable: try again", error._tag))
        )
        : Effect.sync(() => translator.error(error.message, error._tag))
    ),
    Effect.catchAllDefect((defect) =>
      Effect.zipRight(
        Effect.logError("ag-ui: a run failed unexpectedly", defect),
        Effect.sync(() => translator.error("the run failed unexpectedly", "Defect"))
      )
    )
  )

/**
 * A run's conversation: a finished run's result holds it to the final answer (the checkpoint's
 * stops at the last tool round); a suspended run's is the checkpoint's.
 */
const transcriptOf = (run: Operator.RunDetail): ReadonlyArray<Message.Message> => {
  const result = run.result
  if (typeof result === "object" && result !== null && "transcript" in result) {
    const decoded = decodeTranscript(result.transcript)
    if (Either.isRight(decoded)) return decoded.right
  }
  return run.transcript
}

const decodeTranscript = Schema.decodeUnknownEither(Schema.Array(Message.Message))

/** The routes, on the router in context (already prefixed). */
export const routes = <R>(settings: Settings<R>) =>
  HttpLayerRouter.use((router) =>
    Effect.gen(function*() {
      const operator = yield* Operator.Operator
      // everything the agent's runs need (the Invoker, the stores, its tools' services), as provided to the layer
      const services = yield* Effect.context<never>()
      const { agent, identify } = settings
      // the runs this process drives, by agentkit run id: a second request for one (the same new
      // run id posted twice at once, two tabs resuming one run) ends with RUN_ERROR, not a second run
      const driving = new Set<string>()
      const exclusive = (runId: string, translator: Translator, body: Effect.Effect<void>) =>
        Effect.suspend(() => {
          if (driving.has(runId)) {
            return Effect.sync(() =>
              translator.error(`run '${runId}' is already running here: wait for its events`, "Conflict")
            )
          }
          driving.add(runId)
          return Effect.ensuring(body, Effect.sync(() => driving.delete(runId)))
        })

      const identified = (request: HttpServerRequest.HttpServerRequest) =>
        identify(request).pipe(
          Effect.mapError((error) => new Respond(problem(401, "Unauthenticated", error.message))),
          Effect.filterOrFail(
            (scope) => typeof scope.userId === "string" && scope.userId !== "",
            () => new Respond(problem(401, "Unauthenticated", "the identity names no user (scope.userId)"))
          )
        )

      const runContext = (scope: Scope.Scope, runId: string, threadId: string) =>
        RunContext.provide({ runId, threadId, scope, autonomy: settings.autonomy, correlationId: runId })

      /** A run of this user: its detail, or 404 (a missing run and another user's look the same). */
      const ownRun = (scope: Scope.Scope, runId: string, threadId: string) =>
        operator.show(runId, { tenants: [scope.storeKey] }).pipe(
          Effect.catchTags({
            RunNotFound: () => Effect.fail(new Respond(notFound(`run '${runId}'`))),
            OtherTenant: () => Effect.fail(new Respond(notFound(`run '${runId}'`)))
          }),
          Effect.mapError((error) =>
            error instanceof Respond ? error : new Respond(problem(503, "Unavailable", error.message))
          ),
          Effect.filterOrFail(
            (run) => run.requestedBy === scope.userId && run.threadId === threadId && run.runId === run.rootRunId,
            () => new Respond(notFound(`run '${runId}'`))
          )
        )

      const fresh = (scope: Scope.Scope, input: RunInput) =>
        Effect.gen(function*() {
          if (input.tools !== undefined && input.tools.length > 0) {
            return yield* respond(
              400,
              "BadRequest",
              "tools: this endpoint runs the server's agent with its own tools; a page's tools are not accepted (send [])"
            )
          }
          const messages = conversation(input.messages)
          if (Either.isLeft(messages)) return yield* respond(400, "BadRequest", messages.left)
          const existing = yield* Effect.either(operator.show(input.runId))
          if (Either.isRight(existing) || existing.left._tag !== "RunNotFound") {
            return yield* Either.isRight(existing) || existing.left._tag === "OtherTenant"
              ? respond(409, "Conflict", `run id '${input.runId}' is taken: a new run needs a new runId`)
              : respond(503, "Unavailable", existing.left.message)
          }
          return sse((push) => {
            const translator = new Translator({ runId: input.runId, threadId: input.threadId, agent: agent.name, push })
            translator.start(input)
            return exclusive(
              input.runId,
              translator,
              agent.stream(messages.right).pipe(
                Stream.runForEach((event) => Effect.sync(() => translator.event(event))),
                runContext(scope, input.runId, input.threadId),
                Effect.provide(services as Context.Context<RunContext | R>),
                reportFailures(translator)
              ) as Effect.Effect<void>
            )
          })
        })

      const answer = (scope: Scope.Scope, input: RunInput, resume: NonNullable<RunInput["resume"]>) =>
        Effect.gen(function*() {
          const userId = scope.userId as string
          const targets = resume.map((entry) => ({ entry, id: parseInterruptId(entry.interruptId) }))
          const first = targets[0]?.id
          if (first === undefined || targets.some((target) => target.id?.runId !== first.runId)) {
            return yield* respond(404, "NotFound", "no interrupt of those ids that you may see")
          }
          const run = yield* ownRun(scope, first.runId, input.threadId)
          if (run.status !== "suspended") {
            return yield* respond(409, "Finished", `run '${run.runId}' is ${run.status}: it waits on no answer`)
          }
          for (const { entry, id } of targets) {
            const pending = run.pending.find((candidate) => candidate.id === id?.pendingId)
            // only approvals reach a user: a call in doubt or a policy gate stays an operator's
            if (pending === undefined || pending.kind !== "Approval") {
              return yield* respond(404, "NotFound", `no interrupt '${entry.interruptId}' that you may see`)
            }
            const payload = entry.payload as
              | { readonly approved?: unknown; readonly reason?: unknown; readonly digest?: unknown }
              | undefined
            const reason = typeof payload?.reason === "string" && payload.reason !== "" ? payload.reason : undefined
            const digest = typeof payload?.digest === "string" ? payload.digest : pending.digest
            let decision: Approval.Decision
            if (entry.status === "cancelled") {
              decision = Approval.reject(digest, reason ?? "the user dismissed the request")
            } else if (typeof payload?.approved !== "boolean") {
              return yield* respond(
                400,
                "BadRequest",
                `resume '${entry.interruptId}': a resolved approval carries { approved: boolean, reason?: string }`
              )
            } else {
              decision = payload.approved
                ? Approval.approve(digest)
                : Approval.reject(digest, reason ?? "the user declined")
            }
            yield* operator.decide(run.rootRunId, pending.id, { ...decision, by: userId }, {
              tenants: [scope.storeKey]
            }).pipe(
              Effect.catchTag("AlreadyDecided", (error) =>
                // a page that answered before a reload answers again: its own decision stands
                error.by === userId
                  ? Effect.void
                  : respond(409, "DecisionConflict", error.message)),
              Effect.catchTag("DigestMismatch", (error) => respond(409, "StaleDigest", error.message)),
              Effect.catchTags({
                RunNotFound: () => respond(404, "NotFound", `no run '${run.runId}' that you may see`),
                OtherTenant: () => respond(404, "NotFound", `no run '${run.runId}' that you may see`),
                RunFinished: (error) => respond(409, "Finished", error.message),
                UnknownPending: (error) => respond(404, "NotFound", error.message),
                InvalidDecision: (error) => respond(400, "BadRequest", error.message),
                ToolArgumentError: (error) => respond(400, "BadRequest", error.message),
                RunStateCorrupt: (error) => respond(503, "Unavailable", error.message),
                RunStateVersionUnsupported: (error) => respond(503, "Unavailable", error.message),
                StoreError: (error) => respond(503, "Unavailable", error.message)
              })
            )
          }
          const decided = yield* ownRun(scope, run.runId, input.threadId)
          const recorded = new Map(decided.decided.map((entry) => [entry.pendingId, entry.decision]))
          const open = decided.pending.filter((entry) => !recorded.has(entry.id))
          return sse((push) => {
            const translator = new Translator({ runId: input.runId, threadId: input.threadId, agent: agent.name, push })
            translator.start(input)
            if (open.length > 0) {
              // still waiting on other calls: the same suspension, less what was answered
              return Effect.sync(() => translator.waiting(decided.runId, open))
            }
            const decisions = Approval.decisions(
              decided.pending.flatMap((entry) => {
                const decision = recorded.get(entry.id)
                return decision === undefined ? [] : [[entry.id, decision] as const]
              })
            )
            return exclusive(
              decided.runId,
              translator,
              agent.resumeStream(decided.runId, decisions).pipe(
                Stream.runForEach((event) => Effect.sync(() => translator.event(event))),
                runContext(scope, decided.runId, input.threadId),
                Effect.provide(services as Context.Context<RunContext | R>),
                reportFailures(translator)
              ) as Effect.Effect<void>
            )
          })
        })

      const run = Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const scope = yield* identified(request)
        const type = request.headers["content-type"] ?? ""
        if (!/^application\/json\b/i.test(type)) {
          return yield* respond(415, "UnsupportedMediaType", "the body is AG-UI's RunAgentInput as application/json")
        }
        const body = yield* Effect.mapError(
          request.json,
          () => new Respond(problem(400, "BadRequest", "the body is not JSON"))
        )
        const input = decodeInput(body)
        if (Either.isLeft(input)) return yield* respond(400, "BadRequest", `RunAgentInput: ${input.left}`)
        const resume = input.right.resume ?? []
        return resume.length > 0 ? yield* answer(scope, input.right, resume) : yield* fresh(scope, input.right)
      }).pipe(Effect.catchAll((error) => Effect.succeed(error.response)))

      const thread = Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const scope = yield* identified(request)
        const { threadId } = yield* HttpLayerRouter.params
        if (threadId === undefined || threadId === "") return yield* Effect.fail(new Respond(notFound("thread")))
        const page = yield* operator.list({ threadId, tenant: [scope.storeKey], order: "desc", limit: 50 }).pipe(
          Effect.mapError((error) => new Respond(problem(503, "Unavailable", error.message)))
        )
        const latest = page.runs.find((run) => run.requestedBy === scope.userId && run.runId === run.rootRunId)
        if (latest === undefined) return yield* Effect.fail(new Respond(notFound(`thread '${threadId}'`)))
        const run = yield* ownRun(scope, latest.runId, threadId)
        const decided = new Set(run.decided.map((entry) => entry.pendingId))
        const interrupts = run.status === "suspended"
          ? userEntries(run.pending).filter((entry) => !decided.has(entry.id)).map((entry) =>
            toInterrupt(run.runId, run.agent, entry)
          )
          : []
        return HttpServerResponse.unsafeJson({
          threadId,
          runId: run.runId,
          status: run.status,
          messages: toAgUiMessages(run.runId, transcriptOf(run)),
          interrupts
        }, { headers: noStore })
      }).pipe(Effect.catchAll((error) => Effect.succeed(error.response)))

      yield* router.add("POST", settings.basePath as HttpLayerRouter.PathInput, run)
      yield* router.add("GET", `${settings.basePath}/threads/:threadId` as HttpLayerRouter.PathInput, thread)
    })
  )
