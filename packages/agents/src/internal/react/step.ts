/**
 * The ReAct step function over a run's working state. One step per phase:
 *
 * - `model`: ask the model (`turn-<iteration>`); an answer without tool calls ends the run, else
 *   its assistant turn is appended and the phase becomes `tools` (checkpointed);
 * - `tools`: gate the turn's calls that have not run (any call that needs a person stops the whole
 *   turn: an in-process approver is asked, else the run suspends), then run them concurrently
 *   (`tool-<callId>`), checkpointing each result as it lands; a call the execution ledger finds in
 *   doubt suspends the run with an `InDoubt` entry; when every call has a result, the round's
 *   results are appended in call order, the phase becomes `model` of the next iteration
 *   (checkpointed before the `Step` event);
 * - `suspended`: apply the decisions it was resumed with, in call order, re-drive the calls that
 *   wait in a sub-run (which continues with its decisions, read from the tree's decisions
 *   channel), then finish the round.
 *
 * A sub-run that suspends fails its call with `RunSuspended`: the call stays without a result and
 * this run suspends too, listing the sub-run's entries (so the top-level `Suspended` lists every
 * entry of the tree, each with its path). The trifecta state (legs, the turn's projection, what a
 * result counts for and how it is shown) is `internal/trifecta.ts`; this module calls it.
 *
 * Every effect on the outside world goes through the engine. Errors the model can fix come back
 * to it as `isError` results; a budget ceiling, cancellation and a broken store end the run; a
 * defect is never shown to the model. @internal
 */
import {
  approvalDeniedText,
  Cancellation,
  endsRun,
  ExecutionLedger,
  isSubRunSuspension,
  markedFailedText,
  Message,
  RunContext,
  ToolDenied,
  toolFailureText,
  ToolInDoubt,
  unknownToolText,
  Usage
} from "@agentkit/core"
import type { CallMetadata, Chat, SubRunSuspension, ToolCall, ToolOutcome } from "@agentkit/core"
import type { ToolRegistry } from "@agentkit/tools"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as AgentEvent from "../../AgentEvent.js"
import type * as Result from "../../AgentResult.js"
import * as Approval from "../../Approval.js"
import type { AgentError, AgentSettings } from "../../Cognition.js"
import { trifectaReason } from "../../Errors.js"
import type { RunPolicy } from "../../RunPolicy.js"
import * as StructuredOutput from "../../StructuredOutput.js"
import type * as Termination from "../../Termination.js"
import * as Audit from "../audit.js"
import { admit, approverAnswers, denies, kindOf, type Reason, reasonsFor } from "../gate.js"
import * as Guardrails from "../guardrails.js"
import * as Trifecta from "../trifecta.js"
import { countRepair, repairsOf, terminate } from "./cognitionState.js"
import type { Engine } from "./engine.js"
import type { CallResult, Run } from "./state.js"

/** A run's result; `parsed` is the structured output's, when the agent has one. */
type AgentResult = Result.AgentResult<unknown>

/** What one ReAct cognition fixes for all its runs. */
export interface Loop {
  readonly agent: AgentSettings
  readonly registry: ToolRegistry.ToolRegistry
  readonly schemas: ReadonlyArray<Chat.ToolSchema>
  readonly names: ReadonlyArray<string>
  readonly maxIterations: number
  readonly policy: RunPolicy
  readonly emit: ((event: AgentEvent.AgentEvent<unknown>) => void) | undefined
  /** The delta sink passed to the model (made once per drive, from `emit`). */
  readonly onDelta: ((delta: { readonly text: string }) => void) | undefined
  /** Evaluated on every model turn before its tools run; its counters live in the run's state. */
  readonly termination: Termination.Termination | undefined
  /** The agent's structured output: an answer is decoded, and repaired once. */
  readonly output: StructuredOutput.StructuredOutput<unknown> | undefined
}

/** The gate's reasons for a turn's calls (`undefined`: none waits). */
type GateReasons = Effect.Effect.Success<ReturnType<typeof reasonsFor>>

/** A call the ledger found in doubt. */
interface Doubt {
  readonly _tag: "InDoubt"
  readonly error: ToolInDoubt
  readonly index: number
  readonly tool: ToolRegistry.AnyTool
}

/** A call whose sub-run suspended: it has no result yet; the sub-run's entries wait. */
interface Waiting {
  readonly _tag: "Waiting"
  readonly pending: ReadonlyArray<Approval.PendingEntry>
}

