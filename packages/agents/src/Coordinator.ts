/**
 * Coordinators: cognitions whose children are agents. Each turn runs one child on the
 * conversation so far, picked round-robin or by the model (a selector), as a sub-run of its own
 * (`<runId>/<childName>#<turn>`). A coordinator is used like any cognition,
 * `Agent.make({ ..., cognition: Coordinator.roundRobin({ children }) })`, so it runs, streams,
 * suspends and resumes like any agent, and `asTool` wraps it.
 *
 * @since 0.1.0
 */
import type * as Agent from "./Agent.js"
import type { Cognition } from "./Cognition.js"
import * as internal from "./internal/coordinator.js"

/**
 * One finished turn, as a stop condition sees it.
 *
 * @example
 * ```ts
 * import type { Coordinator } from "@agentkit/agents"
 *
 * const approved = (turn: Coordinator.Turn) => turn.child === "reviewer" && turn.output.includes("APPROVED")
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Turn {
  /** The turn's index, from 0. */
  readonly turn: number
  /** The child that acted. */
  readonly child: string
  /** Its answer. */
  readonly output: string
}

/**
 * The options of every coordinator.
 *
 * @example
 * ```ts
 * import { Coordinator } from "@agentkit/agents"
 *
 * const options: Coordinator.Options<never> = { children: [researcher, agent], maxTurns: 4 }
 * const cognition = Coordinator.roundRobin(options)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<R> {
  /** The agents it coordinates (at least one; names unique). */
  readonly children: ReadonlyArray<Agent.Agent<R>>
  /** How many turns a run may take (default 50); reaching it stops the run with `max_turns`. */
  readonly maxTurns?: number | undefined
  /** Checked after every turn: `true` stops the run with `completed`. */
  readonly stopWhen?: ((turn: Turn) => boolean) | undefined
}

/**
 * The options of `Coordinator.selector`.
 *
 * @example
 * ```ts
 * import { Coordinator } from "@agentkit/agents"
 *
 * const options: Coordinator.SelectorOptions<never> = {
 *   children: [researcher, agent],
 *   instructions: "Research first; let support answer the customer."
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface SelectorOptions<R> extends Options<R> {
  /** Added to the selector's system prompt (after the coordinator agent's own prompt). */
  readonly instructions?: string | undefined
}

/**
 * The coordinator's part of the run state (`RunState.cognitionState`): a versioned schema, read
 * back by a resumed or recovered run (its turn, the child picked for it, every finished turn).
 *
 * @example
 * ```ts
 * import { Coordinator } from "@agentkit/agents"
 * import { Schema } from "effect"
 *
 * Schema.is(Coordinator.StateV1)({ version: 1, policy: "round_robin", turn: 0, results: [], childUsage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costNanos: 0 } }) // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const StateV1 = internal.StateV1

/**
 * A coordinator that runs its children in turn (child `turn % children.length`), each on the
 * conversation so far rendered as one task (the input, then `[child]: answer` per finished
 * turn). Each turn checks cancellation first and adds a `policy.dispatch` span event (`policy`
 * `RoundRobinPolicy`, `selected_child`, `selection_reason` `round-robin index k`). The result's
 * `output` is the last turn's answer; its `usage` adds the children's runs to its own; it stops
 * with `max_turns`, or `completed` when `stopWhen` holds. Under a checkpoint store it is saved
 * after every turn: a crashed run goes on from its turn, and a finished child is never run
 * again. A child that suspends suspends the coordinator with the child's entries; `resume`
 * continues that child, then the turns after it. A child past `maxDepth` ends the run with
 * `DepthExceeded`. Bad options (no children, a duplicate child name, a bad `maxTurns`) throw
 * `AgentDefinitionError`.
 *
 * @example
 * ```ts
 * import { Agent, Coordinator } from "@agentkit/agents"
 *
 * const desk = Agent.make({
 *   name: "desk",
 *   model: "claude-sonnet-4-6",
 *   cognition: Coordinator.roundRobin({ children: [researcher, agent], maxTurns: 2 })
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const roundRobin = <R>(options: Options<R>): Cognition<R> =>
  internal.make({
    policy: "round_robin",
    children: options.children as ReadonlyArray<Agent.Agent<unknown>>,
    maxTurns: options.maxTurns ?? 50,
    stopWhen: options.stopWhen,
    instructions: undefined
  })

/**
 * A coordinator whose model picks the child of each turn: it is asked (the coordinator agent's
 * model and prompt, the `instructions`, the children's names, the conversation so far) and
 * answers a child's name, or `DONE` to stop with `completed`. An answer that names no child falls
 * back to round-robin (`selection_reason` `selector returned 'x'; fallback round-robin index k`).
 * Everything else is as `roundRobin`; the pick is saved with the turn, so a resumed or recovered
 * turn re-drives the same child without asking again.
 *
 * @example
 * ```ts
 * import { Agent, Coordinator } from "@agentkit/agents"
 *
 * const desk = Agent.make({
 *   name: "desk",
 *   model: "claude-sonnet-4-6",
 *   prompt: "Route the customer's request.",
 *   cognition: Coordinator.selector({ children: [researcher, agent], maxTurns: 6 })
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const selector = <R>(options: SelectorOptions<R>): Cognition<R> =>
  internal.make({
    policy: "selector",
    children: options.children as ReadonlyArray<Agent.Agent<unknown>>,
    maxTurns: options.maxTurns ?? 50,
    stopWhen: options.stopWhen,
    instructions: options.instructions
  })
