/**
 * The agents service: one expression per call for the common cases. `Agents.layer()` over a
 * `ChatModel` layer builds the `Invoker` once; then asking an agent (`Agents.run`), asking it for
 * its typed answer (`Agents.parsed`) and streaming its events (`Agents.stream`) each run on a
 * fresh run context of their own: a new run id, budget and cancellation per call, nothing shared
 * between calls.
 *
 * A run that needs its own context (a request's tenant, a run id to resume by, a cancellation
 * handle held by the caller) is `agent.run(input)` under `RunContext.provide({ ... })`, in the same
 * program: the layer provides the `Invoker` too.
 *
 * @since 0.2.0
 */
import { Budget, ConfigurationError, Invoker, RunContext } from "@agentkit/core"
import type { Autonomy, ChatModel, Scope } from "@agentkit/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import type { Agent, Input, StreamOptions } from "./Agent.js"
import type * as AgentEvent from "./AgentEvent.js"
import type * as AgentResult from "./AgentResult.js"
import type { AgentError } from "./Cognition.js"
import { NoParsedOutput } from "./Errors.js"
import { provided } from "./internal/provided.js"

/** The service value: the Invoker built once, and the settings each call's fresh context is made with. */
class AgentsValue implements Agents.Service {
  constructor(
    readonly invoker: Invoker.Service,
    readonly scope: Scope.Scope,
    readonly autonomy: Autonomy,
    readonly tracing: boolean,
    readonly budget: Budget.Limits | undefined
  ) {}

  runOptions(): RunContext.Options {
    // a new Budget per call (a Budget value counts what it is charged); the rest is immutable
    return {
      scope: this.scope,
      autonomy: this.autonomy,
      tracing: this.tracing,
      budget: this.budget === undefined ? undefined : Budget.unsafeMake(this.budget)
    }
  }
}

/** The service in a fiber's context (the requirement guarantees it is there). */
const current = (context: Context.Context<never>): Agents.Service =>
  Context.unsafeGet(context as Context.Context<Agents>, Agents)

/**
 * A fresh run context of the service's options. They were checked when the service was made, so
 * it cannot fail: the `ConfigurationError` of `RunContext.make` is not in the type.
 */
const freshContext = (agents: Agents.Service) =>
  RunContext.make(agents.runOptions()) as Effect.Effect<RunContext.Service>

/**
 * Runs `self` on a fresh context and the service's Invoker, both added to the fiber's context in
 * one region (no layer, no second fiber).
 */
const fresh = <X, E, R>(self: Effect.Effect<X, E, R>): Effect.Effect<X, E, Exclude<R, RunContext | Invoker> | Agents> =>
  Effect.withFiberRuntime((fiber) => {
    const outer = fiber.getFiberRef(FiberRef.currentContext)
    const agents = current(outer)
    return Effect.flatMap(freshContext(agents), (context) =>
      provided(
        self as Effect.Effect<X, E, Exclude<R, RunContext | Invoker>>,
        outer,
        Context.add(Context.add(outer, Invoker, agents.invoker), RunContext, context)
      ))
  })

const make = (invoker: Invoker.Service, options: Agents.Options): Effect.Effect<Agents.Service, ConfigurationError> => {
  if (options.budget instanceof Budget.Budget) {
    return Effect.fail(
      new ConfigurationError({
        field: "budget",
        message:
          "Agents.layer takes budget limits ({ maxCostUsd?, maxModelCalls?, maxTokens?, maxToolCalls?, maxDepth?, maxConcurrency? }), not a Budget: one Budget would be shared by every call"
      })
    )
  }
  // a copy: the caller's object changing later changes no call's budget
  const limits = options.budget === undefined ? undefined : { ...options.budget }
  // the same checks as every run context's, once, here: a bad option fails the layer
  return Effect.map(
    RunContext.make({ scope: options.scope, autonomy: options.autonomy, budget: limits, tracing: options.tracing }),
    (context) => new AgentsValue(invoker, context.scope, context.autonomy, context.tracing, limits)
  )
}

