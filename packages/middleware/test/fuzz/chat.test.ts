/**
 * Attack suite, the chat side: model calls whose transcripts carry hostile tool-call arguments
 * (as a model's earlier turns or a caller's conversation may) through memoize, a quota meter,
 * retry and telemetry with content capture. Never a crash; a request that is JSON data is
 * cached (its repeat never reaches the model); a 10,000-deep, circular or BigInt argument is a
 * key like any other; one that cannot be read (a proxy that throws) is simply not cached.
 */
import { Invoker, Message, Quota, RunContext } from "@agentkit/core"
import { Memoize, Meter, Retry, Telemetry } from "@agentkit/middleware"
import { FakeLLM } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, FastCheck as fc } from "effect"
import { jsonData } from "./model.js"

const llm = FakeLLM.replying()
const invoker = Invoker.make(llm.service, {
  chatMiddleware: [
    Telemetry.telemetry({ captureContent: true }),
    Memoize.memoize(),
    Meter.meter({ quotas: [Quota.unsafeMake({ maxTpm: 1e15 })] }),
    Retry.retry({ maxAttempts: 2 })
  ]
})
const context = Effect.runSync(RunContext.make({ correlationId: "fuzz-chat" }))

const deep = (depth: number): unknown => {
  let value: unknown = 0
  for (let i = 0; i < depth; i++) value = { d: value }
  return value
}
const hostile = fc.oneof(
  fc.constant("proxy").map(() =>
    new Proxy({}, {
      ownKeys: () => {
        throw new Error("trap")
      }
    })
  ),
  fc.constantFrom(1000, 10_000).map(deep),
  fc.constant(10n),
  fc.constant("cycle").map(() => {
    const cyclic: Record<string, unknown> = {}
    cyclic["self"] = cyclic
    return cyclic
  })
)
const argsArb = fc.oneof(
  { arbitrary: jsonData.map((data) => ({ json: true, args: { data } })), weight: 3 },
  { arbitrary: hostile.map((value) => ({ json: false, args: { value } })), weight: 1 }
)
let hostileSeen = 0
let cached = 0

describe("attack suite: the chat pipeline", () => {
  it.prop(
    "a response or a typed error; JSON transcripts are cached, hostile ones never crash",
    [fc.string({ maxLength: 40 }), argsArb, fc.nat(3)],
    ([text, { args, json }, big]) => {
      const request = {
        model: "m",
        messages: [
          Message.user(big === 0 ? text.repeat(10_000) : text),
          Message.assistant("", [{ id: "t1", name: "lookup", arguments: args as Record<string, unknown> }]),
          Message.toolResult({ toolCallId: "t1", name: "lookup", content: "ok", isError: false })
        ],
        tools: []
      }
      const run = () => Effect.runSyncExit(Effect.provideService(invoker.chat(request), RunContext, context))
      const first = run()
      expect(Exit.isSuccess(first) || !Cause.isDie(first.cause)).toBe(true)
      const calls = llm.calls
      const second = run()
      expect(Exit.isSuccess(second)).toBe(true)
      if (json) {
        expect(llm.calls).toBe(calls) // a cache hit
        cached++
      } else hostileSeen++
    },
    { timeout: 60_000, fastCheck: { numRuns: 2000 } }
  )

  it("figures", () => {
    console.log(
      `the chat pipeline: ${
        2 * (cached + hostileSeen)
      } model calls; JSON transcripts cached: ${cached}; hostile transcripts (no crash): ${hostileSeen}`
    )
    expect(hostileSeen).toBeGreaterThan(200)
    expect(cached).toBeGreaterThan(1000)
  })
})
