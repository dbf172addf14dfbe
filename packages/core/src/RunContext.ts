/**
 * The run context: the identity, tenant scope, budget, autonomy tier, depth, cancellation handle
 * and tracing switch of one agent run, provided as an Effect service.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as HashSet from "effect/HashSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Supervisor from "effect/Supervisor"
import { errorMessage } from "./AgentkitError.js"
import * as Budget from "./Budget.js"
import { DepthExceeded } from "./BudgetError.js"
import * as Cancellation from "./Cancellation.js"
import { Cancelled } from "./CancellationError.js"
import { ConfigurationError } from "./ConfigurationError.js"
import { listen, type Listener, unlisten } from "./internal/cancellation.js"
import { locallyWith } from "./internal/locally.js"
import { uuid } from "./internal/randomId.js"
import type { Capability } from "./InvokableTool.js"
import { capabilities } from "./InvokableTool.js"
import * as PythonText from "./PythonText.js"
import * as Scope from "./Scope.js"
import * as Usage from "./Usage.js"

/**
 * How much a run may do without a person: `auto` gates only tools that require approval, `gated`
 * also every side-effecting tool, `manual` every call.
 *
 * @example
 * ```ts
 * import { RunContext, type Autonomy } from "@agentkit/core"
 *
 * const autonomy: Autonomy = "gated" // every side-effecting tool call waits for a person
 * const RunLive = RunContext.layer({ autonomy })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Autonomy = "auto" | "gated" | "manual"

/**
 * The accepted autonomy tiers.
 *
 * @example
 * ```ts
 * import { autonomyTiers } from "@agentkit/core"
 *
 * autonomyTiers.includes("manual") // true
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export const autonomyTiers: ReadonlyArray<Autonomy> = ["auto", "gated", "manual"]

/**
 * One node of a run tree's tally: the legs touched and the usage spent at or under it. A run has
 * one; so has each delegating call (`branch()`), so its sub-runs' tally can be read on its own.
 * Touching a leg or charging usage reaches every node above, up to the root, whose legs are the
 * tree's.
 */
class RunNode implements RunContext.Tally, RunContext.Legs {
  // private, with getters only: nothing holding the context (a tool's handler) can clear a leg
  #privateData = false
  #untrustedContent = false
  #egress = false
  #usage: Usage.Usage = Usage.zero

  constructor(readonly parent: RunNode | undefined) {
    Object.freeze(this) // no own property can shadow a getter; the private fields stay writable here
  }

  get privateData(): boolean {
    return this.#privateData
  }

  get untrustedContent(): boolean {
    return this.#untrustedContent
  }

  get egress(): boolean {
    return this.#egress
  }

  get usage(): Usage.Usage {
    return this.#usage
  }

  get legs(): RunContext.Legs {
    return this
  }

  touch(privateData: boolean, untrustedContent: boolean, egress: boolean): void {
    if (privateData) this.#privateData = true
    if (untrustedContent) this.#untrustedContent = true
    if (egress) this.#egress = true
    this.parent?.touch(privateData, untrustedContent, egress) // up to the root (a tree is a few levels deep)
  }

  charge(usage: Usage.Usage): void {
    this.#usage = Usage.add(this.#usage, usage)
    this.parent?.charge(usage)
  }

  /** Adds usage to this node only (a resumed run's saved usage: the runs above counted it when it was spent). */
  restoreUsage(usage: Usage.Usage): void {
    this.#usage = Usage.add(this.#usage, usage)
  }
}

/** What a whole run tree shares by reference: its root tally (the tree's legs) and the decisions channel. */
class RunTree {
  // made on first use: most runs never read it
  #decisions: Map<string, unknown> | undefined = undefined
  constructor(readonly root: RunNode) {}

