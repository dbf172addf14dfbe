/**
 * An agent: identity plus model settings; its cognition owns the loop.
 *
 * @since 0.1.0
 */
import { Message, ModelCatalog, RunContext, SpanStore, Tracing } from "@agentkit/core"
import type { Capability, Invoker } from "@agentkit/core"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { type Pipeable, pipeArguments } from "effect/Pipeable"
import type * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as AgentEvent from "./AgentEvent.js"
import type * as AgentResult from "./AgentResult.js"
import type * as Approval from "./Approval.js"
import type { AgentError, AgentSettings, Cognition, ResumeError } from "./Cognition.js"
import { AgentDefinitionError, RunNotResumable } from "./Errors.js"
import type * as Guardrail from "./Guardrail.js"
import * as Guardrails from "./internal/guardrails.js"
import * as Trifecta from "./internal/trifecta.js"
import * as RunPolicy from "./RunPolicy.js"
import * as SingleCallCognition from "./SingleCallCognition.js"
import * as StructuredOutput from "./StructuredOutput.js"

/**
 * What a run takes: a task, or a whole conversation.
 *
 * @example
 * ```ts
 * import type { Agent } from "@agentkit/agents"
 * import { Message } from "@agentkit/core"
 *
 * const task: Agent.Input = "What happened to order A-771?"
 * const conversation: Agent.Input = [Message.user("Hi"), Message.assistant("Hello! How can I help?"), Message.user("Where is A-771?")]
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Input = string | ReadonlyArray<Message.Message>

/**
 * An agent value. `R` is what its tools need; `A` is its structured output (`result.parsed`),
 * `never` for an agent without `output`.
 *
 * @example
 * ```ts
 * import type { Agent } from "@agentkit/agents"
 * import { Effect } from "effect"
 *
 * const answer = <R>(agent: Agent.Agent<R>, task: string) => Effect.map(agent.run(task), (result) => result.output)
 * const verdict = <R, A>(agent: Agent.Agent<R, A>, task: string) => Effect.map(agent.run(task), (result) => result.parsed)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Agent<R = never, A = never> extends AgentSettings, Pipeable {
  readonly cognition: Cognition<R>
  /** The structured output, when the agent was made with `output`. */
  readonly output: StructuredOutput.StructuredOutput<A> | undefined
  /**
   * The trifecta capabilities of everything the agent can reach (its cognition's `caps`, else the
   * union of its tools' caps), sorted: what `asTool(agent)` advertises to a parent's run policy.
   */
  readonly caps: ReadonlyArray<Capability>
  /** Runs the agent to its result. */
  run(input: Input): Effect.Effect<AgentResult.AgentResult<A>, AgentError, RunContext | Invoker | R>
  /**
   * Runs the agent as a stream of events, ending with `Final`, whose result carries the
   * transcript only with `{ transcript: true }`. Under an output guardrail no `MessageDelta` is
   * streamed: the answer is shown once checked, in `Final`.
   */
  stream(
    input: Input,
    options: { readonly transcript: true }
  ): Stream.Stream<AgentEvent.AgentEvent<A, AgentResult.AgentResult<A>>, AgentError, RunContext | Invoker | R>
  stream(
    input: Input,
    options?: StreamOptions
  ): Stream.Stream<AgentEvent.AgentEvent<A>, AgentError, RunContext | Invoker | R>
  /**
   * Continues a suspended run with a person's decisions, by pending id. Needs the
   * `CheckpointStore` the run was suspended with; works in any process that has it. Decisions
   * that are not acceptable (not a record, an unknown id, a stale digest, a verdict the entry does
   * not accept, an invalid edit) fail with a typed error, and nothing runs.
   */
  resume(
    runId: string,
    decisions: Approval.Decisions
  ): Effect.Effect<AgentResult.AgentResult<A>, ResumeError, RunContext | Invoker | R>
  /**
   * `resume` as a stream of events, ending with `Final` (what `stream` is to `run`): the text of
   * the resumed turns arrives as the model streams it.
   */
  resumeStream(
    runId: string,
    decisions: Approval.Decisions,
    options: { readonly transcript: true }
  ): Stream.Stream<AgentEvent.AgentEvent<A, AgentResult.AgentResult<A>>, ResumeError, RunContext | Invoker | R>
  resumeStream(
    runId: string,
    decisions: Approval.Decisions,
    options?: StreamOptions
  ): Stream.Stream<AgentEvent.AgentEvent<A>, ResumeError, RunContext | Invoker | R>
}

