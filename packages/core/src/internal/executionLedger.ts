/** The in-memory execution ledger: one entry per claimed call, never evicted by count. @internal */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { Claim, MemoryLedger, Outcome } from "../ExecutionLedger.js"
import { LedgerConflict } from "../ExecutionLedgerError.js"
import { markedFailedText } from "../FailureText.js"

interface Entry {
  readonly digest: string
  readonly claimedAt: number
  readonly outcome: Outcome | undefined
  readonly completedAt: number | undefined
}

const copy = (outcome: Outcome): Outcome => ({ text: outcome.text, isError: outcome.isError })

export const makeMemory = (): MemoryLedger => {
  const entries = new Map<string, Entry>()
  return {
    claim: (key, digest) =>
      Effect.map(Clock.currentTimeMillis, (now): Claim => {
        const entry = entries.get(key)
        if (entry === undefined) {
          entries.set(key, { digest, claimedAt: now, outcome: undefined, completedAt: undefined })
          return { _tag: "Claimed" }
        }
        // the same key with other arguments: not the call that was claimed, so not known to be done
        if (entry.digest !== digest || entry.outcome === undefined) {
          return { _tag: "InDoubt", claimedAt: entry.claimedAt, digest: entry.digest }
        }
        return { _tag: "Completed", outcome: copy(entry.outcome) }
      }),
    complete: (key, outcome) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const entry = entries.get(key)
        if (entry !== undefined && entry.outcome !== undefined) return // the first completion wins
        entries.set(key, {
          digest: entry?.digest ?? "",
          claimedAt: entry?.claimedAt ?? now,
          outcome: copy(outcome),
          completedAt: now
        })
      }),
    resolve: (key, resolution, options) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.suspend(() => {
          const entry = entries.get(key)
          if (entry === undefined) return Effect.fail(new LedgerConflict({ key, state: "none" }))
          if (entry.outcome !== undefined) return Effect.fail(new LedgerConflict({ key, state: "completed" }))
          if (options?.claimedAt !== undefined && options.claimedAt !== entry.claimedAt) {
            return Effect.fail(new LedgerConflict({ key, state: "reclaimed" }))
          }
          if (resolution._tag === "Retry") entries.delete(key)
          else {
            const outcome = resolution._tag === "Done"
              ? copy(resolution.outcome)
              : { text: markedFailedText(resolution.reason), isError: true }
            entries.set(key, { ...entry, outcome, completedAt: now })
          }
          return Effect.void
        })),
    prune: ({ before }) =>
      Effect.sync(() => {
        let pruned = 0
        for (const [key, entry] of entries) {
          if (entry.completedAt !== undefined && entry.completedAt < before) {
            entries.delete(key)
            pruned++
          }
        }
        return pruned
      }),
    get size() {
      return entries.size
    }
  }
}