/** A call that ran to a result, one the ledger found in doubt, or one waiting in a sub-run. */
type Ran = CallResult | Doubt | Waiting

const isDoubt = (ran: Ran): ran is Doubt => "_tag" in ran && ran._tag === "InDoubt"
const isWaiting = (ran: Ran): ran is Waiting => "_tag" in ran && ran._tag === "Waiting"
const isResult = (ran: Ran): ran is CallResult => !("_tag" in ran)

/** Whether a sub-run suspension waits only in runs under this one (so this run can wait on it). */
const under = (suspension: SubRunSuspension, runId: string): boolean =>
  suspension.pending.length > 0 && suspension.pending.every((entry) => entry.path.startsWith(`${runId}/`))

const freezeDeep = <A>(value: A): A => {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const key of Object.keys(value)) freezeDeep((value as Record<string, unknown>)[key])
  }
  return value
}

/** The entries a `Suspended` value hands out: a frozen copy, cut off from the run's state. */
const frozen = (entries: ReadonlyArray<Approval.PendingEntry>): ReadonlyArray<Approval.PendingEntry> =>
  freezeDeep(structuredClone(entries))

/** What a round left to decide: calls in doubt, calls gated again at execution, calls waiting in sub-runs. */
interface Open {
  readonly doubts: ReadonlyArray<Doubt>
  readonly regated: ReadonlyArray<Approval.PendingEntry>
  readonly waiting: ReadonlyArray<Waiting>
}

/** How a decision is read for an entry. */
type Decide = (entry: Approval.PendingEntry) => Approval.Decision

/**
 * One run's steps. A class, so a run allocates one object and its methods are shared: a parked
 * run keeps little alive.
 */
class Steps {
  /** The legs the current turn's calls would touch together (`undefined`: no call of it can send). */
  projected: Trifecta.Legs | undefined = undefined

  constructor(
    readonly loop: Loop,
    readonly state: Run,
    readonly engine: Engine,
    readonly context: RunContext.Service,
    readonly decisions: ReadonlyMap<string, Approval.Decision> | undefined
  ) {}

  /** The step of the run's phase. */
  next(): Effect.Effect<AgentResult, AgentError, RunContext> {
    switch (this.state.phase) {
      case "model":
        return this.modelStep()
      case "tools":
        return this.toolStep()
      case "suspended": {
        const decisions = this.decisions
        return decisions === undefined
          ? this.suspend(this.state.pending, false)
          : this.apply(
            this.state.pending,
            (entry) => decisions.get(entry.id) ?? Approval.reject(entry.digest, "no decision was given")
          )
      }
    }
  }

  save(status: "running" | "suspended"): Effect.Effect<void, AgentError> {
    return this.engine.checkpoint === undefined ? Effect.void : this.engine.checkpoint(status)
  }

  /** The result: `usage` is the run's tally (its own calls and its sub-runs'), `ownUsage` its own. */
  finish(output: string, stopReason: AgentResult["stopReason"], partial: boolean): AgentResult {
    const { state } = this
    return {
      output,
      usage: this.context.tally.usage,
      ownUsage: state.usage,
      partial,
      stopReason,
      transcript: state.transcript
    }
  }

  /**
   * A turn without tool calls is the answer. With structured output it is decoded: an answer that
   * does not decode is repaired once (the model is told why and asked again, which takes an
   * iteration), then the run ends `partial` with `invalid_output`. A tool-call turn never comes
   * here, so it is never parsed.
   */
  answer(response: Chat.ChatResponse): Effect.Effect<AgentResult, AgentError, RunContext> {
    const { loop, state } = this
    state.transcript.push(Message.assistant(response.content))
    const stopReason = response.finishReason === "tool_use" ? "end_turn" : response.finishReason
    const output = loop.output
    if (output === undefined) return Effect.succeed(this.finish(response.content, stopReason, false))
    const decoded = output.decodeText(response.content)
    if (Either.isRight(decoded)) {
      return Effect.succeed({ ...this.finish(response.content, stopReason, false), parsed: decoded.right })
    }
    if (repairsOf(state) >= 1) {
      return Effect.succeed({ ...this.finish(response.content, "invalid_output", true), error: decoded.left })
    }
    countRepair(state)
    state.transcript.push(Message.user(StructuredOutput.repairText("react", decoded.left)))
    state.iteration += 1
    return this.save("running").pipe(
      Effect.tap(() => loop.emit?.(AgentEvent.Step({ iteration: state.iteration, repair: true }))),
      Effect.zipRight(Effect.suspend(() => this.modelStep()))
    )
  }

