/**
 * The single writer of one run record: every save and the finish go through it, one at a time,
 * each carrying the lease and the version the previous write returned. A save that finds another
 * in progress waits; when its turn comes it writes the newest state (one write can stand for
 * several), so the parallel tool results of a turn never commit out of order and a completed
 * call is never lost. @internal
 */
import { StaleLease } from "@agentkit/core"
import type { Budget, CheckpointStore, CorruptEntry, StoreError } from "@agentkit/core"
import * as Effect from "effect/Effect"
import * as RunState from "../RunState.js"

/** What a write can fail with: the run is lost to this process (`StaleLease`), or the store is broken. */
export type WriteError = StaleLease | StoreError | CorruptEntry

/** The current lease of a run tree (its heartbeat renews it in place). */
export interface LeaseHolder {
  current: CheckpointStore.Lease
}

export interface Writer {
  /** Saves the run's state as it is when the write happens (`state` is read then, not now). */
  readonly save: (status: "running" | "suspended", state: () => RunState.RunState) => Effect.Effect<void, WriteError>
  /** Writes the terminal marker, after every save before it. */
  readonly finish: (status: "done" | "failed" | "cancelled", result: string) => Effect.Effect<void, WriteError>
  /**
   * Saves the newest state again (before any save, the tree's `initial` state), with the budget as
   * it is now: what a root's budget journal runs after each reservation, before the call is sent.
   */
  readonly journal: Effect.Effect<void, WriteError>
}

/** A root's writer: every state it saves carries the tree's budget as it is when the write happens. */
export interface Tree {
  readonly budget: Budget.Budget
  /** The state the record holds before the body saves one. */
  readonly initial: () => RunState.RunState
}

/** A compare-and-set outcome other than a broken store means another owner has the run. */
const lost = (runId: string, token: number) =>
(
  error:
    & { readonly _tag: string }
    & (WriteError | { readonly _tag: "VersionConflict" | "RunFinished" | "RunNotFound" })
): Effect.Effect<never, WriteError> =>
  error._tag === "StoreError" || error._tag === "CorruptEntry" || error._tag === "StaleLease"
    ? Effect.fail(error as WriteError)
    : Effect.fail(new StaleLease({ runId, token }))

export const makeWriter = (
  store: CheckpointStore.Service,
  holder: LeaseHolder,
  runId: string,
  version: number,
  tree?: Tree
): Writer => {
  let current = version
  let requested = 0
  let committed = 0
  let latest: { readonly status: "running" | "suspended"; readonly state: () => RunState.RunState } | undefined
  const lock = Effect.unsafeMakeSemaphore(1)

  const save: Writer["save"] = (status, state) =>
    Effect.suspend(() => {
      const mine = ++requested
      latest = { status, state }
      return lock.withPermits(1)(
        Effect.suspend(() => {
          if (committed >= mine) return Effect.void // a later save already wrote this state
          const upTo = requested
          const next = latest!
          const lease = holder.current
          const state = next.state()
          return store.save(lease, {
            runId,
            expectedVersion: current,
            status: next.status,
            state: RunState.encode(tree === undefined ? state : { ...state, budget: tree.budget.snapshot() })
          }).pipe(
            Effect.catchAll(lost(runId, lease.token)),
            Effect.map((saved) => {
              current = saved
              committed = upTo
            })
          )
        })
      )
    })

  const finish: Writer["finish"] = (status, result) =>
    lock.withPermits(1)(
      Effect.suspend(() => {
        const lease = holder.current
        return Effect.catchAll(
          store.finish(lease, { runId, expectedVersion: current, status, result }),
          lost(runId, lease.token)
        )
      })
    )

  const journal: Writer["journal"] = Effect.suspend(() =>
    latest !== undefined
      ? save(latest.status, latest.state)
      : tree === undefined
      ? Effect.void
      : save("running", tree.initial)
  )

  return { save, finish, journal }
}