  get decisions(): Map<string, unknown> {
    return (this.#decisions ??= new Map())
  }
}

const legsOf = (legs: RunContext.LegsInput): readonly [boolean, boolean, boolean] =>
  Array.isArray(legs)
    ? [legs.includes("private_data"), legs.includes("untrusted_content"), legs.includes("egress")]
    : [
      (legs as Partial<RunContext.Legs>).privateData === true,
      (legs as Partial<RunContext.Legs>).untrustedContent === true,
      (legs as Partial<RunContext.Legs>).egress === true
    ]

class RunContextValue implements RunContext.Service {
  constructor(
    readonly runId: string,
    readonly parentRunId: string | undefined,
    readonly rootRunId: string,
    readonly threadId: string | undefined,
    readonly correlationId: string,
    readonly scope: Scope.Scope,
    readonly budget: Budget.Budget,
    readonly autonomy: Autonomy,
    readonly depth: number,
    readonly cancellation: Cancellation.CancellationToken,
    readonly tracing: boolean,
    /** Made on first use (a run that never reads them allocates nothing), then shared by the tree. */
    private tree: RunTree | undefined,
    /** This run's node of the tally, made on first use; its parent is the node it was made under. */
    private node: RunNode | undefined,
    private readonly parentNode: RunNode | undefined
  ) {}

  private shared(): RunTree {
    if (this.tree === undefined) this.own() // only a top-level run has no tree yet: it is made with its node
    return this.tree!
  }

  private own(): RunNode {
    if (this.node === undefined) {
      this.node = new RunNode(this.parentNode)
      this.tree ??= new RunTree(this.node)
    }
    return this.node
  }

  get legs(): RunContext.Legs {
    return this.shared().root
  }

  get tally(): RunContext.Tally {
    return this.own()
  }

  get decisions(): Map<string, unknown> {
    return this.shared().decisions
  }

  touch(legs: RunContext.LegsInput): void {
    const [privateData, untrustedContent, egress] = legsOf(legs)
    if (privateData || untrustedContent || egress) this.own().touch(privateData, untrustedContent, egress)
  }

  charge(usage: Usage.Usage): void {
    this.own().charge(usage)
  }

  restore(saved: { readonly legs: RunContext.LegsInput; readonly usage: Usage.Usage }): void {
    this.touch(saved.legs)
    this.own().restoreUsage(saved.usage)
  }

  branch(): RunContext.Service {
    return new RunContextValue(
      this.runId,
      this.parentRunId,
      this.rootRunId,
      this.threadId,
      this.correlationId,
      this.scope,
      this.budget,
      this.autonomy,
      this.depth,
      this.cancellation,
      this.tracing,
      this.shared(),
      undefined,
      this.own()
    )
  }

