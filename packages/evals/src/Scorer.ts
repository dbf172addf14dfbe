/**
 * Scorers: each looks at a case and what the task produced for it (its `Observation`) and gives a
 * `Score`, a value from 0 to 1 and whether it passes. Built in: `exact`, `contains`,
 * `schemaValid`, `trajectory` (the tool calls made), `costCeiling`, `latencyCeiling` (the run's
 * time on the `Clock` service, so `TestClock` controls it in tests) and `judge`, a model-graded
 * scorer whose judge is itself an agent with a structured verdict. `make` writes your own.
 *
 * A case without what a scorer needs (no expected output, no expected tools) scores 0: an eval
 * fails closed.
 *
 * @since 0.1.0
 */
import type { Agent, AgentError } from "@agentkit/agents"
import { CanonicalJson } from "@agentkit/core"
import type { Invoker, RunContext } from "@agentkit/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as Dataset from "./Dataset.js"
import type * as Task from "./Task.js"

/**
 * What a task produced for a case, and how long it took (milliseconds on the `Clock` service).
 *
 * @example
 * ```ts
 * import type { Scorer } from "@agentkit/evals"
 * import { Usage } from "@agentkit/core"
 *
 * const observation: Scorer.Observation = { output: "A-771 shipped.", toolCalls: [], usage: Usage.zero, durationMillis: 120 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Observation extends Task.Output {
  readonly durationMillis: number
}

/**
 * A score: `value` from 0 to 1, whether it `pass`es, and why (shown in reports).
 *
 * @example
 * ```ts
 * import type { Scorer } from "@agentkit/evals"
 *
 * const score: Scorer.Score = { value: 0.5, pass: false, reason: "missing 'Tuesday'" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Score {
  readonly value: number
  readonly pass: boolean
  readonly reason?: string | undefined
}

/**
 * A scorer: a name (unique in an eval, the key of thresholds and reports) and a scoring function.
 *
 * @example
 * ```ts
 * import type { Scorer } from "@agentkit/evals"
 * import { Effect } from "effect"
 *
 * const short: Scorer.Scorer = {
 *   name: "short",
 *   score: (_item, observation) => Effect.succeed({ value: observation.output.length <= 200 ? 1 : 0, pass: observation.output.length <= 200 })
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Scorer<in I = unknown, out E = never, out R = never> {
  readonly name: string
  readonly score: (item: Dataset.Case<I>, observation: Observation) => Effect.Effect<Score, E, R>
}

const clip = (text: string, max = 80): string => (text.length > max ? `${text.slice(0, max - 3)}...` : text)

const quote = (value: unknown): string =>
  clip(typeof value === "string" ? JSON.stringify(value) : CanonicalJson.stringify(value))

/** A score whose value is outside 0..1 (or not a number) fails closed. */
const checked = (name: string, score: Score): Score =>
  Number.isFinite(score.value) && score.value >= 0 && score.value <= 1
    ? score
    : { value: 0, pass: false, reason: `scorer '${name}' gave ${String(score.value)}; a score is a number from 0 to 1` }

const binary = (pass: boolean, reason?: string): Score =>
  reason === undefined || pass ? { value: pass ? 1 : 0, pass } : { value: 0, pass, reason }

const missing = (what: string): Score => ({ value: 0, pass: false, reason: `the case has no ${what}` })

