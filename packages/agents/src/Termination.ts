/**
 * Termination conditions: when a ReAct loop stops on its own, before the tools of a turn run
 * (`ReActCognition.make({ termination })`).
 *
 * A condition is evaluated on every model turn (its text, its tool calls, its usage) before any
 * of the turn's calls runs. When it holds, the run stops there: the turn's assistant message is
 * the last of the transcript, no tool of the turn runs, and the result is not partial, with the
 * condition's stop reason:
 *
 * | condition | holds when | stop reason |
 * | --- | --- | --- |
 * | `functionCall(name)` | the turn calls the tool `name` (which does not run) | `function_call` |
 * | `textMention(text)` | the turn's text contains `text` | `text_mention` |
 * | `maxTokens(n)` | the run's turns have used `n` tokens or more (input + output) | `token_limit` |
 * | `maxTurns(n)` | `n` model turns have been evaluated | `max_turns` |
 * | `or(a, b)` | either holds (the reason of the first that does) | |
 * | `and(a, b)` | both have held, on this turn or an earlier one (the reason of the one that completed it) | |
 *
 * A condition is an immutable description: its counters live in the run's state (`State`, saved
 * with every checkpoint in the run state's `cognitionState`), so concurrent runs sharing one
 * cognition never share counters, and a resumed or taken-over run goes on counting where it
 * stopped.
 *
 * @since 0.1.0
 */
import { Usage } from "@agentkit/core"
import type { ToolCall } from "@agentkit/core"
import { dual } from "effect/Function"
import { type Pipeable, pipeArguments } from "effect/Pipeable"
import * as Schema from "effect/Schema"
import { AgentDefinitionError } from "./Errors.js"

