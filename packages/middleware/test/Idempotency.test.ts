import { Agent, ReActCognition } from "@agentkit/agents"
import { Invoker, RunContext, ToolDenied } from "@agentkit/core"
import type { ToolMiddleware } from "@agentkit/core"
import { Audit, Egress, Idempotency, Retry } from "@agentkit/middleware"
import { FakeLLM, makeTestCtx, Turn } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { call, countingTool, setup } from "./fixtures.js"

/** A middleware that records `meta.deduplicated` after each call. */
const dedupeRecorder = (seen: Array<boolean | undefined>): ToolMiddleware => (next) => (invocation) =>
  Effect.tap(next(invocation), () => Effect.sync(() => seen.push(invocation.meta.deduplicated)))

describe("Idempotency", () => {
  it.effect("[audit, idempotent]: the same side-effecting call twice executes once and is audited twice", () => {
    const charge = countingTool("charge", { sideEffecting: true })
    const audit = Audit.memoryStore()
    const seen: Array<boolean | undefined> = []
    const layer = setup({
      toolMiddleware: [Audit.audit({ store: audit }), dedupeRecorder(seen), Idempotency.idempotent()]
    })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      const first = yield* invoker.tool(call("charge", { amount: 5 }, "c1"), charge.tool)
      const second = yield* invoker.tool(call("charge", { amount: 5 }, "c2"), charge.tool)
      expect(first.text).toBe("ok")
      expect(second).toStrictEqual(first)
      expect(charge.count).toBe(1)
      expect(seen).toEqual([undefined, true])
      expect(audit.records.map((r) => r.tool)).toEqual(["charge", "charge"])
      expect(audit.records.map((r) => r.decision)).toEqual(["executed", "deduplicated"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("a failure is never stored: the repeat executes again", () => {
    const charge = countingTool("charge", { sideEffecting: true }, (n) => {
      if (n === 1) throw new Error("ValueError")
      return "ok"
    })
    const store = Idempotency.memoryStore()
    const layer = setup({ toolMiddleware: [Idempotency.idempotent({ store })] })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* Effect.flip(invoker.tool(call("charge"), charge.tool))
      expect(store.size).toBe(0)
      expect((yield* invoker.tool(call("charge"), charge.tool)).text).toBe("ok")
      expect(charge.count).toBe(2)
      expect(store.size).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("the key ignores argument order but not argument values", () => {
    const charge = countingTool("charge", { sideEffecting: true })
    const layer = setup({ toolMiddleware: [Idempotency.idempotent()] })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* invoker.tool(call("charge", { amount: 5, card: { last4: "4242", brand: "visa" } }), charge.tool)
      yield* invoker.tool(call("charge", { card: { brand: "visa", last4: "4242" }, amount: 5 }), charge.tool)
      expect(charge.count).toBe(1)
      yield* invoker.tool(call("charge", { amount: 6, card: { last4: "4242", brand: "visa" } }), charge.tool)
      expect(charge.count).toBe(2)
    }).pipe(Effect.provide(layer))
  })

  it.effect("another run or another tenant executes again", () => {
    const charge = countingTool("charge", { sideEffecting: true })
    const store = Idempotency.memoryStore()
    const idempotent = Idempotency.idempotent({ store })
    const run = (runId: string, orgId: number) =>
      Effect.flatMap(Invoker, (invoker) => invoker.tool(call("charge", { amount: 1 }), charge.tool)).pipe(
        Effect.provide(setup({ toolMiddleware: [idempotent], runId, scope: { orgId } }))
      )
    return Effect.gen(function*() {
      yield* run("run-1", 1)
      yield* run("run-1", 1)
      expect(charge.count).toBe(1)
      yield* run("run-2", 1)
      expect(charge.count).toBe(2)
      yield* run("run-1", 2)
      expect(charge.count).toBe(3)
      expect(store.size).toBe(3)
    })
  })

  it.effect("read-only tools are never deduplicated", () => {
    const lookup = countingTool("lookup", { sideEffecting: false, idempotent: true })
    const layer = setup({ toolMiddleware: [Idempotency.idempotent()] })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* invoker.tool(call("lookup", { id: 1 }), lookup.tool)
      yield* invoker.tool(call("lookup", { id: 1 }), lookup.tool)
      expect(lookup.count).toBe(2)
    }).pipe(Effect.provide(layer))
  })

  it.effect("concurrent identical calls share one execution", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const charge = countingTool("charge", { sideEffecting: true }, () => Effect.as(Deferred.await(gate), "charged"))
      const seen: Array<boolean | undefined> = []
      const layer = setup({ toolMiddleware: [dedupeRecorder(seen), Idempotency.idempotent()] })
      const results = yield* Effect.gen(function*() {
        const invoker = yield* Invoker
        const fibers = yield* Effect.forEach([1, 2, 3, 4, 5], (i) =>
          Effect.fork(invoker.tool(call("charge", { amount: 9 }, `c${i}`), charge.tool)))
        yield* Effect.yieldNow()
        yield* Deferred.succeed(gate, undefined)
        return yield* Fiber.joinAll(fibers)
      }).pipe(Effect.provide(layer))
      expect(results.map((r) =>
        r.text
      )).toEqual(["charged", "charged", "charged", "charged", "charged"])
      expect(charge.count).toBe(1)
      expect(seen.filter((d) => d === true)).toHaveLength(4)
    }))

  it.effect("concurrent identical calls share a failure too; a later repeat runs again", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const charge = countingTool("charge", { sideEffecting: true }, (n) =>
        n === 1 ? Effect.zipRight(Deferred.await(gate), Effect.fail("declined")) : Effect.succeed("charged"))
      const layer = setup({ toolMiddleware: [Idempotency.idempotent()] })
      yield* Effect.gen(function*() {
        const invoker = yield* Invoker
        const fibers = yield* Effect.forEach([1, 2], () =>
          Effect.fork(Effect.flip(invoker.tool(call("charge"), charge.tool))))
        yield* Effect.yieldNow()
        yield* Deferred.succeed(gate, undefined)
        expect(yield* Fiber.joinAll(fibers)).toEqual(["declined", "declined"])
        expect(charge.count).toBe(1)
        expect((yield* invoker.tool(call("charge"), charge.tool)).text).toBe("charged")
        expect(charge.count).toBe(2)
      }).pipe(Effect.provide(layer))
    }))

  it.effect("a leader interrupted mid-call hands the work to the next caller", () =>
    Effect.gen(function*() {
      const charge = countingTool(
        "charge",
        { sideEffecting: true },
        (n) => (n === 1 ? Effect.never : Effect.succeed("charged"))
      )
      const layer = setup({ toolMiddleware: [Idempotency.idempotent()] })
      yield* Effect.gen(function*() {
        const invoker = yield* Invoker
        const leader = yield* Effect.fork(invoker.tool(call("charge"), charge.tool))
        yield* Effect.yieldNow()
        const follower = yield* Effect.fork(invoker.tool(call("charge"), charge.tool))
        yield* Effect.yieldNow()
        yield* Fiber.interrupt(leader)
        expect((yield* Fiber.join(follower)).text).toBe("charged")
        expect(charge.count).toBe(2)
      }).pipe(Effect.provide(layer))
    }))

  it.effect("a fault after the side effect, then a retry of the whole turn: the side effect runs once", () => {
    const charge = countingTool("charge_card", { sideEffecting: true }, () => "charged $10")
    const store = Idempotency.memoryStore()
    const agent = Agent.make({ name: "billing", model: "m", cognition: ReActCognition.make({ tools: [charge.tool] }) })
    // the first turn: the charge runs, then the process "crashes" before the model hears of it
    const first = FakeLLM.script([
      Turn({ toolCalls: [{ id: "c1", name: "charge_card", arguments: { amount: 10, currency: "USD" } }] })
    ])
    let crash = true
    const faultAfterSideEffect: ToolMiddleware = (next) => (invocation) =>
      Effect.flatMap(
        next(invocation),
        (outcome) => crash ? Effect.die(new Error("injected fault after the side effect")) : Effect.succeed(outcome)
      )
    const pipeline = [faultAfterSideEffect, Idempotency.idempotent({ store }), Retry.retry()]
    // the retried turn: same run, same call (arguments in another order)
    const second = FakeLLM.script([
      Turn({ toolCalls: [{ id: "c1", name: "charge_card", arguments: { currency: "USD", amount: 10 } }] }),
      Turn({ content: "Charged $10." })
    ])
    return Effect.gen(function*() {
      const crashed = yield* Effect.exit(
        agent.run("charge $10").pipe(
          Effect.provide(makeTestCtx({ llm: first, toolMiddleware: pipeline, correlationId: "run-7" }))
        )
      )
      expect(crashed._tag).toBe("Failure")
      expect(charge.count).toBe(1)
      crash = false
      const result = yield* agent
        .run("charge $10")
        .pipe(Effect.provide(makeTestCtx({ llm: second, toolMiddleware: pipeline, correlationId: "run-7" })))
      expect(result.output).toBe("Charged $10.")
      expect(charge.count).toBe(1)
      expect(second.requests[1]!.messages.at(-1)).toMatchObject({
        role: "tool",
        content: "charged $10",
        isError: false
      })
    })
  })

  it.effect("the key is idem: + a SHA-256, and depends on run, tenant, tool and arguments", () =>
    Effect.gen(function*() {
      const tool = countingTool("charge", { sideEffecting: true }).tool
      const run = yield* RunContext
      const a = Idempotency.key({ call: call("charge", { a: 1, b: 2 }), tool, meta: {}, context: run })
      const b = Idempotency.key({ call: call("charge", { b: 2, a: 1 }, "c9"), tool, meta: {}, context: run })
      expect(a).toMatch(/^idem:[0-9a-f]{64}$/)
      expect(b).toBe(a)
    }).pipe(Effect.provide(RunContext.layer({ runId: "r" }))))
})

