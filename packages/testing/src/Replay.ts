/**
 * Replays a recorded run offline: a `FakeLLM` that answers each model request with the recorded
 * response (after checking the request is the recorded one) and a tool middleware that answers
 * each tool call with the recorded result (after checking its name and arguments), so the same
 * agent re-runs deterministically with no provider and no side effect. Only the tool's execution
 * is replaced: the Invoker still counts the call in the budget and the ledger, as it did live. With `tools: "real"` the
 * recorded model answers drive the agent's real tools instead.
 *
 * When the run asks something the recording does not have (another prompt, another tool, other
 * arguments, one turn more), the replay stops the run with `ReplayDivergence`, naming the turn and
 * the first difference. It travels as a defect (nothing may retry it or show it to the model);
 * `Replay.orDivergence` turns it into a typed failure.
 *
 * @since 0.1.0
 */
import { ChatModelError, ErrorTypeId, RecordedFailure } from "@agentkit/core"
import type {
  Chat,
  ExecuteOptions,
  InvokableTool,
  ToolCall,
  ToolCallRequest,
  ToolHandler,
  ToolMiddleware
} from "@agentkit/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as FakeLLM from "./FakeLLM.js"
import * as Recording from "./Recording.js"
import * as Redaction from "./Redaction.js"

/**
 * The run asked something the recording does not have. `turn` is the model turn (from 1) where it
 * happened (for a tool call, the turn whose answer asked for it); `exchange` says whether a model
 * request or a tool call differed; `path` names the first differing field (`messages[0].content`,
 * `arguments.order_id`); `expected` and `actual` show both sides.
 *
 * @example
 * ```ts
 * import { Replay } from "@agentkit/testing"
 *
 * new Replay.ReplayDivergence({
 *   turn: 1, exchange: "model request", path: "messages[0].content", expected: "\"Be brief.\"", actual: "\"Be kind.\""
 * }).message
 * // "replay diverged at turn 1 (model request): messages[0].content: the recording has \"Be brief.\", the run has \"Be kind.\""
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ReplayDivergence
  extends Schema.TaggedError<ReplayDivergence>("@agentkit/testing/ReplayDivergence")("ReplayDivergence", {
    turn: Schema.Number,
    exchange: Schema.Literal("model request", "tool call"),
    path: Schema.String,
    expected: Schema.String,
    actual: Schema.String
  })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `replay diverged at turn ${this.turn} (${this.exchange}): ${this.path}: the recording has ${this.expected}, the run has ${this.actual}`
  }
}

/**
 * The options of a replay: the secrets the recording was redacted with (so a live request is
 * compared in the same redacted form) and whether tool calls are answered from the recording
 * (`"recorded"`, the default) or run for real (`"real"`, their arguments still checked).
 *
 * @example
 * ```ts
 * import type { Replay } from "@agentkit/testing"
 *
 * const options: Replay.Options = { tools: "real" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends Redaction.Options {
  readonly tools?: "recorded" | "real" | undefined
}

/**
 * A replay: the fake model to provide (`llm`, for `makeTestCtx({ llm })`), the tool middleware to
 * put last in `toolMiddleware`, and a check that every recorded exchange was played.
 *
 * @example
 * ```ts
 * import { Recording, Replay, makeTestCtx } from "@agentkit/testing"
 *
 * const recording: Recording.Recording = { format: Recording.FORMAT, exchanges: [] }
 * const replay: Replay.Replay = Replay.make(recording)
 * const layer = makeTestCtx({ llm: replay.llm, toolMiddleware: [replay.toolMiddleware] })
 * // ... run the agent, then:
 * replay.assertConsumed()
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Replay {
  readonly llm: FakeLLM.FakeLLM
  /** Answers every tool call from the recording (put it last in `toolMiddleware`). */
  readonly toolMiddleware: ToolMiddleware
  /**
   * The other way to replay tools, for an agent you build with doubles (a `FakeTool` that keeps
   * the real tool's name, schema and flags): `tool` with its execution answered from the
   * recording, by call id, its name and arguments checked. Use it or `toolMiddleware`, not both.
   */
  readonly tool: <T extends InvokableTool<unknown, unknown>>(tool: T) => T
  /** Throws when a recorded exchange was never asked for, naming the first. */
  assertConsumed(): void
}

const SHOWN = 120

const clip = (text: string): string => (text.length > SHOWN ? `${text.slice(0, SHOWN - 3)}...` : text)

