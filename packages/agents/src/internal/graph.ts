/**
 * The graph loop: waves of ready nodes (every `after` node finished), run concurrently (at most
 * the tree's `maxConcurrency` at once, each on `context.child(<nodeId>)`, the first failure
 * interrupting the others), each node's output recorded as it lands, checkpointed after every
 * wave. A human gate that has no decision, or a node whose sub-run waits, suspends the graph with
 * every entry of the wave (a gate's entry has kind `Gate`, its digest bound to the node and its
 * inputs); the root's resume publishes the decisions, and the next drive re-runs the nodes that
 * have no output: a gate reads its decision, a sub-run goes on with its own. A rejected gate's
 * dependents are skipped. Stop reasons: `complete`, `suspended`, `max_steps` (more node runs than
 * `maxSteps`), `deadlock` (nodes left, none ready: a cycle of `after`).
 *
 * A tool node passes the gate the ReAct loop uses (`gate.ts`): the dynamic trifecta check on the
 * tree's legs and the tool's caps, `requiresApproval`, the autonomy tier. A denied node's output
 * is the denial; a node that waits asks the in-process approver when there is one, else suspends
 * the graph with its entry (kind `Approval`, or `Gate` for the trifecta alone, bound to the call);
 * an approve or edit runs it (the digest recomputed, an edit validated), a reject's output is the
 * rejection. Denials and rejections are audited.
 *
 * Its effects on the outside world: the node runs (`<nodeId>` child runs; a tool node through
 * the Invoker's tool pipeline) and checkpoints. @internal
 */
import {
  approvalDeniedText,
  Cancellation,
  CanonicalJson,
  endsRun,
  Invoker,
  Message,
  RunContext,
  ToolDenied,
  toolFailureText,
  Usage
} from "@agentkit/core"
import type { ToolCall } from "@agentkit/core"
import { ToolRegistry } from "@agentkit/tools"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { AgentResult } from "../AgentResult.js"
import * as Approval from "../Approval.js"
import type { AgentError } from "../Cognition.js"
import { InvalidDecision, trifectaReason } from "../Errors.js"
import type { RunPolicy } from "../RunPolicy.js"
import * as RunState from "../RunState.js"
import * as Audit from "./audit.js"
import { fanOut, type Outcome, outcome } from "./fanOut.js"
import * as Gate from "./gate.js"
import * as Guardrails from "./guardrails.js"
import { lazy } from "./lazy.js"
import type * as Lifecycle from "./lifecycle.js"
import { validate } from "./react/decisions.js"
import { Run } from "./react/state.js"
import * as Recorded from "./runRecord.js"
import * as Trifecta from "./trifecta.js"

/** What a node is given: the graph's task and the outputs of its `after` nodes. */
export interface Inputs {
  readonly task: string
  readonly outputs: Readonly<Record<string, string>>
}

/** The result of a graph run. */
export interface GraphResult extends Omit<AgentResult, "stopReason"> {
  readonly stopReason: "complete" | "suspended" | "max_steps" | "deadlock"
  /** Every finished node's output, by node id. */
  readonly outputs: Readonly<Record<string, string>>
}

/** Something a node runs as a sub-run: an agent or a graph. */
export interface Runnable<E, R> {
  readonly name: string
  readonly run: (task: string) => Effect.Effect<AgentResult | GraphResult, E, R | RunContext | Invoker>
}

export type Node<E, R> =
  | {
    readonly _tag: "Agent"
    readonly after: ReadonlyArray<string>
    readonly runnable: Runnable<E, R>
    readonly input: (inputs: Inputs) => string
  }
  | {
    readonly _tag: "Fn"
    readonly after: ReadonlyArray<string>
    readonly run: (inputs: Inputs) => Effect.Effect<string, E, R>
  }
  | {
    readonly _tag: "Tool"
    readonly after: ReadonlyArray<string>
    readonly tool: ToolRegistry.AnyTool
    readonly args: (inputs: Inputs) => Readonly<Record<string, unknown>>
  }
  | { readonly _tag: "Gate"; readonly after: ReadonlyArray<string> }

/** The graph's part of the run state (`cognitionState`), versioned. */
export const StateV1 = Schema.Struct({
  version: Schema.Literal(1),
  /** Every finished node's output, by node id. */
  outputs: Schema.Record({ key: Schema.String, value: Schema.String }),
  /** Node ids in the order they finished. */
  order: Schema.Array(Schema.String),
  /** Gates a person rejected (their dependents are skipped). */
  rejected: Schema.Array(Schema.String),
  /** How many node runs so far. */
  steps: Schema.NonNegativeInt,
  /** What the finished nodes' sub-runs spent. */
  usage: RunState.UsageState
})