  child(segment: string = "sub"): Effect.Effect<RunContext.Service, DepthExceeded> {
    const depth = this.depth + 1
    if (depth > this.budget.maxDepth) return Effect.fail(new DepthExceeded({ depth, maxDepth: this.budget.maxDepth }))
    return Effect.succeed(
      new RunContextValue(
        `${this.runId}/${segment}`,
        this.runId,
        this.rootRunId,
        this.threadId,
        this.correlationId,
        this.scope,
        this.budget,
        this.autonomy,
        depth,
        this.cancellation,
        this.tracing,
        this.shared(),
        undefined,
        this.own()
      )
    )
  }
}

const checkLegs = (legs: unknown): ConfigurationError | undefined =>
  legs === undefined || (Array.isArray(legs) && legs.every((leg) => capabilities.includes(leg)))
    ? undefined
    : new ConfigurationError({
      field: "legs",
      message: `legs must be a list of 'private_data', 'untrusted_content', 'egress'; got ${
        Array.isArray(legs) ? JSON.stringify(legs) : String(legs)
      }`
    })

const checkId = (field: "runId" | "threadId", value: unknown): ConfigurationError | undefined =>
  value === undefined || (typeof value === "string" && value.length > 0)
    ? undefined
    : new ConfigurationError({
      field,
      message: `${field} must be a non-empty string; got ${typeof value === "string" ? "''" : String(value)}`
    })

/**
 * The context of `options`, or the `ConfigurationError` naming the bad option: at once (an
 * `Either`) unless budget limits must be checked (an Effect).
 */
const contextOf = (options: RunContext.Options): Effect.Effect<RunContext.Service, ConfigurationError> => {
  const autonomy = options.autonomy ?? "auto"
  if (!autonomyTiers.includes(autonomy)) {
    return Either.left(
      new ConfigurationError({
        field: "autonomy",
        message: `autonomy must be one of 'auto', 'gated', 'manual'; got ${
          typeof autonomy === "string" ? PythonText.repr(autonomy) : String(autonomy)
        }`
      })
    )
  }
  const idError = checkId("runId", options.runId) ?? checkId("threadId", options.threadId) ?? checkLegs(options.legs)
  if (idError !== undefined) return Either.left(idError)
  let scope: Scope.Scope
  try {
    scope = options.scope === undefined
      ? Scope.empty
      : options.scope instanceof Scope.Scope
      ? options.scope
      : Scope.make(options.scope)
  } catch (error) {
    return Either.left(
      new ConfigurationError({
        field: "scope",
        message: `scope must be { orgId?, domainId?: number | string, userId?, sessionId?: string }: ${
          errorMessage(error)
        }`
      })
    )
  }
  const build = (budget: Budget.Budget): RunContext.Service => {
    const runId = options.runId ?? uuid()
    const context = new RunContextValue(
      runId,
      undefined,
      runId,
      options.threadId,
      options.correlationId ?? runId,
      scope,
      budget,
      autonomy,
      0,
      options.cancellation ?? Cancellation.make(),
      options.tracing ?? true,
      undefined,
      undefined,
      undefined
    )
    if (options.legs !== undefined) context.touch(options.legs)
    return context
  }
  // the default (unlimited) budget needs no check: it is made in place, with no extra step
  if (options.budget === undefined) return Either.right(build(Budget.unsafeMake()))
  if (options.budget instanceof Budget.Budget) return Either.right(build(options.budget))
  return Effect.map(Budget.make(options.budget), build)
}

/**
 * The run context service. Provide it with `RunContext.layer(options)` (tests and simple apps) or
 * `RunContext.provide(options)` (a fresh context per run in a server; no layer is built per
 * call). Read it with `yield* RunContext`.
 *
 * @example
 * ```ts
 * import { RunContext } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const run = yield* RunContext
 *   return `${run.correlationId} ${run.scope.key}`
 * })
 *
 * Effect.runPromise(program.pipe(RunContext.provide({ correlationId: "run-1", scope: { orgId: 7 } })))
 * // "run-1 org7:domNone"
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class RunContext extends Context.Tag("@agentkit/core/RunContext")<RunContext, RunContext.Service>() {
  /**
   * Builds a context value, checking the options: an unknown autonomy tier or a bad budget limit
   * is a `ConfigurationError` naming the field and what is accepted.
   */
  static make(options: RunContext.Options = {}): Effect.Effect<RunContext.Service, ConfigurationError> {
    return Effect.suspend(() => contextOf(options))
  }

  /** A layer providing one context (the options are checked when the layer is built). */
  static layer(options: RunContext.Options = {}): Layer.Layer<RunContext, ConfigurationError> {
    return Layer.effect(RunContext, RunContext.make(options))
  }

  /** Provides a fresh context to one effect: the per-run way to run agents in a server. */
  static provide(
    options: RunContext.Options = {}
  ): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | ConfigurationError, Exclude<R, RunContext>> {
    return <A, E, R>(self: Effect.Effect<A, E, R>) => {
      // the context is provided here, so the requirement is met
      const within = self as Effect.Effect<A, E, Exclude<R, RunContext>>
      return Effect.suspend((): Effect.Effect<A, E | ConfigurationError, Exclude<R, RunContext>> => {
        const made = contextOf(options)
        if (!Either.isEither(made)) return Effect.flatMap(made, (context) => providedIn(within, context))
        const known = made as Either.Either<RunContext.Service, ConfigurationError>
        return Either.isLeft(known) ? Effect.fail(known.left) : providedIn(within, known.right)
      })
    }
  }

  /**
   * Reads the current context and continues with `f`: `Effect.flatMap(RunContext, f)` in one step
   * of the run loop instead of three (a tool's `run` uses it on every call).
   *
   * @example
   * ```ts
   * import { RunContext } from "@agentkit/core"
   * import { Effect } from "effect"
   *
   * const runId = RunContext.with((context) => Effect.succeed(context.runId))
   * Effect.runPromise(runId.pipe(RunContext.provide({ runId: "run-1" }))) // "run-1"
   * ```
   */
  static with<A, E, R>(
    f: (context: RunContext.Service) => Effect.Effect<A, E, R>
  ): Effect.Effect<A, E, R | RunContext> {
    return Effect.withFiberRuntime((fiber) => f(RunContext.unsafeOf(fiber)))
  }