  /** The turn's projected legs, over the calls of the turn that have no result yet. */
  projectTurn(): void {
    const { completed } = this.state
    const open = this.state.calls.filter((call) => !completed.has(call.id))
    this.projected = Trifecta.project(this.context, this.loop.registry, open)
  }

  /**
   * Runs one call through the engine; what the model may fix comes back as a result. A call the
   * dynamic check denies never runs. A call touches its tool's legs when it is sent, whatever
   * becomes of it; a delegating call runs on a branch of the run context, so its result carries
   * the legs its sub-runs touched. `name` is the engine's step name (a retried call has its own).
   */
  runCall(
    call: ToolCall.ToolCall,
    index: number,
    decidedBy?: string | undefined,
    name?: string | undefined
  ): Effect.Effect<Ran, AgentError, RunContext> {
    return this.runCallThen(call, index, Effect.succeed, decidedBy, name)
  }

  /**
   * `runCall`, then `then` with what it ran, in the step that settles the call (no step and no
   * frame of its own, as a `flatMap` after it would take).
   */
  runCallThen<A, R>(
    call: ToolCall.ToolCall,
    index: number,
    then: (ran: Ran) => Effect.Effect<A, AgentError, R>,
    decidedBy?: string | undefined,
    name = `tool-${call.id}`
  ): Effect.Effect<A, AgentError, RunContext | R> {
    const { context, loop, state } = this
    const found = loop.registry.getOption(call.name)
    if (Option.isNone(found)) {
      return then({ callId: call.id, name: call.name, content: unknownToolText(call.name, loop.names), isError: true })
    }
    const tool = found.value
    const { policy } = loop
    if (denies(policy, tool, this.projected)) {
      const error = new ToolDenied({ toolName: tool.name, reason: "policy", message: trifectaReason })
      const content = toolFailureText(call.name, error)
      return Trifecta.checkSpan(context, policy, tool, this.projected, "deny").pipe(
        Effect.zipRight(
          Audit.record(context, call, {
            decision: "denied",
            text: content,
            denial: { reason: "policy", message: trifectaReason }
          })
        ),
        Effect.flatMap(() => then({ callId: call.id, name: call.name, content, isError: true }))
      )
    }
    const key = tool.sideEffecting && !tool.idempotent ? `${context.runId}/t${state.iteration}/c${index}` : undefined
    const meta: CallMetadata | undefined = key === undefined
      ? decidedBy === undefined ? undefined : { decidedBy }
      : decidedBy === undefined
      ? { executionKey: key }
      : { executionKey: key, decidedBy }
    const result = (
      legs: ReadonlyArray<"private_data" | "untrusted_content" | "egress">,
      content: string,
      isError: boolean
    ): CallResult =>
      legs.length === 0
        ? { callId: call.id, name: call.name, content, isError }
        : { callId: call.id, name: call.name, content, isError, legs }
    const settle = (
      running: Effect.Effect<ToolOutcome, unknown, RunContext>,
      legsOf: () => ReturnType<typeof Trifecta.capsOf>
    ) =>
      Effect.matchEffect(running, {
        onSuccess: (outcome): Effect.Effect<A, AgentError, R> => {
          const legs = legsOf()
          return then(result(legs, Trifecta.shownOutput(policy, tool.name, outcome.text, legs), false))
        },
        onFailure: (error): Effect.Effect<A, AgentError, R> => {
          if (error instanceof ToolInDoubt) return then({ _tag: "InDoubt", error, index, tool })
          if (isSubRunSuspension(error) && under(error, context.runId)) {
            return then({ _tag: "Waiting", pending: error.pending as ReadonlyArray<Approval.PendingEntry> })
          }
          if (endsRun(error) || Guardrails.endsRun(error)) return Effect.fail(error as AgentError)
          const legs = legsOf()
          return then(result(legs, Trifecta.shownFailure(policy, call.name, error, legs), true))
        }
      })
    const running = this.engine.runTool(name, call, tool, meta)
    const ran: Effect.Effect<A, AgentError, RunContext | R> = tool.delegating
      ? Effect.suspend(() => {
        const branch = context.branch()
        return settle(Effect.provideService(running, RunContext, branch), () => Trifecta.touchedOf(branch.tally.legs))
      })
      : tool.caps.length === 0
      ? settle(running, () => Trifecta.capsOf(tool))
      : Effect.zipRight(
        Effect.sync(() => context.touch(tool.caps)),
        settle(running, () => Trifecta.capsOf(tool))
      )
    const check = Trifecta.checkSpan(context, policy, tool, this.projected, "allow")
    return check === Effect.void ? ran : Effect.zipRight(check, ran)
  }

