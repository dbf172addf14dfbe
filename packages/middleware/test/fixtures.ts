/**
 * Small doubles shared by the middleware tests: a chat model written as a function, a test layer
 * and tool helpers. (Not a test file: vitest only collects `*.test.ts`.)
 */
import { ChatModel, ChatModelError, Invoker, Message, RunContext, Usage } from "@agentkit/core"
import type { Budget, Chat, ChatMiddleware, ToolCall, ToolMiddleware } from "@agentkit/core"
import { Tool } from "@agentkit/tools"
import { Duration, Effect, Fiber, Layer, Schema, TestClock } from "effect"

/** A response: content "ok", 100 in / 20 out tokens, $0.01, the request's model. */
export const response = (overrides: Partial<Chat.ChatResponse> = {}): Chat.ChatResponse => ({
  content: "ok",
  toolCalls: [],
  usage: Usage.make({ inputTokens: 100, outputTokens: 20, costUsd: 0.01 }),
  finishReason: "end_turn",
  model: "m",
  provider: "fake",
  ...overrides
})

/** A request for `model` with one user message. */
export const request = (model = "m", text = "hi"): Chat.ChatRequest => ({
  model,
  messages: [Message.user(text)],
  tools: []
})

export const timeout = (message = "temporary upstream timeout") =>
  new ChatModelError({ reason: "timeout", retryable: true, message })

export const badRequest = () => new ChatModelError({ reason: "invalid_request", retryable: false, message: "400 bad request" })

type Reply = (
  call: number,
  request: Chat.ChatRequest,
  emit: (delta: Chat.ChatDelta) => void
) => Effect.Effect<Chat.ChatResponse, ChatModelError>

/**
 * A chat model that records every request. `reply` decides each call from its number (from 1);
 * by default it emits "o", "k" and answers `response()` with the request's model.
 */
export const model = (reply?: Reply) => {
  const requests: Array<Chat.ChatRequest> = []
  const layer = ChatModel.layer({
    chat: (req, { emit }) =>
      Effect.suspend(() => {
        requests.push(req)
        if (reply !== undefined) return reply(requests.length, req, emit)
        emit({ text: "o" })
        emit({ text: "k" })
        return Effect.succeed(response({ model: req.model }))
      })
  })
  return {
    layer,
    requests,
    get calls() {
      return requests.length
    }
  }
}

/** A layer with an Invoker over `chatModel` and a RunContext (correlation id `run-1` unless given). */
export const setup = (options: {
  readonly chatModel?: Layer.Layer<ChatModel>
  readonly chatMiddleware?: ReadonlyArray<ChatMiddleware>
  readonly toolMiddleware?: ReadonlyArray<ToolMiddleware>
  readonly budget?: Budget.Budget | Budget.Limits
  readonly scope?: { readonly orgId?: number; readonly domainId?: number }
  readonly correlationId?: string
  readonly tracing?: boolean
}) =>
  Layer.mergeAll(
    Invoker.layer({ chatMiddleware: options.chatMiddleware, toolMiddleware: options.toolMiddleware }).pipe(
      Layer.provide(options.chatModel ?? model().layer)
    ),
    RunContext.layer({
      correlationId: options.correlationId ?? "run-1",
      budget: options.budget,
      scope: options.scope,
      tracing: options.tracing
    })
  )

/** A tool call. */
export const call = (name: string, args: Record<string, unknown> = {}, id = "c1"): ToolCall.ToolCall => ({
  id,
  name,
  arguments: args
})

/**
 * A tool that accepts any arguments and counts its runs; `run(count, args)` decides each run's
 * outcome (default: "ok"). A thrown error becomes a `ToolExecutionError`.
 */
export const countingTool = (
  name: string,
  flags: { readonly sideEffecting: boolean; readonly idempotent?: boolean; readonly urlArg?: string },
  run: (count: number, args: Readonly<Record<string, unknown>>) => unknown = () => "ok"
) => {
  const state = { count: 0 }
  const tool = Tool.make(name, {
    description: `A test tool named ${name} that counts how many times it runs.`,
    parameters:
      flags.urlArg === undefined
        ? Schema.Struct({}, Schema.Record({ key: Schema.String, value: Schema.Unknown }))
        : Schema.Struct({ [flags.urlArg]: Schema.String }, Schema.Record({ key: Schema.String, value: Schema.Unknown })),
    sideEffecting: flags.sideEffecting,
    idempotent: flags.idempotent,
    urlArg: flags.urlArg,
    handler: (args: Readonly<Record<string, unknown>>) => {
      state.count += 1
      return run(state.count, args)
    }
  })
  return {
    tool,
    get count() {
      return state.count
    }
  }
}

/** Runs `effect` in a fiber and moves the TestClock on until it is done (for retry backoff). */
export const runWithClock = <A, E, R>(effect: Effect.Effect<A, E, R>, step: Duration.DurationInput = "31 seconds") =>
  Effect.gen(function* () {
    const fiber = yield* Effect.fork(effect)
    for (let i = 0; i < 50; i++) {
      const done = yield* Fiber.poll(fiber)
      if (done._tag === "Some") break
      yield* TestClock.adjust(step)
    }
    return yield* Fiber.await(fiber)
  })
