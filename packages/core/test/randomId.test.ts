import { RunContext } from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { randomHex, uuid } from "../src/internal/randomId.js"

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** How many distinct characters each position of the ids shows. */
const spread = (ids: ReadonlyArray<string>): ReadonlyArray<number> =>
  Array.from(ids[0]!, (_, at) => new Set(ids.map((id) => id[at])).size)

describe("random ids", () => {
  it("uuid: a version 4 UUID, distinct across many refills of the pool, every random digit spread over all 16 values", () => {
    // 10,000 ids draw the 4 KB pool about 40 times over
    const ids = Array.from({ length: 10_000 }, uuid)
    for (const id of ids) expect(id).toMatch(UUID_V4)
    expect(new Set(ids).size).toBe(ids.length)
    const expected = Array.from(
      "xxxxxxxx-xxxx-4xxx-vxxx-xxxxxxxxxxxx",
      (c) => (c === "-" || c === "4" ? 1 : c === "v" ? 4 : 16)
    )
    expect(spread(ids)).toEqual(expected)
  })

  it("randomHex: as many lowercase hex digits as asked, distinct, spread over all 16 values", () => {
    for (const length of [1, 15, 16, 32, 33, 40]) {
      const ids = Array.from({ length: 2_000 }, () => randomHex(length))
      for (const id of ids) expect(id).toMatch(new RegExp(`^[0-9a-f]{${length}}$`))
      if (length >= 15) expect(new Set(ids).size).toBe(ids.length)
      expect(spread(ids)).toEqual(Array.from({ length }, () => 16))
    }
  })

  it.effect("a run without an id of its own gets a fresh version 4 UUID", () =>
    Effect.gen(function*() {
      const ids = new Set<string>()
      for (let i = 0; i < 300; i++) {
        const runId = yield* RunContext.with((context) => Effect.succeed(context.runId)).pipe(RunContext.provide())
        expect(runId).toMatch(UUID_V4)
        ids.add(runId)
      }
      expect(ids.size).toBe(300)
    }))
})