  /** Records a call's result and checkpoints it (without a store: no extra step, nothing copied). */
  record(result: CallResult): Effect.Effect<void, AgentError> {
    this.state.completed.set(result.callId, result)
    return this.engine.checkpoint === undefined ? Effect.void : this.engine.checkpoint("running")
  }

  /** Stops the run: its entries saved as what it waits on. */
  suspend(entries: ReadonlyArray<Approval.PendingEntry>, announce: boolean): Effect.Effect<AgentResult, AgentError> {
    const { emit } = this.loop
    this.state.phase = "suspended"
    this.state.pending = entries
    if (announce && emit !== undefined) { for (const entry of entries) emit(AgentEvent.Interrupt(entry)) }
    return Effect.as(this.save("suspended"), {
      ...this.finish("", "awaiting_approval", true),
      suspended: { _tag: "Suspended" as const, runId: this.context.runId, pending: frozen(entries) }
    })
  }

  /**
   * A round with calls left open suspends on them: calls in doubt become `InDoubt` entries; calls
   * gated again at execution and the entries of sub-runs that wait are listed as they are.
   */
  suspendOn(open: Open): Effect.Effect<AgentResult, AgentError> {
    return Effect.flatMap(Clock.currentTimeMillis, (createdAt) =>
      this.suspend(
        [
          ...open.doubts.map(({ error, index, tool }) =>
            Approval.makeEntry({
              kind: "InDoubt",
              path: this.context.runId,
              iteration: this.state.iteration,
              index,
              call: error.call,
              tool,
              reasons: ["in_doubt"],
              createdAt,
              request: { key: error.key, claimedAt: error.claimedAt }
            })
          ),
          ...open.regated,
          ...open.waiting.flatMap((waiting) => waiting.pending)
        ],
        true
      ))
  }

  /**
   * Ends a round: what is left open suspends the run (calls gated again at execution are put to
   * an in-process approver first, when there is one and nothing else is open), else the round
   * is complete.
   */
  endRound(open: Open): Effect.Effect<AgentResult, AgentError, RunContext> {
    if (open.doubts.length === 0 && open.waiting.length === 0) {
      if (open.regated.length === 0) return this.completeRound()
      if (this.engine.awaitDecision !== undefined) return this.ask(open.regated)
    }
    return this.suspendOn(open)
  }

  /** Every call of the turn has a result: append them in call order, checkpoint, go on. */
  completeRound(): Effect.Effect<AgentResult, AgentError, RunContext> {
    const { state } = this
    const { emit } = this.loop
    for (const call of state.calls) {
      const result = state.completed.get(call.id)!
      state.transcript.push(
        Message.toolResult({ toolCallId: call.id, name: call.name, content: result.content, isError: result.isError })
      )
      if (emit !== undefined) emit(AgentEvent.ToolResult({ call, content: result.content, isError: result.isError }))
    }
    state.iteration += 1
    state.phase = "model"
    state.completed.clear()
    state.pending = []
    this.projected = undefined
    // without a store or an event sink there is nothing between the rounds (no extra steps)
    if (this.engine.checkpoint === undefined && emit === undefined) return this.modelStep()
    return this.save("running").pipe(
      Effect.tap(() => emit?.(AgentEvent.Step({ iteration: state.iteration }))),
      Effect.zipRight(Effect.suspend(() => this.modelStep()))
    )
  }