/** Both sides of a string difference, around its first differing character. */
const showStrings = (expected: string, actual: string): readonly [string, string] => {
  let at = 0
  while (at < expected.length && at < actual.length && expected[at] === actual[at]) at++
  const from = Math.max(0, at - 30)
  const cut = (text: string) => {
    const piece = text.slice(from, from + SHOWN)
    return `${from > 0 ? "..." : ""}${JSON.stringify(piece)}${from + SHOWN < text.length ? "..." : ""}`
  }
  return [cut(expected), cut(actual)]
}

const show = (
  value: unknown
): string => (value === undefined ? "nothing" : clip(JSON.stringify(value) ?? String(value)))

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

interface Difference {
  readonly path: string
  readonly expected: string
  readonly actual: string
}

/** The first difference between two JSON-like values, depth first, in the recorded value's key order. */
const firstDifference = (expected: unknown, actual: unknown, path: string): Difference | undefined => {
  if (Object.is(expected, actual)) return undefined
  if (Array.isArray(expected) && Array.isArray(actual)) {
    for (let i = 0; i < Math.max(expected.length, actual.length); i++) {
      const found = firstDifference(expected[i], actual[i], `${path}[${i}]`)
      if (found !== undefined) return found
    }
    return undefined
  }
  if (isRecord(expected) && isRecord(actual)) {
    const keys = [...Object.keys(expected), ...Object.keys(actual).filter((key) => !(key in expected))]
    for (const key of keys) {
      const found = firstDifference(expected[key], actual[key], path === "" ? key : `${path}.${key}`)
      if (found !== undefined) return found
    }
    return undefined
  }
  const [shownExpected, shownActual] = typeof expected === "string" && typeof actual === "string"
    ? showStrings(expected, actual)
    : [show(expected), show(actual)]
  return { path: path === "" ? "(the whole value)" : path, expected: shownExpected, actual: shownActual }
}

const diverge = (turn: number, exchange: "model request" | "tool call", difference: Difference) =>
  Effect.die(new ReplayDivergence({ turn, exchange, ...difference }))

