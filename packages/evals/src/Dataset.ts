/**
 * A dataset of eval cases: each has a unique name, an input, and what a good answer looks like
 * (the expected output, the expected tool-call trajectory, any other properties in `metadata`),
 * plus tags to run a slice.
 *
 * @since 0.1.0
 */
import { EvalDefinitionError } from "./Errors.js"

/**
 * One case. `I` is the input (a question, a conversation), `O` the expected output.
 *
 * @example
 * ```ts
 * import type { Dataset } from "@agentkit/evals"
 *
 * const lookup: Dataset.Case<string, string> = {
 *   name: "status of A-771",
 *   input: "What happened to order A-771?",
 *   expected: "A-771 shipped",
 *   tools: ["lookup_order"],
 *   tags: ["lookup"]
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Case<I = string, O = unknown> {
  readonly name: string
  readonly input: I
  /** The expected output: what `exact` compares, what `contains` looks for (a string or strings), the judge's reference. */
  readonly expected?: O | undefined
  /** The expected tool calls, by name, in order (what `trajectory` compares). */
  readonly tools?: ReadonlyArray<string> | undefined
  readonly tags?: ReadonlyArray<string> | undefined
  /** Any other property a custom scorer reads. */
  readonly metadata?: Readonly<Record<string, unknown>> | undefined
}

/**
 * A named list of cases.
 *
 * @example
 * ```ts
 * import { Dataset } from "@agentkit/evals"
 *
 * const dataset: Dataset.Dataset<string, string> = Dataset.make("support", [{ name: "hello", input: "Hi", expected: "Hello" }])
 * dataset.cases.length // 1
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Dataset<I = string, O = unknown> {
  readonly name: string
  readonly cases: ReadonlyArray<Case<I, O>>
}

const fail = (message: string): never => {
  throw new EvalDefinitionError({ message })
}

/**
 * Makes a dataset. Throws `EvalDefinitionError` for an empty name, no cases, a case without a
 * name, or a name used twice.
 *
 * @example
 * ```ts
 * import { Dataset } from "@agentkit/evals"
 *
 * const dataset = Dataset.make("support", [
 *   { name: "status", input: "What happened to order A-771?", expected: "shipped", tools: ["lookup_order"], tags: ["lookup"] },
 *   { name: "cancel", input: "Cancel B-102, I ordered it twice.", tools: ["cancel_order"], tags: ["cancel"] }
 * ])
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <I, O = unknown>(name: string, cases: ReadonlyArray<Case<I, O>>): Dataset<I, O> => {
  if (typeof name !== "string" || name.trim() === "") fail("Dataset.make: the name must be a non-empty string")
  if (!Array.isArray(cases) || cases.length === 0) fail(`Dataset '${name}': give at least one case`)
  const seen = new Set<string>()
  cases.forEach((item, index) => {
    if (typeof item?.name !== "string" || item.name.trim() === "") {
      fail(`Dataset '${name}': case ${index} needs a non-empty name`)
    }
    if (seen.has(item.name)) {
      fail(`Dataset '${name}': case name '${item.name}' appears twice; case names must be unique`)
    }
    seen.add(item.name)
  })
  return Object.freeze({ name, cases: Object.freeze([...cases]) })
}

/**
 * The cases that carry at least one of `tags` (a slice of the dataset, same name). Throws
 * `EvalDefinitionError` when no case does.
 *
 * @example
 * ```ts
 * import { Dataset } from "@agentkit/evals"
 *
 * const all = Dataset.make("support", [
 *   { name: "status", input: "Where is A-771?", tags: ["lookup"] },
 *   { name: "cancel", input: "Cancel B-102.", tags: ["cancel"] }
 * ])
 * Dataset.withTags(all, ["cancel"]).cases.map((c) => c.name) // ["cancel"]
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const withTags = <I, O>(dataset: Dataset<I, O>, tags: ReadonlyArray<string>): Dataset<I, O> => {
  const cases = dataset.cases.filter((item) => item.tags?.some((tag) => tags.includes(tag)) === true)
  if (cases.length === 0) fail(`Dataset '${dataset.name}': no case carries any of the tags ${JSON.stringify(tags)}`)
  return make(dataset.name, cases)
}