/**
 * The options of `agent.stream`. `transcript: true` puts the whole conversation in the `Final`
 * event's result; by default it carries the result without it (`AgentResult.Summary`), which keeps
 * the last event small however long the run was.
 *
 * @example
 * ```ts
 * import { AgentEvent, type Agent } from "@agentkit/agents"
 * import { Stream } from "effect"
 *
 * const options: Agent.StreamOptions = { transcript: true }
 * const messages = agent.stream("What happened to order A-771?", { transcript: true }).pipe(
 *   Stream.filter(AgentEvent.$is("Final")),
 *   Stream.map((event) => event.result.transcript.length)
 * )
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface StreamOptions {
  /** Put the whole conversation in the `Final` event's result (default `false`). */
  readonly transcript?: boolean | undefined
}

/**
 * The options of `Agent.make`. `A` and `I` are the structured output's Type and encoded form.
 *
 * @example
 * ```ts
 * import { Agent } from "@agentkit/agents"
 * import { Schema } from "effect"
 *
 * const options: Agent.Options<never> = { name: "summarizer", model: "claude-sonnet-4-6", prompt: "Summarize in one sentence.", maxTokens: 256 }
 * const summarizer = Agent.make(options)
 * const Summary = Schema.Struct({ summary: Schema.String, keywords: Schema.Array(Schema.String) })
 * const typed: Agent.Options<never, typeof Summary.Type, typeof Summary.Encoded> = { ...options, output: Summary, maxRepairs: 2 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<R, A = never, I = A> {
  readonly name: string
  /** The model sent on every call (a provider layer's model is only a default). */
  readonly model: string
  /** The system prompt. */
  readonly prompt?: string | undefined
  /** Default: `SingleCallCognition`. */
  readonly cognition?: Cognition<R> | undefined
  readonly maxTokens?: number | undefined
  readonly temperature?: number | undefined
  /** The run policy (lethal trifecta). Default: `RunPolicy.defaultPolicy` (flag statically, gate dynamically). */
  readonly policy?: RunPolicy.RunPolicy | undefined
  /**
   * Structured output: the schema the answer decodes into (`result.parsed`). The model is told
   * the shape (a forced output tool, or a schema block); an answer that does not decode is
   * repaired, then the run ends `partial` with stop reason `invalid_output`.
   */
  readonly output?: Schema.Schema<A, I, never> | undefined
  /**
   * With `output`: how many times `SingleCallCognition` asks again after an answer that does not
   * decode (default 1). `ReActCognition` repairs once; any other value throws.
   */
  readonly maxRepairs?: number | undefined
  /**
   * Capabilities the agent needs of its model (`"images"`, `"reasoning"`, ...). Each run checks
   * them against the model catalog (`ModelCatalog`) before any request and fails with
   * `CapabilityMismatch` naming the model and what it lacks; a model the catalog does not know
   * fails too. An agent with tools also needs `"tools"`, checked for models the catalog knows.
   */
  readonly requires?: ReadonlyArray<ModelCatalog.Capability> | undefined
  /**
   * Guardrails (`Guardrail.input`, `output`, `toolResult`) for every run of the agent. They are
   * added to the ones the run inherits (a parent run's, `Guardrail.within`'s) and hold for its
   * children too.
   */
  readonly guardrails?: ReadonlyArray<Guardrail.Any> | undefined
}

const NAME = /^[a-zA-Z0-9_-]{1,64}$/

const definitionError = (message: string): never => {
  throw new AgentDefinitionError({ message })
}

const Proto = {
  pipe() {
    return pipeArguments(this, arguments)
  }
}

