/**
 * A graph of nodes (the seed's "Workflow", named `Graph` to stay clear of `@effect/workflow`):
 * agents (coordinators included: an agent whose cognition is a coordinator), functions, tools,
 * human gates and sub-graphs, wired by `after` dependencies. Ready nodes run concurrently in
 * waves; a human gate suspends the graph durably with a pending entry of kind `Gate`, decided
 * with the same decisions and `resume` as any run.
 *
 * @since 0.1.0
 */
import { capabilities as allCaps, RunContext, Tracing } from "@agentkit/core"
import type { Cancelled, Capability, Invoker } from "@agentkit/core"
import type { ToolRegistry } from "@agentkit/tools"
import * as Effect from "effect/Effect"
import { type Pipeable, pipeArguments } from "effect/Pipeable"
import type * as Agent from "./Agent.js"
import type * as Approval from "./Approval.js"
import type { AgentError, ResumeError } from "./Cognition.js"
import { AgentDefinitionError } from "./Errors.js"
import type * as Guardrail from "./Guardrail.js"
import type { GuardrailTripped } from "./Guardrail.js"
import * as internal from "./internal/graph.js"
import * as Guardrails from "./internal/guardrails.js"
import * as Lifecycle from "./internal/lifecycle.js"
import * as Trifecta from "./internal/trifecta.js"
import * as RunPolicy from "./RunPolicy.js"

/**
 * What a node is given: the graph's task and the outputs of its `after` nodes, by node id.
 *
 * @example
 * ```ts
 * import type { Graph } from "@agentkit/agents"
 *
 * const brief = (inputs: Graph.Inputs) => `${inputs.task}\n\nResearch:\n${inputs.outputs["research"]}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Inputs = internal.Inputs

/**
 * The result of a graph run: `output` is every finished node's output as `id: output` lines (in
 * the order they finished; how `asTool` shows a graph to a model), `outputs` the same by node id.
 * Stop reasons: `complete`, `suspended` (waiting on `suspended.pending`), `max_steps`, `deadlock`.
 *
 * @example
 * ```ts
 * import type { Graph } from "@agentkit/agents"
 *
 * const summary = (result: Graph.GraphResult) => `${result.stopReason}: ${Object.keys(result.outputs).join(", ")}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type GraphResult = internal.GraphResult

/**
 * A node of a graph (made by `Graph.agent`, `Graph.fn`, `Graph.tool`, `Graph.gate`,
 * `Graph.graph`). `E` and `R` are what running it can fail with and needs.
 *
 * @example
 * ```ts
 * import { Graph } from "@agentkit/agents"
 *
 * const review: Graph.Node = Graph.gate({ after: ["draft"] })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Node<out E = never, out R = never> {
  readonly _tag: "Agent" | "Fn" | "Tool" | "Gate"
  readonly after: ReadonlyArray<string>
  /** The trifecta caps of everything it can reach. */
  readonly caps: ReadonlyArray<Capability>
  /** @internal */
  readonly node: internal.Node<E, R>
}

/**
 * A graph value: run it, resume it, or wrap it with `asTool`.
 *
 * @example
 * ```ts
 * import type { Graph } from "@agentkit/agents"
 * import { Effect } from "effect"
 *
 * const outputs = <E, R>(graph: Graph.Graph<E, R>, task: string) => Effect.map(graph.run(task), (result) => result.outputs)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Graph<out E = never, out R = never> extends Pipeable {
  readonly name: string
  /** Node ids, in declaration order. */
  readonly nodeIds: ReadonlyArray<string>
  /**
   * The trifecta caps of everything the graph can reach (its agents' tools, its tools, its
   * sub-graphs'; a function node counts as all three unless it declares its caps): what
   * `asTool` tells the run policy.
   */
  readonly caps: ReadonlyArray<Capability>
  /** Runs the graph on a task. */
  run(task: string): Effect.Effect<GraphResult, AgentError | E, RunContext | Invoker | R>
  /** Continues a suspended graph with decisions, by pending id (its gates' and its sub-runs' entries). */
  resume(
    runId: string,
    decisions: Approval.Decisions
  ): Effect.Effect<GraphResult, ResumeError | E, RunContext | Invoker | R>
}

