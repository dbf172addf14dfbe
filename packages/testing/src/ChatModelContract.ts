/**
 * The chat-model contract: what every provider (every `ChatModel` layer) must do for the agent
 * loop, as one set of tests a provider package registers against its own emulator of its wire
 * protocol, driven through the vendor's real SDK.
 *
 * A provider's harness turns the contract's neutral script (`Reply`: an answer with text deltas,
 * tool calls whose arguments arrive in fragments and usage; an HTTP failure; a context-length
 * refusal; a stream that hangs or is cut) into its emulator's wire replies, and reads each request
 * its emulator received back as an `Observed` request. The suite then checks, per case:
 *
 * - text: the deltas arrive in order, more than one, and join into the response's content;
 * - one tool call, and several in one answer, with arguments assembled from their fragments;
 * - a transcript with tool calls and their results reaches the wire in order, ids and all;
 * - usage (uncached input, output, cached input) and its cost, from the model catalog;
 * - structured output: the provider's native JSON-schema format or a forced tool, as it declares;
 * - a 400 whose message reaches the `ChatModelError`; 429 and 5xx retryable; a context-length
 *   refusal as reason `context_length`;
 * - an interruption that closes the HTTP connection (the emulator sees the socket close);
 * - a stream cut mid-way fails (never a silently short answer);
 * - unicode in text, arguments and the user's message survives byte for byte.
 *
 * It needs only the test function (`it` of `@effect/vitest`), so importing `@agentkit/testing`
 * never loads vitest. Tests run on the live clock (a real socket is involved).
 *
 * @since 0.1.0
 */
import { Message, ModelCatalog } from "@agentkit/core"
import type { Chat, ChatModel, ChatModelError, ToolCall } from "@agentkit/core"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"

/**
 * A scripted tool call: its id, name and the JSON text of its arguments in the fragments the
 * stream carries them in.
 *
 * @example
 * ```ts
 * import type { ChatModelContract } from "@agentkit/testing"
 *
 * const call: ChatModelContract.ScriptedCall = { id: "call_1", name: "lookup_order", argumentFragments: ['{"order', '_id":"A-771"}'] }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ScriptedCall {
  readonly id: string
  readonly name: string
  readonly argumentFragments: ReadonlyArray<string>
}

/**
 * Scripted usage, as `Usage` counts it: `inputTokens` excludes cached input (a wire that reports
 * cached tokens inside its input count adds them back).
 *
 * @example
 * ```ts
 * import type { ChatModelContract } from "@agentkit/testing"
 *
 * const usage: ChatModelContract.ScriptedUsage = { inputTokens: 1200, outputTokens: 340, cacheReadTokens: 800 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ScriptedUsage {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cacheReadTokens: number
}

/**
 * One scripted reply of the emulator:
 *
 * - `Answer`: a streamed answer, text deltas then tool calls, then usage;
 * - `Failure`: an HTTP error status with the vendor's error body carrying `message`;
 * - `ContextLength`: the vendor's refusal of a prompt longer than the model's context window;
 * - `Hang`: text deltas, then nothing, until the client goes away;
 * - `Cut`: text deltas, then the connection is destroyed without the stream's end.
 *
 * @example
 * ```ts
 * import type { ChatModelContract } from "@agentkit/testing"
 *
 * const reply: ChatModelContract.Reply = { _tag: "Failure", status: 429, message: "slow down" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Reply =
  | {
    readonly _tag: "Answer"
    readonly text: ReadonlyArray<string>
    readonly toolCalls: ReadonlyArray<ScriptedCall>
    readonly usage: ScriptedUsage
  }
  | { readonly _tag: "Failure"; readonly status: number; readonly message: string }
  | { readonly _tag: "ContextLength"; readonly message: string }
  | { readonly _tag: "Hang"; readonly text: ReadonlyArray<string> }
  | { readonly _tag: "Cut"; readonly text: ReadonlyArray<string> }

/**
 * One item of a request as the wire carried it, in order: a user text, an assistant text, a tool
 * call (arguments parsed) or a tool result.
 *
 * @example
 * ```ts
 * import type { ChatModelContract } from "@agentkit/testing"
 *
 * const item: ChatModelContract.ObservedItem = { kind: "result", callId: "call_1", content: "shipped" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type ObservedItem =
  | { readonly kind: "user"; readonly text: string }
  | { readonly kind: "assistant"; readonly text: string }
  | { readonly kind: "call"; readonly id: string; readonly name: string; readonly arguments: unknown }
  | { readonly kind: "result"; readonly callId: string; readonly content: string }

/**
 * A request the emulator received, read back from its wire JSON by the harness.
 *
 * @example
 * ```ts
 * import type { ChatModelContract } from "@agentkit/testing"
 *
 * const seen: ChatModelContract.Observed = {
 *   model: "gpt-4.1-mini", system: ["Be brief."], items: [{ kind: "user", text: "hi" }], tools: [],
 *   toolChoice: undefined, responseSchema: undefined
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Observed {
  readonly model: string
  /** The system (developer) instructions, in order. */
  readonly system: ReadonlyArray<string>
  readonly items: ReadonlyArray<ObservedItem>
  /** The names of the advertised tools, in order. */
  readonly tools: ReadonlyArray<string>
  /** The name of a forced tool, if one was forced. */
  readonly toolChoice: string | undefined
  /** The JSON Schema of a native structured-output format, if one was sent. */
  readonly responseSchema: unknown
}