/**
 * Makes an agent. A bad name, an empty model, a bad `maxTokens`/`temperature`, an `output` schema
 * without a JSON representation, or a `maxRepairs` that is not a non-negative integer (or given
 * without `output`, or other than 1 for a ReAct agent) throws `AgentDefinitionError` here.
 *
 * @example
 * ```ts
 * import { Agent, ReActCognition } from "@agentkit/agents"
 * import { Effect } from "effect"
 *
 * const agent = Agent.make({
 *   name: "support",
 *   model: "claude-sonnet-4-6",
 *   prompt: "Answer order questions. Use the tools; never guess a status.",
 *   cognition: ReActCognition.make({ tools: [lookupOrder, cancelOrder] })
 * })
 *
 * const program = Effect.map(agent.run("What happened to order A-771?"), (result) => result.output)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <R = never, A = never, I = A>(options: Options<R, A, I>): Agent<R, A> => {
  if (typeof options !== "object" || options === null) definitionError("Agent.make: options must be an object")
  if (typeof options.name !== "string" || !NAME.test(options.name)) {
    definitionError(`Agent.make: name ${JSON.stringify(options.name)} must match ^[a-zA-Z0-9_-]{1,64}$`)
  }
  if (typeof options.model !== "string" || options.model.length === 0) {
    definitionError(`Agent '${options.name}': model must be a non-empty string (e.g. "claude-sonnet-4-6")`)
  }
  if (options.prompt !== undefined && typeof options.prompt !== "string") {
    definitionError(`Agent '${options.name}': prompt must be a string`)
  }
  if (options.maxTokens !== undefined && !(Number.isInteger(options.maxTokens) && options.maxTokens > 0)) {
    definitionError(`Agent '${options.name}': maxTokens must be a positive integer; got ${String(options.maxTokens)}`)
  }
  if (options.temperature !== undefined && !(Number.isFinite(options.temperature) && options.temperature >= 0)) {
    definitionError(
      `Agent '${options.name}': temperature must be a non-negative number; got ${String(options.temperature)}`
    )
  }
  const cognition = (options.cognition ?? SingleCallCognition.make()) as Cognition<R>
  const output = outputOf(options, cognition)
  const capabilityCheck = capabilityCheckOf(options, cognition)
  const settings: AgentSettings = {
    name: options.name,
    model: options.model,
    prompt: options.prompt ?? "",
    maxTokens: options.maxTokens,
    temperature: options.temperature
  }
  const head: ReadonlyArray<Message.Message> = settings.prompt === "" ? [] : [Message.system(settings.prompt)]
  const spanName = Tracing.SpanName.invokeAgent(settings.name)
  // built as literals (a spread followed by more keys is a slow path of V8's), the conversation id
  // set at the start, so a failed run's span carries it too
  const spanOptions = (
    conversationId: string,
    tenant: string
  ): Tracing.SpanOptions<AgentResult.AgentResult<unknown>, { readonly _tag: string }> => ({
    kind: "internal",
    captureStackTrace: false,
    onEnd: runEnd,
    attributes: {
      [Tracing.Attribute.operationName]: Tracing.Operation.invokeAgent,
      [Tracing.Attribute.agentName]: settings.name,
      [Tracing.Attribute.requestModel]: settings.model,
      [Tracing.Attribute.conversationId]: conversationId,
      [SpanStore.tenantAttribute]: tenant
    }
  })

  const policy = options.policy ?? RunPolicy.defaultPolicy
  const caps = Trifecta.reach(cognition)
  // The static check, over the caps of everything the agent can reach, before the first model call.
  const policyCheck = Trifecta.staticCheck(policy, caps)
  // the model's capabilities, then the policy: both before the first model call
  const staticCheck = capabilityCheck === undefined
    ? policyCheck
    : policyCheck === Effect.void
    ? capabilityCheck
    : Effect.zipRight(capabilityCheck, policyCheck)
  const advertised = Trifecta.advertisedLegs(cognition.tools)
  const own = Guardrails.checked(options.guardrails, `Agent '${settings.name}'`)
  const ownPlan = own.length === 0 ? undefined : Guardrails.plan(own)
  /** The guardrails in force for a run: its own added to what it inherits (`undefined`: none). */
  const planOf = (inherited: ReadonlyArray<Guardrail.Any>): Guardrails.Plan | undefined =>
    inherited.length === 0 ? ownPlan : Guardrails.plan(Guardrails.merge(inherited, own))

  /** The run's boundary (cancellation) and its span, over `body`. */
  const observed = <E extends { readonly _tag: string }>(
    body: Effect.Effect<AgentResult.AgentResult<unknown>, E, RunContext | Invoker | R>,
    context: RunContext.Service
  ) => {
    const driven = RunContext.cancellable(body)
    return context.tracing
      ? driven.pipe(
        Tracing.span(spanName, spanOptions(context.correlationId, context.scope.storeKey)),
        // a tracer that throws (in span, end, attributes or events) never breaks the run
        Tracing.contain
      )
      : driven
  }

  const observe = <E extends { readonly _tag: string }>(
    body: Effect.Effect<AgentResult.AgentResult<unknown>, E, RunContext | Invoker | R>
  ) => RunContext.with((context) => observed(body, context))

  // Built when it runs, from the context it runs in (read in place, not with `RunContext.with`,
  // whose extra closure the caller's effect would keep): the effect a caller holds (and
  // `runPromise` keeps to the end) stays small.
  const execute = (input: Input, emit: ((event: AgentEvent.AgentEvent<unknown>) => void) | undefined) =>
    Effect.withFiberRuntime<AgentResult.AgentResult<unknown>, AgentError, RunContext | Invoker | R>((fiber) => {
      const context = RunContext.unsafeOf(fiber)
      const messages = head.concat(typeof input === "string" ? [Message.user(input)] : input)
      const guardrails = planOf(fiber.getFiberRef(Guardrails.current))
      const drive = guardrails === undefined
        ? cognition.drive({ agent: settings, messages, emit, policy, output })
        : Guardrails.guard(
          guardrails,
          context,
          messages,
          (checked) =>
            cognition.drive({
              agent: settings,
              messages: checked ?? messages,
              emit: Guardrails.emitting(guardrails, emit),
              policy,
              output
            })
        )
      // a conversation passed in counts for the tool results it holds (a caller may add legs, never
      // remove them); advertising a tool whose description is untrusted counts from the first turn
      const legs = typeof input === "string"
        ? advertised
        : [...advertised, ...Trifecta.historyLegs(input, cognition.tools)]
      // without a static finding there is nothing to run before the loop (no extra step)
      if (legs.length === 0) {
        return observed(staticCheck === Effect.void ? drive : Effect.zipRight(staticCheck, drive), context)
      }
      const touched = Effect.zipRight(Effect.sync(() => context.touch(legs)), staticCheck)
      return observed(Effect.zipRight(touched, drive), context)
    })

  const resumeWith = (
    runId: string,
    decisions: Approval.Decisions,
    emit: ((event: AgentEvent.AgentEvent<unknown>) => void) | undefined
  ): Effect.Effect<AgentResult.AgentResult<unknown>, ResumeError, RunContext | Invoker | R> =>
    cognition.resume === undefined
      ? Effect.fail(
        new RunNotResumable({
          runId,
          message:
            `agent '${settings.name}' cognition '${cognition.name}' does not support resume — only tool-loop (ReAct) agents can be resumed`
        })
      )
      : Effect.withFiberRuntime((fiber) => {
        const resume = cognition.resume!
        const guardrails = planOf(fiber.getFiberRef(Guardrails.current))
        const resumed = () =>
          resume({
            agent: settings,
            runId,
            decisions,
            emit: guardrails === undefined ? emit : Guardrails.emitting(guardrails, emit),
            policy,
            output
          })
        return guardrails === undefined
          ? observe(resumed())
          : observe(Guardrails.guard(guardrails, RunContext.unsafeOf(fiber), undefined, resumed))
      })

  const agent: Omit<Agent<R, unknown>, "pipe"> = {
    ...settings,
    cognition,
    output,
    caps,
    run: (input) => execute(input, undefined),
    resume: (runId, decisions) => resumeWith(runId, decisions, undefined),
    // one implementation of both signatures: the result's type follows `transcript`
    stream: ((input: Input, options?: StreamOptions) => streamOf((emit) => execute(input, emit), options)) as Agent<
      R,
      unknown
    >["stream"],
    resumeStream:
      ((runId: string, decisions: Approval.Decisions, options?: StreamOptions) =>
        streamOf((emit) => resumeWith(runId, decisions, emit), options)) as Agent<R, unknown>["resumeStream"]
  }
  return Object.freeze(Object.assign(Object.create(Proto), agent)) as Agent<R, A>
}