/**
 * The options of a node: the nodes it runs after (their outputs are its inputs).
 *
 * @example
 * ```ts
 * import type { Graph } from "@agentkit/agents"
 *
 * const options: Graph.NodeOptions = { after: ["research", "policy"] }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface NodeOptions {
  readonly after?: ReadonlyArray<string> | undefined
}

const NAME = /^[a-zA-Z0-9_-]{1,64}$/

const fail = (message: string): never => {
  throw new AgentDefinitionError({ message })
}

const afterOf = (options: NodeOptions | undefined): ReadonlyArray<string> => {
  const after = options?.after ?? []
  if (!Array.isArray(after) || !after.every((id) => typeof id === "string")) {
    fail("Graph: `after` must be a list of node ids")
  }
  return [...after]
}

/** The default input of an agent or sub-graph node: the task, then its inputs as `id: output` lines. */
const defaultInput = (inputs: Inputs): string => {
  const ids = Object.keys(inputs.outputs)
  return ids.length === 0
    ? inputs.task
    : `${inputs.task}\n\n${ids.map((id) => `${id}: ${inputs.outputs[id]}`).join("\n")}`
}

/**
 * A node that runs an agent (a coordinator too) on its own child run (`<graphRunId>/<nodeId>`).
 * Its input is the task, then its `after` nodes' outputs as `id: output` lines, unless `input`
 * builds it; its output is the agent's `output`. A gated call in it suspends the graph.
 *
 * @example
 * ```ts
 * import { Graph } from "@agentkit/agents"
 *
 * const draft = Graph.agent(agent, { after: ["research"], input: ({ task, outputs }) => `${task}\n\nFacts: ${outputs["research"]}` })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const agent = <R>(
  agent: Agent.Agent<R>,
  options?: NodeOptions & { readonly input?: ((inputs: Inputs) => string) | undefined }
): Node<AgentError, R> => ({
  _tag: "Agent",
  after: afterOf(options),
  caps: RunPolicy.capabilities(agent.cognition.tools.tools()),
  node: {
    _tag: "Agent",
    after: afterOf(options),
    runnable: agent as internal.Runnable<AgentError, R>,
    input: options?.input ?? defaultInput
  }
})

/**
 * A node that runs another graph as a sub-run (its own record under a store, its gates listed in
 * this graph's pending entries); its output is the sub-graph's `id: output` lines.
 *
 * @example
 * ```ts
 * import { Graph } from "@agentkit/agents"
 *
 * const inner = Graph.make({ name: "inner", nodes: { answer: Graph.agent(agent) } })
 * const outer = Graph.make({ name: "outer", nodes: { inner: Graph.graph(inner), review: Graph.gate({ after: ["inner"] }) } })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const graph = <E, R>(
  graph: Graph<E, R>,
  options?: NodeOptions & { readonly input?: ((inputs: Inputs) => string) | undefined }
): Node<AgentError | E, R> => ({
  _tag: "Agent",
  after: afterOf(options),
  caps: graph.caps,
  node: {
    _tag: "Agent",
    after: afterOf(options),
    runnable: graph as internal.Runnable<AgentError | E, R>,
    input: options?.input ?? defaultInput
  }
})

/**
 * A node that runs a function of its inputs (on its own child run context, so `runAgents` in it
 * gives its agents runs under the node: `<graphRunId>/<nodeId>/<agent>#<i>`). Its output is the
 * string it returns. A `RunSuspended` from it (a suspended `runAgents`) suspends the graph. It
 * counts as reaching all three trifecta legs unless it declares `caps`.
 *
 * @example
 * ```ts
 * import { Graph, runAgents } from "@agentkit/agents"
 * import { Effect } from "effect"
 *
 * const fanned = Graph.fn(({ task }) => Effect.map(runAgents([[researcher, task], [agent, task]]), (results) => results.map((r) => r.output).join("\n")), { caps: [] })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const fn = <E = never, R = never>(
  run: (inputs: Inputs) => Effect.Effect<string, E, R> | string,
  options?: NodeOptions & { readonly caps?: ReadonlyArray<Capability> | undefined }
): Node<E, R> => ({
  _tag: "Fn",
  after: afterOf(options),
  caps: options?.caps ?? allCaps,
  node: {
    _tag: "Fn",
    after: afterOf(options),
    run: (inputs) =>
      Effect.suspend(() => {
        const out = run(inputs)
        return typeof out === "string" ? Effect.succeed(out) : out
      })
  }
})

/**
 * A node that calls a tool with arguments made from its inputs, through the gate an agent's calls
 * pass (the graph's run policy on the run tree's trifecta legs, the tool's `requiresApproval`,
 * the autonomy tier: a call that waits asks the in-process `Approver`, else suspends the graph
 * with its pending entry) and then the Invoker's tool pipeline (validation, budget, middleware).
 * Its output is the tool's text (a failure the model could fix becomes its `ERROR: ...` text, a
 * denial or a rejection its text; budgets and cancellation end the graph).
 *
 * @example
 * ```ts
 * import { Graph } from "@agentkit/agents"
 *
 * const status = Graph.tool(lookupOrder, { args: ({ task }) => ({ order_id: task }) })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const tool = <T extends ToolRegistry.AnyTool>(
  tool: T,
  options: NodeOptions & { readonly args: (inputs: Inputs) => Readonly<Record<string, unknown>> }
): Node<never, ToolRegistry.Requirements<T>> => ({
  _tag: "Tool",
  after: afterOf(options),
  caps: [...tool.caps],
  node: { _tag: "Tool", after: afterOf(options), tool, args: options.args }
})

/**
 * A human gate: the graph suspends on it with a pending entry of kind `Gate` (reason `gate`), its
 * call naming the node, the task and its inputs, its digest bound to them. Decide it with
 * `Approval.approve(digest)` (its output is `approved` and its dependents run) or
 * `Approval.reject(digest, reason?)` (its output is `rejected: <reason>` and its dependents are
 * skipped), then `graph.resume(runId, decisions)`; any other verdict fails the resume with
 * `InvalidDecision`.
 *
 * @example
 * ```ts
 * import { Graph } from "@agentkit/agents"
 *
 * const review = Graph.gate({ after: ["draft"] })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const gate = (options?: NodeOptions): Node => ({
  _tag: "Gate",
  after: afterOf(options),
  caps: [],
  node: { _tag: "Gate", after: afterOf(options) }
})

/**
 * The options of `Graph.make`.
 *
 * @example
 * ```ts
 * import { Graph } from "@agentkit/agents"
 *
 * const options: Graph.Options<{ readonly answer: Graph.Node }> = { name: "desk", nodes: { answer: Graph.gate() }, maxSteps: 10 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<Nodes extends Readonly<Record<string, Node<unknown, unknown>>>> {
  readonly name: string
  /** The nodes by id (ids match `^[a-zA-Z0-9_-]{1,64}$`: they are run id segments). */
  readonly nodes: Nodes
  /** How many node runs a run may make (default 100); past it the run stops with `max_steps`. */
  readonly maxSteps?: number | undefined
  /**
   * The run policy's static check over `caps` (what the graph can reach), before any node runs:
   * `deny` refuses a graph whose nodes together complete the lethal trifecta (`PolicyDenied`),
   * `flag` (the default) records a `policy.flagged` event. Each agent keeps its own policy.
   */
  readonly policy?: RunPolicy.RunPolicy | undefined
  /**
   * Guardrails for every run of the graph: tool-result guardrails check its tool nodes' results;
   * all of them hold for its agent nodes (added to the ones each declares).
   */
  readonly guardrails?: ReadonlyArray<Guardrail.Any> | undefined
}

