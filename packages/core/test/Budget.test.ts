import { Budget, BudgetExceeded, ConfigurationError, Usage } from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber } from "effect"

const cost = (costUsd: number) => Usage.make({ costUsd })

describe("Budget", () => {
  describe("cost ceiling", () => {
    it.effect("the call that crosses the ceiling is charged, then fails with the Python text", () =>
      Effect.gen(function*() {
        const budget = yield* Budget.make({ maxCostUsd: 0.015 })
        yield* budget.guard
        yield* budget.charge(cost(0.01))
        yield* budget.guard
        const error = yield* Effect.flip(budget.charge(cost(0.01)))
        expect(error).toBeInstanceOf(BudgetExceeded)
        expect(error._tag).toBe("BudgetExceeded")
        expect(error.limit).toBe("cost")
        expect(error.message).toBe("cost $0.02 > $0.015")
        expect(budget.spentUsd).toBe(0.02)
        expect(budget.modelCalls).toBe(2)
      }))

    it.effect("every later call is refused by guard, before it spends", () =>
      Effect.gen(function*() {
        const budget = yield* Budget.make({ maxCostUsd: 0.015 })
        yield* budget.charge(cost(0.01))
        yield* Effect.flip(budget.charge(cost(0.01)))
        const refused = yield* Effect.flip(budget.guard)
        expect(refused.message).toBe("cost $0.02 > $0.015")
        expect(budget.spentUsd).toBe(0.02)
        expect(budget.modelCalls).toBe(2)
      }))

    it.effect("the ceiling is strict: spending exactly the maximum is allowed", () =>
      Effect.gen(function*() {
        const budget = yield* Budget.make({ maxCostUsd: 0.015 })
        yield* budget.charge(cost(0.015))
        yield* budget.guard
        expect(budget.remainingUsd).toBe(0)
      }))

    it.effect("whole numbers are formatted the Python way ($1.0)", () =>
      Effect.gen(function*() {
        const budget = yield* Budget.make({ maxCostUsd: 1 })
        const error = yield* Effect.flip(budget.charge(cost(1.5)))
        expect(error.message).toBe("cost $1.5 > $1.0")

        const other = yield* Budget.make({ maxCostUsd: 1 })
        expect((yield* Effect.flip(other.charge(cost(2)))).message).toBe("cost $2.0 > $1.0")
      }))

    it.effect("spend is kept exactly, in integer nano-USD (no float drift, no rounding per charge)", () =>
      Effect.gen(function*() {
        const budget = yield* Budget.make()
        yield* budget.charge(cost(0.1))
        yield* budget.charge(cost(0.2))
        expect(budget.spentUsd).toBe(0.3)
        yield* budget.charge(cost(0.0000004))
        expect(budget.spentUsd).toBe(0.3000004)
        expect(budget.spentNanos).toBe(300_000_400)
      }))

    it.effect("1,000 charges of $0.0000125 total exactly $0.0125", () =>
      Effect.gen(function*() {
        const budget = yield* Budget.make()
        for (let i = 0; i < 1000; i++) yield* budget.charge(cost(0.0000125))
        expect(budget.spentUsd).toBe(0.0125)
        expect(budget.spentNanos).toBe(12_500_000)
      }))

    it.effect("remainingUsd: undefined without a ceiling, never negative with one", () =>
      Effect.gen(function*() {
        const unlimited = yield* Budget.make()
        yield* unlimited.charge(cost(5))
        expect(unlimited.remainingUsd).toBeUndefined()

        const budget = yield* Budget.make({ maxCostUsd: 0.015 })
        expect(budget.remainingUsd).toBe(0.015)
        yield* budget.charge(cost(0.01))
        expect(budget.remainingUsd).toBe(0.005)
        yield* Effect.flip(budget.charge(cost(0.01)))
        expect(budget.remainingUsd).toBe(0)
      }))
  })

  describe("model-call ceiling", () => {
    it.effect("maxModelCalls 1: call 1 ok, call 2 is charged then fails, call 3 is refused by guard", () =>
      Effect.gen(function*() {
        const budget = yield* Budget.make({ maxModelCalls: 1 })
        const call = Effect.zipRight(budget.guard, budget.charge(cost(0.001)))

        yield* call
        expect(budget.modelCalls).toBe(1)

        const second = yield* Effect.flip(call)
        expect(second.limit).toBe("modelCalls")
        expect(second.message).toBe("calls 2 > 1")
        expect(budget.modelCalls).toBe(2)

        const third = yield* Effect.flip(call)
        expect(third.message).toBe("calls 2 > 1")
        expect(budget.modelCalls).toBe(2)
        expect(budget.spentUsd).toBe(0.002)
      }))

    it.effect("maxModelCalls 0: guard passes, the first charged call fails", () =>
      Effect.gen(function*() {
        const budget = yield* Budget.make({ maxModelCalls: 0 })
        yield* budget.guard
        expect((yield* Effect.flip(budget.charge(Usage.zero))).message).toBe("calls 1 > 0")
      }))
  })

  describe("token ceiling", () => {
    it.effect("counts input + output tokens (not cache tokens) and fails past the maximum", () =>
      Effect.gen(function*() {
        const budget = yield* Budget.make({ maxTokens: 100 })
        yield* budget.charge(
          Usage.make({ inputTokens: 60, outputTokens: 10, cacheReadTokens: 5000, cacheWriteTokens: 700 })
        )
        expect(budget.tokens).toBe(70)
        yield* budget.charge(Usage.make({ inputTokens: 20, outputTokens: 10 }))
        expect(budget.tokens).toBe(100)
        const error = yield* Effect.flip(budget.charge(Usage.make({ inputTokens: 7, outputTokens: 3 })))
        expect(error.limit).toBe("tokens")
        expect(error.message).toBe("tokens 110 > 100")
        expect((yield* Effect.flip(budget.guard)).message).toBe("tokens 110 > 100")
      }))
  })

  describe("tool-call ceiling", () => {
    it.effect("a tool call past the limit is refused before it runs and not counted: tool calls 3 > 2", () =>
      Effect.gen(function*() {
        const budget = yield* Budget.make({ maxToolCalls: 2 })
        yield* budget.toolCall(Effect.void)
        yield* budget.toolCall(Effect.void)
        let ran = false
        const error = yield* Effect.flip(budget.toolCall(Effect.sync(() => (ran = true))))
        expect(error.limit).toBe("toolCalls")
        expect(error.message).toBe("tool calls 3 > 2")
        expect(ran).toBe(false)
        expect(budget.toolCalls).toBe(2)
        expect((yield* Effect.flip(budget.toolCall(Effect.void))).message).toBe("tool calls 3 > 2")
      }))

    it.effect("tool calls do not count as model calls, and model calls do not count as tool calls", () =>
      Effect.gen(function*() {
        const budget = yield* Budget.make({ maxToolCalls: 1, maxModelCalls: 1 })
        yield* budget.toolCall(Effect.void)
        yield* budget.charge(Usage.zero)
        yield* budget.guard
        expect(budget.toolCalls).toBe(1)
        expect(budget.modelCalls).toBe(1)
      }))

    it.effect("a reservation is held while the call runs: concurrent callers see it; a failure still counts", () =>
      Effect.gen(function*() {
        const budget = yield* Budget.make({ maxToolCalls: 1 })
        const gate = yield* Deferred.make<void>()
        const first = yield* Effect.fork(budget.toolCall(Deferred.await(gate)))
        yield* Effect.yieldNow()
        expect(budget.inFlightToolCalls).toBe(1)
        expect((yield* Effect.flip(budget.toolCall(Effect.void))).message).toBe("tool calls 2 > 1")
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(first)
        expect([budget.toolCalls, budget.inFlightToolCalls]).toEqual([1, 0])
        const other = yield* Budget.make({ maxToolCalls: 1 })
        yield* Effect.flip(other.toolCall(Effect.fail("boom")))
        expect([other.toolCalls, other.inFlightToolCalls]).toEqual([1, 0])
      }))
  })

  describe("model-call reservations", () => {
    it.effect("modelCall: refused before it runs past the limit (calls N+1 > N), counted when it returns, charged on success", () =>
      Effect.gen(function*() {
        const budget = yield* Budget.make({ maxModelCalls: 2 })
        let ran = 0
        const ask = (usd: number) => budget.modelCall(Effect.sync(() => (ran++, cost(usd))), (usage) => usage)
        yield* ask(0.01)
        yield* Effect.flip(budget.modelCall(Effect.fail("provider down"), () => cost(1)))
        expect([budget.modelCalls, budget.spentUsd]).toEqual([2, 0.01])
        const refused = yield* Effect.flip(ask(0.01))
        expect(refused.message).toBe("calls 3 > 2")
        expect([ran, budget.modelCalls, budget.inFlightModelCalls]).toEqual([1, 2, 0])
      }))

    it.effect("an interrupted model call is counted (it may have reached the provider)", () =>
      Effect.gen(function*() {
        const budget = yield* Budget.make({ maxModelCalls: 5 })
        const fiber = yield* Effect.fork(budget.modelCall(Effect.never, () => Usage.zero))
        yield* Effect.yieldNow()
        expect(budget.inFlightModelCalls).toBe(1)
        yield* Fiber.interrupt(fiber)
        expect([budget.modelCalls, budget.inFlightModelCalls]).toEqual([1, 0])
      }))

    it.effect("a cost ceiling crossed refuses every later reservation before it runs", () =>
      Effect.gen(function*() {
        const budget = yield* Budget.make({ maxCostUsd: 0.015 })
        yield* budget.modelCall(Effect.succeed(cost(0.01)), (usage) => usage)
        expect((yield* Effect.flip(budget.modelCall(Effect.succeed(cost(0.01)), (usage) => usage))).message).toBe(
          "cost $0.02 > $0.015"
        )
        let ran = false
        const later = yield* Effect.flip(budget.modelCall(Effect.sync(() => ((ran = true), cost(0))), (usage) => usage))
        expect(later.message).toBe("cost $0.02 > $0.015")
        expect(ran).toBe(false)
      }))

    it.effect("snapshot and restore: counters carry over, what was in flight counts as spent, never lowered", () =>
      Effect.gen(function*() {
        const budget = yield* Budget.make({ maxModelCalls: 3 })
        yield* budget.modelCall(Effect.succeed(cost(0.25)), (usage) => usage)
        const snapshot = { ...budget.snapshot(), inFlightModelCalls: 1, inFlightToolCalls: 2 }
        expect(budget.snapshot()).toEqual({
          modelCalls: 1,
          toolCalls: 0,
          tokens: 0,
          costNanos: 250_000_000,
          inFlightModelCalls: 0,
          inFlightToolCalls: 0,
          reservedNanos: 0,
          reservedTokens: 0
        })
        const next = yield* Budget.make({ maxModelCalls: 3 })
        next.restore(snapshot)
        expect([next.modelCalls, next.toolCalls, next.spentUsd]).toEqual([2, 2, 0.25])
        yield* next.modelCall(Effect.succeed(Usage.zero), (usage) => usage)
        expect((yield* Effect.flip(next.modelCall(Effect.succeed(Usage.zero), (usage) => usage))).message).toBe(
          "calls 4 > 3"
        )
        next.restore({
          modelCalls: 0,
          toolCalls: 0,
          tokens: 0,
          costNanos: 0,
          inFlightModelCalls: 0,
          inFlightToolCalls: 0,
          reservedNanos: 0,
          reservedTokens: 0
        })
        expect(next.modelCalls).toBe(3)
        expect(next.limits).toEqual({ maxModelCalls: 3, maxDepth: 4, maxConcurrency: 8 })
      }))
  })

  describe("concurrency", () => {
    it.effect("2×50 concurrent charges of $0.01 across forked fibers lose no update", () =>
      Effect.gen(function*() {
        const budget = yield* Budget.make()
        const fifty = Effect.all(
          Array.from({ length: 50 }, () => Effect.zipRight(Effect.yieldNow(), budget.charge(cost(0.01)))),
          { concurrency: "unbounded", discard: true }
        )
        const a = yield* Effect.fork(fifty)
        const b = yield* Effect.fork(fifty)
        yield* Fiber.join(a)
        yield* Fiber.join(b)
        expect(budget.modelCalls).toBe(100)
        expect(budget.spentUsd).toBe(1)
      }))

    it.effect("the tree-wide permit pool has maxConcurrency permits (default 8); waiters are served in line", () =>
      Effect.gen(function*() {
        const budget = yield* Budget.make({ maxConcurrency: 2 })
        expect(budget.maxConcurrency).toBe(2)
        expect((yield* Budget.make()).freePermits).toBe(8)
        const gates = [yield* Deferred.make<void>(), yield* Deferred.make<void>(), yield* Deferred.make<void>()]
        const order: Array<number> = []
        const hold = (i: number) =>
          budget.withPermit(Effect.zipRight(Effect.sync(() => order.push(i)), Deferred.await(gates[i]!)))
        const fibers = [yield* Effect.fork(hold(0)), yield* Effect.fork(hold(1)), yield* Effect.fork(hold(2))]
        yield* Effect.yieldNow()
        expect(order).toEqual([0, 1]) // the third waits for a permit
        expect(budget.freePermits).toBe(0)
        yield* Deferred.succeed(gates[0]!, undefined)
        yield* Fiber.join(fibers[0]!)
        yield* Effect.yieldNow()
        expect(order).toEqual([0, 1, 2]) // the permit went straight to the waiter
        yield* Deferred.succeed(gates[1]!, undefined)
        yield* Deferred.succeed(gates[2]!, undefined)
        yield* Fiber.join(fibers[1]!)
        yield* Fiber.join(fibers[2]!)
        expect(budget.freePermits).toBe(2)
      }))

    it.effect("an interrupted waiter gives up its place and no permit is lost; a failure releases its permit", () =>
      Effect.gen(function*() {
        const budget = yield* Budget.make({ maxConcurrency: 1 })
        const gate = yield* Deferred.make<void>()
        const holder = yield* Effect.fork(budget.withPermit(Deferred.await(gate)))
        yield* Effect.yieldNow()
        const waiter = yield* Effect.fork(budget.withPermit(Effect.void))
        yield* Effect.yieldNow()
        yield* Fiber.interrupt(waiter)
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(holder)
        expect(budget.freePermits).toBe(1)
        yield* Effect.flip(budget.withPermit(Effect.fail("boom")))
        expect(budget.freePermits).toBe(1)
      }))
  })

  // Each reservation is settled in a guarded region (self interruptible, the settlement not):
  // these pin what `Effect.uninterruptibleMask` + `matchCauseEffect` meant, whichever way the
  // region is built.
  describe("reservation regions: interruption and the fiber's flags", () => {
    const interruptible = Effect.checkInterruptible(Effect.succeed)
    const regions = (budget: Budget.Budget) =>
      [
        ["modelCall", <A, E>(self: Effect.Effect<A, E>) => budget.modelCall(self, () => Usage.zero)],
        ["toolCall", <A, E>(self: Effect.Effect<A, E>) => budget.toolCall(self)],
        ["toolCall with a permit", <A, E>(self: Effect.Effect<A, E>) => budget.toolCall(self, { permit: true })],
        ["withPermit", <A, E>(self: Effect.Effect<A, E>) => budget.withPermit(self)]
      ] as const
    const settled = (budget: Budget.Budget) => [budget.inFlightModelCalls, budget.inFlightToolCalls, budget.freePermits]

    it.effect("the work runs interruptibly, and the caller is interruptible again after it, however it ended", () =>
      Effect.gen(function*() {
        const budget = Budget.unsafeMake({ maxConcurrency: 2 })
        for (const [name, region] of regions(budget)) {
          expect([name, yield* region(interruptible)]).toEqual([name, true])
          expect([name, yield* interruptible]).toEqual([name, true])
          yield* Effect.flip(region(Effect.fail("boom")))
          expect([name, yield* interruptible]).toEqual([name, true])
          yield* Effect.exit(region(Effect.die("defect")))
          expect([name, yield* interruptible]).toEqual([name, true])
        }
        expect(settled(budget)).toEqual([0, 0, 2])
      }))

    it.effect("inside an uninterruptible region the work stays uninterruptible, and so does the caller after it", () =>
      Effect.gen(function*() {
        const budget = Budget.unsafeMake({ maxConcurrency: 2 })
        for (const [name, region] of regions(budget)) {
          const seen = yield* Effect.uninterruptible(Effect.zip(region(interruptible), interruptible))
          expect([name, seen]).toEqual([name, [false, false]])
        }
        expect(settled(budget)).toEqual([0, 0, 2])
      }))

    // The work interrupts its own fiber as its last act: a message the fiber reads at its next
    // step, which is after the work (a `withFiberRuntime` step) or, for a `sync` step, already
    // inside the uninterruptible end of the region (the interruption is then only recorded, and
    // the region must act on it when it ends).
    const lastActs = [
      [
        "in a step of its own",
        Effect.withFiberRuntime((fiber) => {
          fiber.unsafeInterruptAsFork(fiber.id())
          return Effect.succeed("done")
        })
      ],
      [
        "in the step that ends the work",
        Effect.withFiberRuntime((fiber) =>
          Effect.sync(() => {
            fiber.unsafeInterruptAsFork(fiber.id())
            return "done"
          })
        )
      ]
    ] as const
    for (const [when, selfInterrupting] of lastActs) {
      it.effect(`an interruption that lands as the work ends (${when}) is settled, then ends the caller: nothing after the region runs`, () =>
        Effect.gen(function*() {
          const budget = Budget.unsafeMake({ maxConcurrency: 2 })
          for (const [name, region] of regions(budget)) {
            let after = false
            const exit = yield* Effect.fork(
              Effect.zipRight(region(selfInterrupting), Effect.sync(() => (after = true)))
            ).pipe(
              Effect.flatMap(Fiber.await)
            )
            expect([name, Exit.isInterrupted(exit), after]).toEqual([name, true, false])
          }
          expect(settled(budget)).toEqual([0, 0, 2])
          expect([budget.modelCalls, budget.toolCalls]).toEqual([1, 2])
        }))
    }

    it.effect("an interruption sent while the reservation settles ends the caller right after the region", () =>
      Effect.gen(function*() {
        const budget = Budget.unsafeMake()
        let after = false
        const fiber = yield* Effect.fork(
          Effect.withFiberRuntime<boolean, BudgetExceeded>((self) =>
            Effect.zipRight(
              budget.modelCall(Effect.succeed("answer"), () => {
                self.unsafeInterruptAsFork(self.id()) // sent from the uninterruptible settlement
                return Usage.zero
              }),
              Effect.sync(() => (after = true))
            )
          )
        )
        const exit = yield* Fiber.await(fiber)
        expect([Exit.isInterrupted(exit), after, budget.modelCalls, budget.inFlightModelCalls]).toEqual([
          true,
          false,
          1,
          0
        ])
      }))

    it.effect("a settlement that throws (usage that cannot be read) is a defect of the call, counted, and the caller is interruptible after it", () =>
      Effect.gen(function*() {
        const budget = Budget.unsafeMake({ maxModelCalls: 5 })
        const broken = budget.modelCall(Effect.succeed("answer"), (): Usage.Usage => {
          throw new Error("no usage in the response")
        })
        const exit = yield* Effect.exit(broken)
        expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
        expect([budget.modelCalls, budget.inFlightModelCalls, yield* interruptible]).toEqual([1, 0, true])
        // and a later interruption still reaches the caller
        const fiber = yield* Effect.fork(Effect.zipRight(Effect.exit(broken), Effect.never))
        yield* Effect.yieldNow()
        expect(Exit.isInterrupted(yield* Fiber.interrupt(fiber))).toBe(true)
      }))

    it.effect("a region run again (a retry) reserves and settles each time", () =>
      Effect.gen(function*() {
        const budget = Budget.unsafeMake({ maxModelCalls: 5 })
        let attempts = 0
        const call = budget.modelCall(
          Effect.suspend(() => (++attempts < 3 ? Effect.fail("flaky") : Effect.succeed("ok"))),
          () => Usage.zero
        )
        expect(yield* Effect.retry(call, { times: 5 })).toBe("ok")
        expect([attempts, budget.modelCalls, budget.inFlightModelCalls, yield* interruptible]).toEqual([3, 3, 0, true])
      }))

    it.effect("interrupted while the work waits: settled, and the interruption is what the caller sees", () =>
      Effect.gen(function*() {
        const budget = Budget.unsafeMake({ maxConcurrency: 2 })
        for (const [name, region] of regions(budget)) {
          const started = yield* Deferred.make<void>()
          const fiber = yield* Effect.fork(region(Effect.zipRight(Deferred.succeed(started, undefined), Effect.never)))
          yield* Deferred.await(started)
          const exit = yield* Fiber.interrupt(fiber)
          expect([name, Exit.isInterrupted(exit)]).toEqual([name, true])
        }
        expect(settled(budget)).toEqual([0, 0, 2])
        expect([budget.modelCalls, budget.toolCalls]).toEqual([1, 2])
      }))
  })

  describe("defaults and construction", () => {
    it("defaults: unlimited, maxDepth 4, maxConcurrency 8, nothing spent", () => {
      const budget = Budget.unsafeMake()
      expect(budget.maxCostUsd).toBeUndefined()
      expect(budget.maxModelCalls).toBeUndefined()
      expect(budget.maxTokens).toBeUndefined()
      expect(budget.maxToolCalls).toBeUndefined()
      expect(budget.maxDepth).toBe(4)
      expect(budget.maxConcurrency).toBe(8)
      expect([budget.spentUsd, budget.modelCalls, budget.tokens, budget.toolCalls]).toEqual([0, 0, 0, 0])
    })

    it("zero limits are legal (except maxConcurrency)", () => {
      const budget = Budget.unsafeMake({
        maxCostUsd: 0,
        maxModelCalls: 0,
        maxTokens: 0,
        maxToolCalls: 0,
        maxDepth: 0,
        maxConcurrency: 1
      })
      expect(budget.maxDepth).toBe(0)
      expect(budget.maxConcurrency).toBe(1)
    })

    const invalid: ReadonlyArray<readonly [string, Budget.Limits, string]> = [
      ["negative cost", { maxCostUsd: -1 }, "maxCostUsd"],
      ["NaN cost", { maxCostUsd: Number.NaN }, "maxCostUsd"],
      ["infinite cost", { maxCostUsd: Number.POSITIVE_INFINITY }, "maxCostUsd"],
      ["non-integer model calls", { maxModelCalls: 1.5 }, "maxModelCalls"],
      ["negative model calls", { maxModelCalls: -1 }, "maxModelCalls"],
      ["non-integer tokens", { maxTokens: 10.5 }, "maxTokens"],
      ["NaN tool calls", { maxToolCalls: Number.NaN }, "maxToolCalls"],
      ["negative depth", { maxDepth: -1 }, "maxDepth"],
      ["non-integer depth", { maxDepth: 2.5 }, "maxDepth"],
      ["zero concurrency", { maxConcurrency: 0 }, "maxConcurrency"],
      ["non-integer concurrency", { maxConcurrency: 1.5 }, "maxConcurrency"]
    ]

    for (const [label, limits, field] of invalid) {
      it.effect(`Budget.make rejects ${label} with a ConfigurationError naming ${field}`, () =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(Budget.make(limits))
          expect(error).toBeInstanceOf(ConfigurationError)
          expect(error.field).toBe(`budget.${field}`)
          expect(error.message).toContain(`budget.${field} must be`)
          expect(error.message).toContain(`got ${String(limits[field as keyof Budget.Limits])}`)
        }))

      it(`Budget.unsafeMake throws on ${label}`, () => {
        expect(() => Budget.unsafeMake(limits)).toThrow(`budget.${field} must be`)
      })
    }

    it.effect("the rejection says what is accepted", () =>
      Effect.gen(function*() {
        expect((yield* Effect.flip(Budget.make({ maxCostUsd: -1 }))).message).toBe(
          "budget.maxCostUsd must be a non-negative finite number (USD); got -1"
        )
        expect((yield* Effect.flip(Budget.make({ maxConcurrency: 0 }))).message).toBe(
          "budget.maxConcurrency must be a positive integer; got 0"
        )
        expect((yield* Effect.flip(Budget.make({ maxModelCalls: 1.5 }))).message).toBe(
          "budget.maxModelCalls must be a non-negative integer; got 1.5"
        )
      }))

    it.effect("a non-object from plain JavaScript is a ConfigurationError, not a crash", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Budget.make(null as unknown as Budget.Limits))
        expect(error.field).toBe("budget")
      }))
  })
})