/**
 * The agents service. Provide it with `Agents.layer(options)` over a `ChatModel` layer (the layer
 * provides the `Invoker` too); call an agent with `Agents.run`, `Agents.parsed` or `Agents.stream`.
 *
 * @example
 * ```ts
 * import { Agents } from "@agentkit/agents"
 * import { FakeLLM, Turn } from "@agentkit/testing"
 * import { Effect, Layer } from "effect"
 *
 * const AgentsLive = Agents.layer().pipe(Layer.provide(FakeLLM.script([Turn({ content: "Hello!" })]).layer))
 *
 * const program = Effect.gen(function*() {
 *   const result = yield* Agents.run(agent, "Hi")
 *   return result.output
 * })
 * Effect.runPromise(program.pipe(Effect.provide(AgentsLive))) // "Hello!"
 * ```
 *
 * @since 0.2.0
 * @category services
 */
export class Agents extends Context.Tag("@agentkit/agents/Agents")<Agents, Agents.Service>() {
  /**
   * The service and the `Invoker` (with the options' middleware), built once over the
   * `ChatModel`. A bad option (an unknown autonomy tier, a bad scope or budget limit, a `Budget`
   * value instead of limits) fails the layer with a `ConfigurationError` naming it.
   */
  static layer(options: Agents.Options = {}): Layer.Layer<Agents | Invoker, ConfigurationError, ChatModel> {
    return Layer.provideMerge(
      Layer.effect(Agents, Effect.flatMap(Invoker, (invoker) => make(invoker, options))),
      Invoker.layer({ chatMiddleware: options.chatMiddleware, toolMiddleware: options.toolMiddleware })
    )
  }

  /**
   * Runs `agent` once on a fresh run context: its result (`result.output` the answer,
   * `result.parsed` the typed answer of an agent made with `output`).
   *
   * @example
   * ```ts
   * import { Agents } from "@agentkit/agents"
   * import { Effect } from "effect"
   *
   * const answer = Effect.map(Agents.run(agent, "What happened to order A-771?"), (result) => result.output)
   * ```
   */
  static run<R, A>(
    agent: Agent<R, A>,
    input: Input
  ): Effect.Effect<AgentResult.AgentResult<A>, AgentError, Agents | R> {
    return fresh(agent.run(input))
  }

  /**
   * Runs `agent` (made with `output`) once on a fresh run context and gives its decoded answer;
   * a run that ends without one (it did not decode after its repairs, it suspended for a decision,
   * it ran out of iterations) fails with `NoParsedOutput`, which carries the stop reason and the
   * last text. An agent made without `output` is refused by the type, and at run time fails with
   * `NoParsedOutput` before anything runs.
   *
   * @example
   * ```ts
   * import { Agent, Agents } from "@agentkit/agents"
   * import { Schema } from "effect"
   *
   * const Ticket = Schema.Struct({ category: Schema.Literal("shipping", "billing"), urgent: Schema.Boolean })
   * const triage = Agent.make({ name: "triage", model: "claude-sonnet-4-6", prompt: "Classify the message.", output: Ticket })
   *
   * const ticket = Agents.parsed(triage, "My order B-102 was charged twice!") // Effect<{ category, urgent }, ...>
   * ```
   */
  static parsed<R, A>(
    agent: Agent<R, A> & Agents.WithOutput<A>,
    input: Input
  ): Effect.Effect<A, AgentError | NoParsedOutput, Agents | R> {
    if (agent.output === undefined) {
      return Effect.fail(new NoParsedOutput({ agent: agent.name, output: "" }))
    }
    return Effect.flatMap(Agents.run(agent, input), parsedOf(agent.name))
  }

