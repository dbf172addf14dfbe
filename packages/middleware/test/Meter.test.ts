import { Budget, BudgetExceeded, Invoker, Message, Quota, RunContext, Scope, Tracing, Usage } from "@agentkit/core"
import type { ChatMiddleware, ChatModel } from "@agentkit/core"
import { Memoize, Meter } from "@agentkit/middleware"
import { FakeLLM, Fixture } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import type { Layer } from "effect"
import { Effect, TestClock } from "effect"
import { call, countingTool, setup } from "./fixtures.js"

const { replying: model } = FakeLLM
const { request, response } = Fixture

const costing = (costUsd: number, extra: Partial<Usage.Usage> = {}) =>
  model((_n, req) =>
    Effect.succeed(
      response({ model: req.model, usage: Usage.make({ inputTokens: 100, outputTokens: 20, costUsd, ...extra }) })
    )
  )

type Tenant = { readonly orgId?: number | string; readonly domainId?: number | string }

const chatAs = (orgId: number, chatModel: Layer.Layer<ChatModel>, chatMiddleware: ReadonlyArray<ChatMiddleware>) =>
  Effect.flatMap(Invoker, (invoker) => invoker.chat(request())).pipe(
    Effect.provide(setup({ chatModel, chatMiddleware, scope: { orgId, domainId: 1 } }))
  )

