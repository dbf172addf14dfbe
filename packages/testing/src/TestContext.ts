/**
 * One layer for an offline test: `RunContext`, `ChatModel` and `Invoker`.
 *
 * @since 0.1.0
 */
import { Invoker, RunContext } from "@agentkit/core"
import type {
  Autonomy,
  Budget,
  ChatMiddleware,
  ChatModel,
  ConfigurationError,
  Scope,
  ToolMiddleware
} from "@agentkit/core"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import type { FakeLLM } from "./FakeLLM.js"

/**
 * The options of `makeTestCtx`.
 *
 * @example
 * ```ts
 * import { FakeLLM, Turn, makeTestCtx, type TestContextOptions } from "@agentkit/testing"
 *
 * const options: TestContextOptions = {
 *   llm: FakeLLM.script([Turn({ content: "hello" })]),
 *   autonomy: "gated", budget: { maxCostUsd: 0.01 }, scope: { orgId: 7 }
 * }
 * const TestLive = makeTestCtx(options)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface TestContextOptions {
  /** A `FakeLLM` handle or any `ChatModel` layer. */
  readonly llm: FakeLLM | Layer.Layer<ChatModel>
  readonly scope?: Scope.Scope | Scope.Fields | undefined
  readonly budget?: Budget.Budget | Budget.Limits | undefined
  readonly autonomy?: Autonomy | undefined
  readonly correlationId?: string | undefined
  /** The run id (default `test-run`, like the correlation id). */
  readonly runId?: string | undefined
  readonly threadId?: string | undefined
  readonly cancellation?: RunContext.Options["cancellation"]
  readonly tracing?: boolean | undefined
  /** Trifecta legs the run starts with (the caller declares its input untrusted, for instance). */
  readonly legs?: RunContext.Options["legs"]
  readonly chatMiddleware?: ReadonlyArray<ChatMiddleware> | undefined
  readonly toolMiddleware?: ReadonlyArray<ToolMiddleware> | undefined
}

/**
 * Makes the one layer a test provides: `RunContext` (run id and correlation id `test-run`,
 * autonomy `auto` unless given), `ChatModel` (the fake) and `Invoker` (no middleware unless given).
 *
 * @example
 * ```ts
 * import { FakeLLM, Turn, makeTestCtx } from "@agentkit/testing"
 * import { Effect } from "effect"
 *
 * const llm = FakeLLM.script([Turn({ content: "hello" })])
 * const program = agent.run("hi").pipe(Effect.provide(makeTestCtx({ llm })))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeTestCtx = (
  options: TestContextOptions
): Layer.Layer<RunContext | Invoker | ChatModel, ConfigurationError> => {
  const llm = options.llm
  const model: Layer.Layer<ChatModel> = Layer.isLayer(llm) ? (llm as Layer.Layer<ChatModel>) : (llm as FakeLLM).layer
  const invoker = Invoker.layer({
    chatMiddleware: options.chatMiddleware ?? [],
    toolMiddleware: options.toolMiddleware ?? []
  })
  return Layer.mergeAll(
    RunContext.layer({
      runId: options.runId ?? "test-run",
      threadId: options.threadId,
      correlationId: options.correlationId ?? "test-run",
      scope: options.scope,
      budget: options.budget,
      autonomy: options.autonomy ?? "auto",
      cancellation: options.cancellation,
      tracing: options.tracing,
      legs: options.legs
    }),
    Layer.provideMerge(invoker, model)
  )
}

/**
 * Runs `effect` in a fiber and moves the `TestClock` on by `step` (default 31 seconds, past
 * retry's longest default wait) until it is done, at most 50 times; gives its exit. For code that
 * sleeps (retry backoff, timeouts) under `it.effect`.
 *
 * @example
 * ```ts
 * import { runWithClock } from "@agentkit/testing"
 * import { Effect } from "effect"
 *
 * const exit = runWithClock(Effect.as(Effect.sleep("2 minutes"), "woke"), "1 minute") // Exit.succeed("woke")
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const runWithClock = <A, E, R>(effect: Effect.Effect<A, E, R>, step: Duration.DurationInput = "31 seconds") =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(effect)
    for (let i = 0; i < 50; i++) {
      const done = yield* Fiber.poll(fiber)
      if (done._tag === "Some") break
      yield* TestClock.adjust(step)
    }
    return yield* Fiber.await(fiber)
  })
