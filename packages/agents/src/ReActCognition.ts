/**
 * The ReAct loop: ask the model, run the tool calls it asks for, hand the results back, repeat
 * until the model answers without tool calls or the iterations run out. It is also where the
 * approval gate and the dynamic lethal-trifecta check live. The loop is a step function over the
 * run's state (`internal/react/step.ts`), its effects go through an engine port
 * (`internal/react/engine.ts`), and under a checkpoint store its lifecycle (create, take over,
 * finish, resume) is `internal/lifecycle.ts`, shared by every cognition.
 *
 * @since 0.1.0
 */
import { RunContext } from "@agentkit/core"
import type { Invoker, Message } from "@agentkit/core"
import { ToolRegistry } from "@agentkit/tools"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as AgentEvent from "./AgentEvent.js"
import type { AgentError, Cognition, Drive, Resume } from "./Cognition.js"
import { AgentDefinitionError } from "./Errors.js"
import { compactor } from "./internal/compaction.js"
import * as Lifecycle from "./internal/lifecycle.js"
import { check as checkCognitionState } from "./internal/react/cognitionState.js"
import { validate } from "./internal/react/decisions.js"
import { inProcess, withCalls, withCompaction } from "./internal/react/engine.js"
import { Run } from "./internal/react/state.js"
import * as Step from "./internal/react/step.js"
import { RunEngine } from "./RunEngine.js"
import * as StructuredOutput from "./StructuredOutput.js"
import * as Termination from "./Termination.js"

/**
 * The options of `ReActCognition.make`.
 *
 * @example
 * ```ts
 * import { ReActCognition } from "@agentkit/agents"
 * import { ToolRegistry } from "@agentkit/tools"
 *
 * const options: ReActCognition.Options<typeof lookupOrder> = { tools: ToolRegistry.fromTools([lookupOrder]), maxIterations: 4 }
 * const cognition = ReActCognition.make(options)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<T extends ToolRegistry.AnyTool> {
  /** A list of tools (registered in order; a duplicate name throws) or a registry. */
  readonly tools: ReadonlyArray<T> | ToolRegistry.ToolRegistry<T>
  /** How many model calls a run may make (default 8). */
  readonly maxIterations?: number | undefined
  /**
   * When the loop stops on its own, before a turn's tools run (`Termination`): on a call of a
   * named tool, a text mention, a token ceiling, a number of turns, or a combination.
   */
  readonly termination?: Termination.Termination | undefined
}

