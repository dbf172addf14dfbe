/**
 * The coordinator loop: one turn per child run, the child picked by a policy (round-robin, or the
 * model as a selector), under the shared lifecycle (checkpointed after every turn, so a crashed
 * run goes on from the turn it was in; a turn's child keeps its own record, so a finished child is
 * never run again). A child that suspends suspends the coordinator with the child's entries; the
 * root's resume records the decisions for the tree and the same turn re-drives the
 * same child (`<childName>#<turn>`), which goes on with them.
 *
 * Its effects on the outside world: the selector's model call (`select-<turn>`), the child runs
 * (`<childName>#<turn>`, on a child run context) and checkpoints. @internal
 */
import { Cancellation, Invoker, Message, RunContext, Tracing, Usage } from "@agentkit/core"
import { ToolRegistry } from "@agentkit/tools"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Agent from "../Agent.js"
import type { AgentResult } from "../AgentResult.js"
import type { AgentError, Cognition, Drive, Resume } from "../Cognition.js"
import { AgentDefinitionError } from "../Errors.js"
import { RunEngine } from "../RunEngine.js"
import type { Calls } from "../RunEngine.js"
import * as RunState from "../RunState.js"
import { outcome } from "./fanOut.js"
import { lazy } from "./lazy.js"
import * as Lifecycle from "./lifecycle.js"
import { validate } from "./react/decisions.js"
import { Run } from "./react/state.js"
import * as Recorded from "./runRecord.js"

/** The coordinator's part of the run state (`cognitionState`), versioned. */
export const StateV1 = Schema.Struct({
  version: Schema.Literal(1),
  policy: Schema.Literal("round_robin", "selector"),
  /** The turn in progress (or next). */
  turn: Schema.NonNegativeInt,
  /** The child picked for the turn in progress (kept, so a resumed or recovered turn re-drives it). */
  current: Schema.optional(Schema.Struct({ child: Schema.String, reason: Schema.String })),
  /** Every finished turn: which child, what it answered. */
  results: Schema.Array(Schema.Struct({ child: Schema.String, output: Schema.String })),
  /** What the finished turns' child runs spent (the tree's usage is the coordinator's own plus this). */
  childUsage: RunState.UsageState
})

export type State = Schema.Schema.Type<typeof StateV1>

const decodeState = lazy(() => Schema.decodeUnknownOption(StateV1))

export interface Turn {
  readonly turn: number
  readonly child: string
  readonly output: string
}

export interface Settings {
  readonly policy: State["policy"]
  readonly children: ReadonlyArray<Agent.Agent<unknown>>
  readonly maxTurns: number
  readonly stopWhen: ((turn: Turn) => boolean) | undefined
  readonly instructions: string | undefined
}

const policyName = (policy: State["policy"]) => (policy === "round_robin" ? "RoundRobinPolicy" : "SelectorPolicy")

/** The conversation so far as one task for the next child: the input, then every turn's answer. */
const render = (messages: ReadonlyArray<Message.Message>, results: State["results"]): string => {
  const input = messages.filter((message) => message.role !== "system")
  if (results.length === 0 && input.length === 1 && input[0]!.role === "user") return input[0]!.content
  const lines = input.map((message) => `${message.role}: ${message.content}`)
  for (const result of results) lines.push(`[${result.child}]: ${result.output}`)
  return lines.join("\n\n")
}

/** The children's tools, deduplicated by name: what the run policy sees of the coordinator. */
const toolsOf = (children: ReadonlyArray<Agent.Agent<unknown>>): ToolRegistry.ToolRegistry => {
  let registry: ToolRegistry.ToolRegistry = ToolRegistry.fromTools([])
  for (const child of children) {
    for (const tool of child.cognition.tools.tools()) {
      const known = Option.getOrUndefined(registry.getOption(tool.name))
      if (known === undefined || known !== tool) registry = registry.register(tool, { replace: true })
    }
  }
  return registry
}

const DONE = "DONE"

/** The tool call of the calls a selector passes to an engine: it makes none. */
const selectorRunsNoTool: Calls["runTool"] = (name) =>
  Effect.dieMessage(`a coordinator's selector runs no tool (asked for step ${name})`)