describe("Audit", () => {
  it.effect("one record per call: executed, deduplicated, denied (with the denial) and failed", () => {
    const charge = countingTool("charge", { sideEffecting: true }, (_n, args) => {
      if (args["amount"] === 0) throw new Error("amount must be positive")
      return "ok"
    })
    const fetchUrl = countingTool("fetch_url", { sideEffecting: false, idempotent: true, urlArg: "url" })
    const store = Audit.memoryStore()
    const layer = setup({
      toolMiddleware: [Audit.audit({ store }), Egress.egress({ allow: ["example.com"] }), Idempotency.idempotent()],
      scope: { orgId: 1, domainId: 2 }
    })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* invoker.tool(call("charge", { amount: 5 }), charge.tool)
      yield* invoker.tool(call("charge", { amount: 5 }), charge.tool)
      yield* Effect.flip(invoker.tool(call("fetch_url", { url: "https://evil.com/x" }), fetchUrl.tool))
      yield* Effect.flip(invoker.tool(call("charge", { amount: 0 }), charge.tool))
      const [executed, deduplicated, denied, failed] = store.records
      expect(store.records).toHaveLength(4)
      expect(executed).toMatchObject({
        runId: "run-1",
        tenant: "[1,2,null,null]",
        tool: "charge",
        callId: "c1",
        decision: "executed"
      })
      expect(executed!.argHash).toMatch(/^[0-9a-f]{64}$/)
      expect(executed!.resultHash).toMatch(/^[0-9a-f]{64}$/)
      expect(deduplicated).toMatchObject({
        decision: "deduplicated",
        argHash: executed!.argHash,
        resultHash: executed!.resultHash
      })
      expect(denied).toMatchObject({
        tool: "fetch_url",
        decision: "denied",
        resultHash: undefined,
        denial: { reason: "egress", message: "egress to 'evil.com' not allowed (not in egress allowlist)" }
      })
      expect(failed).toMatchObject({
        decision: "failed",
        error: { type: "ToolExecutionError", message: "amount must be positive" }
      })
      expect(fetchUrl.count).toBe(0)
    }).pipe(Effect.provide(layer))
  })

  it.effect("an interrupted call is audited as failed (Interrupted)", () => {
    const slow = countingTool("slow", { sideEffecting: true }, () => Effect.never)
    const store = Audit.memoryStore()
    const layer = setup({ toolMiddleware: [Audit.audit({ store })] })
    return Effect.gen(function*() {
      const fiber = yield* Effect.fork((yield* Invoker).tool(call("slow"), slow.tool))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(fiber)
      expect(store.records.map((r) => [r.decision, r.error?.type])).toEqual([["failed", "Interrupted"]])
    }).pipe(Effect.provide(layer))
  })

  it.effect("a denial from an inner middleware is audited with its reason", () => {
    const tool = countingTool("transfer", { sideEffecting: true }).tool
    const store = Audit.memoryStore()
    const deny: ToolMiddleware = () => (invocation) =>
      Effect.fail(
        new ToolDenied({ toolName: invocation.tool.name, reason: "approval", message: "rejected by a human" })
      )
    return Effect.gen(function*() {
      yield* Effect.flip(
        Effect.flatMap(Invoker, (i) => i.tool(call("transfer"), tool)).pipe(
          Effect.provide(setup({ toolMiddleware: [Audit.audit({ store }), deny] }))
        )
      )
      expect(store.records[0]).toMatchObject({
        decision: "denied",
        denial: { reason: "approval", message: "rejected by a human" }
      })
    }).pipe(Effect.provide(Layer.empty))
  })
})