/**
 * A provider under test: its `ChatModel` service (talking to the emulator), the requests the
 * emulator saw, and a wait for a request's connection closing before its reply finished.
 *
 * @example
 * ```ts
 * import type { ChatModelContract } from "@agentkit/testing"
 *
 * const count = (harness: ChatModelContract.Harness) => harness.requests().length
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Harness {
  readonly model: ChatModel.Service
  readonly requests: () => ReadonlyArray<Observed>
  /** Completes when the connection of request `index` (from 0) closed before its reply finished. */
  readonly closedEarly: (index: number) => Effect.Effect<void>
}

/**
 * What the suite is registered with: a name, the model id the requests name (its cost is checked
 * against the default model catalog) and a factory of a harness over a fresh emulator with a script.
 *
 * @example
 * ```ts
 * import type { ChatModelContract } from "@agentkit/testing"
 * import { Effect } from "effect"
 *
 * declare const makeHarness: (script: ReadonlyArray<ChatModelContract.Reply>) => Effect.Effect<ChatModelContract.Harness>
 * const options: ChatModelContract.Options = { name: "openai responses", model: "gpt-4.1-mini", make: makeHarness }
 * ```
 *
 * @since 0.1.0
 * @category testing
 */
export interface Options {
  readonly name: string
  readonly model: string
  readonly make: (script: ReadonlyArray<Reply>) => Effect.Effect<Harness, unknown, Scope.Scope>
}

/**
 * The test function the suite registers its tests with: `it` from `@effect/vitest` fits (the
 * suite uses `it.live`).
 *
 * @example
 * ```ts
 * import type { ChatModelContract } from "@agentkit/testing"
 * import { it } from "@effect/vitest"
 *
 * const register: ChatModelContract.TestFunction = it
 * ```
 *
 * @since 0.1.0
 * @category testing
 */
export interface TestFunction {
  readonly live: (name: string, self: () => Effect.Effect<void, unknown>, timeout?: number) => void
}

const fail = (message: string): never => {
  throw new Error(`chat model contract: ${message}`)
}

const expectEqual = <A>(actual: A, expected: A, what: string): void => {
  const a = JSON.stringify(actual)
  const e = JSON.stringify(expected)
  if (a !== e) fail(`${what}: expected ${e}, got ${a}`)
}

const answer = (
  fields: {
    readonly text?: ReadonlyArray<string>
    readonly toolCalls?: ReadonlyArray<ScriptedCall>
    readonly usage?: ScriptedUsage
  }
): Reply => ({
  _tag: "Answer",
  text: fields.text ?? [],
  toolCalls: fields.toolCalls ?? [],
  usage: fields.usage ?? { inputTokens: 21, outputTokens: 9, cacheReadTokens: 0 }
})

const lookupOrder: Chat.ToolSchema = {
  name: "lookup_order",
  description: "Look up an order by its id and return its status line.",
  parameters: {
    type: "object",
    properties: { order_id: { type: "string" } },
    required: ["order_id"],
    additionalProperties: false
  }
}