/**
 * The brand of termination conditions.
 *
 * @example
 * ```ts
 * import { Termination } from "@agentkit/agents"
 *
 * Termination.textMention("DONE")[Termination.TypeId] === Termination.TypeId // true
 * ```
 *
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("@agentkit/agents/Termination")

/**
 * The brand of termination conditions.
 *
 * @example
 * ```ts
 * import { Termination } from "@agentkit/agents"
 *
 * const brand = (condition: Termination.Termination): Termination.TypeId => condition[Termination.TypeId]
 * ```
 *
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * The stop reasons of the conditions (stable strings; the first two are the Python agentkit's).
 *
 * @example
 * ```ts
 * import type { Termination } from "@agentkit/agents"
 *
 * const finishedByTool = (reason: Termination.Reason) => reason === "function_call"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Reason = "function_call" | "text_mention" | "token_limit" | "max_turns"

interface Base extends Pipeable {
  readonly [TypeId]: TypeId
}

/**
 * A termination condition: a tagged, immutable description (it holds no counters).
 *
 * @example
 * ```ts
 * import { Termination } from "@agentkit/agents"
 *
 * const stop: Termination.Termination = Termination.or(Termination.functionCall("submit_answer"), Termination.maxTurns(6))
 * stop._tag // "Or"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Termination =
  | (Base & { readonly _tag: "FunctionCall"; readonly name: string })
  | (Base & { readonly _tag: "TextMention"; readonly text: string })
  | (Base & { readonly _tag: "MaxTokens"; readonly tokens: number })
  | (Base & { readonly _tag: "MaxTurns"; readonly turns: number })
  | (Base & { readonly _tag: "Or" | "And"; readonly conditions: ReadonlyArray<Termination> })

/**
 * What a condition sees of a model turn: its text, its tool calls and its usage (a model
 * response has all three).
 *
 * @example
 * ```ts
 * import type { Termination } from "@agentkit/agents"
 * import { Usage } from "@agentkit/core"
 *
 * const turn: Termination.Turn = { content: "All done. DONE", toolCalls: [], usage: Usage.zero }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Turn {
  readonly content: string
  readonly toolCalls: ReadonlyArray<ToolCall.ToolCall>
  readonly usage: Usage.Usage
}

/**
 * A condition's counters in one run, as saved in the run state: version 1, the condition they
 * belong to (`describe`), and one slot per node of the condition, in pre-order (a count for
 * `maxTokens` and `maxTurns`; 1 once it has held for the others).
 *
 * @example
 * ```ts
 * import { Termination } from "@agentkit/agents"
 * import { Schema } from "effect"
 *
 * Schema.is(Termination.State)({ version: 1, condition: "max_turns(3)", slots: [2] }) // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const State = Schema.Struct({
  version: Schema.Literal(1),
  condition: Schema.String,
  slots: Schema.Array(Schema.NonNegativeInt)
})

/**
 * A condition's counters in one run.
 *
 * @example
 * ```ts
 * import type { Termination } from "@agentkit/agents"
 *
 * const turnsSoFar = (state: Termination.State) => state.slots[0]
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface State extends Schema.Schema.Type<typeof State> {}

const Proto = {
  [TypeId]: TypeId,
  pipe() {
    return pipeArguments(this, arguments)
  }
}

type Fields = Termination extends infer T ? (T extends Termination ? Omit<T, TypeId | "pipe"> : never) : never

const build = (fields: Fields): Termination => Object.freeze(Object.assign(Object.create(Proto), fields)) as Termination

const definitionError = (message: string): never => {
  throw new AgentDefinitionError({ message })
}

const positive = (what: string, value: unknown): number => {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    definitionError(`Termination.${what}: expected a positive integer; got ${String(value)}`)
  }
  return value as number
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/

/**
 * Whether a value is a termination condition.
 *
 * @example
 * ```ts
 * import { Termination } from "@agentkit/agents"
 *
 * Termination.isTermination(Termination.maxTurns(3)) // true
 * Termination.isTermination({ _tag: "MaxTurns", turns: 3 }) // false
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isTermination = (u: unknown): u is Termination => typeof u === "object" && u !== null && TypeId in u

/**
 * Stops when the model calls the tool `name` (one of the cognition's tools), without running it
 * nor any other call of the turn. Stop reason `function_call`.
 *
 * @example
 * ```ts
 * import { ReActCognition, Termination } from "@agentkit/agents"
 *
 * // the model ends the run by calling `cancel_order` (which never runs); its arguments are in the
 * // transcript's last message, for the app to act on
 * const cognition = ReActCognition.make({ tools: [lookupOrder, cancelOrder], termination: Termination.functionCall("cancel_order") })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const functionCall = (name: string): Termination => {
  if (typeof name !== "string" || !TOOL_NAME.test(name)) {
    definitionError(
      `Termination.functionCall: expected a tool name matching ^[a-zA-Z0-9_-]{1,64}$; got ${JSON.stringify(name)}`
    )
  }
  return build({ _tag: "FunctionCall", name })
}

/**
 * Stops when the model's text contains `text` (case-sensitive). Stop reason `text_mention`.
 *
 * @example
 * ```ts
 * import { Termination } from "@agentkit/agents"
 *
 * const done = Termination.textMention("DONE")
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const textMention = (text: string): Termination => {
  if (typeof text !== "string" || text.length === 0) {
    definitionError(`Termination.textMention: expected a non-empty string; got ${JSON.stringify(text)}`)
  }
  return build({ _tag: "TextMention", text })
}

/**
 * Stops once the run's model turns have used `tokens` tokens or more (input + output, counted
 * from the turns it evaluated). A graceful stop (stop reason `token_limit`), unlike the budget's
 * `maxTokens`, which fails the run.
 *
 * @example
 * ```ts
 * import { Termination } from "@agentkit/agents"
 *
 * const enough = Termination.maxTokens(50_000)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const maxTokens = (tokens: number): Termination =>
  build({ _tag: "MaxTokens", tokens: positive("maxTokens", tokens) })

/**
 * Stops at the `turns`-th model turn (before its tools run). Stop reason `max_turns`.
 *
 * @example
 * ```ts
 * import { Termination } from "@agentkit/agents"
 *
 * const short = Termination.maxTurns(3)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const maxTurns = (turns: number): Termination => build({ _tag: "MaxTurns", turns: positive("maxTurns", turns) })

const combine = (tag: "Or" | "And", self: Termination, that: Termination): Termination => {
  for (const condition of [self, that]) {
    if (!isTermination(condition)) {
      definitionError(`Termination.${tag.toLowerCase()}: expected termination conditions; got ${String(condition)}`)
    }
  }
  const flat = (condition: Termination) => (condition._tag === tag ? condition.conditions : [condition])
  return build({ _tag: tag, conditions: Object.freeze([...flat(self), ...flat(that)]) })
}

/**
 * Stops when either condition holds; the stop reason is that of the first (in order) that does.
 * Both are evaluated on every turn, so the counters of both go on.
 *
 * @example
 * ```ts
 * import { Termination } from "@agentkit/agents"
 *
 * const stop = Termination.functionCall("submit_answer").pipe(Termination.or(Termination.maxTurns(6)))
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const or: {
  (that: Termination): (self: Termination) => Termination
  (self: Termination, that: Termination): Termination
} = dual(2, (self: Termination, that: Termination) => combine("Or", self, that))

/**
 * Stops when both conditions have held, on this turn or an earlier one; the stop reason is that
 * of the condition that completed it (the first in order when several did on the same turn).
 *
 * @example
 * ```ts
 * import { Termination } from "@agentkit/agents"
 *
 * // the model said DONE at some point, and has now called submit_answer
 * const stop = Termination.and(Termination.textMention("DONE"), Termination.functionCall("submit_answer"))
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const and: {
  (that: Termination): (self: Termination) => Termination
  (self: Termination, that: Termination): Termination
} = dual(2, (self: Termination, that: Termination) => combine("And", self, that))

/**
 * A condition as stable text (what its saved counters belong to).
 *
 * @example
 * ```ts
 * import { Termination } from "@agentkit/agents"
 *
 * Termination.describe(Termination.or(Termination.functionCall("fetch"), Termination.maxTurns(3)))
 * // 'or(function_call("fetch"), max_turns(3))'
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const describe = (condition: Termination): string => {
  switch (condition._tag) {
    case "FunctionCall":
      return `function_call(${JSON.stringify(condition.name)})`
    case "TextMention":
      return `text_mention(${JSON.stringify(condition.text)})`
    case "MaxTokens":
      return `max_tokens(${condition.tokens})`
    case "MaxTurns":
      return `max_turns(${condition.turns})`
    case "Or":
    case "And":
      return `${condition._tag.toLowerCase()}(${condition.conditions.map(describe).join(", ")})`
  }
}

/**
 * The tool names a condition stops on (its `functionCall`s).
 *
 * @example
 * ```ts
 * import { Termination } from "@agentkit/agents"
 *
 * Termination.functionNames(Termination.or(Termination.functionCall("fetch"), Termination.textMention("DONE"))) // ["fetch"]
 * ```
 *
 * @since 0.1.0
 * @category getters
 */
