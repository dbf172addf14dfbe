/**
 * Compaction: keeping a long conversation within its model's context window. Before each model
 * call of a ReAct run, when the request would pass `share` of the model's window (the window from
 * the `ModelCatalog`, the request counted by `TokenEstimator.current`), the run's strategy rewrites
 * the transcript until it fits under `target` of the window: old tool results stubbed, older turns
 * summarised by a model call (through the Invoker's chat pipeline, so the run's budget is charged
 * for it, named `compact-<iteration>` for a durable engine's journal). The system prompt and the
 * last `keepLastTurns` turns are always kept as they are, and a tool call is never separated from
 * its results: a turn is a user message, an answer, or an assistant's tool calls with their results.
 *
 * The compacted transcript replaces the run's own (so the checkpointed state holds it, and a
 * resumed or durable run sends the prompt it would have sent), a `Session` stores it with the
 * thread, and an `AuditStore`, when provided, gets a record of it (tool `agentkit.compaction`).
 *
 * @since 0.2.0
 */
import type { Chat, ChatError, Message, RunContext } from "@agentkit/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { AgentDefinitionError } from "./Errors.js"

/**
 * What a strategy is given: the model request as it would be sent (for counting), how to count
 * a transcript's tokens, the number of tokens to fit under, and how to summarise messages with a
 * model call.
 *
 * @example
 * ```ts
 * import type { Compaction } from "@agentkit/agents"
 *
 * const fits = (context: Compaction.StrategyContext, messages: Parameters<Compaction.StrategyContext["tokens"]>[0]) =>
 *   context.tokens(messages) <= context.target
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface StrategyContext {
  /** The transcript's input tokens as the request would carry them (the run's `TokenEstimator`). */
  readonly tokens: (messages: ReadonlyArray<Message.Message>) => number
  /** The tokens compaction aims to fit under. */
  readonly target: number
  /** The tokens past which compaction runs (`share` of the window): what one request may hold. */
  readonly threshold: number
  /** The run's model. */
  readonly model: string
  /** Sends `request` through the run's chat pipeline (charged to its budget) and gives the reply. */
  readonly complete: (request: Chat.ChatRequest) => Effect.Effect<Chat.ChatResponse, ChatError, RunContext>
}

/**
 * A compaction strategy: rewrites a transcript (system prompt first). Strategies compose with
 * `compose`, each applied in order until the transcript fits.
 *
 * @example
 * ```ts
 * import { Compaction } from "@agentkit/agents"
 *
 * const strategy: Compaction.Strategy = Compaction.compose(Compaction.stubToolResults(), Compaction.summarise())
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface Strategy {
  readonly name: string
  readonly apply: (
    messages: ReadonlyArray<Message.Message>,
    context: StrategyContext
  ) => Effect.Effect<ReadonlyArray<Message.Message>, ChatError, RunContext>
}

/**
 * The messages of a transcript split into its system prompt (the leading system messages) and its
 * turns: a user message, an assistant answer, or an assistant's tool calls followed by their
 * results (never split).
 *
 * @example
 * ```ts
 * import { Compaction } from "@agentkit/agents"
 * import { Message } from "@agentkit/core"
 *
 * const { system, turns } = Compaction.turnsOf([Message.system("be brief"), Message.user("hi"), Message.assistant("hello")])
 * // system: 1 message, turns: 2
 * ```
 *
 * @since 0.2.0
 * @category getters
 */
export const turnsOf = (messages: ReadonlyArray<Message.Message>): {
  readonly system: ReadonlyArray<Message.Message>
  readonly turns: ReadonlyArray<ReadonlyArray<Message.Message>>
} => {
  let i = 0
  while (i < messages.length && messages[i]!.role === "system") i++
  const system = messages.slice(0, i)
  const turns: Array<Array<Message.Message>> = []
  for (; i < messages.length; i++) {
    const message = messages[i]!
    const last = turns.at(-1)
    const opener = last?.[0]
    // a tool result stays with the assistant turn that called it (and any result before it)
    if (message.role === "tool" && last !== undefined && opener?.role === "assistant" && opener.toolCalls.length > 0) {
      last.push(message)
    } else {
      turns.push([message])
    }
  }
  return { system, turns }
}

const checkKeep = (where: string, keep: number | undefined, fallback: number): number => {
  const value = keep ?? fallback
  if (!Number.isInteger(value) || value < 0) {
    throw new AgentDefinitionError({
      message: `${where}: keepLastTurns must be a non-negative integer; got ${String(keep)}`
    })
  }
  return value
}

