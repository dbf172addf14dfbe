/**
 * Fan-out: several agents, each on a task, concurrently, inside the current run.
 *
 * @since 0.1.0
 */
import { RunContext } from "@agentkit/core"
import type { DepthExceeded, Invoker } from "@agentkit/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Agent from "./Agent.js"
import type { AgentResult } from "./AgentResult.js"
import type { AgentError } from "./Cognition.js"
import { RunSuspended } from "./Errors.js"
import { endsTree, fanOut, type Outcome, outcome } from "./internal/fanOut.js"

/**
 * One slot of `runAgents`: an agent and its task (or conversation).
 *
 * @example
 * ```ts
 * import type { RunAgents } from "@agentkit/agents"
 *
 * const slot: RunAgents.Pair = [researcher, "Find the shipping policy."]
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Pair<R = unknown> = readonly [agent: Agent.Agent<R>, input: Agent.Input]

/**
 * What the agents of a list of pairs need (their tools' requirements).
 *
 * @example
 * ```ts
 * import type { RunAgents } from "@agentkit/agents"
 *
 * type Needs = RunAgents.Requirements<[RunAgents.Pair<never>]> // never
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements<P extends ReadonlyArray<Pair>> = P[number] extends readonly [Agent.Agent<infer R>, Agent.Input]
  ? unknown extends R ? never // an agent made in place with nothing to infer its requirements from needs nothing
  : R
  : never

/**
 * The options of `runAgents`.
 *
 * @example
 * ```ts
 * import type { RunAgents } from "@agentkit/agents"
 *
 * const options: RunAgents.Options = { bestEffort: true }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * Keep going when an agent fails: each slot is an `Either` (its result, or its error). Failures
   * that end the whole run tree still end it: cancellation, a budget ceiling, a lost or broken
   * store.
   */
  readonly bestEffort?: boolean | undefined
}

/**
 * What `runAgents` can fail with: an agent's error, or a depth overflow (the children are one
 * level deeper than the caller).
 *
 * @example
 * ```ts
 * import type { RunAgents } from "@agentkit/agents"
 *
 * const retryable = (error: RunAgents.RunAgentsError) => error._tag === "RunInProgress"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type RunAgentsError = AgentError | DepthExceeded

/** Suspended slots make the whole fan-out a suspension, listing every entry of every slot. */
const suspendedSlots = (
  runId: string,
  slots: ReadonlyArray<Outcome<AgentResult> | undefined>
): RunSuspended | undefined => {
  const pending = slots.flatMap((slot) => (slot?._tag === "Waiting" ? slot.pending : []))
  return pending.length === 0 ? undefined : new RunSuspended({ runId, pending })
}

/**
 * Runs each agent on its task, each on its own child run (`<runId>/<agent>#<index>`: the same id
 * each time the caller is re-driven, so under a checkpoint store a finished slot returns its
 * recorded result and is not run again), concurrently, at most the tree's `maxConcurrency` at a
 * time. Results come back in input order.
 *
 * The children share the caller's budget (a ceiling reached by one stops them all), cancellation
 * and depth. The first failure interrupts the others, and their tools in flight see the
 * interruption; with `bestEffort`, a failing slot is a `Left` and the others go on (failures that
 * end the tree still end it). A slot that suspends (a gated call and no `Approver`) lets the
 * others finish, then `runAgents` fails with `RunSuspended`, listing the pending entries of every
 * suspended slot, each with its path: deciding them and resuming the enclosing run continues
 * those slots.
 *
 * No deadlock: a child holds no concurrency permit while it runs (only its tool executions take
 * one each), so a limit of 1 runs the children one after the other.
 *
 * @example
 * ```ts
 * import { runAgents } from "@agentkit/agents"
 * import { Effect } from "effect"
 *
 * const program = Effect.map(
 *   runAgents([
 *     [researcher, "Find the shipping policy."],
 *     [agent, "What happened to order A-771?"]
 *   ]),
 *   (results) => results.map((result) => result.output).join("\n")
 * )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const runAgents: {
  <const P extends ReadonlyArray<Pair>>(
    pairs: P,
    options: Options & { readonly bestEffort: true }
  ): Effect.Effect<
    Array<Either.Either<AgentResult, RunAgentsError>>,
    RunAgentsError,
    RunContext | Invoker | Requirements<P>
  >
  <const P extends ReadonlyArray<Pair>>(
    pairs: P,
    options?: Options
  ): Effect.Effect<Array<AgentResult>, RunAgentsError, RunContext | Invoker | Requirements<P>>
} = ((
  pairs: ReadonlyArray<Pair>,
  options?: Options
): Effect.Effect<Array<unknown>, RunAgentsError, RunContext | Invoker> =>
  Effect.flatMap(RunContext, (context): Effect.Effect<Array<unknown>, RunAgentsError, Invoker> => {
    const segment = ([agent]: Pair, index: number) => `${agent.name}#${index}`
    const slot = ([agent, input]: Pair) =>
      outcome(agent.run(input) as Effect.Effect<AgentResult, RunAgentsError, RunContext | Invoker>)
    if (options?.bestEffort !== true) {
      return Effect.flatMap(fanOut(context, pairs, segment, slot), (slots) => {
        const suspended = suspendedSlots(context.runId, slots)
        return suspended === undefined
          ? Effect.succeed(slots.map((done) => (done as { readonly value: AgentResult }).value))
          : Effect.fail(suspended)
      })
    }
    return Effect.flatMap(
      fanOut(
        context,
        pairs,
        segment,
        (pair) =>
          Effect.flatMap(
            Effect.either(slot(pair)),
            (result) =>
              Either.isLeft(result) && endsTree(result.left) ? Effect.fail(result.left) : Effect.succeed(result)
          )
      ),
      (slots) => {
        const suspended = suspendedSlots(
          context.runId,
          slots.map((result) => (Either.isRight(result) ? result.right : undefined))
        )
        return suspended === undefined
          ? Effect.succeed(
            slots.map((result) => Either.map(result, (done) => (done as { readonly value: AgentResult }).value))
          )
          : Effect.fail(suspended)
      }
    )
  })) as never