/**
 * Makes a replay of a recording.
 *
 * @example
 * ```ts
 * import { Recording, Replay, makeTestCtx } from "@agentkit/testing"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   const replay = Replay.make(yield* Recording.read("test/fixtures/run.recording.json"))
 *   const result = yield* agent.run("What happened to order A-771?").pipe(
 *     Effect.provide(makeTestCtx({ llm: replay.llm, toolMiddleware: [replay.toolMiddleware] }))
 *   )
 *   replay.assertConsumed()
 *   return result
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (recording: Recording.Recording, options?: Options): Replay => {
  const redactor = Redaction.make(options)
  const chats = recording.exchanges.filter((exchange): exchange is Recording.ChatExchange => exchange._tag === "Chat")
  const tools = recording.exchanges.filter((exchange): exchange is Recording.ToolExchange => exchange._tag === "Tool")
  const usedChats = new Set<number>()
  const usedTools = new Set<number>()
  let lastTurn = 0

  const answer = (exchange: Recording.ChatExchange, emit: (delta: Chat.ChatDelta) => void) => {
    lastTurn = exchange.turn
    for (const text of exchange.deltas) emit({ text })
    if (exchange.response !== undefined) return Effect.succeed<Chat.ChatResponse>(exchange.response)
    const error = exchange.error
    return error === undefined
      ? Effect.dieMessage(`Replay: the recording's turn ${exchange.turn} has neither a response nor an error`)
      : Effect.fail(new ChatModelError(error))
  }

  const llm = FakeLLM.replying((call, request, emit) => {
    const live = redactor.value(request)
    const next = chats.findIndex((_, index) => !usedChats.has(index))
    if (next === -1) {
      return diverge(call, "model request", {
        path: "(the whole request)",
        expected: `no model turn ${call} (it has ${chats.length})`,
        actual: "another model request"
      })
    }
    const difference = firstDifference(chats[next]!.request, live, "")
    if (difference === undefined) {
      usedChats.add(next)
      return answer(chats[next]!, emit)
    }
    // concurrent calls (a fan-out) may arrive in another order than they were recorded
    const same = chats.findIndex((exchange, index) =>
      !usedChats.has(index) && firstDifference(exchange.request, live, "") === undefined
    )
    if (same !== -1) {
      usedChats.add(same)
      return answer(chats[same]!, emit)
    }
    return diverge(chats[next]!.turn, "model request", difference)
  })

  /** The recorded exchange of a call (marked played), or the divergence that stops the run. */
  const recordedCall = (call: ToolCall.ToolCall): Effect.Effect<Recording.ToolExchange> => {
    const index = tools.findIndex((exchange, i) => !usedTools.has(i) && exchange.callId === call.id)
    if (index === -1) {
      return diverge(lastTurn, "tool call", {
        path: `call '${call.id}'`,
        expected: "no such call",
        actual: `${call.name} ${show(redactor.value(call.arguments))}`
      })
    }
    const recorded = tools[index]!
    const difference = firstDifference(
      { name: recorded.name, arguments: recorded.arguments },
      { name: call.name, arguments: redactor.value(call.arguments) },
      ""
    )
    if (difference !== undefined) return diverge(recorded.turn, "tool call", difference)
    usedTools.add(index)
    return Effect.succeed(recorded)
  }

  /**
   * `tool` with only its execution replaced by the recorded outcome: the Invoker still counts the
   * call against the budget, claims it in the ledger and opens its span, as in the recorded run.
   */
  const answering = <E, R>(tool: InvokableTool<E, R>, recorded: Recording.ToolExchange): InvokableTool<E, R> =>
    Object.create(tool, {
      execute: {
        value: () =>
          recorded.isError
            ? Effect.fail(new RecordedFailure({ toolName: recorded.name, text: recorded.text }))
            : Effect.succeed(recorded.value ?? recorded.text)
      },
      render: { value: () => recorded.text }
    })

  const toolMiddleware: ToolMiddleware = (next: ToolHandler): ToolHandler => <E, R>(request: ToolCallRequest<E, R>) =>
    Effect.flatMap(recordedCall(request.call), (recorded) =>
      options?.tools === "real"
        ? next(request)
        : next({
          call: request.call,
          tool: answering(request.tool, recorded),
          meta: request.meta,
          context: request.context
        }))

  const tool = <T extends InvokableTool<unknown, unknown>>(real: T): T => {
    const texts = new Map<unknown, string>()
    const execute = (args: unknown, executeOptions: ExecuteOptions) =>
      Effect.flatMap(
        recordedCall({
          id: executeOptions.callId ?? "",
          name: real.name,
          arguments: (typeof args === "object" && args !== null ? args : {}) as Record<string, unknown>
        }),
        (recorded) => {
          if (recorded.isError) {
            return Effect.fail(new RecordedFailure({ toolName: recorded.name, text: recorded.text }))
          }
          // a fresh copy per call, so its text is found by identity even when two calls overlap
          const value = structuredClone(recorded.value ?? recorded.text)
          texts.set(value, recorded.text)
          return Effect.succeed(value)
        }
      )
    const render = (value: unknown) => {
      const text = texts.get(value)
      texts.delete(value)
      return text ?? real.render(value)
    }
    // a copy of the tool's own fields (as FakeTool makes one), with the execution replaced
    return Object.freeze(Object.assign(Object.create(Object.getPrototypeOf(real)), real, { execute, render })) as T
  }

  return {
    llm,
    toolMiddleware,
    tool,
    assertConsumed() {
      const chat = chats.findIndex((_, index) => !usedChats.has(index))
      if (chat !== -1) {
        throw new Error(`Replay: the recording's model turn ${chats[chat]!.turn} was never asked for`)
      }
      const tool = tools.findIndex((_, index) => !usedTools.has(index))
      if (tool !== -1) {
        const exchange = tools[tool]!
        throw new Error(
          `Replay: the recording's tool call '${exchange.callId}' (${exchange.name}, turn ${exchange.turn}) was never made`
        )
      }
    }
  }
}

/**
 * Reads a recording file and makes its replay.
 *
 * @example
 * ```ts
 * import { Replay } from "@agentkit/testing"
 *
 * const replay = Replay.fromFile("test/fixtures/run.recording.json", { tools: "real" })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromFile = (path: string, options?: Options): Effect.Effect<Replay, Recording.RecordingError> =>
  Effect.map(Recording.read(path), (recording) => make(recording, options))

/**
 * Turns a replay's divergence (a defect, so nothing retries it or shows it to the model) into a
 * typed failure of `effect`; other defects stay defects.
 *
 * @example
 * ```ts
 * import { Replay } from "@agentkit/testing"
 * import { Effect } from "effect"
 *
 * const checked = Replay.orDivergence(agent.run("hi")) // fails with ReplayDivergence at the first difference
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const orDivergence = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | ReplayDivergence, R> =>
  Effect.catchSomeDefect(
    effect,
    (defect) => defect instanceof ReplayDivergence ? Option.some(Effect.fail(defect)) : Option.none()
  )