/** The result without its transcript (what a `Final` event carries unless asked for it). */
const summary = (result: AgentResult.AgentResult<unknown>): AgentResult.Summary<unknown> => {
  const { transcript: _, ...rest } = result
  return rest
}

/** A run (started or resumed) as a stream of its events, ending with `Final`. */
const streamOf = <E, R>(
  drive: (
    emit: (event: AgentEvent.AgentEvent<unknown>) => void
  ) => Effect.Effect<AgentResult.AgentResult<unknown>, E, R>,
  options: StreamOptions | undefined
): Stream.Stream<AgentEvent.AgentEvent<unknown, AgentResult.Summary<unknown>>, E, R> =>
  Stream.asyncPush<AgentEvent.AgentEvent<unknown, AgentResult.Summary<unknown>>, E, R>(
    (emit) =>
      drive((event) => void emit.single(event)).pipe(
        // matchCause, not match: a defect (or an interruption) must end the stream too, or
        // the consumer would wait forever for an event that never comes.
        Effect.matchCauseEffect({
          onFailure: (cause) => Effect.sync(() => emit.halt(cause)),
          onSuccess: (result) =>
            Effect.sync(() => {
              emit.single(AgentEvent.Final({ result: options?.transcript === true ? result : summary(result) }))
              emit.end()
            })
        }),
        Effect.forkScoped
      ),
    { bufferSize: "unbounded" }
  )