  /** Runs calls of the turn that have not run yet, concurrently, recording each result as it lands. */
  runRound(
    waiting: ReadonlyArray<ToolCall.ToolCall>,
    carried?: Open
  ): Effect.Effect<AgentResult, AgentError, RunContext> {
    const calls = this.state.calls
    /** `ran` recorded (when it is a result), then `next`: in the step that has it, when nothing is saved. */
    const recorded = <A, R>(
      ran: Ran,
      next: (ran: Ran) => Effect.Effect<A, AgentError, R>
    ): Effect.Effect<A, AgentError, R> => {
      const saving = isResult(ran) ? this.record(ran) : Effect.void
      return saving === Effect.void ? next(ran) : Effect.flatMap(saving, () => next(ran))
    }
    const one = (call: ToolCall.ToolCall): Effect.Effect<Ran, AgentError, RunContext> =>
      this.runCallThen(call, calls.indexOf(call), (ran) => recorded(ran, Effect.succeed))
    if (waiting.length === 0) return this.endRound(carried ?? { doubts: [], regated: [], waiting: [] })
    const landed = (results: ReadonlyArray<Ran>): Effect.Effect<AgentResult, AgentError, RunContext> => {
      const doubts = results.filter(isDoubt)
      const subRuns = results.filter(isWaiting)
      if (carried === undefined && doubts.length === 0 && subRuns.length === 0) return this.completeRound()
      return this.endRound({
        doubts: [...(carried?.doubts ?? []), ...doubts],
        regated: carried?.regated ?? [],
        waiting: [...(carried?.waiting ?? []), ...subRuns]
      })
    }
    if (waiting.length > 1) return Effect.flatMap(Effect.forEach(waiting, one, { concurrency: "unbounded" }), landed)
    // one call (the common turn): its result recorded and the round ended in the step that settles it
    const only = waiting[0]!
    return this.runCallThen(only, calls.indexOf(only), (ran) => recorded(ran, (done) => landed([done])))
  }

  /**
   * Applies decisions to this run's own entries, in call order, then re-drives the turn's calls
   * that wait in a sub-run (it reads its decisions from the tree's channel). What runs is bound
   * to what was decided: the entry's digest is recomputed with the tool as it is now and must be
   * the one the decision names (else the call is rejected); an edit is validated and gets a new
   * digest; an approved or edited call that would now complete the trifecta, when the person was
   * not asked about it, waits again at the gate with its own entry. A bad decision (from an
   * in-process approver: on resume they were checked before anything ran) rejects that call and
   * the model is told why. A call that
   * already has a result (applied before a crash) is not run again.
   */
  apply(
    entries: ReadonlyArray<Approval.PendingEntry>,
    decide: Decide
  ): Effect.Effect<AgentResult, AgentError, RunContext> {
    const { context, loop, state } = this
    return Effect.gen(this, function*() {
      const calls = state.calls
      const ledger = Option.getOrUndefined(yield* Effect.serviceOption(ExecutionLedger))
      const doubts: Array<Doubt> = []
      const regated: Array<Approval.PendingEntry> = []
      const subRuns: Array<Waiting> = []
      const own = entries.filter((entry) => entry.path === context.runId)
      this.projectTurn()
      for (const entry of own) {
        if (state.completed.has(entry.call.id)) continue
        yield* Cancellation.check(context.cancellation) // cancellation beats approval
        const decision = decide(entry)
        const { call } = entry
        const index = calls.findIndex((c) => c.id === call.id)
        const claim = entry.request as { readonly key: string; readonly claimedAt: number } | undefined
        const settle = (resolution: Parameters<ExecutionLedger.Service["resolve"]>[1]) =>
          ledger === undefined || claim === undefined
            ? Effect.void
            // a conflict means it was settled already (before a crash) or claimed anew: the call's result decides
            : Effect.catchTag(
              ledger.resolve(claim.key, resolution, { claimedAt: claim.claimedAt }),
              "LedgerConflict",
              () => Effect.void
            )
        const rejected = (reason: string | undefined): Effect.Effect<CallResult> => {
          const content = approvalDeniedText(reason)
          return Effect.as(
            Audit.record(context, call, {
              decision: "denied",
              text: content,
              by: decision.by,
              reason,
              denial: { reason: "approval", message: content }
            }),
            { callId: call.id, name: call.name, content, isError: true }
          )
        }
        let ran: Ran
        switch (decision.verdict) {
          case "reject":
            ran = yield* rejected(decision.reason)
            break
          case "markDone":
            yield* settle({ _tag: "Done", outcome: { text: decision.outcome, isError: false } })
            yield* Audit.record(context, call, {
              decision: "executed",
              text: decision.outcome,
              by: decision.by,
              reason: decision.reason ?? "marked done"
            })
            ran = { callId: call.id, name: call.name, content: decision.outcome, isError: false }
            break
          case "markFailed": {
            yield* settle({ _tag: "Failed", reason: decision.reason })
            const content = markedFailedText(decision.reason)
            yield* Audit.record(context, call, {
              decision: "failed",
              text: content,
              by: decision.by,
              reason: decision.reason
            })
            ran = { callId: call.id, name: call.name, content, isError: true }
            break
          }
          case "retry":
            yield* settle({ _tag: "Retry" })
            // a step name of its own: the first attempt's name is taken by the call found in doubt
            ran = yield* this.runCall(call, index, decision.by, `tool-${call.id}/retry-${entry.createdAt}`)
            break
          case "edit":
          case "approve": {
            const tool = Option.getOrUndefined(loop.registry.getOption(call.name))
            if (tool === undefined) {
              ran = { callId: call.id, name: call.name, content: unknownToolText(call.name, loop.names), isError: true }
              break
            }
            const admitted = yield* admit(entry, decision, tool)
            if (admitted._tag === "Reject") {
              ran = yield* rejected(admitted.reason)
              break
            }
            const toRun = admitted.call
            // the policy again, at execution: a gate the person was not asked about waits for its own decision
            if (Trifecta.gated(loop.policy, tool, this.projected) && !entry.reasons.includes("trifecta")) {
              regated.push(
                Approval.makeEntry({
                  kind: "Gate",
                  path: context.runId,
                  iteration: state.iteration,
                  index,
                  call: toRun,
                  tool,
                  reasons: ["trifecta"],
                  createdAt: yield* Clock.currentTimeMillis
                })
              )
              yield* Trifecta.checkSpan(context, loop.policy, tool, this.projected, "gate")
              continue
            }
            ran = yield* this.runCall(toRun, index, decision.by)
            break
          }
        }
        if (isDoubt(ran)) doubts.push(ran)
        else if (isWaiting(ran)) subRuns.push(ran) // an approved delegation whose sub-run suspended
        else yield* this.record(ran)
      }
      const decided = new Set(own.map((entry) => entry.call.id))
      const rest = calls.filter((call) => !state.completed.has(call.id) && !decided.has(call.id))
      return yield* this.runRound(rest, { doubts, regated, waiting: subRuns })
    })
  }

