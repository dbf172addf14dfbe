import { Budget, BudgetExceeded, ConfigurationError, Quota, Scope, Usage } from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"

const org1 = Scope.make({ orgId: 1, domainId: 1 })
const org2 = Scope.make({ orgId: 2, domainId: 1 })

describe("Quota", () => {
  it("texts name a tenant by its display key", () => {
    expect(org1.key).toBe("org1:dom1")
    expect(org2.key).toBe("org2:dom1")
  })

  describe("partitions", () => {
    it.effect("scopes whose display keys collide never share a partition", () =>
      Effect.gen(function*() {
        const pairs: ReadonlyArray<readonly [Scope.Scope, Scope.Scope]> = [
          [Scope.make({ orgId: "None" }), Scope.empty],
          [Scope.make({ orgId: "acme:dom7" }), Scope.make({ orgId: "acme", domainId: "7:domNone" })],
          [Scope.make({ orgId: 1 }), Scope.make({ orgId: "1" })]
        ]
        for (const [a, b] of pairs) {
          expect(a.key).toBe(b.key)
          const quota = yield* Quota.make({ maxRpm: 1 })
          yield* quota.guard(a)
          // b is another tenant: its first request passes
          yield* quota.guard(b)
          expect((yield* Effect.flip(quota.guard(a))).message).toBe(`${a.key}: 1 req ≥ 1 rpm`)
          expect((yield* Effect.flip(quota.guard(b))).message).toBe(`${b.key}: 1 req ≥ 1 rpm`)
          expect(quota.size).toBe(2)
        }
      }))

    it.effect("a string tenant is its own partition, never a scope's", () =>
      Effect.gen(function*() {
        const quota = yield* Quota.make({ maxRpm: 1 })
        yield* quota.guard(Scope.make({ orgId: 1 }))
        yield* quota.guard(Scope.make({ orgId: 1 }).storeKey)
        yield* quota.guard("org1:domNone")
        expect((yield* Effect.flip(quota.guard("org1:domNone"))).message).toBe("org1:domNone: 1 req ≥ 1 rpm")
        expect(quota.size).toBe(3)
      }))

    it.effect("partitions expire with their window: 100,000 tenants, then one window later only the live ones", () =>
      Effect.gen(function*() {
        const quota = yield* Quota.make({ maxRpm: 5, maxUsd: 1, window: "1 minute" })
        for (let i = 0; i < 100_000; i++) {
          const tenant = Scope.make({ orgId: i, userId: `u-${i}` })
          yield* quota.guard(tenant)
          if (i % 10 === 0) yield* quota.charge(tenant, Usage.make({ inputTokens: 1, costUsd: 0.001 }))
        }
        expect(quota.size).toBe(100_000)
        yield* TestClock.adjust("30 seconds")
        yield* quota.guard(org1)
        // still inside the window: every tenant is kept, and still counted
        expect(quota.size).toBe(100_001)
        yield* TestClock.adjust("31 seconds")
        yield* quota.guard(org2)
        // the 100,000 fell out of the window; org1 (30 s old) and org2 are live
        expect(quota.size).toBe(2)
        expect(quota.charges(Scope.make({ orgId: 10, userId: "u-10" }))).toEqual([])
        // an expired tenant starts afresh
        yield* quota.guard(Scope.make({ orgId: 0, userId: "u-0" }))
        expect(quota.size).toBe(3)
      }))

    it.effect("a refused call leaves no partition behind", () =>
      Effect.gen(function*() {
        const quota = yield* Quota.make({ maxRpm: 0 })
        for (let i = 0; i < 1000; i++) yield* Effect.flip(quota.guard(Scope.make({ orgId: i })))
        expect(quota.size).toBe(0)
      }))
  })

  describe("requests per minute", () => {
    it.effect("maxRpm 1: the second guard for the same scope fails; another scope passes", () =>
      Effect.gen(function*() {
        const quota = yield* Quota.make({ maxRpm: 1 })
        yield* quota.guard(org1)
        const error = yield* Effect.flip(quota.guard(org1))
        expect(error).toBeInstanceOf(BudgetExceeded)
        expect(error.limit).toBe("quota")
        expect(error.message).toBe("org1:dom1: 1 req ≥ 1 rpm")
        yield* quota.guard(org2)
        expect((yield* Effect.flip(quota.guard(org2))).message).toBe("org2:dom1: 1 req ≥ 1 rpm")
      }))

    it.effect("a refused request is not recorded as a request", () =>
      Effect.gen(function*() {
        const quota = yield* Quota.make({ maxRpm: 2 })
        yield* quota.guard(org1)
        yield* quota.guard(org1)
        expect((yield* Effect.flip(quota.guard(org1))).message).toBe("org1:dom1: 2 req ≥ 2 rpm")
        expect((yield* Effect.flip(quota.guard(org1))).message).toBe("org1:dom1: 2 req ≥ 2 rpm")
      }))

    it.effect("maxRpm 0 refuses every request", () =>
      Effect.gen(function*() {
        const quota = yield* Quota.make({ maxRpm: 0 })
        expect((yield* Effect.flip(quota.guard(org1))).message).toBe("org1:dom1: 0 req ≥ 0 rpm")
      }))
  })

  describe("tokens per minute", () => {
    it.effect("maxTpm 100: a charge of 150 tokens makes the next guard fail", () =>
      Effect.gen(function*() {
        const quota = yield* Quota.make({ maxTpm: 100 })
        yield* quota.guard(org1)
        yield* quota.charge(org1, Usage.make({ inputTokens: 100, outputTokens: 50 }))
        const error = yield* Effect.flip(quota.guard(org1))
        expect(error.message).toBe("org1:dom1: 150+0 tok > 100 tpm")
        // the other tenant is untouched
        yield* quota.guard(org2)
      }))

    it.effect("the estimate for the call about to run counts; the limit is strict", () =>
      Effect.gen(function*() {
        const quota = yield* Quota.make({ maxTpm: 100 })
        yield* quota.charge(org1, Usage.make({ inputTokens: 80 }))
        yield* quota.guard(org1, 20)
        expect((yield* Effect.flip(quota.guard(org1, 21))).message).toBe("org1:dom1: 80+21 tok > 100 tpm")
      }))

    it.effect("cache tokens are not counted", () =>
      Effect.gen(function*() {
        const quota = yield* Quota.make({ maxTpm: 100 })
        yield* quota.charge(org1, Usage.make({ inputTokens: 10, cacheReadTokens: 10_000, cacheWriteTokens: 500 }))
        yield* quota.guard(org1)
        expect(quota.charges(org1)[0]?.tokens).toBe(10)
      }))
  })

  describe("USD per window", () => {
    it.effect("maxUsd 0.05: a charge of $0.06 makes the next guard fail", () =>
      Effect.gen(function*() {
        const quota = yield* Quota.make({ maxUsd: 0.05 })
        yield* quota.guard(org1)
        yield* quota.charge(org1, Usage.make({ costUsd: 0.06 }))
        const error = yield* Effect.flip(quota.guard(org1))
        expect(error.message).toBe("org1:dom1: $0.06 ≥ $0.05 per window")
      }))

    it.effect("reaching the limit exactly is already over (≥), and whole numbers read $1.0", () =>
      Effect.gen(function*() {
        const quota = yield* Quota.make({ maxUsd: 1 })
        yield* quota.charge(org1, Usage.make({ costUsd: 0.5 }))
        yield* quota.guard(org1)
        yield* quota.charge(org1, Usage.make({ costUsd: 0.5 }))
        expect((yield* Effect.flip(quota.guard(org1))).message).toBe("org1:dom1: $1.0 ≥ $1.0 per window")
      }))

    it.effect("the window's cost is summed without float drift", () =>
      Effect.gen(function*() {
        const quota = yield* Quota.make({ maxUsd: 0.3 })
        yield* quota.charge(org1, Usage.make({ costUsd: 0.1 }))
        yield* quota.charge(org1, Usage.make({ costUsd: 0.2 }))
        expect((yield* Effect.flip(quota.guard(org1))).message).toBe("org1:dom1: $0.3 ≥ $0.3 per window")
      }))
  })

  it.effect("limits are checked in order: requests, then tokens, then cost", () =>
    Effect.gen(function*() {
      const quota = yield* Quota.make({ maxRpm: 1, maxTpm: 10, maxUsd: 0.01 })
      yield* quota.guard(org1)
      yield* quota.charge(org1, Usage.make({ inputTokens: 50, costUsd: 1 }))
      expect((yield* Effect.flip(quota.guard(org1))).message).toBe("org1:dom1: 1 req ≥ 1 rpm")

      const noRpm = yield* Quota.make({ maxTpm: 10, maxUsd: 0.01 })
      yield* noRpm.charge(org1, Usage.make({ inputTokens: 50, costUsd: 1 }))
      expect((yield* Effect.flip(noRpm.guard(org1))).message).toBe("org1:dom1: 50+0 tok > 10 tpm")
    }))

  describe("rolling window (TestClock)", () => {
    it.effect("a request frees its slot once the 60 s window has passed", () =>
      Effect.gen(function*() {
        const quota = yield* Quota.make({ maxRpm: 1 })
        yield* quota.guard(org1)
        yield* TestClock.adjust(Duration.millis(59_999))
        expect((yield* Effect.flip(quota.guard(org1))).message).toBe("org1:dom1: 1 req ≥ 1 rpm")
        yield* TestClock.adjust(Duration.millis(1))
        yield* quota.guard(org1)
        expect((yield* Effect.flip(quota.guard(org1))).message).toBe("org1:dom1: 1 req ≥ 1 rpm")
      }))

    it.effect("charges leave the window too (tokens and cost)", () =>
      Effect.gen(function*() {
        const quota = yield* Quota.make({ maxTpm: 100, maxUsd: 0.05 })
        yield* quota.charge(org1, Usage.make({ inputTokens: 150, costUsd: 0.06 }))
        yield* TestClock.adjust("30 seconds")
        yield* quota.charge(org1, Usage.make({ inputTokens: 1, costUsd: 0.001 }))
        expect((yield* Effect.flip(quota.guard(org1))).message).toBe("org1:dom1: 151+0 tok > 100 tpm")
        yield* TestClock.adjust("30 seconds")
        // the first charge is out; the second (at 30 s) is still in
        yield* quota.guard(org1)
        expect(quota.charges(org1).map((c) => c.tokens)).toEqual([1])
      }))

    it.effect("a custom window", () =>
      Effect.gen(function*() {
        const quota = yield* Quota.make({ maxRpm: 1, window: "10 seconds" })
        yield* quota.guard(org1)
        yield* TestClock.adjust("9 seconds")
        yield* Effect.flip(quota.guard(org1))
        yield* TestClock.adjust("1 second")
        yield* quota.guard(org1)
        expect(quota.windowMillis).toBe(10_000)
      }))

    it.effect("the window is a partition's own: tenant 1's old requests do not free tenant 2", () =>
      Effect.gen(function*() {
        const quota = yield* Quota.make({ maxRpm: 1 })
        yield* quota.guard(org1)
        yield* TestClock.adjust("40 seconds")
        yield* quota.guard(org2)
        yield* TestClock.adjust("20 seconds")
        yield* quota.guard(org1)
        expect((yield* Effect.flip(quota.guard(org2))).message).toBe("org2:dom1: 1 req ≥ 1 rpm")
      }))
  })

  it.effect("tenants are fully isolated on one quota instance", () =>
    Effect.gen(function*() {
      const quota = yield* Quota.make({ maxUsd: 0.05 })
      // shared quota, $0.03 per call: per tenant, calls 1 and 2 pass the guard, call 3 is refused
      const call = (tenant: Scope.Scope) =>
        Effect.zipRight(quota.guard(tenant), quota.charge(tenant, Usage.make({ costUsd: 0.03 })))
      for (const tenant of [org1, org2]) {
        yield* call(tenant)
        yield* call(tenant)
        const error = yield* Effect.flip(call(tenant))
        expect(error.message).toBe(`${tenant.key}: $0.06 ≥ $0.05 per window`)
      }
      expect(quota.charges(org1).map((c) => c.costUsd)).toEqual([0.03, 0.03])
      expect(quota.charges(org2).map((c) => c.costUsd)).toEqual([0.03, 0.03])
      expect(quota.charges(Scope.make({ orgId: 3, domainId: 1 }))).toEqual([])
    }))

  it.effect("Budget(0.10) + Quota(1.00), $0.04 per call: the 3rd call fails after accrual; the quota keeps 2 charges", () =>
    Effect.gen(function*() {
      const budget = yield* Budget.make({ maxCostUsd: 0.1 })
      const quota = yield* Quota.make({ maxUsd: 1 })
      let executed = 0
      // the meter order: guard every meter (budget first), run, charge every meter in order;
      // a failing Budget.charge short-circuits, so the Quota is not charged for that call
      const call = Effect.gen(function*() {
        yield* budget.guard
        yield* quota.guard(org1)
        executed += 1
        const usage = Usage.make({ inputTokens: 10, costUsd: 0.04 })
        yield* budget.charge(usage)
        yield* quota.charge(org1, usage)
      })
      yield* call
      yield* call
      const error = yield* Effect.flip(call)
      expect(error.message).toBe("cost $0.12 > $0.1")
      expect(executed).toBe(3)
      expect(budget.spentUsd).toBe(0.12)
      expect(budget.modelCalls).toBe(3)
      expect(quota.charges(org1)).toHaveLength(2)
      // a fourth call is refused before it runs
      yield* Effect.flip(call)
      expect(executed).toBe(3)
    }))

  describe("construction", () => {
    const invalid: ReadonlyArray<readonly [string, Quota.Limits, string]> = [
      ["negative rpm", { maxRpm: -1 }, "maxRpm"],
      ["NaN tpm", { maxTpm: Number.NaN }, "maxTpm"],
      ["infinite usd", { maxUsd: Number.POSITIVE_INFINITY }, "maxUsd"],
      ["negative usd", { maxUsd: -0.01 }, "maxUsd"],
      ["zero window", { window: 0 }, "window"],
      ["unparseable window", { window: "soon" as Duration.DurationInput }, "window"]
    ]
    for (const [label, limits, field] of invalid) {
      it.effect(`Quota.make rejects ${label} with a ConfigurationError naming ${field}`, () =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(Quota.make(limits))
          expect(error).toBeInstanceOf(ConfigurationError)
          expect(error.field).toBe(`quota.${field}`)
          expect(error.message).toContain(`quota.${field} must be`)
        }))
      it(`Quota.unsafeMake throws on ${label}`, () => {
        expect(() => Quota.unsafeMake(limits)).toThrow(`quota.${field} must be`)
      })
    }

    it("defaults: no limits, a 60 s window", () => {
      const quota = Quota.unsafeMake({})
      expect([quota.maxRpm, quota.maxTpm, quota.maxUsd]).toEqual([undefined, undefined, undefined])
      expect(quota.windowMillis).toBe(60_000)
    })
  })
})
