/**
 * The errors of the budget: a ceiling crossed (`BudgetExceeded`, which ends the run) and a
 * sub-run nested deeper than `maxDepth` (`DepthExceeded`, which the model sees), with their
 * guards and the `BudgetError` union.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"
import { ErrorTypeId } from "./AgentkitError.js"
import { isTagged } from "./internal/errors.js"

/**
 * A ceiling was crossed: run cost, model calls, tokens, tool calls, or a tenant quota. It ends
 * the run (it is never shown to the model as a tool error). A sub-agent's depth overflow is
 * `DepthExceeded`, which the model sees.
 *
 * @example
 * ```ts
 * import { BudgetExceeded } from "@agentkit/core"
 *
 * new BudgetExceeded({ limit: "cost", message: "cost $0.02 > $0.015" }).message // "cost $0.02 > $0.015"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class BudgetExceeded
  extends Schema.TaggedError<BudgetExceeded>("@agentkit/core/BudgetExceeded")("BudgetExceeded", {
    limit: Schema.Literal("cost", "modelCalls", "tokens", "toolCalls", "quota"),
    message: Schema.String
  })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * A sub-run would nest deeper than the budget's `maxDepth`. The delegating tool call fails with
 * it and the model sees `ERROR: tool 'x' failed: DepthExceeded: agent depth 5 > max_depth 4`;
 * the parent run goes on.
 *
 * @example
 * ```ts
 * import { DepthExceeded } from "@agentkit/core"
 *
 * new DepthExceeded({ depth: 5, maxDepth: 4 }).message // "agent depth 5 > max_depth 4"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class DepthExceeded extends Schema.TaggedError<DepthExceeded>("@agentkit/core/DepthExceeded")("DepthExceeded", {
  depth: Schema.Number,
  maxDepth: Schema.Number
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `agent depth ${this.depth} > max_depth ${this.maxDepth}`
  }
}

/**
 * Whether a value is a `BudgetExceeded` (a ceiling that ends the run).
 *
 * @example
 * ```ts
 * import { BudgetExceeded, isBudgetExceeded } from "@agentkit/core"
 *
 * isBudgetExceeded(new BudgetExceeded({ limit: "toolCalls", message: "tool calls 3 > 2" })) // true
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isBudgetExceeded: (u: unknown) => u is BudgetExceeded = isTagged("BudgetExceeded")

/**
 * Whether a value is a `DepthExceeded` (a sub-run nested too deep; the model is told).
 *
 * @example
 * ```ts
 * import { DepthExceeded, isDepthExceeded } from "@agentkit/core"
 *
 * isDepthExceeded(new DepthExceeded({ depth: 2, maxDepth: 1 })) // true
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isDepthExceeded: (u: unknown) => u is DepthExceeded = isTagged("DepthExceeded")

/**
 * Every error of the budget: a ceiling crossed (`BudgetExceeded`) or a sub-run nested too deep
 * (`DepthExceeded`).
 *
 * @example
 * ```ts
 * import type { BudgetError } from "@agentkit/core"
 *
 * const endsTheRun = (error: BudgetError) => error._tag === "BudgetExceeded"
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export type BudgetError = BudgetExceeded | DepthExceeded

/**
 * The schema of `BudgetError`: decodes an encoded budget error back to its class.
 *
 * @example
 * ```ts
 * import { BudgetError, DepthExceeded } from "@agentkit/core"
 * import { Schema } from "effect"
 *
 * const error = Schema.decodeUnknownSync(BudgetError)({ _tag: "DepthExceeded", depth: 5, maxDepth: 4 })
 * error instanceof DepthExceeded // true
 * error.message // "agent depth 5 > max_depth 4"
 * ```
 *
 * @since 0.2.0
 * @category schemas
 */
export const BudgetError: Schema.Union<[typeof BudgetExceeded, typeof DepthExceeded]> = Schema.Union(
  BudgetExceeded,
  DepthExceeded
)