  /** Asks the in-process approver about entries (it gets frozen copies) and applies its decisions. */
  ask(entries: ReadonlyArray<Approval.PendingEntry>): Effect.Effect<AgentResult, AgentError, RunContext> {
    const { context, loop } = this
    return Effect.gen(this, function*() {
      if (loop.emit !== undefined) { for (const entry of entries) loop.emit(AgentEvent.Interrupt(entry)) }
      // frozen copies in, a frozen copy of the answers out: neither side can change what runs later
      const answers = yield* this.engine.awaitDecision!({
        runId: context.runId,
        agent: loop.agent.name,
        pending: frozen(entries)
      })
      return yield* this.apply(entries, yield* approverAnswers(entries, answers))
    })
  }

  /** A turn whose calls need a person: ask the approver, or suspend. */
  gate(
    waiting: ReadonlyArray<ToolCall.ToolCall>,
    reasons: ReadonlyArray<ReadonlyArray<Reason>>
  ): Effect.Effect<AgentResult, AgentError, RunContext> {
    const { context, loop, state } = this
    return Effect.gen(this, function*() {
      const calls = state.calls
      const createdAt = yield* Clock.currentTimeMillis
      const entries: Array<Approval.PendingEntry> = []
      for (let i = 0; i < waiting.length; i++) {
        const call = waiting[i]!
        const tool = Option.getOrUndefined(loop.registry.getOption(call.name))
        if (tool === undefined) {
          // never gated, never run: the model is told the tool does not exist
          yield* this.record({
            callId: call.id,
            name: call.name,
            content: unknownToolText(call.name, loop.names),
            isError: true
          })
          continue
        }
        const why = reasons[i]!
        if (why.includes("trifecta")) yield* Trifecta.checkSpan(context, loop.policy, tool, this.projected, "gate")
        entries.push(
          Approval.makeEntry({
            kind: kindOf(why),
            path: context.runId,
            iteration: state.iteration,
            index: calls.indexOf(call),
            call,
            tool,
            reasons: why,
            createdAt
          })
        )
      }
      if (this.engine.awaitDecision === undefined) return yield* this.suspend(entries, true)
      return yield* this.ask(entries)
    })
  }

