/**
 * The run's budget: cost, model calls, tokens and tool calls, the depth of sub-agents and a
 * tree-wide concurrency limit. One budget is shared by a run and all its sub-runs.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import { BudgetExceeded } from "./BudgetError.js"
import { ConfigurationError } from "./ConfigurationError.js"
import * as PythonText from "./PythonText.js"
import * as Usage from "./Usage.js"

/**
 * The limits of a budget. Absent limits are unlimited, except `maxDepth` (default 4) and
 * `maxConcurrency` (default 8).
 *
 * @example
 * ```ts
 * import { Budget } from "@agentkit/core"
 *
 * const limits: Budget.Limits = { maxCostUsd: 0.5, maxModelCalls: 10, maxToolCalls: 20 }
 * const budget = Budget.unsafeMake(limits)
 * budget.maxDepth // 4 (the default)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Limits {
  /** Ceiling on the run's cost in USD. */
  readonly maxCostUsd?: number | undefined
  /** Ceiling on the number of model calls. */
  readonly maxModelCalls?: number | undefined
  /** Ceiling on input + output tokens. */
  readonly maxTokens?: number | undefined
  /** Ceiling on the number of tool calls. */
  readonly maxToolCalls?: number | undefined
  /** How deep sub-agents may nest (default 4: depths 0..4 are legal). */
  readonly maxDepth?: number | undefined
  /** How many tool calls may run at once across the whole run tree (default 8). */
  readonly maxConcurrency?: number | undefined
}

/**
 * The counters of a budget at one moment: what a run state carries, so a resumed or recovered run
 * goes on from what was already spent. Money is in integer nano-USD.
 *
 * @example
 * ```ts
 * import { Budget } from "@agentkit/core"
 *
 * const budget = Budget.unsafeMake({ maxModelCalls: 10 })
 * const snapshot: Budget.Snapshot = budget.snapshot()
 * snapshot.modelCalls // 0
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Snapshot {
  readonly modelCalls: number
  readonly toolCalls: number
  readonly tokens: number
  readonly costNanos: number
  /** Model calls reserved but not returned yet. */
  readonly inFlightModelCalls: number
  /** Tool executions reserved but not returned yet. */
  readonly inFlightToolCalls: number
  /** Nano-USD held by the open model-call reservations (charged in full if the run stops before they settle). */
  readonly reservedNanos: number
  /** Tokens held by the open model-call reservations. */
  readonly reservedTokens: number
}

/**
 * What one model call may cost at most, held from before the request is sent until its real usage
 * replaces it: tokens (input bound plus output bound) and integer nano-USD at the catalog's prices.
 *
 * @example
 * ```ts
 * import { Budget, Usage } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const budget = Budget.unsafeMake({ maxCostUsd: 0.01 })
 * const hold: Budget.Reservation = { tokens: 1200, nanos: 3_000_000 } // at most $0.003
 * Effect.runSync(budget.modelCall(Effect.succeed(Usage.make({ costUsd: 0.001 })), (usage) => usage, hold))
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface Reservation {
  readonly tokens: number
  readonly nanos: number
}

/** No amounts held: a call under count ceilings only. */
const nothing: Reservation = Object.freeze({ tokens: 0, nanos: 0 })

/** A reservation that must wait for open ones to settle. */
const WAIT = "wait" as const

/** A caller waiting for open reservations to settle. */
interface Waiter {
  readonly reservation: Reservation
  readonly grant: (refused: BudgetExceeded | undefined) => void
}

/** No limits at all: the default budget's. */
const noLimits: Limits = Object.freeze({})