export const make = <R>(settings: Settings): Cognition<R> => {
  const { children, maxTurns, policy } = settings
  if (children.length === 0) {
    throw new AgentDefinitionError({ message: "Coordinator: children must name at least one agent" })
  }
  const byName = new Map<string, Agent.Agent<unknown>>()
  for (const child of children) {
    if (byName.has(child.name)) {
      throw new AgentDefinitionError({
        message: `Coordinator: two children are named '${child.name}'; child names must be unique`
      })
    }
    byName.set(child.name, child)
  }
  if (!Number.isInteger(maxTurns) || maxTurns < 1) {
    throw new AgentDefinitionError({
      message: `Coordinator: maxTurns must be a positive integer; got ${String(maxTurns)}`
    })
  }
  const names = children.map((child) => child.name)
  const tools = toolsOf(children)
  const check = validate(ToolRegistry.fromTools([]))

  /** Picks the child of a turn: by its index, or by asking the model (a name it does not know falls back to round-robin). */
  const choose = (agent: Drive["agent"], messages: ReadonlyArray<Message.Message>, state: State) =>
    Effect.gen(function*() {
      const index = state.turn % children.length
      if (policy === "round_robin") return { child: names[index]!, reason: `round-robin index ${index}` }
      const invoker = yield* Invoker
      const system = [
        agent.prompt,
        settings.instructions ?? "",
        `You coordinate these agents: ${
          names.join(", ")
        }. Reply with the name of the one that should act next, and nothing else; reply ${DONE} when the task is complete.`
      ]
        .filter((part) => part !== "")
        .join("\n\n")
      const request = {
        model: agent.model,
        messages: [Message.system(system), Message.user(render(messages, state.results))],
        tools: []
      }
      // the selector's model call is a named step (`select-<turn>`): another engine may journal it
      const hook = yield* Effect.serviceOption(RunEngine)
      const response = yield* hook._tag === "None"
        ? invoker.chat(request)
        : hook.value.wrap({ callModel: (_name, asked) => invoker.chat(asked), runTool: selectorRunsNoTool }).callModel(
          `select-${state.turn}`,
          request
        )
      const reply = response.content.trim()
      if (reply === DONE) return { child: DONE, reason: `selector returned '${DONE}'`, usage: response.usage }
      if (byName.has(reply)) return { child: reply, reason: `selector returned '${reply}'`, usage: response.usage }
      return {
        child: names[index]!,
        reason: `selector returned '${reply.slice(0, 64)}'; fallback round-robin index ${index}`,
        usage: response.usage
      }
    })

  const program = (drive: Pick<Drive, "agent" | "messages">): Lifecycle.Program<AgentError, RunContext | Invoker> => ({
    agent: drive.agent.name,
    cognition: "coordinator",
    fresh: (context) => {
      const run = new Run(drive.agent.name, [...drive.messages])
      run.cognitionState = initial
      return run.toState(context, "coordinator")
    },
    body: (start) =>
      Effect.contextWithEffect((env: Context.Context<RunContext>) => {
        const context = Context.get(env, RunContext)
        const run = start.state === undefined
          ? new Run(drive.agent.name, [...drive.messages])
          : Run.fromState(start.state)
        const saved = decodeState(run.cognitionState)
        let state: State = Option.getOrElse(saved, () => initial)
        // the task is the input conversation: the messages before the first turn's answer
        const input = run.transcript.slice(0, run.transcript.length - state.results.length)
        const save = (status: "running" | "suspended") =>
          start.durable === undefined
            ? Effect.void
            : start.durable.checkpoint(status, () => {
              run.cognitionState = state
              run.iteration = state.turn
              return run.toState(context, "coordinator")
            })
        const finish = (stopReason: AgentResult["stopReason"]): AgentResult => ({
          output: state.results.at(-1)?.output ?? "",
          usage: Usage.add(run.usage, Recorded.usageOf(state.childUsage)),
          // its own: the selector's model calls (its children's are theirs)
          ownUsage: run.usage,
          partial: false,
          stopReason,
          transcript: run.transcript.slice()
        })
        const loop: Effect.Effect<AgentResult, AgentError, RunContext | Invoker> = Effect.gen(function*() {
          while (state.turn < maxTurns) {
            yield* Cancellation.check(context.cancellation)
            let pick = state.current
            if (pick === undefined) {
              const chosen = yield* choose(drive.agent, input, state)
              if ("usage" in chosen && chosen.usage !== undefined) run.usage = Usage.add(run.usage, chosen.usage)
              if (chosen.child === DONE) {
                yield* save("running")
                return finish("completed")
              }
              pick = { child: chosen.child, reason: chosen.reason }
              state = { ...state, current: pick }
              // the model's pick is saved before the child runs: a resumed or recovered turn does not ask again
              if (policy === "selector") yield* save("running")
            }
            yield* Tracing.addEvent(Tracing.EventName.policyDispatch, {
              [Tracing.EventAttribute.policy]: policyName(policy),
              [Tracing.EventAttribute.selectedChild]: pick.child,
              [Tracing.EventAttribute.selectionReason]: pick.reason
            })
            const child = byName.get(pick.child)!
            const childContext = yield* context.child(`${child.name}#${state.turn}`)
            const ran = yield* outcome(
              child.run(render(input, state.results)).pipe(
                Effect.provideService(RunContext, childContext)
              ) as Effect.Effect<
                AgentResult,
                AgentError,
                Invoker
              >
            )
            if (ran._tag === "Waiting") {
              run.phase = "suspended"
              run.pending = ran.pending
              yield* save("suspended")
              return {
                ...finish("awaiting_approval"),
                partial: true,
                suspended: { _tag: "Suspended" as const, runId: context.runId, pending: ran.pending }
              }
            }
            run.phase = "model"
            run.pending = []
            run.transcript.push(Message.assistant(ran.value.output))
            state = {
              ...state,
              turn: state.turn + 1,
              current: undefined,
              results: [...state.results, { child: child.name, output: ran.value.output }],
              childUsage: Recorded.usageState(Usage.add(Recorded.usageOf(state.childUsage), ran.value.usage))
            }
            const stop =
              settings.stopWhen?.({ turn: state.turn - 1, child: child.name, output: ran.value.output }) === true
            yield* save("running")
            if (stop) return finish("completed")
          }
          return finish("max_turns")
        })
        return loop
      })
  })

  const initial: State = { version: 1, policy, turn: 0, results: [], childUsage: Recorded.usageState(Usage.zero) }

  const drive = ({ agent, messages }: Drive) =>
    Effect.annotateCurrentSpan({
      [Tracing.Attribute.isCoordinator]: true,
      [Tracing.Attribute.coordinatorPolicy]: policyName(policy)
    }).pipe(
      Effect.zipRight(Lifecycle.drive(program({ agent, messages })))
    )

  const resume = ({ agent, decisions, runId }: Resume) =>
    Lifecycle.resume(program({ agent, messages: [] }), runId, decisions, check)

  return { name: "coordinator", tools, drive, resume } as Cognition<R>
}
