import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { program, runtime, scriptedModel } from "../src/program.js"

describe("support-desk demo", () => {
  it.effect("prints the seed's three lines", () =>
    Effect.gen(function* () {
      const lines = yield* program.pipe(Effect.provide(runtime(scriptedModel())))
      expect(lines).toEqual([
        "Order A-771 shipped on 14 August and arrives Tuesday.",
        'lookup_order {"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}',
        "rejected: tool 'cancel_order' call rejected: unexpected argument(s) ['order']; missing required argument(s) ['order_id']. Accepted arguments: ['order_id', 'reason']"
      ])
    })
  )
})