export const functionNames = (condition: Termination): ReadonlyArray<string> =>
  condition._tag === "FunctionCall"
    ? [condition.name]
    : condition._tag === "Or" || condition._tag === "And"
    ? condition.conditions.flatMap(functionNames)
    : []

const size = (condition: Termination): number =>
  condition._tag === "Or" || condition._tag === "And" ? condition.conditions.reduce((n, c) => n + size(c), 1) : 1

/**
 * The counters of a run that has evaluated no turn yet.
 *
 * @example
 * ```ts
 * import { Termination } from "@agentkit/agents"
 *
 * Termination.initial(Termination.maxTurns(3)) // { version: 1, condition: "max_turns(3)", slots: [0] }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const initial = (condition: Termination): State => ({
  version: 1,
  condition: describe(condition),
  slots: new Array<number>(size(condition)).fill(0)
})

/** A node's outcome on one turn: whether it holds (now or before), whether it began to hold now, and why. */
interface Outcome {
  readonly holds: boolean
  readonly began: boolean
  readonly reason: Reason
}

const visit = (condition: Termination, slots: Array<number>, at: number, turn: Turn): Outcome => {
  const before = slots[at]!
  switch (condition._tag) {
    case "FunctionCall":
    case "TextMention": {
      const now = condition._tag === "FunctionCall"
        ? turn.toolCalls.some((call) => call.name === condition.name)
        : turn.content.includes(condition.text)
      if (now) slots[at] = 1
      return {
        holds: before === 1 || now,
        began: before === 0 && now,
        reason: condition._tag === "FunctionCall" ? "function_call" : "text_mention"
      }
    }
    case "MaxTokens":
    case "MaxTurns": {
      const [limit, added, reason] = condition._tag === "MaxTokens"
        ? [condition.tokens, Usage.totalTokens(turn.usage), "token_limit" as const]
        : [condition.turns, 1, "max_turns" as const]
      slots[at] = before + added
      return { holds: slots[at]! >= limit, began: before < limit && slots[at]! >= limit, reason }
    }
    case "Or":
    case "And": {
      // every child is evaluated (no short cut), so every counter goes on
      const outcomes: Array<Outcome> = []
      let next = at + 1
      for (const child of condition.conditions) {
        outcomes.push(visit(child, slots, next, turn))
        next += size(child)
      }
      const holds = condition._tag === "Or" ? outcomes.some((o) => o.holds) : outcomes.every((o) => o.holds)
      if (holds) slots[at] = 1
      const deciding = outcomes.find((o) => o.holds && o.began) ?? outcomes.find((o) => o.holds) ?? outcomes[0]!
      return { holds, began: before === 0 && holds, reason: deciding.reason }
    }
  }
}

/**
 * Evaluates a condition on one model turn: the counters after it, and the stop reason when the
 * condition holds. Pure: the given state is not changed. A state of another condition (the
 * cognition's condition changed between releases) starts from `initial`.
 *
 * @example
 * ```ts
 * import { Termination } from "@agentkit/agents"
 * import { Usage } from "@agentkit/core"
 *
 * const stop = Termination.maxTurns(2)
 * const turn = { content: "", toolCalls: [], usage: Usage.zero }
 * const first = Termination.evaluate(stop, Termination.initial(stop), turn) // { state: { ..., slots: [1] }, stop: undefined }
 * Termination.evaluate(stop, first.state, turn).stop // "max_turns"
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const evaluate = (
  condition: Termination,
  state: State,
  turn: Turn
): { readonly state: State; readonly stop: Reason | undefined } => {
  const start = state.condition === describe(condition) && state.slots.length === size(condition)
    ? state
    : initial(condition)
  const slots = start.slots.slice()
  const outcome = visit(condition, slots, 0, turn)
  return { state: { version: 1, condition: start.condition, slots }, stop: outcome.holds ? outcome.reason : undefined }
}