  /**
   * The context in a running fiber's environment, for code already inside
   * `Effect.withFiberRuntime` (it reads the context with no closure of its own, where
   * `RunContext.with` adds one); throws when there is none, as `yield* RunContext` dies.
   *
   * @example
   * ```ts
   * import { RunContext } from "@agentkit/core"
   * import { Effect } from "effect"
   *
   * const runId = Effect.withFiberRuntime((fiber) => Effect.succeed(RunContext.unsafeOf(fiber).runId))
   * Effect.runPromise(runId.pipe(RunContext.provide({ runId: "run-1" }))) // "run-1"
   * ```
   */
  static unsafeOf(fiber: Fiber.RuntimeFiber<unknown, unknown>): RunContext.Service {
    return Context.unsafeGet(fiber.currentContext as Context.Context<RunContext>, RunContext)
  }

  /** The current context's sub-run context (depth + 1, run id `<runId>/sub`), failing past `maxDepth`. */
  static readonly child: Effect.Effect<RunContext.Service, DepthExceeded, RunContext> = Effect.flatMap(
    RunContext,
    (context) => context.child()
  )

  /**
   * Runs `self` so that flipping the context's cancellation handle (from any code) interrupts it:
   * its finalizers run and the result is a typed `Cancelled` failure. A token that is already
   * cancelled fails at once. Interrupting the fiber directly stays an ordinary interruption.
   */
  static cancellable<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | Cancelled, R | RunContext> {
    return Effect.withFiberRuntime((fiber) => {
      const token = RunContext.unsafeOf(fiber).cancellation
      if (token.isCancelled) return Effect.fail(new Cancelled())
      return inPlace(fiber, token, self)
    })
  }
}

/** Runs `self` with `context` added to its environment (put back when `self` ends, however it ends). */
const providedIn = <A, E, R>(
  self: Effect.Effect<A, E, R>,
  context: RunContext.Service
): Effect.Effect<A, E, Exclude<R, RunContext>> =>
  locallyWith(
    self as Effect.Effect<A, E, Exclude<R, RunContext>>,
    FiberRef.currentContext,
    (outer) => Context.add(outer, RunContext, context)
  )

/**
 * The interruptor of a run whose cancellation handle flipped: no real fiber has this id, so the
 * boundary can tell a cancellation from any other interruption.
 */
const cancelledBy = FiberId.make(-1, 0)

/** Whether every interruption recorded in `cause` is a cancellation. */
const cancelledOnly = (cause: Cause.Cause<never>): boolean => {
  const by = Cause.interruptors(cause)
  return HashSet.size(by) === 1 && HashSet.has(by, cancelledBy)
}

/**
 * The cancellation boundary without a second fiber: the token interrupts this very fiber as
 * `cancelledBy` (which reaches the work it runs, not its other child fibers). When the work ends
 * (whatever its outcome, once the listener is removed), an interruption of this fiber by
 * `cancelledBy` alone is the boundary's own: it is cleared, so the caller goes on, and work that
 * was only interrupted becomes `Cancelled`; work that finished first keeps its result. Any other
 * interruption (from outside, or with one) is left as it is. The fibers the work forked from
 * this fiber and left running are interrupted, as when the work had a fiber of its own: the
 * boundary is the fiber's supervisor while the work runs (`FiberRef.currentSupervisor`, beside
 * the one it had), which sees them start and end; of those, the fiber's own children
 * (`Fiber.children`) are interrupted, so a daemon or a fiber forked into another scope lives on.
 */
const inPlace = <A, E, R>(
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  token: Cancellation.CancellationToken,
  self: Effect.Effect<A, E, R>
): Effect.Effect<A, E | Cancelled, R> => {
  const outer = fiber.getFiberRef(FiberRef.currentSupervisor)
  return Effect.uninterruptibleMask((restore) => {
    const boundary = new Boundary<A, E>(fiber, token, outer)
    listen(token, boundary)
    return Effect.zipRight(
      FiberRef.set(FiberRef.currentSupervisor, outer === Supervisor.none ? boundary : outer.zip(boundary)),
      Effect.matchCauseEffect(restore(self), boundary)
    )
  })
}

