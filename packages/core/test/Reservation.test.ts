/**
 * Budget reservations through the Invoker: a model call reserves what it may cost at most before
 * it is sent (input tokens by the TokenEstimator, output at `maxTokens` or the catalog's output
 * limit, priced from the catalog), and its real usage replaces the reservation when it answers.
 * What reached the model and what it billed are counted at the fake model, not by the budget.
 */
import {
  BudgetExceeded,
  ChatModelError,
  Invoker,
  Message,
  ModelCatalog,
  RunContext,
  TokenEstimator,
  Usage
} from "@agentkit/core"
import type { Budget, Chat } from "@agentkit/core"
import { FakeLLM, Fixture } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer } from "effect"

/** $1 per million input tokens, $2 per million output tokens; a cache write at $1.25. */
const prices = { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.25 }
const catalog = ModelCatalog.layer({
  priced: { provider: "fake", contextWindow: 100_000, maxOutputTokens: 4000, prices, capabilities: ["tools"] }
})

const ask = (text = "hi", maxTokens?: number): Chat.ChatRequest => ({
  model: "priced",
  messages: [Message.user(text)],
  tools: [],
  ...(maxTokens === undefined ? {} : { maxTokens })
})

/** The reservation the Invoker makes for a request to `priced`, computed here from its parts. */
const reservationOf = (request: Chat.ChatRequest): Budget.Reservation => {
  const input = TokenEstimator.utf8Bytes.inputTokens(request)
  const output = request.maxTokens ?? 4000
  return { tokens: input + output, nanos: Math.ceil(input * 1.25 * 1e3 + output * 2 * 1e3) }
}

/**
 * A fake provider that bills each request: `share` of the request's bound (1 = exactly the bound),
 * answering after a turn of the scheduler so that concurrent calls overlap. It counts what reached
 * it and what it billed.
 */
const provider = (share: number) => {
  const billed = { calls: 0, nanos: 0, tokens: 0 }
  const llm = FakeLLM.replying((_n, request) =>
    Effect.zipRight(
      Effect.yieldNow(),
      Effect.sync(() => {
        const bound = reservationOf(request)
        const input = Math.floor(TokenEstimator.utf8Bytes.inputTokens(request) * share)
        const output = Math.floor((request.maxTokens ?? 4000) * share)
        const nanos = Math.round(bound.nanos * share)
        billed.calls += 1
        billed.nanos += nanos
        billed.tokens += input + output
        return Fixture.response({
          model: request.model,
          usage: Usage.make({ inputTokens: input, outputTokens: output, costUsd: Usage.usdOf(nanos) })
        })
      })
    )
  )
  return { billed, llm }
}

const setup = (llm: ReturnType<typeof FakeLLM.replying>, budget: Budget.Limits) =>
  Layer.mergeAll(
    Invoker.layer().pipe(Layer.provide(llm.layer)),
    RunContext.layer({ correlationId: "run-1", budget: { maxConcurrency: 1000, ...budget } }),
    catalog
  )

