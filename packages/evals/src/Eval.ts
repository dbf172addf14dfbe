/**
 * Runs an eval: every case of a dataset through a task, with bounded concurrency and a budget,
 * each answer scored by every scorer, into a `Report`. A task that fails marks its case `failed`
 * (every score 0); a scorer that fails scores 0 with its error as the reason: an eval fails
 * closed. Time is read from the `Clock` service, so a test under `TestClock` controls latency.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Dataset from "./Dataset.js"
import { EvalDefinitionError } from "./Errors.js"
import * as Report from "./Report.js"
import type * as Scorer from "./Scorer.js"
import type * as Task from "./Task.js"

/**
 * The budget of an eval run: a cost ceiling in USD (no case starts once the cases finished so far
 * cost that much; cases already running may go past it, at most `concurrency - 1` of them) and a
 * most number of cases. Cases past the budget are reported `skipped`.
 *
 * @example
 * ```ts
 * import type { Eval } from "@agentkit/evals"
 *
 * const budget: Eval.Budget = { maxCostUsd: 0.5, maxCases: 50 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Budget {
  readonly maxCostUsd?: number | undefined
  readonly maxCases?: number | undefined
}

/**
 * The options of an eval run.
 *
 * @example
 * ```ts
 * import { Dataset, Scorer, Task, type Eval } from "@agentkit/evals"
 * import { Usage } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const options: Eval.Options<string> = {
 *   dataset: Dataset.make("echo", [{ name: "hi", input: "hi", expected: "hi" }]),
 *   task: (input) => Effect.succeed({ output: input, toolCalls: [], usage: Usage.zero }),
 *   scorers: [Scorer.exact()],
 *   concurrency: 2
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<I, E = never, R = never, SE = never, SR = never> {
  readonly dataset: Dataset.Dataset<I, unknown>
  readonly task: Task.Task<I, E, R>
  readonly scorers: ReadonlyArray<Scorer.Scorer<I, SE, SR>>
  /** How many cases run at once (default 4). */
  readonly concurrency?: number | undefined
  readonly budget?: Budget | undefined
}

const fail = (message: string): never => {
  throw new EvalDefinitionError({ message })
}

/** The checks `run` makes before anything runs. */
const validate = <I, E, R, SE, SR>(options: Options<I, E, R, SE, SR>): number => {
  const name = options.dataset?.name
  if (!Array.isArray(options.scorers) || options.scorers.length === 0) fail(`Eval '${name}': give at least one scorer`)
  const names = new Set<string>()
  for (const scorer of options.scorers) {
    if (names.has(scorer.name)) {
      fail(`Eval '${name}': two scorers are named '${scorer.name}'; scorer names must be unique`)
    }
    names.add(scorer.name)
  }
  const concurrency = options.concurrency ?? 4
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    fail(`Eval '${name}': concurrency must be a positive integer; got ${String(concurrency)}`)
  }
  const { maxCases, maxCostUsd } = options.budget ?? {}
  if (maxCostUsd !== undefined && !(Number.isFinite(maxCostUsd) && maxCostUsd >= 0)) {
    fail(`Eval '${name}': budget.maxCostUsd must be a number >= 0; got ${String(maxCostUsd)}`)
  }
  if (maxCases !== undefined && !(Number.isInteger(maxCases) && maxCases >= 0)) {
    fail(`Eval '${name}': budget.maxCases must be an integer >= 0; got ${String(maxCases)}`)
  }
  return concurrency
}

const describe = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  if (error instanceof Error) return `${error.name === "Error" ? "" : `${error.name}: `}${error.message}`
  return String(error)
}

/**
 * Runs the eval and gives its report (cases in dataset order). Throws `EvalDefinitionError` at
 * the call for no scorers, two scorers with one name, a concurrency that is not a positive
 * integer or a budget that is not a non-negative number.
 *
 * @example
 * ```ts
 * import { Dataset, Eval, Scorer, Task } from "@agentkit/evals"
 * import { FakeLLM, Turn, makeTestCtx } from "@agentkit/testing"
 * import { Effect } from "effect"
 *
 * const report = Eval.run({
 *   dataset: Dataset.make("support", [{ name: "status", input: "What happened to order A-771?", expected: "shipped" }]),
 *   task: Task.agent(agent, () => makeTestCtx({ llm: FakeLLM.script([Turn({ content: "A-771 shipped." })]) })),
 *   scorers: [Scorer.contains(), Scorer.costCeiling(0.01)],
 *   budget: { maxCostUsd: 1 }
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const run = <I, E = never, R = never, SE = never, SR = never>(
  options: Options<I, E, R, SE, SR>
): Effect.Effect<Report.Report, never, R | SR> => {
  const concurrency = validate(options)
  const { dataset, scorers, task } = options
  const { maxCases, maxCostUsd } = options.budget ?? {}
  const scorerNames = scorers.map((scorer) => scorer.name)
  return Effect.suspend(() => {
    let started = 0
    let spentNanos = 0
    const skip = (item: Dataset.Case<I>, reason: string): Report.CaseResult => ({
      name: item.name,
      tags: [...(item.tags ?? [])],
      status: "skipped",
      toolCalls: [],
      costUsd: 0,
      durationMillis: 0,
      scores: {},
      error: reason
    })
    const runCase = (item: Dataset.Case<I>): Effect.Effect<Report.CaseResult, never, R | SR> =>
      Effect.suspend(() => {
        if (maxCases !== undefined && started >= maxCases) {
          return Effect.succeed(skip(item, `budget: ${maxCases} case(s) already ran`))
        }
        if (maxCostUsd !== undefined && spentNanos >= Math.round(maxCostUsd * 1e9)) {
          return Effect.succeed(
            skip(item, `budget: ${Report.dollars(spentNanos / 1e9)} spent of ${Report.dollars(maxCostUsd)}`)
          )
        }
        started++
        return Effect.gen(function*() {
          const start = yield* Clock.currentTimeMillis
          const exit = yield* Effect.exit(task(item.input, item))
          const durationMillis = (yield* Clock.currentTimeMillis) - start
          const base = { name: item.name, tags: [...(item.tags ?? [])], durationMillis }
          if (Exit.isFailure(exit)) {
            const error = `the task failed: ${describe(exit.cause)}`
            const scores = Object.fromEntries(
              scorerNames.map((name) => [name, { value: 0, pass: false, reason: error }])
            )
            return { ...base, status: "failed" as const, toolCalls: [], costUsd: 0, scores, error }
          }
          const output = exit.value
          spentNanos += Math.round(output.usage.costUsd * 1e9)
          const observation: Scorer.Observation = { ...output, durationMillis }
          const scores: Record<string, Scorer.Score> = {}
          for (const scorer of scorers) {
            scores[scorer.name] = yield* Effect.catchAllCause(
              scorer.score(item, observation),
              (cause) => Effect.succeed({ value: 0, pass: false, reason: `the scorer failed: ${describe(cause)}` })
            )
          }
          return {
            ...base,
            status: "scored" as const,
            output: output.output,
            toolCalls: output.toolCalls.map((call) => call.name),
            costUsd: output.usage.costUsd,
            scores
          }
        })
      })
    return Effect.map(
      Effect.forEach(dataset.cases, runCase, { concurrency }),
      (cases) => Report.make(dataset.name, scorerNames, cases)
    )
  })
}