/**
 * The in-place boundary: the token's listener (it interrupts the fiber as `cancelledBy`), the
 * supervisor that keeps the fibers the work forks from the fiber while they run, and the
 * region's settlement (it stops listening, puts the fiber's supervisor back, then ends the
 * boundary).
 */
class Boundary<A, E> extends Supervisor.AbstractSupervisor<void> implements Listener {
  /** The fibers the work forked from the boundary's fiber, still running (made on the first). */
  forked: Set<Fiber.RuntimeFiber<unknown, unknown>> | undefined = undefined

  constructor(
    readonly fiber: Fiber.RuntimeFiber<unknown, unknown>,
    readonly token: Cancellation.CancellationToken,
    readonly outer: Supervisor.Supervisor<unknown>
  ) {
    super()
  }

  get value(): Effect.Effect<void> {
    return Effect.void
  }

  override onStart<X, Y, Z>(
    _context: Context.Context<Z>,
    _effect: Effect.Effect<X, Y, Z>,
    parent: Option.Option<Fiber.RuntimeFiber<unknown, unknown>>,
    child: Fiber.RuntimeFiber<X, Y>
  ): void {
    if (Option.isSome(parent) && parent.value === this.fiber) {
      ;(this.forked ??= new Set()).add(child as Fiber.RuntimeFiber<unknown, unknown>)
    }
  }

  override onEnd<X, Y>(_exit: Exit.Exit<X, Y>, child: Fiber.RuntimeFiber<X, Y>): void {
    this.forked?.delete(child as Fiber.RuntimeFiber<unknown, unknown>)
  }

  cancelled(): void {
    this.fiber.unsafeInterruptAsFork(cancelledBy)
  }

  readonly onFailure = (cause: Cause.Cause<E>): Effect.Effect<A, E | Cancelled> => {
    unlisten(this.token, this)
    return settle(this, cause, Effect.failCause(cause))
  }

  readonly onSuccess = (a: A): Effect.Effect<A, E | Cancelled> => {
    unlisten(this.token, this)
    return settle(this, undefined, Effect.succeed(a))
  }
}

/** How the in-place boundary ends, once it stopped listening (a module function: nothing of it is made per run). */
const settle = <A, E>(
  boundary: Boundary<A, E>,
  cause: Cause.Cause<E> | undefined,
  exit: Effect.Effect<A, E>
): Effect.Effect<A, E | Cancelled> => {
  let result: Effect.Effect<A, E | Cancelled> = exit
  const interrupted = boundary.fiber.getFiberRef(FiberRef.interruptedCause)
  if (!Cause.isEmpty(interrupted) && boundary.token.isCancelled && cancelledOnly(interrupted)) {
    if (cause !== undefined && Cause.isInterruptedOnly(cause)) result = Effect.fail(new Cancelled())
    result = Effect.zipRight(FiberRef.set(FiberRef.interruptedCause, Cause.empty), result)
  }
  const forked = boundary.forked
  if (forked !== undefined && forked.size > 0) {
    // the supervisor sees every fork, daemons and forks into another scope too: only the fiber's
    // own children are the work's left-overs (a daemon outlives the run, as Effect.forkDaemon says)
    const leftOver = Effect.flatMap(
      Fiber.children(boundary.fiber),
      (children) => Fiber.interruptAll(children.filter((child) => forked.has(child)))
    )
    result = Effect.zipRight(leftOver, result)
  }
  return Effect.zipRight(FiberRef.set(FiberRef.currentSupervisor, boundary.outer), result)
}