type State = Schema.Schema.Type<typeof StateV1>

const decodeState = lazy(() => Schema.decodeUnknownOption(StateV1))

/** The pseudo tool a gate's entry names: its fingerprint binds the entry to the gate's shape. */
const gateTool = {
  name: "human_gate",
  schema: {
    parameters: {
      type: "object",
      properties: { node: { type: "string" }, task: { type: "string" }, inputs: { type: "object" } },
      required: ["node", "task", "inputs"]
    }
  },
  sideEffecting: false,
  idempotent: true,
  requiresApproval: true,
  caps: []
} as const

/** `k: v` lines, in the order the nodes finished: how a graph's outputs read as one text. */
export const renderOutputs = (outputs: Readonly<Record<string, string>>, order: ReadonlyArray<string>): string =>
  order.filter((id) => Object.hasOwn(outputs, id)).map((id) => `${id}: ${outputs[id]}`).join("\n")

export interface Settings<E, R> {
  readonly name: string
  readonly nodes: ReadonlyMap<string, Node<E, R>>
  readonly maxSteps: number
  /** The run policy a tool node's calls are checked against. */
  readonly policy: RunPolicy
}

type NodeOutcome = Outcome<{ readonly output: string; readonly usage: Usage.Usage }> | {
  readonly _tag: "Rejected"
  readonly output: string
}

/**
 * The entries a resume may decide: the graph's own gates accept approve or reject only; an edit
 * of a tool node's call is validated against its tool like the model's arguments.
 */
const checkDecisions =
  (registry: ToolRegistry.ToolRegistry) => (state: RunState.RunState, raw: Readonly<Record<string, unknown>>) =>
    Effect.gen(function*() {
      for (const entry of state.pending) {
        if (
          entry.path !== state.runId || entry.kind !== "Gate" || entry.call.name !== gateTool.name ||
          !Object.hasOwn(raw, entry.id)
        ) continue
        const given = raw[entry.id]
        const verdict = typeof given === "object" && given !== null
          ? (given as { readonly verdict?: unknown }).verdict
          : undefined
        if (verdict !== "approve" && verdict !== "reject") {
          const text = CanonicalJson.stringify(given ?? null)
          return yield* new InvalidDecision({
            runId: state.runId,
            pendingId: entry.id,
            kind: "Gate",
            accepted: ["approve", "reject"],
            received: text.length > 200 ? `${text.slice(0, 200)}…` : text
          })
        }
      }
      return yield* validate(registry)(state, raw)
    })

/** The tools of a graph's tool nodes (the first of a name), for validating an edit of one of their calls. */
const toolsOf = <E, R>(nodes: ReadonlyMap<string, Node<E, R>>): ToolRegistry.ToolRegistry => {
  const tools = new Map<string, ToolRegistry.AnyTool>()
  for (const node of nodes.values()) {
    if (node._tag === "Tool" && !tools.has(node.tool.name)) tools.set(node.tool.name, node.tool)
  }
  return ToolRegistry.fromTools([...tools.values()])
}