const cancelOrder: Chat.ToolSchema = {
  name: "cancel_order",
  description: "Cancel an order by its id.",
  parameters: {
    type: "object",
    properties: { order_id: { type: "string" }, reason: { type: "string" } },
    required: ["order_id", "reason"],
    additionalProperties: false
  }
}

const statusSchema = {
  type: "object",
  properties: { status: { type: "string", enum: ["shipped", "lost"] }, eta: { type: "string" } },
  required: ["status", "eta"],
  additionalProperties: false
}

interface Outcome {
  readonly deltas: ReadonlyArray<string>
  readonly result: Either.Either<Chat.ChatResponse, ChatModelError>
}

const call = (harness: Harness, request: Chat.ChatRequest): Effect.Effect<Outcome> =>
  Effect.suspend(() => {
    const deltas: Array<string> = []
    return Effect.map(
      Effect.either(harness.model.chat(request, { emit: (delta) => void deltas.push(delta.text) })),
      (result) => ({ deltas, result })
    )
  })

const succeeded = (outcome: Outcome, what: string): Chat.ChatResponse =>
  Either.isRight(outcome.result)
    ? outcome.result.right
    : fail(`${what} failed: ${outcome.result.left.reason}: ${outcome.result.left.message}`)

const failed = (outcome: Outcome, what: string): ChatModelError => {
  if (Either.isRight(outcome.result)) return fail(`${what} succeeded with ${JSON.stringify(outcome.result.right)}`)
  const error = outcome.result.left
  if (error._tag !== "ChatModelError") fail(`${what}: expected a ChatModelError, got ${String(error)}`)
  return error
}

const only = (harness: Harness, what: string): Observed => {
  const requests = harness.requests()
  if (requests.length !== 1) fail(`${what}: expected one request on the wire, got ${requests.length}`)
  return requests[0]!
}

const argumentsOf = (script: ScriptedCall): unknown => JSON.parse(script.argumentFragments.join(""))

const expectCalls = (actual: ReadonlyArray<ToolCall.ToolCall>, expected: ReadonlyArray<ScriptedCall>, what: string) =>
  expectEqual(
    actual.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })),
    expected.map((c) => ({ id: c.id, name: c.name, arguments: argumentsOf(c) })),
    what
  )

const closeWait = Duration.seconds(30)

/**
 * Registers the contract's tests with `it` (call it inside a `describe`).
 *
 * @example
 * ```ts
 * import { ChatModelContract } from "@agentkit/testing"
 * import { describe, it } from "@effect/vitest"
 * import { Effect } from "effect"
 *
 * declare const makeHarness: (script: ReadonlyArray<ChatModelContract.Reply>) => Effect.Effect<ChatModelContract.Harness>
 *
 * describe("my provider", () => {
 *   ChatModelContract.register(it, { name: "my provider", model: "gpt-4.1-mini", make: makeHarness })
 * })
 * ```
 *
 * @since 0.1.0
 * @category testing
 */