/** The older turns and the kept ones. */
const split = (messages: ReadonlyArray<Message.Message>, keep: number) => {
  const { system, turns } = turnsOf(messages)
  const cut = Math.max(0, turns.length - keep)
  return { system, older: turns.slice(0, cut), kept: turns.slice(cut) }
}

/**
 * Replaces the content of every tool result older than the last `keepLastTurns` turns (default 4)
 * with a short stub naming its size; the call and its result stay side by side.
 *
 * @example
 * ```ts
 * import { Compaction } from "@agentkit/agents"
 *
 * const stub = Compaction.stubToolResults({ keepLastTurns: 2 })
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const stubToolResults = (options: { readonly keepLastTurns?: number | undefined } = {}): Strategy => {
  const keep = checkKeep("Compaction.stubToolResults", options.keepLastTurns, 4)
  return {
    name: "stub-tool-results",
    apply: (messages) =>
      Effect.sync(() => {
        const { kept, older, system } = split(messages, keep)
        const out: Array<Message.Message> = [...system]
        for (const turn of older) {
          for (const message of turn) {
            out.push(
              message.role === "tool" && !message.content.startsWith(stubPrefix)
                ? { ...message, content: `${stubPrefix} ${new TextEncoder().encode(message.content).length} bytes]` }
                : message
            )
          }
        }
        for (const turn of kept) for (const message of turn) out.push(message)
        return out
      })
  }
}
const stubPrefix = "[tool result elided:"

/**
 * The text of messages as a summariser reads them, one line per message.
 *
 * @example
 * ```ts
 * import { Compaction } from "@agentkit/agents"
 * import { Message } from "@agentkit/core"
 *
 * Compaction.render([Message.user("my order is A-7")]) // "user: my order is A-7"
 * ```
 *
 * @since 0.2.0
 * @category formatting
 */
export const render = (messages: ReadonlyArray<Message.Message>): string =>
  messages.map((message) => {
    switch (message.role) {
      case "assistant":
        return message.toolCalls.length === 0
          ? `assistant: ${message.content}`
          : `assistant: ${message.content} [calls ${
            message.toolCalls.map((call) => `${call.name}(${JSON.stringify(call.arguments)})`).join(", ")
          }]`
      case "tool":
        return `tool ${message.name}${message.isError ? " (error)" : ""}: ${message.content}`
      default:
        return `${message.role}: ${message.content}`
    }
  }).join("\n")

/**
 * The first words of the message `summarise` puts in place of the turns it summarised.
 *
 * @example
 * ```ts
 * import { Compaction } from "@agentkit/agents"
 * import type { Message } from "@agentkit/core"
 *
 * const isSummary = (message: Message.Message) => message.role === "user" && message.content.startsWith(Compaction.summaryPrefix)
 * ```
 *
 * @since 0.2.0
 * @category constants
 */
export const summaryPrefix = "Summary of the earlier conversation:\n"

/**
 * Summarises the turns older than the last `keepLastTurns` (default 4) with a model call (the
 * run's model unless `model` names another; `instruction` is its system prompt) and replaces them
 * with one user message holding the summary. An earlier summary is among the turns summarised.
 * Turns that would not fit one request (the share of the window that triggers compaction) are
 * summarised in pieces, one call each,
 * each piece's summary carried into the next.
 *
 * @example
 * ```ts
 * import { Compaction } from "@agentkit/agents"
 *
 * const summarise = Compaction.summarise({ keepLastTurns: 6, maxTokens: 800 })
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const summarise = (
  options: {
    readonly keepLastTurns?: number | undefined
    readonly model?: string | undefined
    readonly instruction?: string | undefined
    readonly maxTokens?: number | undefined
  } = {}
): Strategy => {
  const keep = checkKeep("Compaction.summarise", options.keepLastTurns, 4)
  const instruction = options.instruction ??
    "Summarise the conversation below for the assistant who continues it. Keep every fact, name, number, identifier and decision; drop pleasantries and raw tool output already acted on."
  const maxTokens = options.maxTokens ?? 1024
  return {
    name: "summarise",
    apply: (messages, context) => {
      const { kept, older, system } = split(messages, keep)
      if (older.length === 0) return Effect.succeed(messages)
      // in pieces that each fit the threshold (a turn is never split), each summary carried into
      // the next: a summary request stays within the window however long the history
      const pieces: Array<Array<Message.Message>> = [[]]
      let size = 0
      for (const turn of older) {
        const tokens = context.tokens(turn)
        if (size > 0 && size + tokens > context.threshold) {
          pieces.push([])
          size = 0
        }
        for (const message of turn) pieces.at(-1)!.push(message)
        size += tokens
      }
      const summarisePiece = (before: string | undefined, piece: ReadonlyArray<Message.Message>) =>
        Effect.map(
          context.complete({
            model: options.model ?? context.model,
            messages: [
              { role: "system", content: instruction },
              {
                role: "user",
                content: before === undefined ? render(piece) : `${summaryPrefix}${before}\n${render(piece)}`
              }
            ],
            tools: [],
            maxTokens
          }),
          (response) => response.content
        )
      return Effect.map(
        Effect.reduce(pieces, undefined as string | undefined, summarisePiece),
        (summary) => [
          ...system,
          { role: "user", content: `${summaryPrefix}${summary ?? ""}` } as Message.Message,
          ...kept.flat()
        ]
      )
    }
  }
}

/**
 * Strategies applied in order, each only while the transcript is still over the target.
 *
 * @example
 * ```ts
 * import { Compaction } from "@agentkit/agents"
 *
 * const strategy = Compaction.compose(Compaction.stubToolResults({ keepLastTurns: 2 }), Compaction.summarise())
 * ```
 *
 * @since 0.2.0
 * @category combinators
 */
