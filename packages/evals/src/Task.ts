/**
 * What an eval runs for each case: a task that turns the case's input into an `Output` (the
 * answer text, the decoded structured output, the tool calls made, the usage). `Task.agent`
 * makes one from an `Agent`, providing the run's layer per case (a scripted model offline, a real
 * provider in a live eval).
 *
 * @since 0.1.0
 */
import type { Agent, AgentError, AgentResult } from "@agentkit/agents"
import type { Invoker, RunContext, ToolCall, Usage } from "@agentkit/core"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Dataset from "./Dataset.js"

/**
 * What a task produced for a case.
 *
 * @example
 * ```ts
 * import type { Task } from "@agentkit/evals"
 * import { Usage } from "@agentkit/core"
 *
 * const output: Task.Output = { output: "A-771 shipped.", toolCalls: [], usage: Usage.zero }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Output {
  /** The answer text. */
  readonly output: string
  /** The decoded structured output, when the task has one. */
  readonly parsed?: unknown
  /** The tool calls the run made, in order. */
  readonly toolCalls: ReadonlyArray<ToolCall.ToolCall>
  readonly usage: Usage.Usage
  readonly stopReason?: string | undefined
}

/**
 * A task: a case's input (and the case) to an `Output`.
 *
 * @example
 * ```ts
 * import type { Task } from "@agentkit/evals"
 * import { Usage } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const echo: Task.Task<string> = (input) => Effect.succeed({ output: input, toolCalls: [], usage: Usage.zero })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Task<I, E = never, R = never> = (input: I, item: Dataset.Case<I>) => Effect.Effect<Output, E, R>

/**
 * The `Output` of an agent's result: its answer, parsed output, the tool calls of its transcript,
 * its usage (the whole run tree) and stop reason.
 *
 * @example
 * ```ts
 * import { Task } from "@agentkit/evals"
 * import { Effect } from "effect"
 *
 * const output = Effect.map(agent.run("What happened to order A-771?"), Task.fromResult)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromResult = <A>(result: AgentResult.AgentResult<A>): Output => ({
  output: result.output,
  ...(result.parsed === undefined ? {} : { parsed: result.parsed }),
  toolCalls: result.transcript.flatMap((message) => (message.role === "assistant" ? message.toolCalls : [])),
  usage: result.usage,
  stopReason: result.stopReason
})

/**
 * A task that runs `agent` on the case's input, with `layer` (or the layer `layer` gives for the
 * case: a fresh scripted model per case, say) providing the run's context and Invoker.
 *
 * @example
 * ```ts
 * import { Task } from "@agentkit/evals"
 * import { FakeLLM, Turn, makeTestCtx } from "@agentkit/testing"
 *
 * const offline = Task.agent(agent, () => makeTestCtx({ llm: FakeLLM.script([Turn({ content: "A-771 shipped." })]) }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const agent = <R, A, LE, LR>(
  subject: Agent.Agent<R, A>,
  layer:
    | Layer.Layer<RunContext | Invoker, LE, LR>
    | ((item: Dataset.Case<Agent.Input>) => Layer.Layer<RunContext | Invoker, LE, LR>)
): Task<Agent.Input, AgentError | LE, Exclude<R, RunContext | Invoker> | LR> =>
(input, item) =>
  subject.run(input).pipe(
    Effect.map(fromResult),
    Effect.provide(typeof layer === "function" ? layer(item) : layer)
  )
