/**
 * Wraps anything with `run(task)` (an agent, a coordinator) into a tool, so a delegating agent is
 * just an agent with one more tool.
 *
 * @since 0.1.0
 */
import {
  type BudgetExceeded,
  type Cancelled,
  capabilities,
  type Capability,
  type DepthExceeded,
  endsRun,
  isDepthExceeded,
  isSubRunSuspension,
  RunContext,
  type StoreError,
  ToolExecutionError
} from "@agentkit/core"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Tool from "./Tool.js"

/**
 * Something that runs a task: an `Agent`, a coordinator, a workflow. `caps` are the trifecta
 * capabilities of everything it can reach (an `Agent` gives the union of its tools' caps); a
 * runnable without them counts as all three (fail closed).
 *
 * @example
 * ```ts
 * import { asTool, type Runnable } from "@agentkit/tools"
 * import { Effect } from "effect"
 *
 * const echo: Runnable<string, never, never> = { run: (task) => Effect.succeed(`echo: ${task}`), caps: [] }
 * const echoTool = asTool(echo, { name: "echo", description: "Repeat the task back, prefixed with 'echo:'." })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Runnable<A, E, R> {
  readonly run: (task: string) => Effect.Effect<A, E, R>
  /** The trifecta caps of everything the runnable can reach (its tools, its children's tools). */
  readonly caps?: ReadonlyArray<Capability> | undefined
}

/**
 * The options of `asTool`.
 *
 * @example
 * ```ts
 * import type { AgentResult } from "@agentkit/agents"
 * import { asTool, type AsToolOptions } from "@agentkit/tools"
 *
 * const options: AsToolOptions<AgentResult.AgentResult> = {
 *   name: "research", description: "Delegate a research sub-task to the researcher agent.",
 *   render: (result) => (result.partial ? `(partial) ${result.output}` : result.output)
 * }
 * const research = asTool(researcher, options)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface AsToolOptions<A> {
  readonly name: string
  /** At least 30 characters, like every tool description. */
  readonly description: string
  /** Default false: the sub-agent's own tools carry their own flags. */
  readonly sideEffecting?: boolean | undefined
  /** Replaces the default rendering of the sub-run's result. */
  readonly render?: ((result: A) => string) | undefined
}

const parameters = {
  task: Schema.String.annotations({ description: "the sub-task / goal to run" })
}

/**
 * The default rendering of a sub-run's result: its `output` when that is a string, else the
 * result rendered like any tool result.
 *
 * @example
 * ```ts
 * import { renderRunResult } from "@agentkit/tools"
 *
 * renderRunResult({ output: "done", partial: false }) // "done"
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const renderRunResult = (result: unknown): string =>
  typeof result === "object" && result !== null && "output" in result && typeof result.output === "string"
    ? result.output
    : Tool.renderResult(result)

/**
 * Wraps a runnable into a tool with one `task` string parameter. The sub-run executes on
 * the call's `context.child("<name>#<callId>")` (so its run id is `<parentRunId>/<name>#<callId>`,
 * the same each time the parent's call is re-driven): budget, cancellation, depth and tracing
 * flow through. A depth overflow fails the call with `DepthExceeded` (the agent loop shows it to
 * the model); cost and call exhaustion, cancellation and a broken store end the whole run; any
 * other failure of the sub-run is a `ToolExecutionError`. The tool takes no concurrency permit of its own, so a sub-agent never
 * waits on a permit its parent holds.
 *
 * The tool's `caps` are the runnable's (`runnable.caps`: an agent's are the union of its tools'),
 * so the run policy sees what the sub-run can reach; a runnable that does not say counts as all
 * three legs (fail closed), both to the static check and, once it has run, as legs its sub-run
 * touched. A sub-run that suspends (a gated call and no approver, a call in
 * doubt) fails the call with its `RunSuspended`, passed through untouched: the calling loop
 * suspends the whole tree on it.
 *
 * @example
 * ```ts
 * import { asTool } from "@agentkit/tools"
 *
 * const research = asTool(researcher, {
 *   name: "research",
 *   description: "Delegate a research sub-task to the researcher agent."
 * })
 * research.schema.parameters
 * // { type: "object", properties: { task: { type: "string", description: "the sub-task / goal to run" } }, required: ["task"] }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const asTool = <A, E, R>(
  runnable: Runnable<A, E, R>,
  options: AsToolOptions<A>
): Tool.Tool<
  string,
  typeof parameters,
  string,
  BudgetExceeded | Cancelled | DepthExceeded | StoreError | Extract<E, { readonly _tag: "RunSuspended" }>,
  Exclude<R, RunContext>
> => {
  const render = options.render ?? renderRunResult
  return Tool.make(options.name as string, {
    description: options.description,
    parameters,
    sideEffecting: options.sideEffecting ?? false,
    delegating: true,
    caps: runnable.caps ?? capabilities,
    handler: ({ task }, { callId, context }) =>
      Effect.flatMap(context.child(`${options.name}#${callId ?? "direct"}`), (child) =>
        // a runnable whose tools cannot be seen may read anything: its run counts as all three legs
        (runnable.caps === undefined
          ? Effect.zipRight(Effect.sync(() => child.touch(capabilities)), runnable.run(task))
          : runnable.run(task)).pipe(
            Effect.provideService(RunContext, child),
            Effect.map(render),
            Effect.mapError((error: unknown) =>
              endsRun(error) || isDepthExceeded(error) || isSubRunSuspension(error)
                ? error
                : new ToolExecutionError({ toolName: options.name, cause: error })
            )
          ))
  }) as never
}
