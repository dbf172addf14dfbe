import {
  autonomyTiers,
  Budget,
  Cancellation,
  ConfigurationError,
  DepthExceeded,
  RunContext,
  Scope,
  Usage
} from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber, Layer } from "effect"

const read = Effect.map(RunContext, (context) => context)

describe("RunContext", () => {
  describe("make / layer / provide", () => {
    it.effect("defaults: a random id, the empty scope, an unlimited budget, autonomy auto, depth 0, tracing on", () =>
      Effect.gen(function*() {
        const context = yield* RunContext.make()
        expect(context.correlationId).toMatch(/^[0-9a-f-]{36}$/)
        expect((yield* RunContext.make()).correlationId).not.toBe(context.correlationId)
        expect(context.scope).toBeInstanceOf(Scope.Scope)
        expect(context.scope.key).toBe("orgNone:domNone")
        expect(context.budget).toBeInstanceOf(Budget.Budget)
        expect(context.budget.maxCostUsd).toBeUndefined()
        expect(context.budget.maxDepth).toBe(4)
        expect(context.autonomy).toBe("auto")
        expect(context.depth).toBe(0)
        expect(context.tracing).toBe(true)
        expect(context.cancellation.isCancelled).toBe(false)
      }))

    it.effect("options are taken: id, scope fields, budget limits, autonomy, tracing", () =>
      Effect.gen(function*() {
        const context = yield* RunContext.make({
          correlationId: "run-1",
          scope: { orgId: 7, domainId: 42, userId: "u-1" },
          budget: { maxCostUsd: 0.5, maxDepth: 2 },
          autonomy: "gated",
          tracing: false
        })
        expect(context.correlationId).toBe("run-1")
        expect(context.scope.key).toBe("org7:dom42")
        expect(context.scope.userId).toBe("u-1")
        expect(context.budget.maxCostUsd).toBe(0.5)
        expect(context.budget.maxDepth).toBe(2)
        expect(context.autonomy).toBe("gated")
        expect(context.tracing).toBe(false)
      }))

    it.effect("a Budget, Scope or cancellation handle passed in is used by reference", () =>
      Effect.gen(function*() {
        const budget = Budget.unsafeMake({ maxModelCalls: 3 })
        const scope = Scope.make({ orgId: 1 })
        const cancellation = Cancellation.make()
        const context = yield* RunContext.make({ budget, scope, cancellation })
        expect(context.budget).toBe(budget)
        expect(context.scope).toBe(scope)
        expect(context.cancellation).toBe(cancellation)
      }))

    it.effect("RunContext.layer provides the context to `yield* RunContext`", () =>
      Effect.gen(function*() {
        const context = yield* read
        expect(context.correlationId).toBe("layer-run")
        expect(context.scope.key).toBe("org1:domNone")
      }).pipe(Effect.provide(RunContext.layer({ correlationId: "layer-run", scope: { orgId: 1 } }))))

    it.effect("RunContext.provide gives every run a fresh context (fresh budget and id)", () =>
      Effect.gen(function*() {
        const program = Effect.gen(function*() {
          const context = yield* RunContext
          yield* context.budget.charge(Usage.make({ costUsd: 0.01 }))
          return context
        })
        const provided = program.pipe(RunContext.provide({ budget: { maxCostUsd: 1 } }))
        const first = yield* provided
        const second = yield* provided
        expect(first.budget).not.toBe(second.budget)
        expect(second.budget.spentUsd).toBe(0.01)
        expect(first.correlationId).not.toBe(second.correlationId)
      }))

    const invalidBudgets: ReadonlyArray<readonly [Budget.Limits, string]> = [
      [{ maxCostUsd: -1 }, "budget.maxCostUsd"],
      [{ maxCostUsd: Number.NaN }, "budget.maxCostUsd"],
      [{ maxModelCalls: 2.5 }, "budget.maxModelCalls"],
      [{ maxConcurrency: 0 }, "budget.maxConcurrency"],
      [{ maxDepth: -1 }, "budget.maxDepth"]
    ]
    for (const [limits, field] of invalidBudgets) {
      it.effect(`building RunContext.layer with a bad limit fails with a ConfigurationError naming ${field}`, () =>
        Effect.gen(function*() {
          const exit = yield* Effect.exit(Effect.scoped(Layer.build(RunContext.layer({ budget: limits }))))
          expect(Exit.isFailure(exit)).toBe(true)
          const error = yield* Effect.flip(read.pipe(Effect.provide(RunContext.layer({ budget: limits }))))
          expect(error).toBeInstanceOf(ConfigurationError)
          expect(error.field).toBe(field)
          expect(error.message).toContain(field)
        }))
    }

    it.effect("RunContext.provide with a bad limit fails the run with the ConfigurationError (the effect never runs)", () =>
      Effect.gen(function*() {
        let ran = false
        const error = yield* Effect.flip(
          Effect.sync(() => {
            ran = true
          }).pipe(RunContext.provide({ budget: { maxConcurrency: 0 } }))
        )
        expect(error).toBeInstanceOf(ConfigurationError)
        expect(error.field).toBe("budget.maxConcurrency")
        expect(ran).toBe(false)
      }))

    it.effect("an unknown autonomy tier is a ConfigurationError naming the accepted tiers", () =>
      Effect.gen(function*() {
        const options = { autonomy: "yolo" } as unknown as RunContext.Options
        const fromMake = yield* Effect.flip(RunContext.make(options))
        expect(fromMake).toBeInstanceOf(ConfigurationError)
        expect(fromMake.field).toBe("autonomy")
        expect(fromMake.message).toContain("'auto', 'gated', 'manual'")
        expect(fromMake.message).toContain("yolo")

        const fromLayer = yield* Effect.flip(read.pipe(Effect.provide(RunContext.layer(options))))
        expect(fromLayer).toBeInstanceOf(ConfigurationError)
        expect(fromLayer.field).toBe("autonomy")
      }))

    it("the accepted tiers", () => {
      expect(autonomyTiers).toEqual(["auto", "gated", "manual"])
    })
  })

  describe("provide: the context is there only while the effect runs", () => {
    const present = Effect.map(Effect.serviceOption(RunContext), (found) => found._tag === "Some")

    it.effect("after a success, a failure or a defect, the caller's context is back", () =>
      Effect.gen(function*() {
        const outer = yield* Effect.exit(read.pipe(Effect.map((c) => c.runId), RunContext.provide({ runId: "inner" })))
        expect(outer).toEqual(Exit.succeed("inner"))
        expect(yield* present).toBe(false)
        yield* Effect.exit(Effect.fail("no").pipe(RunContext.provide({ runId: "inner" })))
        expect(yield* present).toBe(false)
        yield* Effect.exit(Effect.die("bug").pipe(RunContext.provide({ runId: "inner" })))
        expect(yield* present).toBe(false)
        // nested: the outer context is back after the inner one ends
        const ids = yield* Effect.gen(function*() {
          const inner = yield* read.pipe(RunContext.provide({ runId: "inner" }))
          const after = yield* read
          return [inner.runId, after.runId]
        }).pipe(RunContext.provide({ runId: "outer" }))
        expect(ids).toEqual(["inner", "outer"])
      }))

    it.effect("an interrupted effect: the finalizers outside it run without its context", () =>
      Effect.gen(function*() {
        const seen: Array<boolean> = []
        const fiber = yield* Effect.fork(
          Effect.never.pipe(
            RunContext.provide({ runId: "inner" }),
            Effect.ensuring(Effect.flatMap(present, (here) => Effect.sync(() => seen.push(here))))
          )
        )
        yield* Effect.yieldNow()
        yield* Fiber.interrupt(fiber)
        expect(seen).toEqual([false])
      }))

    it.effect("a joined fiber that provided a context leaves the joiner's context as it was (fibers forked and joined, in order or concurrently)", () =>
      Effect.gen(function*() {
        const child = yield* Effect.fork(read.pipe(Effect.map((c) => c.runId), RunContext.provide({ runId: "child" })))
        expect(yield* Fiber.join(child)).toBe("child")
        expect(yield* present).toBe(false)
        const ids = yield* Effect.all(
          ["a", "b", "c"].map((runId) => read.pipe(Effect.map((c) => c.runId), RunContext.provide({ runId }))),
          { concurrency: "unbounded" }
        )
        expect(ids).toEqual(["a", "b", "c"])
        expect(yield* present).toBe(false)
        // under a context of its own, the joiner keeps it
        const kept = yield* Effect.gen(function*() {
          const inner = yield* Effect.fork(
            read.pipe(Effect.map((c) => c.runId), RunContext.provide({ runId: "child" }))
          )
          yield* Fiber.join(inner)
          return (yield* read).runId
        }).pipe(RunContext.provide({ runId: "outer" }))
        expect(kept).toBe("outer")
      }))

    it.effect("RunContext.with and RunContext.unsafeOf read the context in place; without one, unsafeOf throws", () =>
      Effect.gen(function*() {
        const id = yield* RunContext.with((context) => Effect.succeed(context.runId)).pipe(
          RunContext.provide({ runId: "run-9" })
        )
        expect(id).toBe("run-9")
        const inFiber = Effect.withFiberRuntime((fiber) => Effect.succeed(RunContext.unsafeOf(fiber).runId))
        expect(yield* inFiber.pipe(RunContext.provide({ runId: "run-10" }))).toBe("run-10")
        const missing = yield* Effect.exit(
          Effect.withFiberRuntime((fiber) => Effect.sync(() => RunContext.unsafeOf(fiber)))
        )
        expect(Exit.isFailure(missing) && Cause.isDie(missing.cause)).toBe(true)
      }))
  })

  describe("child()", () => {
    it.effect("depth + 1; budget and cancellation shared by reference; id, scope, autonomy, tracing copied", () =>
      Effect.gen(function*() {
        const parent = yield* RunContext.make({
          correlationId: "run-1",
          scope: { orgId: 7, domainId: 42 },
          autonomy: "manual",
          tracing: false
        })
        const child = yield* parent.child()
        expect(child).not.toBe(parent)
        expect(child.depth).toBe(1)
        expect(parent.depth).toBe(0)
        expect(child.budget).toBe(parent.budget)
        expect(child.cancellation).toBe(parent.cancellation)
        expect(child.correlationId).toBe("run-1")
        expect(child.scope.key).toBe("org7:dom42")
        expect(child.autonomy).toBe("manual")
        expect(child.tracing).toBe(false)
      }))

    it.effect("spending in a sub-run is spending of the whole run", () =>
      Effect.gen(function*() {
        const parent = yield* RunContext.make({ budget: { maxModelCalls: 1 } })
        const grandchild = yield* Effect.flatMap(parent.child(), (child) => child.child())
        yield* grandchild.budget.charge(Usage.make({ costUsd: 0.25 }))
        expect(parent.budget.spentUsd).toBe(0.25)
        expect(parent.budget.modelCalls).toBe(1)
        // the parent is now refused by the ceiling its grandchild crossed
        yield* Effect.flip(grandchild.budget.charge(Usage.zero))
        expect((yield* Effect.flip(parent.budget.guard)).message).toBe("calls 2 > 1")
      }))

    it.effect("depths 0..4 are legal by default; the 5th nested child fails: agent depth 5 > max_depth 4", () =>
      Effect.gen(function*() {
        let context = yield* RunContext.make()
        for (let depth = 1; depth <= 4; depth++) {
          context = yield* context.child()
          expect(context.depth).toBe(depth)
        }
        const error = yield* Effect.flip(context.child())
        expect(error).toBeInstanceOf(DepthExceeded)
        expect(error).toMatchObject({ _tag: "DepthExceeded", depth: 5, maxDepth: 4 })
        expect(error.message).toBe("agent depth 5 > max_depth 4")
      }))

    it.effect("maxDepth comes from the budget", () =>
      Effect.gen(function*() {
        const flat = yield* RunContext.make({ budget: { maxDepth: 0 } })
        expect((yield* Effect.flip(flat.child())).message).toBe("agent depth 1 > max_depth 0")
        const deep = yield* RunContext.make({ budget: { maxDepth: 1 } })
        const child = yield* deep.child()
        expect((yield* Effect.flip(child.child())).message).toBe("agent depth 2 > max_depth 1")
      }))

    it.effect("RunContext.child reads the current context", () =>
      Effect.gen(function*() {
        const child = yield* RunContext.child
        expect(child.depth).toBe(1)
        expect(child.correlationId).toBe("run-c")
        const grandchild = yield* RunContext.child.pipe(Effect.provideService(RunContext, child))
        expect(grandchild.depth).toBe(2)
      }).pipe(Effect.provide(RunContext.layer({ correlationId: "run-c" }))))
  })
})