/**
 * Makes a scorer from a function giving a number (it passes at `passAt`, default 1), a `Score`,
 * or an Effect of either. A value outside 0..1 scores 0 with a reason saying so.
 *
 * @example
 * ```ts
 * import { Scorer } from "@agentkit/evals"
 *
 * const polite = Scorer.make("polite", (_item, observation) => (/please|thank/i.test(observation.output) ? 1 : 0))
 * const brief = Scorer.make("brief", (_item, observation) => Math.min(1, 100 / Math.max(1, observation.output.length)), { passAt: 0.5 })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <I = unknown, E = never, R = never>(
  name: string,
  score: (item: Dataset.Case<I>, observation: Observation) => number | Score | Effect.Effect<number | Score, E, R>,
  options?: { readonly passAt?: number | undefined }
): Scorer<I, E, R> => {
  const passAt = options?.passAt ?? 1
  const normalise = (result: number | Score): Score =>
    checked(name, typeof result === "number" ? { value: result, pass: result >= passAt } : result)
  return {
    name,
    score: (item, observation) =>
      Effect.suspend(() => {
        const result = score(item, observation)
        return Effect.isEffect(result) ? Effect.map(result, normalise) : Effect.succeed(normalise(result))
      })
  }
}

/**
 * The options of `exact`: ignore surrounding white space (default true) and case (default false).
 *
 * @example
 * ```ts
 * import type { Scorer } from "@agentkit/evals"
 *
 * const options: Scorer.ExactOptions = { ignoreCase: true }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ExactOptions {
  readonly name?: string | undefined
  readonly trim?: boolean | undefined
  readonly ignoreCase?: boolean | undefined
}

/**
 * The output equals the case's `expected`: the answer text for a string, else the structured
 * output (`parsed`), compared as canonical JSON.
 *
 * @example
 * ```ts
 * import { Scorer } from "@agentkit/evals"
 *
 * const scorer = Scorer.exact({ ignoreCase: true })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const exact = (options: ExactOptions = {}): Scorer => {
  const name = options.name ?? "exact"
  const normal = (text: string) => {
    const trimmed = options.trim === false ? text : text.trim()
    return options.ignoreCase === true ? trimmed.toLowerCase() : trimmed
  }
  return make(name, (item, observation) => {
    if (item.expected === undefined) return missing("expected output")
    if (typeof item.expected === "string") {
      const pass = normal(observation.output) === normal(item.expected)
      return binary(pass, `expected ${quote(item.expected)}, got ${quote(observation.output)}`)
    }
    const pass = CanonicalJson.stringify(observation.parsed) === CanonicalJson.stringify(item.expected)
    return binary(pass, `expected ${quote(item.expected)}, got ${quote(observation.parsed)}`)
  })
}

/**
 * The options of `contains`: the texts to look for (default: the case's `expected`, a string or
 * a list of strings) and whether case matters (default not).
 *
 * @example
 * ```ts
 * import type { Scorer } from "@agentkit/evals"
 *
 * const options: Scorer.ContainsOptions = { texts: (item) => [String(item.metadata?.orderId ?? "")] }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ContainsOptions {
  readonly name?: string | undefined
  readonly texts?: ((item: Dataset.Case<unknown>) => ReadonlyArray<string>) | undefined
  readonly caseSensitive?: boolean | undefined
}

const expectedTexts = (item: Dataset.Case<unknown>): ReadonlyArray<string> | undefined =>
  typeof item.expected === "string"
    ? [item.expected]
    : Array.isArray(item.expected) && item.expected.every((text) => typeof text === "string")
    ? item.expected as ReadonlyArray<string>
    : undefined

/**
 * The answer contains each expected text: the value is the share found; it passes when all are.
 *
 * @example
 * ```ts
 * import { Scorer } from "@agentkit/evals"
 *
 * const mentions = Scorer.contains() // reads each case's expected text(s)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const contains = (options: ContainsOptions = {}): Scorer =>
  make(options.name ?? "contains", (item, observation) => {
    const texts = options.texts === undefined ? expectedTexts(item) : options.texts(item)
    if (texts === undefined || texts.length === 0) return missing("expected text")
    const fold = (text: string) => (options.caseSensitive === true ? text : text.toLowerCase())
    const output = fold(observation.output)
    const absent = texts.filter((text) => !output.includes(fold(text)))
    const value = (texts.length - absent.length) / texts.length
    return absent.length === 0
      ? { value, pass: true }
      : { value, pass: false, reason: `missing ${absent.map((text) => quote(text)).join(", ")}` }
  })

/**
 * The structured output (or, without one, the answer text parsed as JSON) decodes with `schema`.
 *
 * @example
 * ```ts
 * import { Scorer } from "@agentkit/evals"
 * import { Schema } from "effect"
 *
 * const shaped = Scorer.schemaValid(Schema.Struct({ orderId: Schema.String, status: Schema.Literal("shipped", "cancelled") }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const schemaValid = <A, I>(
  schema: Schema.Schema<A, I, never>,
  options: { readonly name?: string } = {}
): Scorer => {
  const decode = Schema.decodeUnknownEither(schema)
  return make(options.name ?? "schema", (_item, observation) => {
    let value = observation.parsed
    if (value === undefined) {
      try {
        value = JSON.parse(observation.output)
      } catch {
        return { value: 0, pass: false, reason: `the output is not JSON: ${quote(observation.output)}` }
      }
    }
    const decoded = decode(value)
    return decoded._tag === "Right"
      ? { value: 1, pass: true }
      : { value: 0, pass: false, reason: clip(ParseResult.TreeFormatter.formatErrorSync(decoded.left), 200) }
  })
}

/**
 * How `trajectory` compares the tool calls made with the expected ones: `exact` (the same names
 * in the same order, nothing else), `inOrder` (the expected ones in order, others allowed
 * between), `anyOrder` (each expected call made, in any order).
 *
 * @example
 * ```ts
 * import type { Scorer } from "@agentkit/evals"
 *
 * const mode: Scorer.TrajectoryMode = "inOrder"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type TrajectoryMode = "exact" | "inOrder" | "anyOrder"

const subsequence = (expected: ReadonlyArray<string>, actual: ReadonlyArray<string>): boolean => {
  let at = 0
  for (const name of actual) if (name === expected[at]) at++
  return at === expected.length
}

const included = (expected: ReadonlyArray<string>, actual: ReadonlyArray<string>): boolean => {
  const left = [...actual]
  for (const name of expected) {
    const index = left.indexOf(name)
    if (index === -1) return false
    left.splice(index, 1)
  }
  return true
}

/**
 * The tool calls the run made, by name, against the case's `tools` (or `options.expected`).
 *
 * @example
 * ```ts
 * import { Scorer } from "@agentkit/evals"
 *
 * const looksUpFirst = Scorer.trajectory({ mode: "inOrder" })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const trajectory = (
  options: {
    readonly name?: string | undefined
    readonly mode?: TrajectoryMode | undefined
    readonly expected?: ((item: Dataset.Case<unknown>) => ReadonlyArray<string>) | undefined
  } = {}
): Scorer => {
  const mode = options.mode ?? "exact"
  return make(options.name ?? "trajectory", (item, observation) => {
    const expected = options.expected === undefined ? item.tools : options.expected(item)
    if (expected === undefined) return missing("expected tools")
    const actual = observation.toolCalls.map((call) => call.name)
    const pass = mode === "exact"
      ? expected.length === actual.length && expected.every((name, index) => actual[index] === name)
      : mode === "inOrder"
      ? subsequence(expected, actual)
      : included(expected, actual)
    return binary(pass, `expected ${mode} [${expected.join(", ")}], got [${actual.join(", ")}]`)
  })
}

const usd = (value: number): string => `$${Number(value.toPrecision(6))}`

/**
 * The run's cost (its whole run tree's usage) is at most `maxUsd`.
 *
 * @example
 * ```ts
 * import { Scorer } from "@agentkit/evals"
 *
 * const cheap = Scorer.costCeiling(0.01)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const costCeiling = (maxUsd: number, options: { readonly name?: string } = {}): Scorer =>
  make(options.name ?? "cost", (_item, observation) =>
    binary(
      observation.usage.costUsd <= maxUsd,
      `cost ${usd(observation.usage.costUsd)} > ${usd(maxUsd)}`
    ))

/**
 * The case ran within `max` on the `Clock` service (under `TestClock`, only the time the test
 * moves it by counts).
 *
 * @example
 * ```ts
 * import { Scorer } from "@agentkit/evals"
 *
 * const fast = Scorer.latencyCeiling("2 seconds")
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const latencyCeiling = (max: Duration.DurationInput, options: { readonly name?: string } = {}): Scorer => {
  const millis = Duration.toMillis(Duration.decode(max))
  return make(
    options.name ?? "latency",
    (_item, observation) =>
      binary(observation.durationMillis <= millis, `took ${observation.durationMillis} ms > ${millis} ms`)
  )
}

/**
 * A judge's verdict: a score from 0 to 1 and its reason. The judge agent's `output` schema.
 *
 * @example
 * ```ts
 * import { Scorer } from "@agentkit/evals"
 * import { Agent } from "@agentkit/agents"
 *
 * const judge = Agent.make({ name: "judge", model: "claude-sonnet-4-6", prompt: "Grade the answer.", output: Scorer.Verdict })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Verdict = Schema.Struct({
  score: Schema.Number.pipe(Schema.between(0, 1)),
  reason: Schema.String
})

/**
 * A judge's verdict.
 *
 * @example
 * ```ts
 * import type { Scorer } from "@agentkit/evals"
 *
 * const verdict: Scorer.Verdict = { score: 0.9, reason: "names the order and the date" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Verdict extends Schema.Schema.Type<typeof Verdict> {}

/**
 * The options of `judge`: the judging agent (its `output` a `Verdict`), the rubric, the layer it
 * runs on (its own model, its own run context), and the score it passes at (default 0.5).
 *
 * @example
 * ```ts
 * import { Scorer } from "@agentkit/evals"
 * import { Agent } from "@agentkit/agents"
 * import { FakeLLM, Turn, makeTestCtx } from "@agentkit/testing"
 * import { Layer } from "effect"
 *
 * const options: Scorer.JudgeOptions<never, never, never> = {
 *   agent: Agent.make({ name: "judge", model: "claude-sonnet-4-6", prompt: "Grade the answer.", output: Scorer.Verdict }),
 *   rubric: "The answer names the order and its delivery day.",
 *   layer: makeTestCtx({ llm: FakeLLM.script([Turn({ content: "{\"score\":1,\"reason\":\"both named\"}" })]) }).pipe(Layer.orDie)
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface JudgeOptions<R, LE, LR> {
  readonly name?: string | undefined
  readonly agent: Agent.Agent<R, Verdict>
  readonly rubric: string
  readonly layer: Layer.Layer<RunContext | Invoker, LE, LR>
  readonly passAt?: number | undefined
}

/**
 * The text the judge is asked: the rubric, the case's input, its expected output (when it has
 * one) and the answer to grade.
 *
 * @example
 * ```ts
 * import { Scorer } from "@agentkit/evals"
 * import { Usage } from "@agentkit/core"
 *
 * Scorer.judgePrompt("Names the order.", { name: "a", input: "Where is A-771?" }, { output: "Shipped.", toolCalls: [], usage: Usage.zero, durationMillis: 0 })
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const judgePrompt = (rubric: string, item: Dataset.Case<unknown>, observation: Observation): string =>
  [
    `Grade the answer against the rubric. Give a score from 0 (fails the rubric) to 1 (fully meets it) and a one-sentence reason.`,
    `Rubric: ${rubric}`,
    `Input: ${typeof item.input === "string" ? item.input : CanonicalJson.stringify(item.input)}`,
    ...(item.expected === undefined
      ? []
      : [
        `Reference answer: ${
          typeof item.expected === "string" ? item.expected : CanonicalJson.stringify(item.expected)
        }`
      ]),
    `Answer to grade: ${observation.output}`
  ].join("\n\n")

/**
 * A model-graded scorer: `agent` (an agent whose structured output is a `Verdict`) grades each
 * answer against `rubric`, on `layer`. A judge whose answer does not decode scores 0 with its
 * decode error as the reason.
 *
 * @example
 * ```ts
 * import { Scorer } from "@agentkit/evals"
 * import { Agent } from "@agentkit/agents"
 * import { AnthropicChatModel } from "@agentkit/anthropic"
 * import { Invoker, RunContext } from "@agentkit/core"
 * import { Layer } from "effect"
 *
 * const judge = Scorer.judge({
 *   agent: Agent.make({ name: "judge", model: "claude-sonnet-4-6", prompt: "You grade support answers.", output: Scorer.Verdict }),
 *   rubric: "The answer states the order's status from the tool, never a guess.",
 *   layer: Layer.merge(RunContext.layer({ runId: "judge" }), Layer.provide(Invoker.layer(), AnthropicChatModel.layer()))
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const judge = <R, LE, LR>(
  options: JudgeOptions<R, LE, LR>
): Scorer<unknown, AgentError | LE, Exclude<R, RunContext | Invoker> | LR> => {
  const passAt = options.passAt ?? 0.5
  return {
    name: options.name ?? "judge",
    score: (item, observation) =>
      options.agent.run(judgePrompt(options.rubric, item, observation)).pipe(
        Effect.map((result): Score =>
          result.parsed === undefined
            ? { value: 0, pass: false, reason: `the judge gave no verdict: ${result.error ?? result.stopReason}` }
            : { value: result.parsed.score, pass: result.parsed.score >= passAt, reason: result.parsed.reason }
        ),
        Effect.provide(options.layer)
      )
  }
}