export const program = <E, R>(
  settings: Settings<E, R>,
  task: string
): Lifecycle.Program<E | AgentError, R | RunContext | Invoker> => {
  const { maxSteps, name, nodes, policy } = settings
  const ids = Array.from(nodes.keys())
  // each tool node's tool as a registry of one: what the trifecta projection reads
  const registries = new Map<string, ToolRegistry.ToolRegistry>()
  for (const [id, node] of nodes) if (node._tag === "Tool") registries.set(id, ToolRegistry.fromTools([node.tool]))
  const initial: State = {
    version: 1,
    outputs: {},
    order: [],
    rejected: [],
    steps: 0,
    usage: Recorded.usageState(Usage.zero)
  }
  return {
    agent: name,
    cognition: "graph",
    fresh: (context) => {
      const run = new Run(name, [Message.user(task)])
      run.cognitionState = initial
      return run.toState(context, "graph")
    },
    body: (start) =>
      Effect.contextWithEffect((env: Context.Context<RunContext>) => {
        const context = Context.get(env, RunContext)
        const run = start.state === undefined ? new Run(name, [Message.user(task)]) : Run.fromState(start.state)
        const theTask = run.transcript[0]?.content ?? task
        let state: State = Option.getOrElse(decodeState(run.cognitionState), () => initial)
        const decisions = start.decisions
        const save = (status: "running" | "suspended") =>
          start.durable === undefined
            ? Effect.void
            : start.durable.checkpoint(status, () => {
              run.cognitionState = state
              run.iteration = state.steps
              return run.toState(context, "graph")
            })
        const result = (
          stopReason: GraphResult["stopReason"],
          pending?: ReadonlyArray<Approval.PendingEntry>
        ): GraphResult => {
          const output = renderOutputs(state.outputs, state.order)
          return {
            output,
            outputs: { ...state.outputs },
            usage: Recorded.usageOf(state.usage),
            // a graph calls no model itself: every cost is its nodes'
            ownUsage: Usage.zero,
            partial: stopReason !== "complete",
            stopReason,
            transcript: [...run.transcript, Message.assistant(output)],
            ...(pending === undefined
              ? {}
              : { suspended: { _tag: "Suspended" as const, runId: context.runId, pending } })
          }
        }
        const inputsOf = (node: Node<E, R>): Inputs => {
          const outputs: Record<string, string> = {}
          for (const id of node.after) outputs[id] = state.outputs[id]!
          return { task: theTask, outputs }
        }
        const skipped = (id: string, seen: Set<string> = new Set()): boolean => {
          if (state.rejected.includes(id)) return true
          if (seen.has(id)) return false
          seen.add(id)
          return nodes.get(id)!.after.some((dep) => skipped(dep, seen))
        }
        const gateEntry = (id: string, node: Node<E, R>, createdAt: number) =>
          Approval.makeEntry({
            kind: "Gate",
            path: context.runId,
            iteration: 0,
            index: ids.indexOf(id),
            call: { id, name: gateTool.name, arguments: { node: id, task: theTask, inputs: inputsOf(node).outputs } },
            tool: gateTool,
            reasons: ["gate"],
            createdAt
          })

        /** Runs one node on its child context (provided by the fan-out). */
        const runNode = (id: string): Effect.Effect<NodeOutcome, E | AgentError, R | RunContext | Invoker> => {
          const node = nodes.get(id)!
          switch (node._tag) {
            case "Gate":
              return Effect.flatMap(Clock.currentTimeMillis, (createdAt): Effect.Effect<NodeOutcome> => {
                const entry = gateEntry(id, node, createdAt)
                const decision = decisions?.get(entry.id)
                if (decision === undefined) return Effect.succeed({ _tag: "Waiting" as const, pending: [entry] })
                if (decision.verdict === "approve" && decision.digest === entry.digest) {
                  return Effect.succeed({ _tag: "Done" as const, value: { output: "approved", usage: Usage.zero } })
                }
                const reason = decision.verdict === "reject" && decision.reason !== undefined
                  ? `: ${decision.reason}`
                  : ""
                return Effect.succeed({ _tag: "Rejected" as const, output: `rejected${reason}` })
              })
            case "Agent":
              return Effect.map(outcome(node.runnable.run(node.input(inputsOf(node)))), (ran) =>
                ran._tag === "Waiting"
                  ? ran
                  : { _tag: "Done" as const, value: { output: ran.value.output, usage: ran.value.usage } })
            case "Fn":
              return Effect.map(
                outcome(Effect.map(node.run(inputsOf(node)), (output) => ({ output, usage: Usage.zero }))),
                (ran) => ran
              )
            case "Tool":
              return toolNode(id, node)
          }
        }

        /** A tool node through the gate: denied, waiting (or asking the approver), or run as decided. */
        const toolNode = (
          id: string,
          node: Extract<Node<E, R>, { readonly _tag: "Tool" }>
        ): Effect.Effect<NodeOutcome, AgentError, RunContext | Invoker> =>
          Effect.gen(function*() {
            const tool = node.tool
            const call: ToolCall.ToolCall = {
              id: `${context.runId}/${id}`,
              name: tool.name,
              arguments: node.args(inputsOf(node)) as Record<string, unknown>
            }
            const done = (output: string): NodeOutcome => ({ _tag: "Done", value: { output, usage: Usage.zero } })
            const branch = yield* RunContext
            const projected = Trifecta.project(branch, registries.get(id)!, [call])
            const verdict = yield* Gate.verdict(tool, call, context, policy, projected)
            if (verdict._tag === "Deny") {
              const content = toolFailureText(
                tool.name,
                new ToolDenied({ toolName: tool.name, reason: "policy", message: trifectaReason })
              )
              yield* Trifecta.checkSpan(context, policy, tool, projected, "deny")
              yield* Audit.record(context, call, {
                decision: "denied",
                text: content,
                denial: { reason: "policy", message: trifectaReason }
              })
              return done(content)
            }
            if (verdict._tag === "Run") return done(yield* runTool(tool, call, undefined, projected))
            if (verdict.reasons.includes("trifecta")) {
              yield* Trifecta.checkSpan(context, policy, tool, projected, "gate")
            }
            const entry = Approval.makeEntry({
              kind: Gate.kindOf(verdict.reasons),
              path: context.runId,
              iteration: 0,
              index: ids.indexOf(id),
              call,
              tool,
              reasons: verdict.reasons,
              createdAt: yield* Clock.currentTimeMillis
            })
            let decision = decisions?.get(entry.id)
            if (decision === undefined) {
              const approver = yield* Effect.serviceOption(Approval.Approver)
              if (Option.isNone(approver)) return { _tag: "Waiting" as const, pending: [entry] }
              const answers = yield* approver.value.decide({
                runId: context.runId,
                agent: name,
                pending: [structuredClone(entry)]
              })
              decision = (yield* Gate.approverAnswers([entry], answers))(entry)
            }
            const rejected = (reason: string | undefined) => {
              const content = approvalDeniedText(reason)
              return Effect.as(
                Audit.record(context, call, {
                  decision: "denied",
                  text: content,
                  by: decision!.by,
                  reason,
                  denial: { reason: "approval", message: content }
                }),
                done(content)
              )
            }
            if (decision.verdict !== "approve" && decision.verdict !== "edit") {
              return yield* rejected(decision.reason)
            }
            const admitted = yield* Gate.admit(entry, decision, tool)
            if (admitted._tag === "Reject") return yield* rejected(admitted.reason)
            return done(yield* runTool(tool, admitted.call, decision.by, projected))
          })

        /** Runs an admitted call: it touches its tool's legs, and its text is shown as the policy says. */
        const runTool = (
          tool: ToolRegistry.AnyTool,
          call: ToolCall.ToolCall,
          decidedBy: string | undefined,
          projected: Trifecta.Legs | undefined
        ): Effect.Effect<string, AgentError, RunContext | Invoker> =>
          Effect.gen(function*() {
            const invoker = yield* Invoker
            yield* Trifecta.checkSpan(context, policy, tool, projected, "allow")
            const branch = yield* RunContext
            if (tool.caps.length > 0) branch.touch(tool.caps)
            const ran = yield* Effect.either(
              invoker.tool(call, tool, decidedBy === undefined ? undefined : { meta: { decidedBy } })
            )
            const legs = Trifecta.capsOf(tool)
            if (ran._tag === "Right") return Trifecta.shownOutput(policy, tool.name, ran.right.text, legs)
            if (endsRun(ran.left) || Guardrails.endsRun(ran.left)) return yield* Effect.fail(ran.left as AgentError)
            return Trifecta.shownFailure(policy, tool.name, ran.left, legs)
          })

        const loop: Effect.Effect<GraphResult, E | AgentError, R | RunContext | Invoker> = Effect.gen(function*() {
          while (true) {
            yield* Cancellation.check(context.cancellation)
            const open = ids.filter((id) => !Object.hasOwn(state.outputs, id) && !skipped(id))
            if (open.length === 0) return result("complete")
            const ready = open.filter((id) =>
              nodes.get(id)!.after.every((dep) => Object.hasOwn(state.outputs, dep) && !state.rejected.includes(dep))
            )
            if (ready.length === 0) return result("deadlock")
            if (state.steps >= maxSteps) return result("max_steps")
            const wave = ready.slice(0, maxSteps - state.steps)
            const waiting: Array<Approval.PendingEntry> = []
            yield* fanOut(context, wave, (id) => id, (id) =>
              Effect.tap(runNode(id), (ran) =>
                Effect.sync(() => {
                  if (ran._tag === "Waiting") {
                    for (const entry of ran.pending) waiting.push(entry)
                    return
                  }
                  const output = ran._tag === "Rejected" ? ran.output : ran.value.output
                  state = {
                    ...state,
                    outputs: { ...state.outputs, [id]: output },
                    order: [...state.order, id],
                    rejected: ran._tag === "Rejected" ? [...state.rejected, id] : state.rejected,
                    steps: state.steps + 1,
                    usage: ran._tag === "Done"
                      ? Recorded.usageState(Usage.add(Recorded.usageOf(state.usage), ran.value.usage))
                      : state.usage
                  }
                })))
            if (waiting.length > 0) {
              run.phase = "suspended"
              run.pending = waiting
              yield* save("suspended")
              return result("suspended", waiting)
            }
            run.phase = "model"
            run.pending = []
            yield* save("running")
          }
        })
        return loop as unknown as Effect.Effect<AgentResult, E | AgentError, R | RunContext | Invoker>
      }) as Effect.Effect<AgentResult, E | AgentError, R | RunContext | Invoker>
  }
}

/** The resume check of a graph's decisions (its gates', and edits of its tool nodes' calls). */
export const check = <E, R>(settings: Settings<E, R>) => checkDecisions(toolsOf(settings.nodes))