/** What the agent sets on its `invoke_agent {agent}` span as it ends: the run's usage, or the error's tag. */
const runEnd = (
  exit: Exit.Exit<AgentResult.AgentResult<unknown>, { readonly _tag: string }>
): Tracing.Attributes | undefined => {
  if (Exit.isSuccess(exit)) return Tracing.usageAttributes(exit.value.usage)
  const failure = Cause.failureOption(exit.cause)
  return Option.isSome(failure) ? { [Tracing.Attribute.errorType]: failure.value._tag } : undefined
}

/** The check of the model's capabilities a run makes first, if the agent needs any. */
const capabilityCheckOf = <R, A, I>(
  options: Options<R, A, I>,
  cognition: Cognition<R>
): Effect.Effect<void, ModelCatalog.CapabilityMismatch> | undefined => {
  const requires = options.requires ?? []
  if (!Array.isArray(requires)) {
    return definitionError(
      `Agent '${options.name}': requires must be an array of ${ModelCatalog.capabilities.join(", ")}`
    )
  }
  for (const capability of requires) {
    if (!ModelCatalog.capabilities.includes(capability)) {
      definitionError(
        `Agent '${options.name}': requires holds '${String(capability)}'; accepted: ${
          ModelCatalog.capabilities.join(", ")
        }`
      )
    }
  }
  const explicit = [...new Set(requires)]
  const inferred = cognition.tools.names().length > 0 && !explicit.includes("tools")
    ? ModelCatalog.requireCapabilities(options.name, options.model, ["tools"], { unknownModel: "pass" })
    : undefined
  const declared = explicit.length > 0
    ? ModelCatalog.requireCapabilities(options.name, options.model, explicit)
    : undefined
  if (declared === undefined) return inferred
  return inferred === undefined ? declared : Effect.zipRight(declared, inferred)
}

/** The structured output of the options (the definition errors named after the agent). */
const outputOf = <R, A, I>(
  options: Options<R, A, I>,
  cognition: Cognition<R>
): StructuredOutput.StructuredOutput<unknown> | undefined => {
  if (options.output === undefined) {
    if (options.maxRepairs !== undefined) {
      definitionError(`Agent '${options.name}': maxRepairs applies only with \`output\` (a structured output schema)`)
    }
    return undefined
  }
  if (options.maxRepairs !== undefined && options.maxRepairs !== 1 && cognition.name === "react") {
    definitionError(
      `Agent '${options.name}': ReActCognition repairs an answer that does not decode once; maxRepairs ${
        String(options.maxRepairs)
      } applies only to SingleCallCognition`
    )
  }
  try {
    return StructuredOutput.make(options.output, {
      maxRepairs: options.maxRepairs
    }) as StructuredOutput.StructuredOutput<unknown>
  } catch (error) {
    if (error instanceof AgentDefinitionError) return definitionError(`Agent '${options.name}': ${error.message}`)
    throw error
  }
}