describe("budget reservations", () => {
  for (const share of [1, 0.5]) {
    it.effect(`1,000 concurrent calls under maxCostUsd, each billed ${share} of its bound: spend ≤ ceiling + one reservation, at least ⌊ceiling/reservation⌋ − 1 reach the model`, () => {
      const request = ask("what is the status of order A-771?", 500)
      const reservation = reservationOf(request)
      const ceilingNanos = reservation.nanos * 7 + 1234 // room for 7 whole reservations
      const { billed, llm } = provider(share)
      return Effect.gen(function*() {
        const invoker = yield* Invoker
        const exits = yield* Effect.forEach(
          Array.from({ length: 1000 }),
          () => Effect.exit(invoker.chat(request)),
          { concurrency: "unbounded" }
        )
        const refused = exits.filter((exit) => Exit.isFailure(exit))
        expect(billed.nanos).toBeLessThanOrEqual(ceilingNanos + reservation.nanos)
        expect(billed.calls).toBeGreaterThanOrEqual(Math.floor(ceilingNanos / reservation.nanos) - 1)
        if (share === 1) expect(billed.calls).toBe(7) // exactly what fits: the spend never crosses
        else expect(billed.calls).toBeGreaterThan(7) // calls settling for less let waiting ones in
        expect(refused.length).toBe(1000 - billed.calls)
        const budget = (yield* RunContext).budget
        expect([budget.modelCalls, budget.inFlightModelCalls, budget.reservedNanos]).toEqual([billed.calls, 0, 0])
        expect(budget.spentNanos).toBe(billed.nanos)
        expect(budget.spentNanos).toBeLessThanOrEqual(ceilingNanos)
      }).pipe(Effect.provide(setup(llm, { maxCostUsd: Usage.usdOf(ceilingNanos) })))
    })
  }

  it.effect("a call whose reservation does not fit, with none open, is refused before it is sent, naming the spend it would reach", () => {
    const request = ask("hi", 1000)
    const reservation = reservationOf(request)
    const { billed, llm } = provider(1)
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* invoker.chat(request)
      const refused = yield* Effect.flip(invoker.chat(request))
      expect(refused).toBeInstanceOf(BudgetExceeded)
      expect(refused).toMatchObject({ limit: "cost" })
      expect(refused.message).toBe(
        `cost $${Usage.usdOf(reservation.nanos * 2)} > $${Usage.usdOf(reservation.nanos + 5)}`
      )
      expect(billed.calls).toBe(1)
    }).pipe(Effect.provide(setup(llm, { maxCostUsd: Usage.usdOf(reservation.nanos + 5) })))
  })

  it.effect("a call that fits only once an open reservation settles waits for it, and is sent when it settled for less", () => {
    const request = ask("hi", 1000)
    const reservation = reservationOf(request)
    const gate = Effect.runSync(Deferred.make<void>())
    let reached = 0
    const llm = FakeLLM.replying(() =>
      Effect.gen(function*() {
        reached += 1
        if (reached === 1) yield* Deferred.await(gate)
        return Fixture.response({ model: "priced", usage: Usage.make({ costUsd: Usage.usdOf(reservation.nanos / 4) }) })
      })
    )
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      const budget = (yield* RunContext).budget
      const first = yield* Effect.fork(invoker.chat(request))
      yield* Effect.yieldNow()
      const second = yield* Effect.fork(invoker.chat(request))
      yield* Effect.yieldNow()
      expect([reached, budget.inFlightModelCalls, budget.reservedNanos]).toEqual([1, 1, reservation.nanos])
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(first)
      yield* Fiber.join(second)
      expect(reached).toBe(2)
      expect(budget.spentNanos).toBe(Math.round(reservation.nanos / 4) * 2)
    }).pipe(Effect.provide(setup(llm, { maxCostUsd: Usage.usdOf(Math.floor(reservation.nanos * 1.5)) })))
  })

  it.effect("an interrupted call is charged its reservation (it may have been billed); a failed one is counted, not charged", () => {
    const request = ask("hi", 100)
    const reservation = reservationOf(request)
    let reached = 0
    const llm = FakeLLM.replying((n) =>
      Effect.suspend(() => {
        reached += 1
        return n === 1
          ? Effect.never
          : Effect.fail(new ChatModelError({ reason: "server", retryable: true, message: "500" }))
      })
    )
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      const budget = (yield* RunContext).budget
      const hung = yield* Effect.fork(invoker.chat(request))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(hung)
      expect([budget.modelCalls, budget.spentNanos, budget.tokens]).toEqual([1, reservation.nanos, reservation.tokens])
      yield* Effect.flip(invoker.chat(request))
      expect([reached, budget.modelCalls, budget.spentNanos, budget.reservedNanos]).toEqual([
        2,
        2,
        reservation.nanos,
        0
      ])
    }).pipe(Effect.provide(setup(llm, { maxCostUsd: 1 })))
  })

  it.effect("maxTokens: a call reserves its input bound plus its output bound; one that cannot fit is refused before it is sent", () => {
    const request = ask("hi", 200)
    const reservation = reservationOf(request)
    const { billed, llm } = provider(0.5)
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* invoker.chat(request)
      const refused = yield* Effect.flip(invoker.chat(request))
      expect(refused).toMatchObject({ limit: "tokens" })
      expect(refused.message).toBe(`tokens ${billed.tokens + reservation.tokens} > ${reservation.tokens + 10}`)
      expect(billed.calls).toBe(1)
    }).pipe(Effect.provide(setup(llm, { maxTokens: reservation.tokens + 10 })))
  })

  it.effect("the output bound is the catalog's output limit when the request sets no maxTokens", () => {
    const request = ask("hi")
    const reservation = reservationOf(request)
    expect(reservation.tokens).toBe(TokenEstimator.utf8Bytes.inputTokens(request) + 4000)
    const { billed, llm } = provider(1)
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      expect((yield* Effect.flip(invoker.chat(request))).message).toBe(
        `tokens ${reservation.tokens} > ${reservation.tokens - 1}`
      )
      expect(billed.calls).toBe(0)
    }).pipe(Effect.provide(setup(llm, { maxTokens: reservation.tokens - 1 })))
  })

  it.effect("a model the catalog does not know fails closed under a cost ceiling, naming the model and how to add it; nothing is sent", () => {
    const llm = FakeLLM.replying()
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      const error = yield* Effect.flip(invoker.chat({ ...ask("hi", 10), model: "my-finetune" }))
      expect(error).toBeInstanceOf(ChatModelError)
      expect(error).toMatchObject({ reason: "configuration", retryable: false })
      expect(error.message).toContain("model 'my-finetune' is not in the model catalog")
      expect(error.message).toContain(`ModelCatalog.layer({ "my-finetune": {`)
      expect(llm.calls).toBe(0)
      expect((yield* RunContext).budget.modelCalls).toBe(0)
    }).pipe(Effect.provide(setup(llm, { maxCostUsd: 1 })))
  })

  it.effect("under a token ceiling an unknown model is bounded by the request's maxTokens, and fails closed without one", () => {
    const llm = FakeLLM.replying()
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* invoker.chat({ ...ask("hi", 10), model: "my-finetune" })
      const error = yield* Effect.flip(invoker.chat({ ...ask("hi"), model: "my-finetune" }))
      expect(error.message).toContain("maxTokens cannot bound")
      expect(llm.calls).toBe(1)
    }).pipe(Effect.provide(setup(llm, { maxTokens: 100_000 })))
  })

  it.effect("count ceilings alone price nothing: an unknown model runs under maxModelCalls", () => {
    const llm = FakeLLM.replying()
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* invoker.chat({ ...ask(), model: "my-finetune" })
      expect((yield* RunContext).budget.reservedNanos).toBe(0)
      expect(llm.calls).toBe(1)
    }).pipe(Effect.provide(setup(llm, { maxModelCalls: 2 })))
  })

  it.effect("a journal records each reservation before the request is sent; a restored snapshot charges open reservations in full", () => {
    const request = ask("hi", 100)
    const reservation = reservationOf(request)
    const seen: Array<Budget.Snapshot> = []
    let sentBeforeJournal = false
    const llm = FakeLLM.replying(() => Effect.succeed(Fixture.response({ model: "priced", usage: Usage.zero })))
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      const budget = (yield* RunContext).budget
      const remove = budget.addJournal(Effect.sync(() => {
        if (llm.calls > seen.length) sentBeforeJournal = true
        seen.push(budget.snapshot())
      }))
      yield* invoker.chat(request)
      remove()
      yield* invoker.chat(request)
      expect(sentBeforeJournal).toBe(false)
      expect(seen).toHaveLength(1)
      expect(seen[0]).toMatchObject({
        modelCalls: 0,
        inFlightModelCalls: 1,
        reservedNanos: reservation.nanos,
        reservedTokens: reservation.tokens
      })
      const next = yield* RunContext.make({ budget: { maxCostUsd: 1 } })
      next.budget.restore(seen[0]!)
      expect([next.budget.modelCalls, next.budget.spentNanos, next.budget.tokens]).toEqual([
        1,
        reservation.nanos,
        reservation.tokens
      ])
    }).pipe(Effect.provide(setup(llm, { maxCostUsd: 1 })))
  })
})