  toolStep(): Effect.Effect<AgentResult, AgentError, RunContext> {
    const { context, loop, state } = this
    const waiting = state.calls.filter((call) => !state.completed.has(call.id))
    this.projected = Trifecta.project(context, loop.registry, waiting)
    const reasons = reasonsFor(waiting, loop.registry, context, loop.policy, this.projected)
    const go = (found: GateReasons) => (found === undefined ? this.runRound(waiting) : this.gate(waiting, found))
    // reasons known at once (no conditional approval) are read in place: no step
    if (Exit.isExit(reasons)) {
      const known = reasons as Exit.Exit<GateReasons>
      if (Exit.isSuccess(known)) return go(known.value)
    }
    return Effect.flatMap(reasons, go)
  }

  modelStep(): Effect.Effect<AgentResult, AgentError, RunContext> {
    const { loop, state } = this
    const { agent } = loop
    if (state.iteration >= loop.maxIterations) {
      let last = ""
      for (let i = state.transcript.length - 1; i >= 0; i--) {
        const message = state.transcript[i]!
        if (message.role === "assistant") {
          last = message.content
          break
        }
      }
      return Effect.succeed(this.finish(last, "max_iterations", true))
    }
    // maxTokens and temperature set only when the agent has them (spreading `{}` for each absent one
    // made an object a turn for nothing)
    const request: { -readonly [K in keyof Chat.ChatRequest]: Chat.ChatRequest[K] } = {
      model: agent.model,
      messages: state.transcript.slice(),
      tools: loop.schemas
    }
    if (agent.maxTokens !== undefined) request.maxTokens = agent.maxTokens
    if (agent.temperature !== undefined) request.temperature = agent.temperature
    const compact = this.engine.compact
    if (compact === undefined) return this.send(request)
    // past the window's share, the transcript is compacted in place and saved before it is sent:
    // a resumed run sends what this one would have
    return Effect.flatMap(compact(request, state.iteration), (compacted) => {
      if (compacted === undefined) return this.send(request)
      state.transcript.splice(0, state.transcript.length, ...compacted)
      request.messages = state.transcript.slice()
      return Effect.zipRight(this.save("running"), Effect.suspend(() => this.send(request)))
    })
  }

  /** Sends the turn's request and goes on from the model's response. */
  send(request: Chat.ChatRequest): Effect.Effect<AgentResult, AgentError, RunContext> {
    const { loop, state } = this
    const { emit } = loop
    // the check is read now (when the step runs): a token not cancelled adds no step
    const check = Cancellation.check(this.context.cancellation)
    const called = this.engine.callModel(`turn-${state.iteration}`, request, loop.onDelta)
    return (check === Effect.void ? called : Effect.zipRight(check, called)).pipe(
      Effect.flatMap((response) => {
        state.usage = Usage.add(state.usage, response.usage)
        // the termination condition sees the turn before any of its tools runs
        const stop = loop.termination === undefined ? undefined : terminate(loop.termination, state, response)
        if (stop !== undefined) {
          state.transcript.push(Message.assistant(response.content, response.toolCalls))
          return Effect.succeed(this.finish(response.content, stop, false))
        }
        if (response.toolCalls.length === 0) return this.answer(response)
        state.transcript.push(Message.assistant(response.content, response.toolCalls))
        if (emit !== undefined) { for (const call of response.toolCalls) emit(AgentEvent.ToolCall({ call })) }
        state.phase = "tools"
        state.completed.clear()
        const checkpoint = this.engine.checkpoint
        return checkpoint === undefined
          ? this.toolStep()
          : Effect.zipRight(checkpoint("running"), Effect.suspend(() => this.toolStep()))
      })
    )
  }
}

/**
 * Runs a run from its phase to its end (an answer, the iterations exhausted, or a suspension).
 * `decisions` are the ones it was resumed (or taken over) with, for a run that waits on entries.
 */
export const run = (
  loop: Loop,
  state: Run,
  engine: Engine,
  context: RunContext.Service,
  decisions: ReadonlyMap<string, Approval.Decision> | undefined
): Effect.Effect<AgentResult, AgentError, RunContext> => new Steps(loop, state, engine, context, decisions).next()