/**
 * Makes a ReAct cognition. Each iteration checks cancellation, sends the transcript with the
 * registry's sorted schemas through the Invoker's chat pipeline (text deltas are passed on as
 * they arrive), and runs the turn's tool calls concurrently through the tool pipeline (bounded
 * by the run's concurrency limit, results kept in call order). Errors the model can fix come back
 * to it as `isError` tool results; budget exhaustion, cancellation and a broken store end the
 * run; a defect is never shown to the model.
 *
 * If any call of a turn needs approval (the tool `requiresApproval`; autonomy `gated` and the
 * tool is side-effecting; autonomy `manual`; or the call would complete the lethal trifecta and
 * the policy gates it), no call of the turn runs: an `Approver`, when one is provided, is asked
 * in-process; otherwise the run suspends (`stopReason: "awaiting_approval"`) with pending entries,
 * and `agent.resume(runId, decisions)` continues it from a `CheckpointStore`. With an
 * `ExecutionLedger`, a side-effecting call found claimed and never completed (its process died
 * mid-call) suspends the run with an `InDoubt` entry instead of running again.
 *
 * @example
 * ```ts
 * import { Agent, ReActCognition } from "@agentkit/agents"
 *
 * const agent = Agent.make({
 *   name: "support",
 *   model: "claude-sonnet-4-6",
 *   prompt: "Answer order questions. Use the tools; never guess a status.",
 *   cognition: ReActCognition.make({ tools: [lookupOrder, cancelOrder] })
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <const T extends ToolRegistry.AnyTool>(
  options: Options<T>
): Cognition<ToolRegistry.Requirements<T>> => {
  const registry: ToolRegistry.ToolRegistry = ToolRegistry.isToolRegistry(options.tools)
    ? options.tools
    : ToolRegistry.fromTools(options.tools as ReadonlyArray<T>)
  const maxIterations = options.maxIterations ?? 8
  if (!Number.isInteger(maxIterations) || maxIterations < 1) {
    throw new AgentDefinitionError({
      message: `ReActCognition: maxIterations must be a positive integer; got ${String(options.maxIterations)}`
    })
  }
  const termination = options.termination
  if (termination !== undefined) {
    if (!Termination.isTermination(termination)) {
      throw new AgentDefinitionError({
        message: "ReActCognition: termination must be a Termination condition (e.g. Termination.textMention(\"DONE\"))"
      })
    }
    for (const name of Termination.functionNames(termination)) {
      if (Option.isNone(registry.getOption(name))) {
        throw new AgentDefinitionError({
          message: `ReActCognition: termination stops on a call of '${name}', which is not one of its tools (${
            registry.names().join(", ") || "none"
          })`
        })
      }
    }
  }
  const schemas = registry.schemas()
  const names = registry.names()
  const check = validate(registry)

  /** The lifecycle's view of one run of this cognition. */
  const program = (
    loop: Step.Loop,
    messages: ReadonlyArray<Message.Message>
  ): Lifecycle.Program<AgentError, RunContext | Invoker> => {
    // with structured output, the model is told the shape by a schema block after the prompt
    const first = () =>
      new Run(
        loop.agent.name,
        loop.output === undefined ? [...messages] : StructuredOutput.withSchemaBlock(messages, loop.output)
      )
    // the run, from a step running on `fiber`: its services read from the fiber's context
    const body = (start: Lifecycle.Start, fiber: Fiber.RuntimeFiber<unknown, unknown>) => {
      const env = fiber.currentContext as Context.Context<RunContext | Invoker>
      const state = start.state === undefined ? first() : Run.fromState(start.state)
      const local = inProcess(state, start.durable, env, "react")
      const hook = Context.getOption(env as Context.Context<never>, RunEngine)
      const engine = hook._tag === "None" ? local : withCalls(local, hook.value.wrap)
      const context = Context.get(env, RunContext)
      const compact = compactor(
        env as Context.Context<never>,
        context,
        (name, request) => engine.callModel(name, request, undefined)
      )
      return Step.run(
        loop,
        state,
        compact === undefined ? engine : withCompaction(engine, compact),
        context,
        start.decisions
      )
    }
    return {
      agent: loop.agent.name,
      cognition: "react",
      output: loop.output,
      checkState: (state) =>
        Either.getLeft(checkCognitionState(state.runId, state.cognitionState)).pipe(Option.getOrUndefined),
      fresh: (context) => first().toState(context, "react"),
      body: (
        start,
        fiber
      ) => (fiber === undefined ? Effect.withFiberRuntime((fiber) => body(start, fiber)) : body(start, fiber))
    }
  }

  // A run without an event sink gets the loop of the last such run of the same agent (it holds
  // nothing of a run's own): one object fewer per run.
  let shared: Step.Loop | undefined
  const loopOf = (
    agent: Drive["agent"],
    policy: Drive["policy"],
    emit: Drive["emit"],
    output: Drive["output"]
  ): Step.Loop => {
    if (emit !== undefined) return makeLoop(agent, policy, emit, output)
    if (shared === undefined || shared.agent !== agent || shared.policy !== policy || shared.output !== output) {
      shared = makeLoop(agent, policy, undefined, output)
    }
    return shared
  }

  const makeLoop = (
    agent: Drive["agent"],
    policy: Drive["policy"],
    emit: Drive["emit"],
    output: Drive["output"]
  ): Step.Loop => ({
    agent,
    registry,
    schemas,
    names,
    maxIterations,
    policy,
    emit,
    onDelta: emit === undefined ? undefined : (delta) => emit(AgentEvent.MessageDelta(delta)),
    termination,
    output
  })

  // built when called (the agent calls it in the step that starts the run): a run of it makes
  // its own state when it starts, so the effect can be run again
  const drive = ({ agent, emit, messages, output, policy }: Drive) =>
    Lifecycle.drive(program(loopOf(agent, policy, emit, output), messages))

  const resume = ({ agent, decisions, emit, output, policy, runId }: Resume) =>
    Lifecycle.resume(program(loopOf(agent, policy, emit, output), []), runId, decisions, check)

  return { name: "react", tools: registry, drive, resume } as Cognition<ToolRegistry.Requirements<T>>
}