/**
 * The run context's types: `RunContext.Service` (the context value) and `RunContext.Options`.
 *
 * @example
 * ```ts
 * import { RunContext } from "@agentkit/core"
 *
 * const options: RunContext.Options = { correlationId: "run-1", scope: { orgId: 7 }, budget: { maxCostUsd: 1 } }
 * const describe = (run: RunContext.Service) => `${run.correlationId} depth=${run.depth}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace RunContext {
  /**
   * The run context value.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /**
     * The run id: the key of the run's record in a checkpoint store, and part of its idempotency,
     * ledger and audit keys. A sub-run's id is its parent's plus a segment (`<parent>/<segment>`).
     */
    readonly runId: string
    /** The parent run's id; `undefined` for a top-level run. */
    readonly parentRunId: string | undefined
    /** The top-level run's id (the run whose lease covers the whole tree). */
    readonly rootRunId: string
    /**
     * The conversation this run belongs to, across runs (optional): the key of its `Session`
     * thread, within the run's tenant. Not `scope.sessionId`, which is a part of the tenant.
     */
    readonly threadId: string | undefined
    /** The tracing id (`gen_ai.conversation.id`): the root run's id unless given; shared by the tree. */
    readonly correlationId: string
    /** The tenant scope. */
    readonly scope: Scope.Scope
    /** The run's budget, shared by reference with every sub-run. */
    readonly budget: Budget.Budget
    /** The autonomy tier. */
    readonly autonomy: Autonomy
    /** 0 for a top-level run, +1 per sub-agent. */
    readonly depth: number
    /** The cancellation handle, shared by reference with every sub-run. */
    readonly cancellation: Cancellation.CancellationToken
    /** Whether the run opens spans (`false` makes tracing cost nothing). */
    readonly tracing: boolean
    /**
     * The trifecta legs the whole run tree has touched: one cell per tree, shared by reference (a
     * leg touched anywhere in the tree is seen everywhere in it). Legs are only ever added.
     */
    readonly legs: Legs
    /** What this run and everything under it touched and spent: its node of the tree's tally. */
    readonly tally: Tally
    /**
     * Adds legs (never removes one): to this run's tally, every run above it and the tree. The
     * agent loop touches the legs of each tool result; a caller declares legs with the `legs` option.
     */
    touch(legs: LegsInput): void
    /** Adds a model call's usage to this run's tally and every run above it (the Invoker does, for every model call). */
    charge(usage: Usage.Usage): void
    /**
     * Starts a run resumed from its saved state: its saved legs are touched again (they reach the
     * tree) and its saved usage becomes part of its own tally only (the runs above counted it
     * when it was spent).
     */
    restore(saved: { readonly legs: LegsInput; readonly usage: Usage.Usage }): void
    /**
     * The same run with a tally node of its own, under this run's: for one piece of work that
     * starts sub-runs (the agent loop runs each delegating tool call on one), so what they
     * touched and spent can be read on its own (`branch.tally`), while it still counts for this
     * run and the tree.
     */
    branch(): Service
    /** Decisions by pending id, shared by the run tree (how a decision reaches a sub-run). */
    readonly decisions: Map<string, unknown>
    /**
     * A sub-run context: depth + 1 (failing with `DepthExceeded` past `maxDepth`), run id
     * `<runId>/<segment>` (segment `sub` by default); budget, cancellation, legs, decisions,
     * scope, correlation and thread ids shared.
     */
    child(segment?: string): Effect.Effect<Service, DepthExceeded>
  }

  /**
   * The trifecta legs touched (read-only: legs are added with `touch`, never removed).
   *
   * @since 0.1.0
   * @category models
   */
  export interface Legs {
    readonly privateData: boolean
    readonly untrustedContent: boolean
    readonly egress: boolean
  }

  /**
   * Legs to add: a list of capabilities, or some of the flags.
   *
   * @since 0.1.0
   * @category models
   */
  export type LegsInput = ReadonlyArray<Capability> | Partial<Legs>

  /**
   * One run's (or one delegating call's) tally: the legs touched and the usage spent at or under it.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Tally {
    readonly legs: Legs
    readonly usage: Usage.Usage
  }

  /**
   * Options for a context. Everything is optional: a random run id (the correlation id defaults
   * to it), no thread, the empty scope, an unlimited budget, autonomy `auto`, a fresh
   * cancellation handle, tracing on.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Options {
    readonly runId?: string | undefined
    /** The conversation across runs (a `Session`'s thread); a non-empty string. */
    readonly threadId?: string | undefined
    readonly correlationId?: string | undefined
    readonly scope?: Scope.Scope | Scope.Fields | undefined
    readonly budget?: Budget.Budget | Budget.Limits | undefined
    readonly autonomy?: Autonomy | undefined
    readonly cancellation?: Cancellation.CancellationToken | undefined
    readonly tracing?: boolean | undefined
    /**
     * Legs the run starts with, declared by the caller (e.g. `["untrusted_content"]` for input
     * from the web): added to the tree's legs, never removed.
     */
    readonly legs?: ReadonlyArray<Capability> | undefined
  }
}