export const register = (it: TestFunction, options: Options): void => {
  const { model } = options
  const test = (
    name: string,
    script: ReadonlyArray<Reply>,
    body: (harness: Harness) => Effect.Effect<void, unknown>
  ) =>
    it.live(
      `${options.name}: ${name}`,
      () => Effect.scoped(Effect.flatMap(options.make(script), body)),
      60_000
    )
  const ask = (text: string, fields: Partial<Chat.ChatRequest> = {}): Chat.ChatRequest => ({
    model,
    messages: [Message.system("Answer order questions."), Message.user(text)],
    tools: [],
    ...fields
  })

  test(
    "text: the deltas arrive in order and join into the content",
    [answer({ text: ["Order A-771 ", "shipped on ", "14 August."] })],
    (harness) =>
      Effect.gen(function*() {
        const outcome = yield* call(harness, ask("Where is order A-771?"))
        const response = succeeded(outcome, "a text answer")
        expectEqual(response.content, "Order A-771 shipped on 14 August.", "the content")
        expectEqual(outcome.deltas.join(""), response.content, "the deltas joined")
        if (outcome.deltas.length < 2) fail(`expected the text in several deltas, got ${outcome.deltas.length}`)
        expectEqual(response.toolCalls.length, 0, "tool calls of a text answer")
        expectEqual(response.finishReason, "end_turn", "the finish reason")
        if (response.provider === "") fail("the response names no provider")
        if (response.model === "") fail("the response names no model")
        const seen = only(harness, "a text answer")
        expectEqual(seen.model, model, "the model on the wire")
        expectEqual(seen.system, ["Answer order questions."], "the system instructions on the wire")
        expectEqual(seen.items, [{ kind: "user", text: "Where is order A-771?" }], "the input on the wire")
      })
  )

  const one: ScriptedCall = {
    id: "call_lookup_1",
    name: "lookup_order",
    argumentFragments: ["{\"ord", "er_id\": \"A-", "771\"}"]
  }
  test(
    "one tool call: its arguments assembled from their fragments",
    [answer({ toolCalls: [one] })],
    (harness) =>
      Effect.gen(function*() {
        const response = succeeded(
          yield* call(harness, ask("Where is order A-771?", { tools: [lookupOrder] })),
          "a tool call"
        )
        expectCalls(response.toolCalls, [one], "the tool calls")
        expectEqual(response.finishReason, "tool_use", "the finish reason")
        expectEqual(only(harness, "a tool call").tools, ["lookup_order"], "the tools on the wire")
      })
  )

  const several: ReadonlyArray<ScriptedCall> = [
    { id: "call_a", name: "lookup_order", argumentFragments: ["{\"order_id\":", "\"A-771\"}"] },
    { id: "call_b", name: "lookup_order", argumentFragments: ["{\"order_id\"", ":\"B-", "100\"}"] },
    {
      id: "call_c",
      name: "cancel_order",
      argumentFragments: ["{\"order_id\":\"C-5\",", "\"reason\":\"dup", "licate\"}"]
    }
  ]
  test(
    "several tool calls in one answer, after text, in order",
    [answer({ text: ["Checking ", "all three."], toolCalls: several })],
    (harness) =>
      Effect.gen(function*() {
        const outcome = yield* call(
          harness,
          ask("Check A-771 and B-100, cancel C-5.", { tools: [cancelOrder, lookupOrder] })
        )
        const response = succeeded(outcome, "parallel tool calls")
        expectCalls(response.toolCalls, several, "the tool calls")
        expectEqual(response.content, "Checking all three.", "the text before the calls")
        expectEqual(outcome.deltas.join(""), "Checking all three.", "the deltas")
        expectEqual(response.finishReason, "tool_use", "the finish reason")
        expectEqual(only(harness, "parallel tool calls").tools, ["cancel_order", "lookup_order"], "the tools")
      })
  )

  test(
    "tool calls and their results reach the wire in order, ids and all",
    [answer({ text: ["A-771 shipped; ", "B-100 is lost."] })],
    (harness) =>
      Effect.gen(function*() {
        const transcript = [
          Message.system("Answer order questions."),
          Message.user("Where are A-771 and B-100?"),
          Message.assistant("", [
            { id: "call_a", name: "lookup_order", arguments: { order_id: "A-771" } },
            { id: "call_b", name: "lookup_order", arguments: { order_id: "B-100" } }
          ]),
          Message.toolResult({ toolCallId: "call_a", name: "lookup_order", content: "order A-771: shipped" }),
          Message.toolResult({
            toolCallId: "call_b",
            name: "lookup_order",
            content: "order B-100: lost",
            isError: false
          })
        ]
        const response = succeeded(
          yield* call(harness, { model, messages: transcript, tools: [lookupOrder] }),
          "an answer after tool results"
        )
        expectEqual(response.content, "A-771 shipped; B-100 is lost.", "the content")
        expectEqual(only(harness, "after tool results").items, [
          { kind: "user", text: "Where are A-771 and B-100?" },
          { kind: "call", id: "call_a", name: "lookup_order", arguments: { order_id: "A-771" } },
          { kind: "call", id: "call_b", name: "lookup_order", arguments: { order_id: "B-100" } },
          { kind: "result", callId: "call_a", content: "order A-771: shipped" },
          { kind: "result", callId: "call_b", content: "order B-100: lost" }
        ], "the transcript on the wire")
      })
  )

  const usage: ScriptedUsage = { inputTokens: 1200, outputTokens: 340, cacheReadTokens: 800 }
  test(
    "usage (uncached input, output, cached input) and its cost from the model catalog",
    [answer({ text: ["ok"], usage })],
    (harness) =>
      Effect.gen(function*() {
        const response = succeeded(yield* call(harness, ask("hi")), "an answer with usage")
        expectEqual(
          [response.usage.inputTokens, response.usage.outputTokens, response.usage.cacheReadTokens],
          [usage.inputTokens, usage.outputTokens, usage.cacheReadTokens],
          "the usage"
        )
        const expected = ModelCatalog.standard.cost(model, {
          ...usage,
          cacheWriteTokens: response.usage.cacheWriteTokens
        })
        if (Option.isNone(expected)) return fail(`model '${model}' is not in the default model catalog`)
        if (expected.value <= 0) fail(`the catalog prices '${model}' at $0; the check would prove nothing`)
        expectEqual(response.usage.costUsd, expected.value, "the cost")
      })
  )

  test(
    "structured output: the native JSON-schema format, or a forced tool",
    [
      answer({
        text: ["{\"status\":", "\"shipped\",\"eta\":\"Tue", "sday\"}"],
        toolCalls: []
      }),
      answer({
        toolCalls: [{
          id: "call_out",
          name: "structured_output",
          argumentFragments: ["{\"status\":\"shi", "pped\",\"eta\":\"Tuesday\"}"]
        }]
      })
    ],
    (harness) =>
      Effect.gen(function*() {
        const features = harness.model.features ?? {}
        if (features.responseFormat === true) {
          const response = succeeded(
            yield* call(
              harness,
              ask("Where is A-771?", {
                responseFormat: { type: "json_schema", name: "order_status", schema: statusSchema }
              })
            ),
            "a native structured answer"
          )
          expectEqual(JSON.parse(response.content), { status: "shipped", eta: "Tuesday" }, "the structured answer")
          expectEqual(harness.requests()[0]?.responseSchema, statusSchema, "the schema on the wire")
          return
        }
        if (features.toolChoice !== true) {
          return fail("the model declares neither features.responseFormat nor features.toolChoice")
        }
        // the first scripted reply is for the native format: spend it on a plain call
        yield* call(harness, ask("warm up"))
        const tool: Chat.ToolSchema = {
          name: "structured_output",
          description: "Return the answer.",
          parameters: statusSchema
        }
        const response = succeeded(
          yield* call(
            harness,
            ask("Where is A-771?", { tools: [tool], toolChoice: { type: "tool", name: "structured_output" } })
          ),
          "a forced-tool structured answer"
        )
        expectEqual(
          response.toolCalls.map((c) => c.arguments),
          [{ status: "shipped", eta: "Tuesday" }],
          "the structured answer"
        )
        expectEqual(harness.requests()[1]?.toolChoice, "structured_output", "the forced tool on the wire")
      })
  )

  const badRequest = "messages.1.content: unexpected field 'bogus' (expected a string)"
  test(
    "a 400: not retryable, and its message reaches the error",
    [{ _tag: "Failure", status: 400, message: badRequest }],
    (harness) =>
      Effect.gen(function*() {
        const error = failed(yield* call(harness, ask("hi")), "a 400")
        expectEqual([error.reason, error.retryable, error.status], ["invalid_request", false, 400], "the error")
        if (!error.message.includes(badRequest)) fail(`the error's message lacks the server's: ${error.message}`)
      })
  )

  test(
    "429 and 5xx are retryable",
    [
      { _tag: "Failure", status: 429, message: "rate limited: slow down" },
      { _tag: "Failure", status: 500, message: "internal error" },
      { _tag: "Failure", status: 503, message: "service unavailable" }
    ],
    (harness) =>
      Effect.gen(function*() {
        const limited = failed(yield* call(harness, ask("hi")), "a 429")
        expectEqual([limited.reason, limited.retryable, limited.status], ["rate_limit", true, 429], "the 429")
        for (const status of [500, 503]) {
          const error = failed(yield* call(harness, ask("hi")), `a ${status}`)
          expectEqual([error.retryable, error.status], [true, status], `the ${status}`)
          if (!["server", "overloaded"].includes(error.reason)) {
            fail(`a ${status}: expected reason server or overloaded, got ${error.reason}`)
          }
        }
        expectEqual(harness.requests().length, 3, "requests on the wire (the SDK itself must not retry)")
      })
  )

  test(
    "a prompt longer than the context window: reason context_length, not retryable",
    [{ _tag: "ContextLength", message: "This model's maximum context length is 128000 tokens." }],
    (harness) =>
      Effect.gen(function*() {
        const error = failed(yield* call(harness, ask("a very long prompt")), "a context-length refusal")
        expectEqual([error.reason, error.retryable], ["context_length", false], "the error")
      })
  )

  test(
    "an interruption aborts the HTTP request: the server sees the connection close",
    [{ _tag: "Hang", text: ["Order A-771 ", "is"] }],
    (harness) =>
      Effect.gen(function*() {
        const started = yield* Deferred.make<void>()
        const fiber = yield* Effect.fork(
          harness.model.chat(ask("Where is A-771?"), { emit: () => void Deferred.unsafeDone(started, Effect.void) })
        )
        yield* Deferred.await(started)
        yield* Fiber.interrupt(fiber)
        yield* harness.closedEarly(0).pipe(
          Effect.timeoutFail({
            duration: closeWait,
            onTimeout: () => new Error("chat model contract: the connection stayed open after the interruption")
          })
        )
      })
  )

  test(
    "a stream cut mid-way fails with a ChatModelError, never a short answer",
    [{ _tag: "Cut", text: ["Order A-7", "71 shi"] }],
    (harness) =>
      Effect.gen(function*() {
        const outcome = yield* call(harness, ask("Where is A-771?"))
        const error = failed(outcome, "a cut stream")
        if (!["stream", "network"].includes(error.reason)) {
          fail(`a cut stream: expected reason stream or network, got ${error.reason}`)
        }
        // text already reached the caller: a retry would repeat it
        if (outcome.deltas.length > 0 && error.retryable) fail("a cut stream after text must not be retryable")
      })
  )

  const unicodeCall: ScriptedCall = {
    id: "call_ü",
    name: "lookup_order",
    argumentFragments: ["{\"order_id\":\"Zoë-", "🚚-напр", "авление-日本\"}"]
  }
  test(
    "unicode in text, arguments and the user's message survives byte for byte",
    [answer({ text: ["naïve café — ", "日本語の", "注文 😀👍🏽 ", "ok"], toolCalls: [unicodeCall] })],
    (harness) =>
      Effect.gen(function*() {
        const question = "Où est ma commande « Zoë » 🚚? 注文はどこ"
        const outcome = yield* call(harness, ask(question, { tools: [lookupOrder] }))
        const response = succeeded(outcome, "a unicode answer")
        expectEqual(response.content, "naïve café — 日本語の注文 😀👍🏽 ok", "the content")
        expectEqual(outcome.deltas.join(""), response.content, "the deltas")
        expectCalls(response.toolCalls, [unicodeCall], "the tool call")
        expectEqual(only(harness, "unicode").items, [{ kind: "user", text: question }], "the user's message")
      })
  )
}