/**
 * A live budget, shared by a run and all its sub-runs.
 *
 * Every limit is checked against **settled usage plus open reservations**. The Invoker reserves at
 * the innermost point, just before each provider request and each tool execution (so retries and
 * fallbacks each reserve).
 *
 * Count limits (`maxModelCalls`, `maxToolCalls`): a call that would exceed the limit is refused
 * before it is sent, with `calls N+1 > N` (`tool calls N+1 > N`, N the limit), and is not counted;
 * a reservation becomes a count when the call returns, whether it succeeded or failed (it reached
 * the provider). Exactly N requests reach the provider under a limit of N, one at a time or a
 * thousand at once.
 *
 * Cost and token limits (`maxCostUsd`, `maxTokens`): a model call reserves what it may cost at most
 * (a `Reservation`: its input tokens by the `TokenEstimator`, its output at the request's
 * `maxTokens` or else the model's output limit, priced from the `ModelCatalog`). A call whose
 * reservation would cross a ceiling waits while other reservations are open (they may settle for
 * less), and is refused before it is sent when none is (`cost $0.02 > $0.015`, the spend it would
 * reach). When the call returns, its real usage replaces its reservation; a call that failed is
 * counted and charges nothing, one that was interrupted charges its reservation (it may have been
 * billed). So the spend stays under the ceiling while calls cost no more than they reserved; a call
 * whose usage exceeds its reservation (a catalog entry below the provider's price, a counter below
 * the provider's tokenizer) is charged and then fails (`cost $0.02 > $0.015`), and the spend is over
 * the ceiling by at most that one call's excess. Every later call is refused.
 *
 * With a journal (`addJournal`: a durable run's lifecycle adds one), the open reservations are
 * recorded before each request is sent, so a run that stops and is taken over counts each open
 * reservation as spent in full (`restore`).
 *
 * Money is kept exactly, in integer nano-USD; `spentUsd` derives dollars from it.
 *
 * @example
 * ```ts
 * import { Budget, Usage } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const budget = Budget.unsafeMake({ maxCostUsd: 0.015, maxModelCalls: 5 })
 * const hold: Budget.Reservation = { tokens: 2000, nanos: 10_000_000 } // at most $0.01
 * const ask = budget.modelCall(Effect.succeed(Usage.make({ costUsd: 0.004 })), (usage) => usage, hold)
 * Effect.runSync(ask) // reserved $0.01, then charged its real $0.004
 * Effect.runSync(ask) // $0.004 + $0.01 fits: sent; spent $0.008
 * Effect.runSyncExit(ask) // refused before it runs: "cost $0.018 > $0.015"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export class Budget {
  readonly maxCostUsd: number | undefined
  readonly maxModelCalls: number | undefined
  readonly maxTokens: number | undefined
  readonly maxToolCalls: number | undefined
  readonly maxDepth: number
  readonly maxConcurrency: number
  readonly #maxCostNanos: number | undefined
  #free: number
  // made on the first wait: a run that never waits for a permit keeps no array
  #waiting: Array<() => void> | undefined = undefined
  #costNanos = 0
  #modelCalls = 0
  #tokens = 0
  #toolCalls = 0
  #inFlightModelCalls = 0
  #inFlightToolCalls = 0
  #reservedNanos = 0
  #reservedTokens = 0
  // made on the first wait for reservations to settle
  #settling: Array<Waiter> | undefined = undefined
  // what records the open reservations before a request is sent (a durable run's checkpoint)
  #journals: Array<Effect.Effect<void>> | undefined = undefined
  #journal: Effect.Effect<void> | undefined = undefined

  /** Throws `ConfigurationError` on an invalid limit; `Budget.make` is the Effect way. */
  constructor(limits: Limits = noLimits) {
    // no limits (every run's default budget) need no check
    const error = limits === noLimits ? undefined : validate(limits)
    if (error !== undefined) throw error
    this.maxCostUsd = limits.maxCostUsd
    this.#maxCostNanos = limits.maxCostUsd === undefined ? undefined : Math.round(limits.maxCostUsd * 1e9)
    this.maxModelCalls = limits.maxModelCalls
    this.maxTokens = limits.maxTokens
    this.maxToolCalls = limits.maxToolCalls
    this.maxDepth = limits.maxDepth ?? 4
    this.maxConcurrency = limits.maxConcurrency ?? 8
    this.#free = this.maxConcurrency
  }

  /** The limits this budget was made with (what a run state records, to rebuild it). */
  get limits(): Limits {
    const limits: { -readonly [K in keyof Limits]: Limits[K] } = {
      maxDepth: this.maxDepth,
      maxConcurrency: this.maxConcurrency
    }
    if (this.maxCostUsd !== undefined) limits.maxCostUsd = this.maxCostUsd
    if (this.maxModelCalls !== undefined) limits.maxModelCalls = this.maxModelCalls
    if (this.maxTokens !== undefined) limits.maxTokens = this.maxTokens
    if (this.maxToolCalls !== undefined) limits.maxToolCalls = this.maxToolCalls
    return limits
  }

  /** USD spent so far (exact: derived from integer nano-USD). */
  get spentUsd(): number {
    return Usage.usdOf(this.#costNanos)
  }
  /** Nano-USD spent so far. */
  get spentNanos(): number {
    return this.#costNanos
  }
  /** Model calls counted so far (reservations that returned). */
  get modelCalls(): number {
    return this.#modelCalls
  }
  /** Input + output tokens charged so far. */
  get tokens(): number {
    return this.#tokens
  }
  /** Tool executions counted so far. */
  get toolCalls(): number {
    return this.#toolCalls
  }
  /** Model calls reserved and not returned yet. */
  get inFlightModelCalls(): number {
    return this.#inFlightModelCalls
  }
  /** Tool executions reserved and not returned yet. */
  get inFlightToolCalls(): number {
    return this.#inFlightToolCalls
  }
  /** Nano-USD held by open model-call reservations. */
  get reservedNanos(): number {
    return this.#reservedNanos
  }
  /** Tokens held by open model-call reservations. */
  get reservedTokens(): number {
    return this.#reservedTokens
  }
  /** What is left of the cost ceiling, or `undefined` when there is none. */
  get remainingUsd(): number | undefined {
    return this.#maxCostNanos === undefined ? undefined : Usage.usdOf(Math.max(0, this.#maxCostNanos - this.#costNanos))
  }
  /** Whether a model call must reserve amounts (a cost or token ceiling is set): the Invoker prices it first. */
  get reservesAmounts(): boolean {
    return this.#maxCostNanos !== undefined || this.maxTokens !== undefined
  }

  /**
   * Adds a journal: `record` runs after each model call or tool execution is reserved and before
   * it is sent, so the open reservations are durable first (a durable run's lifecycle saves its
   * state with this budget's `snapshot()`). A `record` that fails dies: the call is not sent.
   * Returns the function that removes it.
   */
  addJournal(record: Effect.Effect<void>): () => void {
    const journals = (this.#journals ??= [])
    journals.push(record)
    this.#composeJournal()
    return () => {
      const index = journals.indexOf(record)
      if (index >= 0) journals.splice(index, 1)
      this.#composeJournal()
    }
  }

  #composeJournal(): void {
    const journals = this.#journals!
    this.#journal = journals.length === 0
      ? undefined
      : journals.length === 1
      ? journals[0]
      : Effect.forEach(journals.slice(), (record) => record, { discard: true })
  }

  /** `self` after the journals recorded the reservation just made. */
  #journaled<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    return this.#journal === undefined ? self : Effect.zipRight(this.#journal, self)
  }

  /** Concurrency permits free right now. */
  get freePermits(): number {
    return this.#free
  }

  /** The counters now: what a checkpoint records. */
  snapshot(): Snapshot {
    return {
      modelCalls: this.#modelCalls,
      toolCalls: this.#toolCalls,
      tokens: this.#tokens,
      costNanos: this.#costNanos,
      inFlightModelCalls: this.#inFlightModelCalls,
      inFlightToolCalls: this.#inFlightToolCalls,
      reservedNanos: this.#reservedNanos,
      reservedTokens: this.#reservedTokens
    }
  }

  /**
   * Goes on from a snapshot (a resumed or recovered run): each counter becomes at least the
   * snapshot's, and what was in flight when it was taken counts as spent, each open reservation in
   * full (it may have reached the provider and been billed: fail closed). Reservations in flight
   * now are kept.
   */
  restore(snapshot: Snapshot): void {
    this.#modelCalls = Math.max(this.#modelCalls, snapshot.modelCalls + snapshot.inFlightModelCalls)
    this.#toolCalls = Math.max(this.#toolCalls, snapshot.toolCalls + snapshot.inFlightToolCalls)
    this.#tokens = Math.max(this.#tokens, snapshot.tokens + (snapshot.reservedTokens ?? 0))
    this.#costNanos = Math.max(this.#costNanos, snapshot.costNanos + (snapshot.reservedNanos ?? 0))
  }

  /**
   * Runs `self` holding one of the tree-wide concurrency permits (tool executions do). A permit is
   * taken at once when one is free; otherwise the caller waits in line, interruptibly. The permit
   * is handed over when `self` ends, however it ends.
   * (A small permit pool of our own: Effect's semaphore costs several µs per use on this path.)
   */
  withPermit<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    return Effect.uninterruptibleMask((restore) => {
      const run = Effect.matchCauseEffect(restore(self), this.#handingOver() as Settlement<A, E>)
      return this.#take() ? run : Effect.zipRight(this.#wait(restore), run)
    })
  }

  /** A permit holder's end, whatever its outcome: the permit handed over (made once per budget, when first used). */
  #handingOver(): Settlement<unknown, unknown> {
    return (this.#permitEnd ??= {
      onFailure: (cause) => {
        this.#handOver()
        return Effect.failCause(cause)
      },
      onSuccess: (a) => {
        this.#handOver()
        return Effect.succeed(a)
      }
    })
  }
  #permitEnd: Settlement<unknown, unknown> | undefined = undefined

  /** Takes a free permit, if there is one. */
  #take(): boolean {
    if (this.#free === 0) return false
    this.#free -= 1
    return true
  }

  /** Waits in line for a permit, interruptibly (a permit handed over to an interrupted waiter is passed on). */
  #wait(restore: <X, Y, Z>(effect: Effect.Effect<X, Y, Z>) => Effect.Effect<X, Y, Z>): Effect.Effect<void> {
    let granted = false
    return restore(
      Effect.async<void>((resume) => {
        const grant = () => {
          granted = true
          resume(Effect.void)
        }
        ;(this.#waiting ??= []).push(grant)
        return Effect.sync(() => {
          const index = this.#waiting?.indexOf(grant) ?? -1
          if (index >= 0) this.#waiting!.splice(index, 1)
          else if (granted) this.#handOver() // interrupted after the permit was handed over: pass it on
        })
      })
    )
  }

  #handOver(): void {
    const next = this.#waiting?.shift()
    if (next === undefined) this.#free += 1
    else next()
  }

  /** Fails when a ceiling is already crossed (cost, tokens, model calls). */
  get guard(): Effect.Effect<void, BudgetExceeded> {
    return Effect.suspend(() => this.#check())
  }

  /**
   * Reserves one model call (no amounts): refused (and not counted) when the cost or token ceiling
   * is crossed or when it would exceed `maxModelCalls` (`calls N+1 > N`). Pair it with
   * `settleModelCall`, or use `modelCall`, which does both (and reserves amounts).
   */
  get reserveModelCall(): Effect.Effect<void, BudgetExceeded> {
    return Effect.suspend(() => {
      const refused = this.#reserveModel(nothing)
      // no amounts: never waits
      return refused === undefined ? Effect.void : Effect.fail(refused as BudgetExceeded)
    })
  }

  /**
   * Reserves one model call in place: `undefined` when reserved, the error when it is refused, or
   * `WAIT` when its amounts fit only once open reservations settle for less than they hold.
   */
  #reserveModel(reservation: Reservation): BudgetExceeded | undefined | typeof WAIT {
    const crossed = this.#crossed()
    if (crossed !== undefined) return crossed
    if (this.maxModelCalls !== undefined && this.#modelCalls + this.#inFlightModelCalls + 1 > this.maxModelCalls) {
      return this.#overCalls()
    }
    if (reservation !== nothing) {
      const over = this.#crossedBy(reservation)
      if (over !== undefined) {
        // it may fit once the open reservations settle (they hold their bound, calls cost less)
        const fitsAlone =
          (this.#maxCostNanos === undefined || this.#costNanos + reservation.nanos <= this.#maxCostNanos) &&
          (this.maxTokens === undefined || this.#tokens + reservation.tokens <= this.maxTokens)
        return fitsAlone && (this.#reservedNanos > 0 || this.#reservedTokens > 0) ? WAIT : over
      }
      this.#reservedNanos += reservation.nanos
      this.#reservedTokens += reservation.tokens
    }
    this.#inFlightModelCalls += 1
    return undefined
  }

  /** The ceiling `reservation` would cross on top of settled usage and open reservations, with the spend it would reach. */
  #crossedBy(reservation: Reservation): BudgetExceeded | undefined {
    if (this.#maxCostNanos !== undefined) {
      const reach = this.#costNanos + this.#reservedNanos + reservation.nanos
      if (reach > this.#maxCostNanos) {
        return new BudgetExceeded({
          limit: "cost",
          message: `cost $${PythonText.float(Usage.usdOf(reach))} > $${PythonText.float(this.maxCostUsd!)}`
        })
      }
    }
    if (this.maxTokens !== undefined) {
      const reach = this.#tokens + this.#reservedTokens + reservation.tokens
      if (reach > this.maxTokens) {
        return new BudgetExceeded({ limit: "tokens", message: `tokens ${reach} > ${this.maxTokens}` })
      }
    }
    return undefined
  }

  /**
   * A reserved model call returned: it is counted, and its usage (when it answered) charged; fails
   * when a cost or token ceiling is now crossed.
   */
  settleModelCall(usage: Usage.Usage | undefined): Effect.Effect<void, BudgetExceeded> {
    return Effect.suspend(() => {
      const crossed = this.#endModelCall(nothing, usage)
      return crossed === undefined ? Effect.void : Effect.fail(crossed)
    })
  }

  /**
   * Runs one model call under a reservation: reserved before `self` starts (with `reservation`,
   * its amounts held against the cost and token ceilings: a call that does not fit waits for open
   * reservations to settle, or is refused), recorded by the journals, counted when it returns
   * (success, failure or interruption: it may have reached the provider), its usage charged in
   * place of its reservation when it succeeds, its reservation charged when it was interrupted.
   * This is the one point where a model call is reserved (the Invoker's, for every model call).
   */
  modelCall<A, E, R>(
    self: Effect.Effect<A, E, R>,
    usageOf: (a: A) => Usage.Usage,
    reservation: Reservation = nothing
  ): Effect.Effect<A, E | BudgetExceeded, R> {
    return Effect.uninterruptibleMask((restore) => {
      const reserved = this.#reserveModel(reservation)
      if (reserved === undefined) return this.#sendModel(restore, self, usageOf, reservation)
      if (reserved !== WAIT) return Effect.fail(reserved)
      return Effect.zipRight(this.#settled(restore, reservation), this.#sendModel(restore, self, usageOf, reservation))
    })
  }

  /** A reserved model call: journaled, sent, settled. */
  #sendModel<A, E, R>(
    restore: <X, Y, Z>(effect: Effect.Effect<X, Y, Z>) => Effect.Effect<X, Y, Z>,
    self: Effect.Effect<A, E, R>,
    usageOf: (a: A) => Usage.Usage,
    reservation: Reservation
  ): Effect.Effect<A, E | BudgetExceeded, R> {
    return Effect.matchCauseEffect(restore(this.#journaled(self)), {
      onFailure: (cause) => {
        // a ceiling it crosses is for later calls: this one failed already; an interrupted call may
        // have been billed (its reservation is charged), a failed one was not
        this.#endModelCall(reservation, undefined, reservation !== nothing && Cause.isInterruptedOnly(cause))
        return Effect.failCause(cause)
      },
      onSuccess: (a) => {
        let usage: Usage.Usage
        try {
          usage = usageOf(a)
        } catch (defect) {
          this.#endModelCall(reservation, undefined) // it reached the provider: counted, whatever its answer
          return Effect.die(defect)
        }
        const crossed = this.#endModelCall(reservation, usage)
        return crossed === undefined ? Effect.succeed(a) : Effect.fail(crossed)
      }
    })
  }

  /**
   * Waits in line until `reservation` is reserved (open reservations settled for less) or refused
   * (none is open and it still does not fit), interruptibly: a reservation granted to an
   * interrupted waiter is released.
   */
  #settled(
    restore: <X, Y, Z>(effect: Effect.Effect<X, Y, Z>) => Effect.Effect<X, Y, Z>,
    reservation: Reservation
  ): Effect.Effect<void, BudgetExceeded> {
    let granted = false
    return restore(
      Effect.async<void, BudgetExceeded>((resume) => {
        const waiter: Waiter = {
          reservation,
          grant: (refused) => {
            granted = refused === undefined
            resume(refused === undefined ? Effect.void : Effect.fail(refused))
          }
        }
        ;(this.#settling ??= []).push(waiter)
        return Effect.sync(() => {
          const index = this.#settling?.indexOf(waiter) ?? -1
          if (index >= 0) this.#settling!.splice(index, 1)
          else if (granted) this.#releaseModel(reservation) // interrupted after it was reserved: let the next in
        })
      })
    )
  }

  /** Hands what settled to the callers waiting in line, in order: each is reserved, refused, or waits on. */
  #wake(): void {
    const settling = this.#settling
    if (settling === undefined) return
    while (settling.length > 0) {
      const next = settling[0]!
      const reserved = this.#reserveModel(next.reservation)
      if (reserved === WAIT) return
      settling.shift()
      next.grant(reserved)
    }
  }

  /** A reserved model call that was never sent: nothing counted or charged. */
  #releaseModel(reservation: Reservation): void {
    this.#inFlightModelCalls -= 1
    this.#reservedNanos -= reservation.nanos
    this.#reservedTokens -= reservation.tokens
    this.#wake()
  }

  /**
   * A reserved model call returned: counted, its usage (if it answered) charged in place of its
   * reservation, or its reservation charged (`charged`: interrupted); the ceiling it crossed, if any.
   */
  #endModelCall(reservation: Reservation, usage: Usage.Usage | undefined, charged = false): BudgetExceeded | undefined {
    this.#inFlightModelCalls -= 1
    this.#reservedNanos -= reservation.nanos
    this.#reservedTokens -= reservation.tokens
    if (charged) {
      this.#costNanos += reservation.nanos
      this.#tokens += reservation.tokens
    }
    const crossed = this.#count(usage)
    if (this.#settling !== undefined) this.#wake()
    return crossed
  }

  /**
   * Counts and charges one model call made without a reservation (outside the Invoker), then fails
   * if a ceiling is now crossed.
   */
  charge(usage: Usage.Usage): Effect.Effect<void, BudgetExceeded> {
    return Effect.suspend(() => {
      this.#count(usage)
      return this.#check()
    })
  }

  /** Reserves one tool execution: refused (and not counted) past `maxToolCalls` (`tool calls N+1 > N`). */
  get reserveToolCall(): Effect.Effect<void, BudgetExceeded> {
    return Effect.suspend(() => {
      const refused = this.#reserveTool()
      return refused === undefined ? Effect.void : Effect.fail(refused)
    })
  }

  /** Reserves one tool execution in place; the error when it is refused. */
  #reserveTool(): BudgetExceeded | undefined {
    if (this.maxToolCalls !== undefined && this.#toolCalls + this.#inFlightToolCalls + 1 > this.maxToolCalls) {
      return new BudgetExceeded({
        limit: "toolCalls",
        message: `tool calls ${this.maxToolCalls + 1} > ${this.maxToolCalls}`
      })
    }
    this.#inFlightToolCalls += 1
    return undefined
  }

  /** A reserved tool execution returned, in place. */
  #settleTool(): void {
    this.#inFlightToolCalls -= 1
    this.#toolCalls += 1
  }

  /** A reserved tool execution returned: it is counted. */
  get settleToolCall(): Effect.Effect<void> {
    return Effect.sync(() => this.#settleTool())
  }

  /** A reserved tool execution never started (a stored outcome was returned instead): not counted. */
  get releaseToolCall(): Effect.Effect<void> {
    return Effect.sync(() => {
      this.#inFlightToolCalls -= 1
    })
  }

  /**
   * Runs one tool execution under a reservation, counted when it returns (whatever its outcome);
   * with `permit`, holding one of the tree-wide concurrency permits while it runs (taken after the
   * reservation, so a refused call never waits for one). This is the one point where a tool call
   * is reserved (the Invoker's, for every tool call).
   *
   * With `around`, what runs under the reservation is `around(execute)`, where `execute` is the
   * execution (under its permit): the call is counted when `execute` ran, and released (not
   * counted) when `around` ends without running it (an execution ledger's stored outcome, a
   * failed claim) or when the wait for a permit was interrupted.
   */
  toolCall<A, E, R, B = A, E2 = E, R2 = R>(
    self: Effect.Effect<A, E, R>,
    options?: {
      readonly permit?: boolean | undefined
      readonly around?: ((execute: Effect.Effect<A, E, R>) => Effect.Effect<B, E2, R2>) | undefined
    }
  ): Effect.Effect<B, E2 | BudgetExceeded, R2> {
    return Effect.uninterruptibleMask((restore): Effect.Effect<B, E2 | BudgetExceeded, R2> => {
      const refused = this.#reserveTool()
      if (refused !== undefined) return Effect.fail(refused)
      const permit = options?.permit === true
      const around = options?.around
      if (around === undefined) {
        // the execution alone: one region, its permit taken in it (waiting in line if none is
        // free, interruptibly: an interrupted wait releases the reservation)
        const run = Effect.matchCauseEffect(restore(this.#journaled(self)), this.#toolEnd<A, E>(permit))
        if (!permit || this.#take()) return run as unknown as Effect.Effect<B, E2, R2>
        const wait = Effect.onInterrupt(this.#wait(restore), () => Effect.sync(() => this.#releaseTool()))
        return Effect.zipRight(wait, run) as unknown as Effect.Effect<B, E2, R2>
      }
      let started = false
      const executed = Effect.suspend(() => {
        started = true
        return self
      })
      const body = around(permit ? this.withPermit(executed) : executed)
      const end = () => {
        if (started) this.#settleTool()
        else this.#releaseTool()
      }
      return Effect.matchCauseEffect(restore(this.#journaled(body)), {
        onFailure: (cause) => {
          end()
          return Effect.failCause(cause)
        },
        onSuccess: (b) => {
          end()
          return Effect.succeed(b)
        }
      })
    })
  }

  /** A reserved tool execution's end, whatever its outcome: its permit (if it held one) handed over, the call counted. */
  #toolEnd<A, E>(permit: boolean): Settlement<A, E> {
    return {
      onFailure: (cause) => {
        if (permit) this.#handOver()
        this.#settleTool()
        return Effect.failCause(cause)
      },
      onSuccess: (a) => {
        if (permit) this.#handOver()
        this.#settleTool()
        return Effect.succeed(a)
      }
    }
  }

  /** A reserved tool execution that never started: not counted. */
  #releaseTool(): void {
    this.#inFlightToolCalls -= 1
  }

  /** Counts one model call and charges its usage; the ceiling it crosses, if any. */
  #count(usage: Usage.Usage | undefined): BudgetExceeded | undefined {
    this.#modelCalls += 1
    if (usage !== undefined) {
      this.#costNanos += Usage.nanos(usage)
      this.#tokens += Usage.totalTokens(usage)
    }
    return this.#crossed()
  }

  #overCalls(): BudgetExceeded {
    return new BudgetExceeded({
      limit: "modelCalls",
      message: `calls ${this.maxModelCalls! + 1} > ${this.maxModelCalls}`
    })
  }

  #crossed(): BudgetExceeded | undefined {
    if (this.#maxCostNanos !== undefined && this.#costNanos > this.#maxCostNanos) {
      return new BudgetExceeded({
        limit: "cost",
        message: `cost $${PythonText.float(Usage.usdOf(this.#costNanos))} > $${PythonText.float(this.maxCostUsd!)}`
      })
    }
    if (this.maxTokens !== undefined && this.#tokens > this.maxTokens) {
      return new BudgetExceeded({ limit: "tokens", message: `tokens ${this.#tokens} > ${this.maxTokens}` })
    }
    return undefined
  }

  #check(): Effect.Effect<void, BudgetExceeded> {
    if (this.maxModelCalls !== undefined && this.#modelCalls > this.maxModelCalls) {
      const crossed = this.#crossed()
      return Effect.fail(
        crossed?.limit === "cost"
          ? crossed
          : new BudgetExceeded({ limit: "modelCalls", message: `calls ${this.#modelCalls} > ${this.maxModelCalls}` })
      )
    }
    const crossed = this.#crossed()
    return crossed === undefined ? Effect.void : Effect.fail(crossed)
  }
}

