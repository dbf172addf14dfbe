/**
 * Ready-made values for tests: a model response and request with plain defaults, a tool call,
 * the two provider errors tests reach for (a retryable timeout, a non-retryable bad request), and
 * the typed failure or the defect of an exit.
 *
 * @since 0.1.0
 */
import { ChatModelError, Message, Usage } from "@agentkit/core"
import type { Chat, ToolCall } from "@agentkit/core"
import * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"

/**
 * A model response: content `"ok"`, no tool calls, 100 input / 20 output tokens, $0.01,
 * finish reason `end_turn`, model `"m"`, provider `"fake"`; `overrides` replace any field.
 *
 * @example
 * ```ts
 * import { Fixture } from "@agentkit/testing"
 *
 * Fixture.response({ content: "Order A-771 shipped." }).usage.costUsd // 0.01
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const response = (overrides: Partial<Chat.ChatResponse> = {}): Chat.ChatResponse => ({
  content: "ok",
  toolCalls: [],
  usage: Usage.make({ inputTokens: 100, outputTokens: 20, costUsd: 0.01 }),
  finishReason: "end_turn",
  model: "m",
  provider: "fake",
  ...overrides
})

/**
 * A request for `model` (default `"m"`) with one user message (default `"hi"`) and no tools.
 *
 * @example
 * ```ts
 * import { Fixture } from "@agentkit/testing"
 *
 * Fixture.request("claude-sonnet-4-6", "Where is A-771?").messages.length // 1
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const request = (model = "m", text = "hi"): Chat.ChatRequest => ({
  model,
  messages: [Message.user(text)],
  tools: []
})

/**
 * A tool call, as a model would send it.
 *
 * @example
 * ```ts
 * import { Fixture } from "@agentkit/testing"
 *
 * Fixture.toolCall("c1", "lookup_order", { order_id: "A-771" })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const toolCall = (id: string, name: string, args: Record<string, unknown> = {}): ToolCall.ToolCall => ({
  id,
  name,
  arguments: args
})

/**
 * A retryable provider timeout.
 *
 * @example
 * ```ts
 * import { Fixture } from "@agentkit/testing"
 *
 * Fixture.timeoutError().retryable // true
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const timeoutError = (message = "temporary upstream timeout"): ChatModelError =>
  new ChatModelError({ reason: "timeout", retryable: true, message })

/**
 * A provider's non-retryable bad request (`400 bad request`).
 *
 * @example
 * ```ts
 * import { Fixture } from "@agentkit/testing"
 *
 * Fixture.badRequestError().retryable // false
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const badRequestError = (): ChatModelError =>
  new ChatModelError({ reason: "invalid_request", retryable: false, message: "400 bad request" })

/**
 * The typed failure of an exit; throws, naming what it found instead, when the exit succeeded or
 * failed otherwise (a defect, an interruption).
 *
 * @example
 * ```ts
 * import { Fixture } from "@agentkit/testing"
 * import { Exit } from "effect"
 *
 * Fixture.failureOf(Exit.fail("boom")) // "boom"
 * ```
 *
 * @since 0.1.0
 * @category testing
 */
export const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure, got a success")
  const failure = Cause.failureOption(exit.cause)
  if (Option.isNone(failure)) throw new Error(`expected a typed failure, got ${Cause.pretty(exit.cause)}`)
  return failure.value
}

/**
 * The defect of an exit; throws, naming what it found instead, when the exit did not die.
 *
 * @example
 * ```ts
 * import { Fixture } from "@agentkit/testing"
 * import { Exit } from "effect"
 *
 * Fixture.defectOf(Exit.die("bug")) // "bug"
 * ```
 *
 * @since 0.1.0
 * @category testing
 */
export const defectOf = <A, E>(exit: Exit.Exit<A, E>): unknown => {
  if (Exit.isSuccess(exit)) throw new Error("expected a defect, got a success")
  const defect = Cause.dieOption(exit.cause)
  if (Option.isNone(defect)) throw new Error(`expected a defect, got ${Cause.pretty(exit.cause)}`)
  return defect.value
}