export const compose = (...strategies: ReadonlyArray<Strategy>): Strategy => ({
  name: strategies.map((s) => s.name).join("+"),
  apply: (messages, context) =>
    Effect.reduce(
      strategies,
      messages,
      (current, strategy) =>
        context.tokens(current) <= context.target ? Effect.succeed(current) : strategy.apply(current, context)
    )
})

/**
 * The compaction settings of the runs in context.
 *
 * @example
 * ```ts
 * import { Compaction } from "@agentkit/agents"
 *
 * const options: Compaction.Options = { share: 0.8, target: 0.5, strategy: Compaction.summarise() }
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /** Compaction runs when the request would pass this share of the window (default 0.8). */
  readonly share?: number | undefined
  /** It aims to fit the transcript under this share of the window (default half of `share`). */
  readonly target?: number | undefined
  /** The window in tokens, when the catalog does not know the model (or to override it). */
  readonly contextWindow?: number | undefined
  /** Default: `compose(stubToolResults(), summarise())`. */
  readonly strategy?: Strategy | undefined
}

/**
 * Checked compaction settings.
 *
 * @example
 * ```ts
 * import { Compaction } from "@agentkit/agents"
 *
 * const policy: Compaction.Policy = Compaction.make({ share: 0.75 })
 * policy.share // 0.75
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface Policy {
  readonly share: number
  readonly target: number
  readonly contextWindow: number | undefined
  readonly strategy: Strategy
}

const fraction = (field: string, value: number): number => {
  if (typeof value !== "number" || !(value > 0 && value <= 1)) {
    throw new AgentDefinitionError({
      message: `Compaction: ${field} must be a number in (0, 1]; got ${String(value)}`
    })
  }
  return value
}

/**
 * Checks compaction settings: `share` and `target` in (0, 1] with `target <= share`, a
 * `contextWindow` a positive integer; a bad one throws `AgentDefinitionError` naming it.
 *
 * @example
 * ```ts
 * import { Compaction } from "@agentkit/agents"
 *
 * const policy = Compaction.make({ contextWindow: 32_000, strategy: Compaction.summarise({ keepLastTurns: 2 }) })
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (options: Options = {}): Policy => {
  const share = fraction("share", options.share ?? 0.8)
  const target = fraction("target", options.target ?? share / 2)
  if (target > share) {
    throw new AgentDefinitionError({ message: `Compaction: target (${target}) must not exceed share (${share})` })
  }
  const window = options.contextWindow
  if (window !== undefined && (!Number.isInteger(window) || window < 1)) {
    throw new AgentDefinitionError({
      message: `Compaction: contextWindow must be a positive integer; got ${String(window)}`
    })
  }
  return {
    share,
    target,
    contextWindow: window,
    strategy: options.strategy ?? compose(stubToolResults(), summarise())
  }
}

/**
 * The compaction of the runs in context: optional (read from the context, never a requirement);
 * without it a transcript is sent as it is.
 *
 * @example
 * ```ts
 * import { Compaction } from "@agentkit/agents"
 *
 * const CompactionLive = Compaction.Compaction.layer({ share: 0.8, contextWindow: 32_000 })
 * ```
 *
 * @since 0.2.0
 * @category services
 */
export class Compaction extends Context.Tag("@agentkit/agents/Compaction")<Compaction, Policy>() {
  /** A layer of checked settings. */
  static layer(options: Options = {}): Layer.Layer<Compaction> {
    return Layer.sync(Compaction, () => make(options))
  }
}
