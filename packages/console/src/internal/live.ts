/**
 * Live updates: one poller per console asks the operator service what changed
 * (`Operator.changes`, so a change made by any process sharing the store is seen, with each
 * changed run's tenant and status) and publishes each change; each server-sent-event stream forwards only the
 * changes of tenants its operator may see. @internal
 */
import type { Operator as Op } from "@agentkit/agents"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as OperatorAuth from "../OperatorAuth.js"

/** One change as the browser and the CLI receive it. */
export interface Change {
  readonly runId: string
  readonly rootRunId: string
  readonly tenant: string
  readonly status: Op.RunStatus
  readonly updatedAt: number
  readonly pending: number
}

/** The poller's hub. */
export interface Live {
  readonly changes: PubSub.PubSub<Change>
}

/** Starts the poller in the given scope. */
export const start = (operator: Op.Service, interval: Duration.Duration): Effect.Effect<Live, never, Scope.Scope> =>
  Effect.gen(function*() {
    const changes = yield* Effect.acquireRelease(PubSub.sliding<Change>(1024), PubSub.shutdown)
    let cursor: string | undefined = undefined
    const poll = Effect.gen(function*() {
      const next = yield* operator.changes(cursor)
      const first = cursor === undefined
      cursor = next.cursor
      if (first) return
      // the service says how each changed run was left: no read per change (a burst of N runs
      // costs N, not N reads each scanning the store)
      if (next.runs !== undefined) {
        yield* PubSub.publishAll(changes, next.runs)
        return
      }
      yield* Effect.forEach(
        next.runIds,
        (runId) =>
          operator.show(runId).pipe(
            Effect.flatMap((run) =>
              PubSub.publish(changes, {
                runId: run.runId,
                rootRunId: run.rootRunId,
                tenant: run.tenant,
                status: run.status,
                updatedAt: run.updatedAt,
                pending: run.pending.length
              })
            ),
            // a run pruned since it changed, or unreadable: nothing to tell
            Effect.catchAll(() => Effect.void)
          ),
        { concurrency: 4, discard: true }
      )
    }).pipe(
      Effect.catchAll((error) =>
        Effect.logWarning(`console: polling the operator service for changes failed: ${error.message}`)
      )
    )
    yield* Effect.forkScoped(Effect.repeat(poll, Schedule.spaced(interval)))
    return { changes }
  })

const encoder = new TextEncoder()

/** A server-sent-event stream of the changes a principal may see (optionally of one run tree). */
export const stream = (
  live: Live,
  principal: OperatorAuth.Principal,
  runId: string | undefined
): HttpServerResponse.HttpServerResponse => {
  const events = Stream.fromPubSub(live.changes).pipe(
    Stream.filter(
      (change) =>
        OperatorAuth.canSee(principal, change.tenant) &&
        (runId === undefined || change.runId === runId || change.rootRunId === runId)
    ),
    Stream.map((change) => `event: change\ndata: ${JSON.stringify(change)}\n\n`)
  )
  const keepalive = Stream.repeatEffectWithSchedule(Effect.succeed(": keepalive\n\n"), Schedule.spaced("15 seconds"))
  const body = Stream.concat(
    Stream.succeed("retry: 2000\n: connected\n\n"),
    Stream.merge(events, keepalive, { haltStrategy: "either" })
  ).pipe(
    Stream.map((text) => encoder.encode(text))
  )
  return HttpServerResponse.stream(body, { contentType: "text/event-stream" }).pipe(
    HttpServerResponse.setHeader("x-accel-buffering", "no")
  )
}
