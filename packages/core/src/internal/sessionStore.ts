/** The in-memory session store: a `Map` by tenant and thread, in append order, bounded. @internal */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { ConfigurationError } from "../ConfigurationError.js"
import type { Claim, MemoryOptions, Service, Thread, ThreadKey } from "../SessionStore.js"
import { StaleThreadClaim, ThreadBusy } from "../SessionStore.js"

interface Entry {
  thread: Thread | undefined
  claim: Claim | undefined
}

const keyOf = (key: ThreadKey): string => JSON.stringify([key.tenant, key.threadId])

export const makeMemory = (options: MemoryOptions): Service => {
  const maxThreads = options.maxThreads ?? 10_000
  if (!Number.isInteger(maxThreads) || maxThreads < 1) {
    throw new ConfigurationError({
      field: "sessionStore.maxThreads",
      message: `sessionStore.maxThreads must be a positive integer; got ${String(options.maxThreads)}`
    })
  }
  // least recently appended first
  const entries = new Map<string, Entry>()
  // one counter for the store: a token is never given twice, even to a thread forgotten and made again
  let tokens = 0
  const current = (claim: Claim): Entry | undefined => {
    const entry = entries.get(keyOf(claim))
    return entry?.claim?.token === claim.token ? entry : undefined
  }
  return {
    claim: (key, request) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const id = keyOf(key)
        const entry = entries.get(id) ?? { thread: undefined, claim: undefined }
        const held = entry.claim
        if (held !== undefined && held.expiresAt > now && held.runId !== request.runId) {
          return Effect.fail(new ThreadBusy({ threadId: key.threadId, runId: held.runId, expiresAt: held.expiresAt }))
        }
        const own = held !== undefined && held.runId === request.runId
        tokens += 1
        const claim: Claim = {
          tenant: key.tenant,
          threadId: key.threadId,
          runId: request.runId,
          owner: request.owner,
          token: tokens,
          expiresAt: now + request.ttlMs
        }
        entry.claim = claim
        if (!entries.has(id)) entries.set(id, entry)
        return Effect.succeed({ claim, thread: Option.fromNullable(entry.thread), own })
      }),
    append: (claim, update) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const entry = current(claim)
        if (entry === undefined || claim.expiresAt <= now) {
          return Effect.fail(new StaleThreadClaim({ threadId: claim.threadId, token: claim.token }))
        }
        const thread: Thread = {
          tenant: claim.tenant,
          threadId: claim.threadId,
          messages: update.messages,
          version: (entry.thread?.version ?? 0) + 1,
          lastRunId: update.runId,
          updatedAt: now
        }
        entry.thread = thread
        entry.claim = undefined
        const id = keyOf(claim)
        entries.delete(id)
        entries.set(id, entry)
        for (const [oldest, old] of entries) {
          if (entries.size <= maxThreads) break
          if (old.claim === undefined || old.claim.expiresAt <= now) entries.delete(oldest)
        }
        return Effect.succeed(thread)
      }),
    renew: (claim, ttlMs) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const entry = current(claim)
        if (entry === undefined || claim.expiresAt <= now) {
          return Effect.fail(new StaleThreadClaim({ threadId: claim.threadId, token: claim.token }))
        }
        const renewed: Claim = { ...claim, expiresAt: now + ttlMs }
        entry.claim = renewed
        return Effect.succeed(renewed)
      }),
    release: (claim) =>
      Effect.sync(() => {
        const entry = current(claim)
        if (entry !== undefined) {
          entry.claim = undefined
          if (entry.thread === undefined) entries.delete(keyOf(claim))
        }
      }),
    load: (key) => Effect.sync(() => Option.fromNullable(entries.get(keyOf(key))?.thread)),
    prune: ({ before }) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.sync(() => {
          let pruned = 0
          for (const [id, entry] of entries) {
            const claimed = entry.claim !== undefined && entry.claim.expiresAt > now
            if (!claimed && entry.thread !== undefined && entry.thread.updatedAt < before) {
              entries.delete(id)
              pruned += 1
            }
          }
          return pruned
        }))
  }
}