describe("Meter", () => {
  it.effect("shared Quota(maxUsd 0.05), $0.03 per call: each tenant gets 2 calls, the 3rd is refused naming the tenant", () => {
    const quota = Quota.unsafeMake({ maxUsd: 0.05 })
    const llm = costing(0.03)
    const meter = Meter.meter({ quotas: [quota] })
    return Effect.gen(function*() {
      for (const org of [1, 2]) {
        yield* chatAs(org, llm.layer, [meter])
        yield* chatAs(org, llm.layer, [meter])
        const error = yield* Effect.flip(chatAs(org, llm.layer, [meter]))
        expect(error).toBeInstanceOf(BudgetExceeded)
        expect(error.message).toBe(`org${org}:dom1: $0.06 ≥ $0.05 per window`)
      }
      expect(quota.charges(Scope.make({ orgId: 1, domainId: 1 }))).toHaveLength(2)
      expect(quota.charges(Scope.make({ orgId: 2, domainId: 1 }))).toHaveLength(2)
      expect(llm.calls).toBe(4)
    })
  })

  it.effect("Quota(maxRpm 1): the 2nd call of a tenant is refused, another tenant passes", () => {
    const quota = Quota.unsafeMake({ maxRpm: 1 })
    const llm = costing(0.001)
    const meter = Meter.meter({ quotas: [quota] })
    return Effect.gen(function*() {
      yield* chatAs(1, llm.layer, [meter])
      expect((yield* Effect.flip(chatAs(1, llm.layer, [meter]))).message).toBe("org1:dom1: 1 req ≥ 1 rpm")
      yield* chatAs(2, llm.layer, [meter])
      expect(llm.calls).toBe(2)
      // the window rolls on
      yield* TestClock.adjust("61 seconds")
      yield* chatAs(1, llm.layer, [meter])
    })
  })

  it.effect("tenants whose display keys collide get their own quota (storeKey partitions)", () => {
    const quota = Quota.unsafeMake({ maxRpm: 1 })
    const llm = costing(0.001)
    const meter = Meter.meter({ quotas: [quota] })
    const chatIn = (scope: Tenant) =>
      Effect.flatMap(Invoker, (invoker) => invoker.chat(request())).pipe(
        Effect.provide(setup({ chatModel: llm.layer, chatMiddleware: [meter], scope }))
      )
    return Effect.gen(function*() {
      for (
        const [a, b] of [
          [{ orgId: "None" }, {}],
          [{ orgId: "acme:dom7" }, { orgId: "acme", domainId: "7:domNone" }],
          [{ orgId: 1 }, { orgId: "1" }]
        ] satisfies ReadonlyArray<readonly [Tenant, Tenant]>
      ) {
        yield* chatIn(a)
        yield* chatIn(b)
        expect((yield* Effect.flip(chatIn(a))).message).toBe(`${Scope.make(a).key}: 1 req ≥ 1 rpm`)
        expect((yield* Effect.flip(chatIn(b))).message).toBe(`${Scope.make(b).key}: 1 req ≥ 1 rpm`)
      }
      expect(llm.calls).toBe(6)
    })
  })

  it.effect("Quota(maxTpm 100): the estimate is floor(sum of content lengths / 4); usage is charged after", () => {
    const quota = Quota.unsafeMake({ maxTpm: 100 })
    const llm = model((_n, req) =>
      Effect.succeed(response({ model: req.model, usage: Usage.make({ inputTokens: 100, outputTokens: 50 }) }))
    )
    const meter = Meter.meter({ quotas: [quota] })
    const layer = setup({ chatModel: llm.layer, chatMiddleware: [meter], scope: { orgId: 1, domainId: 1 } })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      expect(Meter.estimateTokens(request("m", "x".repeat(43)))).toBe(10)
      yield* invoker.chat(request("m", "x".repeat(43)))
      expect(quota.charges(Scope.make({ orgId: 1, domainId: 1 }))).toEqual([{ at: 0, tokens: 150, costUsd: 0 }])
      const error = yield* Effect.flip(
        invoker.chat({
          ...request("m", "x".repeat(40)),
          messages: [Message.system("abcd"), Message.user("x".repeat(40))]
        })
      )
      expect(error.message).toBe("org1:dom1: 150+11 tok > 100 tpm")
      expect(llm.calls).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("Budget(0.10) + Quota(1.00), $0.04 per call: the 3rd call throws after accrual; the quota has 2 charges", () => {
    const quota = Quota.unsafeMake({ maxUsd: 1 })
    const llm = costing(0.04)
    const layer = setup({
      chatModel: llm.layer,
      chatMiddleware: [Meter.meter({ quotas: [quota] })],
      budget: { maxCostUsd: 0.1 },
      scope: { orgId: 1, domainId: 1 }
    })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* invoker.chat(request())
      yield* invoker.chat(request())
      const error = yield* Effect.flip(invoker.chat(request()))
      expect(error.message).toBe("cost $0.12 > $0.1")
      const run = yield* RunContext
      expect(run.budget.spentUsd).toBe(0.12)
      // the run's Budget is charged first (innermost): its failure stops the quota's charge
      expect(quota.charges(Scope.make({ orgId: 1, domainId: 1 }))).toHaveLength(2)
      // a 4th call is refused by the run's Budget before the quota or the model sees it
      yield* Effect.flip(invoker.chat(request()))
      expect(llm.calls).toBe(3)
      expect(quota.charges(Scope.make({ orgId: 1, domainId: 1 }))).toHaveLength(2)
    }).pipe(Effect.provide(layer))
  })

  it.effect("with meter in the pipeline and Budget(maxCostUsd 0.015), $0.01 per call: the 2nd call fails", () => {
    const llm = costing(0.01)
    const layer = setup({ chatModel: llm.layer, chatMiddleware: [Meter.meter()], budget: { maxCostUsd: 0.015 } })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* invoker.chat(request())
      const error = yield* Effect.flip(invoker.chat(request()))
      expect(error).toBeInstanceOf(BudgetExceeded)
      expect(error.message).toBe("cost $0.02 > $0.015")
    }).pipe(Effect.provide(layer))
  })

  it.effect("budget.checkpoint {spent 0.5, remaining 1.5, calls 1} only with a cost ceiling", () => {
    const llm = costing(0.5)
    const tracer = Tracing.recording()
    return Effect.gen(function*() {
      yield* Effect.flatMap(Invoker, (i) => i.chat(request("with-ceiling"))).pipe(
        Effect.provide(setup({ chatModel: llm.layer, chatMiddleware: [Meter.meter()], budget: { maxCostUsd: 2 } }))
      )
      yield* Effect.flatMap(Invoker, (i) => i.chat(request("no-ceiling"))).pipe(
        Effect.provide(setup({ chatModel: llm.layer, chatMiddleware: [Meter.meter()] }))
      )
      const event = tracer.one("chat with-ceiling").events.find((e) => e.name === "budget.checkpoint")
      expect(event?.attributes).toEqual({ spent_usd: 0.5, remaining_usd: 1.5, calls: 1 })
      expect(tracer.one("chat no-ceiling").events.map((e) => e.name)).not.toContain("budget.checkpoint")
    }).pipe(Effect.provide(tracer.layer))
  })

  it.effect("extra meters run after the quotas, in order; a failing charge stops later charges", () => {
    const log: Array<string> = []
    const recorder = (name: string, failCharge = false): Meter.Meter => ({
      guard: (metered) =>
        Effect.sync(() =>
          void log.push(`guard ${name} ${metered.operation} ${metered.name} ${metered.estimatedTokens}`)
        ),
      charge: (_metered, usage) =>
        Effect.suspend(() => {
          log.push(`charge ${name} ${usage.costUsd}`)
          return failCharge ? Effect.fail(new BudgetExceeded({ limit: "cost", message: `${name} over` })) : Effect.void
        })
    })
    const llm = costing(0.25)
    const layer = setup({
      chatModel: llm.layer,
      chatMiddleware: [Meter.meter({ meters: [recorder("a"), recorder("b", true), recorder("c")] })]
    })
    return Effect.gen(function*() {
      const error = yield* Effect.flip((yield* Invoker).chat(request("m", "12345678")))
      expect(error.message).toBe("b over")
      expect(log).toEqual([
        "guard a chat m 2",
        "guard b chat m 2",
        "guard c chat m 2",
        "charge a 0.25",
        "charge b 0.25"
      ])
    }).pipe(Effect.provide(layer))
  })

  it.effect("on the tool pipeline, a quota counts tool calls as requests and charges nothing", () => {
    const quota = Quota.unsafeMake({ maxRpm: 2 })
    const lookup = countingTool("lookup", { sideEffecting: false, idempotent: true })
    const meter = Meter.meter({ quotas: [quota] })
    const layer = setup({ toolMiddleware: [meter], scope: { orgId: 3, domainId: 1 } })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* invoker.tool(call("lookup"), lookup.tool)
      yield* invoker.tool(call("lookup"), lookup.tool)
      expect((yield* Effect.flip(invoker.tool(call("lookup"), lookup.tool))).message).toBe("org3:dom1: 2 req ≥ 2 rpm")
      expect(lookup.count).toBe(2)
      expect(quota.charges(Scope.make({ orgId: 3, domainId: 1 }))).toEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.effect("a cache hit is charged neither to the quota nor to the run's Budget", () => {
    const quota = Quota.unsafeMake({ maxUsd: 10 })
    const llm = costing(0.5)
    const layer = setup({
      chatModel: llm.layer,
      chatMiddleware: [Memoize.memoize(), Meter.meter({ quotas: [quota] })],
      scope: { orgId: 1, domainId: 1 }
    })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* invoker.chat(request())
      yield* invoker.chat(request())
      const run = yield* RunContext
      expect(llm.calls).toBe(1)
      expect(run.budget.spentUsd).toBe(0.5)
      expect(run.budget.modelCalls).toBe(1)
      expect(quota.charges(Scope.make({ orgId: 1, domainId: 1 }))).toHaveLength(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("the budget total is exact after 1,000 concurrent calls", () => {
    const quota = Quota.unsafeMake({ maxUsd: 100 })
    const llm = model((_n, req) =>
      Effect.as(
        Effect.yieldNow(),
        response({ model: req.model, usage: Usage.make({ inputTokens: 3, outputTokens: 1, costUsd: 0.001 }) })
      )
    )
    const budget = Budget.unsafeMake({ maxCostUsd: 5, maxConcurrency: 1000 })
    const layer = setup({
      chatModel: llm.layer,
      chatMiddleware: [Meter.meter({ quotas: [quota] })],
      budget,
      scope: { orgId: 1 }
    })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* Effect.all(
        Array.from({ length: 1000 }, () => invoker.chat(request())),
        { concurrency: "unbounded", discard: true }
      )
      expect(llm.calls).toBe(1000)
      expect(budget.spentUsd).toBe(1)
      expect(budget.modelCalls).toBe(1000)
      expect(budget.tokens).toBe(4000)
      const charges = quota.charges(Scope.make({ orgId: 1 }))
      expect(charges).toHaveLength(1000)
      expect(Usage.round6(charges.reduce((sum, c) => sum + c.costUsd, 0))).toBe(1)
    }).pipe(Effect.provide(layer))
  })
})
