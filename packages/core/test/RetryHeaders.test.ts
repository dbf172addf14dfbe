import { retryAfterOf, shouldRetryOf } from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"
import { Duration } from "effect"

const millis = (headers: Record<string, string>, now?: number) => {
  const wait = retryAfterOf(new Headers(headers), now)
  return wait === undefined ? undefined : Duration.toMillis(wait)
}

describe("what a model API's headers say about retrying", () => {
  it("retry-after-ms first, then retry-after in seconds or as an HTTP date", () => {
    expect(millis({ "retry-after-ms": "150", "retry-after": "9" })).toBe(150)
    expect(millis({ "retry-after": "2" })).toBe(2000)
    expect(millis({ "retry-after": " 1.5 " })).toBe(1500)
    const now = Date.parse("2026-12-05T12:00:00Z")
    expect(millis({ "retry-after": "Sat, 05 Dec 2026 12:00:30 GMT" }, now)).toBe(30_000)
    expect(millis({ "retry-after": "Sat, 05 Dec 2026 11:00:00 GMT" }, now)).toBe(0)
  })

  it("nothing asked, or a value that does not parse, is no wait", () => {
    expect(retryAfterOf(undefined)).toBeUndefined()
    expect(millis({})).toBeUndefined()
    expect(millis({ "retry-after": "soon" })).toBeUndefined()
    expect(millis({ "retry-after-ms": "-5" })).toBeUndefined()
  })

  it("x-should-retry is true, false, or says nothing", () => {
    expect(shouldRetryOf(new Headers({ "x-should-retry": "true" }))).toBe(true)
    expect(shouldRetryOf(new Headers({ "x-should-retry": "false" }))).toBe(false)
    expect(shouldRetryOf(new Headers({ "x-should-retry": "maybe" }))).toBeUndefined()
    expect(shouldRetryOf(undefined)).toBeUndefined()
  })
})