  /**
   * Streams `agent`'s events on a fresh run context (made when the stream starts): `MessageDelta`
   * as the text arrives, tool calls and results, and `Final` last, whose result carries the
   * transcript only with `{ transcript: true }`.
   *
   * @example
   * ```ts
   * import { AgentEvent, Agents } from "@agentkit/agents"
   * import { Stream } from "effect"
   *
   * const text = Agents.stream(agent, "What happened to order A-771?").pipe(
   *   Stream.filter(AgentEvent.$is("MessageDelta")),
   *   Stream.map((event) => event.text)
   * )
   * ```
   */
  static stream<R, A>(
    agent: Agent<R, A>,
    input: Input,
    options: { readonly transcript: true }
  ): Stream.Stream<AgentEvent.AgentEvent<A, AgentResult.AgentResult<A>>, AgentError, Agents | R>
  static stream<R, A>(
    agent: Agent<R, A>,
    input: Input,
    options?: StreamOptions
  ): Stream.Stream<AgentEvent.AgentEvent<A>, AgentError, Agents | R>
  static stream<R, A>(
    agent: Agent<R, A>,
    input: Input,
    options?: StreamOptions
  ): Stream.Stream<AgentEvent.AgentEvent<A>, AgentError, Agents | R> {
    const events = agent.stream(input, options)
    return Stream.unwrap(
      Effect.withFiberRuntime<Stream.Stream<AgentEvent.AgentEvent<A>, AgentError, R>, never, Agents>((fiber) => {
        const agents = current(fiber.getFiberRef(FiberRef.currentContext))
        return Effect.map(freshContext(agents), (context) =>
          Stream.mapInputContext(
            events,
            (outer: Context.Context<R>) => Context.add(Context.add(outer, Invoker, agents.invoker), RunContext, context)
          ))
      })
    )
  }
}

/** The decoded answer of a result, or `NoParsedOutput` naming why there is none. */
const parsedOf = (name: string) => <A>(result: AgentResult.AgentResult<A>): Effect.Effect<A, NoParsedOutput> =>
  result.parsed !== undefined && !result.partial
    ? Effect.succeed(result.parsed)
    : Effect.fail(
      new NoParsedOutput({
        agent: name,
        stopReason: result.stopReason,
        output: result.output,
        error: result.error,
        runId: result.suspended?.runId
      })
    )

/**
 * The agents service's types, reachable through the `Agents` class: `Agents.Service`,
 * `Agents.Options` and `Agents.WithOutput`.
 *
 * @example
 * ```ts
 * import { Agents } from "@agentkit/agents"
 *
 * const options: Agents.Options = { budget: { maxCostUsd: 0.05 }, autonomy: "gated", scope: { orgId: 7 } }
 * const AgentsLive = Agents.layer(options)
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export declare namespace Agents {
  /**
   * The service value.
   *
   * @since 0.2.0
   * @category models
   */
  export interface Service {
    /** The Invoker every call runs through, built once. */
    readonly invoker: Invoker.Service
    /** The options of one call's run context: the layer's settings and a new budget each time. */
    runOptions(): RunContext.Options
  }

  /**
   * The options of `Agents.layer`: the middleware of the Invoker it builds, and what every call's
   * fresh run context starts with (the same for every call; the budget's limits apply to each
   * call on its own).
   *
   * @since 0.2.0
   * @category models
   */
  export interface Options {
    readonly chatMiddleware?: Invoker.Options["chatMiddleware"]
    readonly toolMiddleware?: Invoker.Options["toolMiddleware"]
    /** The tenant scope of every call (default: none). */
    readonly scope?: Scope.Scope | Scope.Fields | undefined
    /** Limits each call gets a budget of its own with (default: unlimited). */
    readonly budget?: Budget.Limits | undefined
    /** The autonomy tier of every call (default `auto`). */
    readonly autonomy?: Autonomy | undefined
    /** Whether calls open spans (default `true`). */
    readonly tracing?: boolean | undefined
  }

  /**
   * What `Agents.parsed` asks of an agent's type: an agent made without `output` (whose `A` is
   * `never`) has no structured answer, so it is refused.
   *
   * @since 0.2.0
   * @category models
   */
  export type WithOutput<A> = [A] extends [never] ? { readonly output: "an agent made with Agent.make({ output })" }
    : unknown
}