/**
 * A request as the contract observes it, read from the `ChatRequest` itself: for harnesses of
 * models that have no wire (fakes, in-process adapters).
 *
 * @example
 * ```ts
 * import { Message } from "@agentkit/core"
 * import { ChatModelContract } from "@agentkit/testing"
 *
 * ChatModelContract.observe({ model: "m", messages: [Message.user("hi")], tools: [] }).items
 * // [{ kind: "user", text: "hi" }]
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const observe = (request: Chat.ChatRequest): Observed => {
  const system: Array<string> = []
  const items: Array<ObservedItem> = []
  for (const message of request.messages) {
    switch (message.role) {
      case "system":
        system.push(message.content)
        break
      case "user":
        items.push({ kind: "user", text: message.content })
        break
      case "assistant":
        if (message.content !== "") items.push({ kind: "assistant", text: message.content })
        for (const c of message.toolCalls) items.push({ kind: "call", id: c.id, name: c.name, arguments: c.arguments })
        break
      case "tool":
        items.push({ kind: "result", callId: message.toolCallId, content: message.content })
        break
    }
  }
  return {
    model: request.model,
    system,
    items,
    tools: request.tools.map((tool) => tool.name),
    toolChoice: request.toolChoice?.name,
    responseSchema: request.responseFormat?.schema
  }
}
