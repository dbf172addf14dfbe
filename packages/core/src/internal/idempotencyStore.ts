/**
 * The in-memory idempotency store. Outcomes are grouped by run; when a run ends its outcomes are
 * queued to expire after the retention (the queue is in expiry order, because the retention is
 * the same for every run), and every operation first drops what has expired. Nothing is evicted
 * by count. @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { ConfigurationError } from "../ConfigurationError.js"
import type { MemoryOptions, MemoryStore } from "../IdempotencyStore.js"
import type { ToolOutcome } from "../Middleware.js"

export const durationOption = (
  field: string,
  input: Duration.DurationInput | undefined,
  fallback: Duration.DurationInput
): number => {
  const decoded = Duration.decodeUnknown(input ?? fallback)
  if (Option.isNone(decoded) || !(Duration.toMillis(decoded.value) > 0)) {
    throw new ConfigurationError({
      field,
      message: `${field} must be a positive duration (e.g. "1 hour"); got ${String(input)}`
    })
  }
  return Duration.toMillis(decoded.value)
}

export const makeMemory = (options: MemoryOptions): MemoryStore => {
  const retention = durationOption("idempotencyStore.retention", options.retention, "1 hour")
  const outcomes = new Map<string, { readonly outcome: ToolOutcome; readonly runId: string }>()
  const keysByRun = new Map<string, Set<string>>()
  /** When each ended run's outcomes expire; a run written to again is live again. */
  const endedAt = new Map<string, number>()
  const queue: Array<{ readonly runId: string; readonly expiresAt: number }> = []
  let head = 0

  const sweep = (now: number): void => {
    while (head < queue.length && queue[head]!.expiresAt <= now) {
      const { expiresAt, runId } = queue[head++]!
      if (endedAt.get(runId) !== expiresAt) continue // written to again, or ended again later
      endedAt.delete(runId)
      for (const key of keysByRun.get(runId) ?? []) outcomes.delete(key)
      keysByRun.delete(runId)
    }
    if (head > 1024 && head * 2 > queue.length) {
      queue.splice(0, head)
      head = 0
    }
  }

  return {
    get: (key) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        sweep(now)
        const found = outcomes.get(key)
        return found === undefined ? Option.none() : Option.some(found.outcome)
      }),
    set: (key, outcome, runId) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        sweep(now)
        const previous = outcomes.get(key)
        if (previous !== undefined && previous.runId !== runId) keysByRun.get(previous.runId)?.delete(key)
        outcomes.set(key, { outcome, runId })
        let keys = keysByRun.get(runId)
        if (keys === undefined) keysByRun.set(runId, keys = new Set())
        keys.add(key)
        endedAt.delete(runId)
      }),
    endRun: (runId) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        sweep(now)
        if (!keysByRun.has(runId)) return
        const expiresAt = now + retention
        endedAt.set(runId, expiresAt)
        queue.push({ runId, expiresAt })
      }),
    get size() {
      return outcomes.size
    }
  }
}