/** A match's handlers for a region's end, whatever its outcome. */
interface Settlement<A, E> {
  readonly onFailure: (cause: Cause.Cause<E>) => Effect.Effect<A, E>
  readonly onSuccess: (a: A) => Effect.Effect<A, E>
}

const isAmount = (n: unknown): boolean => typeof n === "number" && Number.isFinite(n) && n >= 0
const isCount = (n: unknown): boolean => isAmount(n) && Number.isInteger(n)

/**
 * Checks a set of limits: every limit must be a non-negative finite number (counts and depth
 * non-negative integers, `maxConcurrency` a positive integer).
 *
 * @example
 * ```ts
 * import { Budget } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * Effect.runSyncExit(Budget.make({ maxCostUsd: -1 }))
 * // fails: "budget.maxCostUsd must be a non-negative finite number (USD); got -1"
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (limits: Limits = {}): Effect.Effect<Budget, ConfigurationError> =>
  Effect.try({
    // the constructor checks the limits (once)
    try: () => new Budget(limits),
    catch: (error) =>
      error instanceof ConfigurationError ? error : new ConfigurationError({ field: "budget", message: String(error) })
  })

/**
 * Like `make`, but throws the `ConfigurationError`. For module-level constants and tests.
 *
 * @example
 * ```ts
 * import { Budget } from "@agentkit/core"
 *
 * Budget.unsafeMake({ maxModelCalls: 10 }).maxDepth // 4
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const unsafeMake = (limits: Limits = noLimits): Budget => new Budget(limits)

/** What each limit must be: built once, at module load. */
const rules: ReadonlyArray<readonly [keyof Limits, (n: unknown) => boolean, string]> = [
  ["maxCostUsd", isAmount, "a non-negative finite number (USD)"],
  ["maxModelCalls", isCount, "a non-negative integer"],
  ["maxTokens", isCount, "a non-negative integer"],
  ["maxToolCalls", isCount, "a non-negative integer"],
  ["maxDepth", isCount, "a non-negative integer"],
  ["maxConcurrency", (n) => isCount(n) && (n as number) >= 1, "a positive integer"]
]

const validate = (limits: Limits): ConfigurationError | undefined => {
  if (typeof limits !== "object" || limits === null) {
    return new ConfigurationError({
      field: "budget",
      message: `budget must be an object of limits; got ${String(limits)}`
    })
  }
  for (const [field, ok, accepted] of rules) {
    const value = limits[field]
    if (value !== undefined && !ok(value)) {
      return new ConfigurationError({
        field: `budget.${field}`,
        message: `budget.${field} must be ${accepted}; got ${String(value)}`
      })
    }
  }
  return undefined
}