// a node made in place, with nothing to infer its error or requirements from, has none
type Known<X> = unknown extends X ? never : X
type ErrorOf<N> = N extends Node<infer E, unknown> ? Known<E> : never
type RequirementsOf<N> = N extends Node<unknown, infer R> ? Known<R> : never

const Proto = {
  pipe() {
    return pipeArguments(this, arguments)
  }
}

/**
 * Makes a graph. Each run: the nodes whose `after` nodes have all finished run concurrently (a
 * wave; at most the tree's `maxConcurrency` at once, each on its own child run
 * `<graphRunId>/<nodeId>`, the first failure interrupting the others), each output recorded as
 * it lands; then the next wave. A gate without a decision, or a node whose sub-run waits,
 * suspends the graph (`stopReason: "suspended"`, every entry of the wave in
 * `suspended.pending`); under a `CheckpointStore` it is saved after every wave, and
 * `graph.resume(runId, decisions)` continues it in any process that has the store, without
 * running a finished node again. Stops: `complete` (every node finished or skipped), `max_steps`,
 * `deadlock` (nodes left but none ready: their `after` make a cycle). Traced as an
 * `invoke_workflow <name>` span, its nodes' spans under it. Bad definitions (a bad name or node
 * id, an `after` naming an unknown node or the node itself, a bad `maxSteps`, no nodes) throw
 * `AgentDefinitionError`.
 *
 * @example
 * ```ts
 * import { Approval, Graph } from "@agentkit/agents"
 * import { Effect } from "effect"
 *
 * const pipeline = Graph.make({
 *   name: "refunds",
 *   nodes: {
 *     research: Graph.agent(researcher),
 *     review: Graph.gate({ after: ["research"] }),
 *     answer: Graph.agent(agent, { after: ["review", "research"] })
 *   }
 * })
 *
 * const program = Effect.gen(function* () {
 *   const first = yield* pipeline.run("Refund order A-771?")
 *   if (first.suspended === undefined) return first
 *   const [gate] = first.suspended.pending
 *   return yield* pipeline.resume(first.suspended.runId, Approval.decisions([[gate!.id, Approval.approve(gate!.digest)]]))
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <const Nodes extends Readonly<Record<string, Node<unknown, unknown>>>>(
  options: Options<Nodes>
): Graph<ErrorOf<Nodes[keyof Nodes]>, RequirementsOf<Nodes[keyof Nodes]>> => {
  if (typeof options !== "object" || options === null) fail("Graph.make: options must be an object")
  if (typeof options.name !== "string" || !NAME.test(options.name)) {
    fail(`Graph.make: name ${JSON.stringify(options.name)} must match ^[a-zA-Z0-9_-]{1,64}$`)
  }
  const entries = Object.entries(options.nodes ?? {})
  if (entries.length === 0) fail(`Graph '${options.name}': nodes must name at least one node`)
  const maxSteps = options.maxSteps ?? 100
  if (!Number.isInteger(maxSteps) || maxSteps < 1) {
    fail(`Graph '${options.name}': maxSteps must be a positive integer; got ${String(options.maxSteps)}`)
  }
  const nodes = new Map<string, internal.Node<unknown, unknown>>()
  for (const [id, node] of entries) {
    if (!NAME.test(id)) fail(`Graph '${options.name}': node id ${JSON.stringify(id)} must match ^[a-zA-Z0-9_-]{1,64}$`)
    nodes.set(id, node.node)
  }
  for (const [id, node] of entries) {
    for (const dep of node.after) {
      if (dep === id) fail(`Graph '${options.name}': node '${id}' runs after itself`)
      if (!nodes.has(dep)) {
        fail(
          `Graph '${options.name}': node '${id}' runs after '${dep}', which is not a node; nodes: ${
            Array.from(nodes.keys()).join(", ")
          }`
        )
      }
    }
  }
  const caps = RunPolicy.capabilities(entries.map(([, node]) => node))
  const policy = options.policy ?? RunPolicy.defaultPolicy
  // the static trifecta check over what the nodes can reach together, before any node runs
  const staticCheck = Trifecta.staticCheck(policy, caps)
  const own = Guardrails.checked(options.guardrails, `Graph '${options.name}'`)
  const ownPlan = own.length === 0 ? undefined : Guardrails.plan(own)
  /** The graph's body under the guardrails in force (its own added to what it inherits), if any. */
  const guarded = <E>(
    body: Effect.Effect<unknown, E, RunContext | Invoker>
  ): Effect.Effect<unknown, E | GuardrailTripped, RunContext | Invoker> =>
    Effect.withFiberRuntime((fiber) => {
      const inherited = fiber.getFiberRef(Guardrails.current)
      const found = inherited.length === 0 ? ownPlan : Guardrails.plan(Guardrails.merge(inherited, own))
      if (found === undefined) return body
      // a graph has no input or output of its own to check: its agent nodes check theirs
      const nodes = { ...found, before: [], beside: [], output: [] }
      return Guardrails.guard(nodes, RunContext.unsafeOf(fiber), undefined, () => body as never)
    })
  const settings: internal.Settings<unknown, unknown> = { name: options.name, nodes, maxSteps, policy }
  const spanName = Tracing.SpanName.invokeWorkflow(options.name)
  const spanOptions = {
    kind: "internal" as const,
    captureStackTrace: false,
    attributes: {
      [Tracing.Attribute.operationName]: Tracing.Operation.invokeWorkflow,
      [Tracing.Attribute.workflowName]: options.name,
      [Tracing.Attribute.workflowNodesCount]: nodes.size
    }
  }

  const observe = <E>(
    body: Effect.Effect<unknown, E, RunContext | Invoker>
  ): Effect.Effect<GraphResult, E | Cancelled, RunContext | Invoker> => {
    const driven = RunContext.cancellable(Effect.map(body, (result) => {
      const found = result as GraphResult
      return found.outputs === undefined ? { ...found, outputs: {} } : found
    }))
    return Effect.flatMap(RunContext, (context) =>
      context.tracing
        ? driven.pipe(
          Effect.tap((result) =>
            Tracing.annotate({
              [Tracing.Attribute.workflowStopReason]: result.stopReason,
              ...Tracing.usageAttributes(result.usage)
            })
          ),
          Effect.withSpan(spanName, spanOptions),
          Tracing.contain
        )
        : driven)
  }

  const value: Omit<Graph<unknown, unknown>, "pipe"> = {
    name: options.name,
    nodeIds: Array.from(nodes.keys()),
    caps,
    run: (task) =>
      observe(
        guarded(
          Effect.zipRight(staticCheck, Lifecycle.drive(internal.program(settings, task))) as Effect.Effect<
            unknown,
            AgentError,
            RunContext | Invoker
          >
        ) as Effect.Effect<
          unknown,
          AgentError,
          RunContext | Invoker
        >
      ),
    resume: (runId, decisions) =>
      observe(
        guarded(
          Lifecycle.resume(internal.program(settings, ""), runId, decisions, internal.check(settings)) as Effect.Effect<
            unknown,
            ResumeError,
            RunContext | Invoker
          >
        ) as Effect.Effect<
          unknown,
          ResumeError,
          RunContext | Invoker
        >
      )
  }
  return Object.freeze(Object.assign(Object.create(Proto), value)) as Graph<
    ErrorOf<Nodes[keyof Nodes]>,
    RequirementsOf<Nodes[keyof Nodes]>
  >
}
