/**
 * Cancelling a run from plain code, through the run context's cancellation handle
 * (DESIGN "Cancellation is Effect interruption"; spec-runtime §3, §9).
 */
import { Agent, ReActCognition } from "@agentkit/agents"
import { Cancellation, Cancelled } from "@agentkit/core"
import { FakeLLM, Fixture, makeTestCtx, Seed, Turn } from "@agentkit/testing"
import { asTool, Tool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber, Stream } from "effect"
import { call, DESCRIPTION, forever, support } from "./fixtures.js"

const { failureOf } = Fixture
const { lookupCall, MODEL, TASK } = Seed

for (const tracing of [true, false]) {
  describe(`cancellation, tracing ${tracing ? "on" : "off"}`, () => {
    it.effect("a pre-cancelled token → Cancelled before the first model call (0 calls)", () =>
      Effect.gen(function*() {
        const token = Cancellation.make()
        token.cancel()
        const llm = FakeLLM.script([Turn({ content: "never" })])
        const exit = yield* support.run(TASK).pipe(
          Effect.provide(makeTestCtx({ tracing, llm, cancellation: token })),
          Effect.exit
        )
        const error = failureOf(exit)
        expect(error).toBeInstanceOf(Cancelled)
        expect(error.message).toBe("run cancelled")
        expect(llm.calls).toBe(0)
      }))

    it.effect("a pre-cancelled token stops a single-call agent and a stream too", () =>
      Effect.gen(function*() {
        const token = Cancellation.make()
        token.cancel()
        const llm = FakeLLM.script([Turn({ content: "never" })])
        const single = Agent.make({ name: "single", model: MODEL })
        expect(
          failureOf(
            yield* single.run(TASK).pipe(
              Effect.provide(makeTestCtx({ tracing, llm, cancellation: token })),
              Effect.exit
            )
          )
        ).toBeInstanceOf(
          Cancelled
        )
        const streamed = yield* support.stream(TASK).pipe(
          Stream.provideLayer(makeTestCtx({ tracing, llm, cancellation: token })),
          Stream.runCollect,
          Effect.exit
        )
        expect(failureOf(streamed)).toBeInstanceOf(Cancelled)
        expect(llm.calls).toBe(0)
      }))

    it.effect("token.cancel() from plain code while an Effect tool runs: its finalizer runs, the run ends Cancelled, no further model call", () =>
      Effect.gen(function*() {
        const token = Cancellation.make()
        const started = yield* Deferred.make<void>()
        const log: Array<string> = []
        const slow = Tool.make("slow", {
          description: DESCRIPTION,
          parameters: {},
          sideEffecting: false,
          handler: () =>
            Deferred.succeed(started, undefined).pipe(
              Effect.zipRight(forever),
              Effect.onInterrupt(() => Effect.sync(() => log.push("interrupted"))),
              Effect.ensuring(Effect.sync(() => log.push("finalized")))
            )
        })
        const agent = Agent.make({ name: "support", model: MODEL, cognition: ReActCognition.make({ tools: [slow] }) })
        const llm = FakeLLM.script([Turn({ toolCalls: [call("c1", "slow")] }), Turn({ content: "never reached" })])
        const fiber = yield* Effect.fork(
          agent.run(TASK).pipe(Effect.provide(makeTestCtx({ tracing, llm, cancellation: token })))
        )
        yield* Deferred.await(started)
        expect(log).toEqual([])
        // plain code, no Effect: an HTTP handler would do this
        token.cancel()
        const exit = yield* Fiber.await(fiber)
        expect(failureOf(exit)).toBeInstanceOf(Cancelled)
        expect(log).toEqual(["interrupted", "finalized"])
        expect(llm.calls).toBe(1)
      }))

    it.effect("token.cancel() while a Promise tool runs: its AbortSignal aborts and the run ends Cancelled", () =>
      Effect.gen(function*() {
        const token = Cancellation.make()
        let markStarted!: () => void
        const startedPromise = new Promise<void>((resolve) => (markStarted = resolve))
        let abortReason: unknown
        const fetchLike = Tool.make("fetch_like", {
          description: DESCRIPTION,
          parameters: {},
          sideEffecting: false,
          handler: (_args, { signal }) =>
            new Promise<string>((_resolve, reject) => {
              signal.addEventListener("abort", () => {
                abortReason = signal.reason
                reject(signal.reason)
              })
              markStarted()
            })
        })
        const agent = Agent.make({
          name: "support",
          model: MODEL,
          cognition: ReActCognition.make({ tools: [fetchLike] })
        })
        const llm = FakeLLM.script([
          Turn({ toolCalls: [call("c1", "fetch_like")] }),
          Turn({ content: "never reached" })
        ])
        const fiber = yield* Effect.fork(
          agent.run(TASK).pipe(Effect.provide(makeTestCtx({ tracing, llm, cancellation: token })))
        )
        yield* Effect.promise(() => startedPromise)
        token.cancel()
        const exit = yield* Fiber.await(fiber)
        expect(failureOf(exit)).toBeInstanceOf(Cancelled)
        expect(abortReason).toBeInstanceOf(Error)
        expect((abortReason as Error).message).toBe("tool 'fetch_like' interrupted")
        expect(llm.calls).toBe(1)
      }))

    it.effect("cancelling after the first round stops before the next model call", () =>
      Effect.gen(function*() {
        const token = Cancellation.make()
        // the tool itself flips the token (as another part of the app might), then returns normally
        const flip = Tool.make("flip", {
          description: DESCRIPTION,
          parameters: {},
          sideEffecting: false,
          handler: () => {
            token.cancel()
            return "flipped"
          }
        })
        const agent = Agent.make({ name: "support", model: MODEL, cognition: ReActCognition.make({ tools: [flip] }) })
        const llm = FakeLLM.script([Turn({ toolCalls: [call("c1", "flip")] }), Turn({ content: "never reached" })])
        const exit = yield* agent.run(TASK).pipe(
          Effect.provide(makeTestCtx({ tracing, llm, cancellation: token })),
          Effect.exit
        )
        expect(failureOf(exit)).toBeInstanceOf(Cancelled)
        expect(llm.calls).toBe(1)
      }))

    it.effect("interrupting the fiber directly is an ordinary interruption, not Cancelled", () =>
      Effect.gen(function*() {
        const started = yield* Deferred.make<void>()
        const slow = Tool.make("slow", {
          description: DESCRIPTION,
          parameters: {},
          sideEffecting: false,
          handler: () => Deferred.succeed(started, undefined).pipe(Effect.zipRight(forever))
        })
        const agent = Agent.make({ name: "support", model: MODEL, cognition: ReActCognition.make({ tools: [slow] }) })
        const llm = FakeLLM.script([Turn({ toolCalls: [call("c1", "slow")] })])
        const fiber = yield* Effect.fork(agent.run(TASK).pipe(Effect.provide(makeTestCtx({ tracing, llm }))))
        yield* Deferred.await(started)
        const exit = yield* Fiber.interrupt(fiber)
        expect(Exit.isInterrupted(exit)).toBe(true)
        expect(Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)).toBe(true)
      }))

    it.effect("a run that finished is not affected by a later cancel", () =>
      Effect.gen(function*() {
        const token = Cancellation.make()
        const llm = FakeLLM.script([Turn({ toolCalls: [lookupCall()] }), Turn({ content: "done" })])
        const result = yield* support.run(TASK).pipe(Effect.provide(makeTestCtx({ tracing, llm, cancellation: token })))
        token.cancel()
        expect(result.output).toBe("done")
      }))
    it.effect("a parent cancelled while two sub-agents run concurrently: both sub-runs stop (finalizers run), the run ends Cancelled, the caller goes on", () =>
      Effect.gen(function*() {
        const token = Cancellation.make()
        const started = [yield* Deferred.make<void>(), yield* Deferred.make<void>()] as const
        const log: Array<string> = []
        const slow = Tool.make("slow", {
          description: DESCRIPTION,
          parameters: {},
          sideEffecting: false,
          handler: (_args, { callId }) =>
            Deferred.succeed(started[callId === "s1" ? 0 : 1], undefined).pipe(
              Effect.zipRight(forever),
              Effect.ensuring(Effect.sync(() => log.push(`${callId} finalized`)))
            )
        })
        const researcher = Agent.make({
          name: "researcher",
          model: MODEL,
          cognition: ReActCognition.make({ tools: [slow] })
        })
        const research = asTool(researcher, { name: "research", description: DESCRIPTION })
        const agent = Agent.make({
          name: "support",
          model: MODEL,
          cognition: ReActCognition.make({ tools: [research] })
        })
        const llm = FakeLLM.script([
          Turn({ toolCalls: [call("r1", "research", { task: "one" }), call("r2", "research", { task: "two" })] }),
          Turn({ toolCalls: [call("s1", "slow")] }),
          Turn({ toolCalls: [call("s2", "slow")] })
        ])
        const fiber = yield* Effect.fork(
          Effect.gen(function*() {
            const exit = yield* Effect.exit(agent.run(TASK))
            yield* Effect.yieldNow() // the caller goes on: the cancellation was the run's, not its caller's
            log.push("caller went on")
            return exit
          }).pipe(Effect.provide(makeTestCtx({ tracing, llm, cancellation: token })))
        )
        yield* Deferred.await(started[0])
        yield* Deferred.await(started[1])
        token.cancel()
        const exit = yield* Fiber.join(fiber)
        expect(failureOf(exit)).toBeInstanceOf(Cancelled)
        expect([...log].sort()).toEqual(["caller went on", "s1 finalized", "s2 finalized"])
        expect(log.at(-1)).toBe("caller went on")
        expect(llm.calls).toBe(3)
      }))
  })
}
