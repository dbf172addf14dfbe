/** The in-memory memo store: an LRU (a `Map` in use order) with a TTL per entry. @internal */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { ChatResponse } from "../Chat.js"
import { ConfigurationError } from "../ConfigurationError.js"
import type { MemoryOptions, MemoryStore } from "../MemoStore.js"
import { durationOption } from "./idempotencyStore.js"

export const makeMemory = (options: MemoryOptions): MemoryStore => {
  const maxEntries = options.maxEntries ?? 1000
  if (!Number.isInteger(maxEntries) || maxEntries < 1) {
    throw new ConfigurationError({
      field: "memoize.maxEntries",
      message: `memoize.maxEntries must be a positive integer; got ${String(options.maxEntries)}`
    })
  }
  const defaultTtl = durationOption("memoize.ttl", options.ttl, "1 hour")
  const entries = new Map<string, { readonly response: ChatResponse; readonly expiresAt: number }>()
  return {
    get: (key) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const entry = entries.get(key)
        if (entry === undefined) return Option.none()
        entries.delete(key)
        if (entry.expiresAt <= now) return Option.none()
        entries.set(key, entry) // most recently used last
        return Option.some(entry.response)
      }),
    set: (key, response, ttl) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        entries.delete(key)
        entries.set(key, { response, expiresAt: now + (ttl === undefined ? defaultTtl : Duration.toMillis(ttl)) })
        // the least recently used first: expired entries at the old end go as well
        for (const [oldest, entry] of entries) {
          if (entries.size <= maxEntries && entry.expiresAt > now) break
          entries.delete(oldest)
        }
      }),
    get size() {
      return entries.size
    }
  }
}
