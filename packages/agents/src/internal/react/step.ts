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
 * - `suspended`: apply the decisions it was resumed with, in call order, then finish the round.
 *
 * Every effect on the outside world goes through the engine. Errors the model can fix come back
 * to it as `isError` results; a budget ceiling, cancellation and a broken store end the run; a
 * defect is never shown to the model. @internal
 */
import {
  approvalDeniedText,
  Cancellation,
  ExecutionLedger,
  endsRun,
  markedFailedText,
  Message,
  ToolDenied,
  toolFailureText,
  ToolInDoubt,
  Tracing,
  unknownToolText,
  Usage
} from "@agentkit/core"
import type { Chat, RunContext, ToolCall } from "@agentkit/core"
import type { ToolRegistry } from "@agentkit/tools"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as AgentEvent from "../../AgentEvent.js"
import type * as Result from "../../AgentResult.js"
import * as Approval from "../../Approval.js"
import type { AgentError, AgentSettings } from "../../Cognition.js"
import { trifectaReason } from "../../Errors.js"
import type { RunPolicy } from "../../RunPolicy.js"
import * as StructuredOutput from "../../StructuredOutput.js"
import type * as Termination from "../../Termination.js"
import { countRepair, repairsOf, terminate } from "./cognitionState.js"
import type { Engine } from "./engine.js"
import { completesTrifecta, gateReasons, kindOf } from "./gate.js"
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

/** A call the ledger found in doubt. */
interface Doubt {
  readonly _tag: "InDoubt"
  readonly error: ToolInDoubt
  readonly index: number
  readonly tool: ToolRegistry.AnyTool
}

/** A call that ran to a result, or one the ledger found in doubt. */
type Ran = CallResult | Doubt

const isDoubt = (ran: Ran): ran is Doubt => "_tag" in ran

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

/** How a decision is read for an entry. */
type Decide = (entry: Approval.PendingEntry) => Approval.Decision

/**
 * One run's steps. A class, so a run allocates one object and its methods are shared: a parked
 * run keeps little alive.
 */
class Steps {
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
          : this.apply(this.state.pending, (entry) => decisions.get(entry.id) ?? Approval.reject(entry.digest, "no decision was given"), "resume")
      }
    }
  }

  save(status: "running" | "suspended"): Effect.Effect<void, AgentError> {
    return this.engine.checkpoint === undefined ? Effect.void : this.engine.checkpoint(status)
  }

  finish(output: string, stopReason: AgentResult["stopReason"], partial: boolean): AgentResult {
    return { output, usage: this.state.usage, partial, stopReason, transcript: this.state.transcript }
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
    if (Either.isRight(decoded)) return Effect.succeed({ ...this.finish(response.content, stopReason, false), parsed: decoded.right })
    if (repairsOf(state) >= 1) return Effect.succeed({ ...this.finish(response.content, "invalid_output", true), error: decoded.left })
    countRepair(state)
    state.transcript.push(Message.user(StructuredOutput.repairText("react", decoded.left)))
    state.iteration += 1
    return this.save("running").pipe(
      Effect.tap(() => loop.emit?.(AgentEvent.Step({ iteration: state.iteration, repair: true }))),
      Effect.zipRight(Effect.suspend(() => this.modelStep()))
    )
  }

  /** The dynamic check's decision on an egress call, as a `policy.check` span with the legs seen. */
  policyCheck(tool: ToolRegistry.AnyTool, decision: "allow" | "deny" | "gate"): Effect.Effect<void> {
    const { legs } = this.state
    return tool.caps.includes("egress") && this.context.tracing && this.loop.policy.dynamic !== "off"
      ? Effect.withSpan(
          // set through `annotate`, so the legs reach OpenTelemetry as an array of strings
          Tracing.annotate({
            [Tracing.Attribute.policyTool]: tool.name,
            [Tracing.Attribute.policyLegs]: [
              ...(legs.privateData ? ["private_data"] : []),
              ...(legs.untrustedContent ? ["untrusted_content"] : []),
              "egress"
            ],
            [Tracing.Attribute.policyDecision]: decision
          }),
          Tracing.SpanName.policyCheck,
          { captureStackTrace: false }
        )
      : Effect.void
  }

  needsApproval(call: ToolCall.ToolCall): boolean {
    const tool = Option.getOrUndefined(this.loop.registry.getOption(call.name))
    // an unknown tool never gates: the model is told it does not exist
    return tool !== undefined && gateReasons(tool, this.context, this.loop.policy, this.state.legs).length > 0
  }

  /** Runs one call through the engine; what the model may fix comes back as a result. */
  runCall(call: ToolCall.ToolCall, index: number, name = `tool-${call.id}`): Effect.Effect<Ran, AgentError, RunContext> {
    const { loop, state } = this
    const found = loop.registry.getOption(call.name)
    if (Option.isNone(found)) {
      return Effect.succeed({ callId: call.id, name: call.name, content: unknownToolText(call.name, loop.names), isError: true })
    }
    const tool = found.value
    const denied = loop.policy.dynamic === "deny" && completesTrifecta(tool, state.legs)
    const check = this.policyCheck(tool, denied ? "deny" : "allow")
    if (denied) {
      const error = new ToolDenied({ toolName: tool.name, reason: "policy", message: trifectaReason })
      return Effect.as(check, { callId: call.id, name: call.name, content: toolFailureText(call.name, error), isError: true })
    }
    const untrusted = tool.caps.includes("untrusted_content")
    const key = tool.sideEffecting && !tool.idempotent ? `${this.context.runId}/t${state.iteration}/c${index}` : undefined
    return Effect.zipRight(
      check,
      Effect.matchEffect(this.engine.runTool(name, call, tool, key), {
        onSuccess: (outcome): Effect.Effect<Ran> => {
          const privateData = tool.caps.includes("private_data")
          if (!privateData && !untrusted) return Effect.succeed({ callId: call.id, name: call.name, content: outcome.text, isError: false })
          const legs: Array<"private_data" | "untrusted_content"> = []
          if (privateData) {
            state.legs = { ...state.legs, privateData: true }
            legs.push("private_data")
          }
          if (untrusted) {
            state.legs = { ...state.legs, untrustedContent: true }
            legs.push("untrusted_content")
          }
          const content = untrusted ? loop.policy.wrapUntrusted(outcome.text, tool.name) : outcome.text
          return Effect.succeed({ callId: call.id, name: call.name, content, isError: false, legs })
        },
        onFailure: (error): Effect.Effect<Ran, AgentError> => {
          if (error instanceof ToolInDoubt) return Effect.succeed({ _tag: "InDoubt", error, index, tool })
          if (endsRun(error)) return Effect.fail(error as AgentError)
          return Effect.succeed({ callId: call.id, name: call.name, content: toolFailureText(call.name, error), isError: true })
        }
      })
    )
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
    if (announce && emit !== undefined) for (const entry of entries) emit(AgentEvent.Interrupt(entry))
    return Effect.as(this.save("suspended"), {
      ...this.finish("", "awaiting_approval", true),
      suspended: { _tag: "Suspended" as const, runId: this.context.runId, pending: frozen(entries) }
    })
  }

  /** Calls the ledger found in doubt become `InDoubt` entries, and the run suspends on them. */
  suspendInDoubt(doubts: ReadonlyArray<Doubt>): Effect.Effect<AgentResult, AgentError> {
    return Effect.flatMap(Clock.currentTimeMillis, (createdAt) =>
      this.suspend(
        doubts.map(({ error, index, tool }) =>
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
        true
      )
    )
  }

  /** Every call of the turn has a result: append them in call order, checkpoint, go on. */
  completeRound(): Effect.Effect<AgentResult, AgentError, RunContext> {
    const { state } = this
    const { emit } = this.loop
    for (const call of state.calls) {
      const result = state.completed.get(call.id)!
      state.transcript.push(Message.toolResult({ toolCallId: call.id, name: call.name, content: result.content, isError: result.isError }))
      if (emit !== undefined) emit(AgentEvent.ToolResult({ call, content: result.content, isError: result.isError }))
    }
    state.iteration += 1
    state.phase = "model"
    state.completed.clear()
    state.pending = []
    return this.save("running").pipe(
      Effect.tap(() => emit?.(AgentEvent.Step({ iteration: state.iteration }))),
      Effect.zipRight(Effect.suspend(() => this.modelStep()))
    )
  }

  /** Runs the turn's calls that have not run yet, recording each result as it lands. */
  runRound(waiting: ReadonlyArray<ToolCall.ToolCall>): Effect.Effect<AgentResult, AgentError, RunContext> {
    const calls = this.state.calls
    const one = (call: ToolCall.ToolCall): Effect.Effect<Ran, AgentError, RunContext> =>
      Effect.flatMap(this.runCall(call, calls.indexOf(call)), (ran): Effect.Effect<Ran, AgentError> => {
        if (isDoubt(ran)) return Effect.succeed(ran)
        const saving = this.record(ran)
        return saving === Effect.void ? Effect.succeed(ran) : Effect.as(saving, ran)
      })
    const results =
      waiting.length === 1 ? Effect.map(one(waiting[0]!), (ran) => [ran]) : Effect.forEach(waiting, one, { concurrency: "unbounded" })
    return Effect.flatMap(results, (results) => {
      const doubts = results.filter(isDoubt)
      return doubts.length > 0 ? this.suspendInDoubt(doubts) : this.completeRound()
    })
  }

  /**
   * Applies decisions to the entries, in call order. From an in-process approver (`approver`
   * mode) an invalid edit rejects that call and the model is told why; on resume the decisions
   * were checked before anything ran. A call that already has a result (applied before a crash)
   * is not run again.
   */
  apply(entries: ReadonlyArray<Approval.PendingEntry>, decide: Decide, mode: "resume" | "approver"): Effect.Effect<AgentResult, AgentError, RunContext> {
    const { state } = this
    return Effect.gen(this, function* () {
      const calls = state.calls
      const ledger = Option.getOrUndefined(yield* Effect.serviceOption(ExecutionLedger))
      const doubts: Array<Doubt> = []
      for (const entry of entries) {
        if (state.completed.has(entry.call.id)) continue
        yield* Cancellation.check(this.context.cancellation) // cancellation beats approval
        const decision = decide(entry)
        const { call } = entry
        const index = calls.findIndex((c) => c.id === call.id)
        const claim = entry.request as { readonly key: string; readonly claimedAt: number } | undefined
        const settle = (resolution: Parameters<ExecutionLedger.Service["resolve"]>[1]) =>
          ledger === undefined || claim === undefined
            ? Effect.void
            : // a conflict means it was settled already (before a crash) or claimed anew: the call's result decides
              Effect.catchTag(ledger.resolve(claim.key, resolution, { claimedAt: claim.claimedAt }), "LedgerConflict", () => Effect.void)
        let ran: Ran
        switch (decision.verdict) {
          case "reject":
            ran = { callId: call.id, name: call.name, content: approvalDeniedText(decision.reason), isError: true }
            break
          case "markDone":
            yield* settle({ _tag: "Done", outcome: { text: decision.outcome, isError: false } })
            ran = { callId: call.id, name: call.name, content: decision.outcome, isError: false }
            break
          case "markFailed":
            yield* settle({ _tag: "Failed", reason: decision.reason })
            ran = { callId: call.id, name: call.name, content: markedFailedText(decision.reason), isError: true }
            break
          case "retry":
            yield* settle({ _tag: "Retry" })
            // a step name of its own: the first attempt's name is taken by the call found in doubt
            ran = yield* this.runCall(call, index, `tool-${call.id}/retry-${entry.createdAt}`)
            break
          case "edit": {
            const tool = Option.getOrUndefined(this.loop.registry.getOption(call.name))
            const checked = mode === "approver" && tool !== undefined ? yield* Effect.either(tool.validate(decision.arguments)) : Either.void
            ran = Either.isLeft(checked)
              ? { callId: call.id, name: call.name, content: approvalDeniedText(`the edited arguments were invalid: ${checked.left.message}`), isError: true }
              : yield* this.runCall({ ...call, arguments: decision.arguments }, index)
            break
          }
          case "approve":
            ran = yield* this.runCall(call, index)
            break
        }
        if (isDoubt(ran)) doubts.push(ran)
        else yield* this.record(ran)
      }
      return yield* doubts.length > 0 ? this.suspendInDoubt(doubts) : this.completeRound()
    })
  }

  /** A turn whose calls need a person: ask the approver, or suspend. */
  gate(waiting: ReadonlyArray<ToolCall.ToolCall>): Effect.Effect<AgentResult, AgentError, RunContext> {
    const { context, loop, state } = this
    return Effect.gen(this, function* () {
      const calls = state.calls
      const createdAt = yield* Clock.currentTimeMillis
      const entries: Array<Approval.PendingEntry> = []
      const gatedByPolicy: Array<ToolRegistry.AnyTool> = []
      for (const call of waiting) {
        const tool = Option.getOrUndefined(loop.registry.getOption(call.name))
        if (tool === undefined) {
          // never gated, never run: the model is told the tool does not exist
          yield* this.record({ callId: call.id, name: call.name, content: unknownToolText(call.name, loop.names), isError: true })
          continue
        }
        const reasons = gateReasons(tool, context, loop.policy, state.legs)
        if (reasons.includes("trifecta")) gatedByPolicy.push(tool)
        entries.push(
          Approval.makeEntry({ kind: kindOf(reasons), path: context.runId, iteration: state.iteration, index: calls.indexOf(call), call, tool, reasons, createdAt })
        )
      }
      yield* Effect.forEach(gatedByPolicy, (tool) => this.policyCheck(tool, "gate"), { discard: true })
      if (this.engine.awaitDecision === undefined) return yield* this.suspend(entries, true)
      if (loop.emit !== undefined) for (const entry of entries) loop.emit(AgentEvent.Interrupt(entry))
      // the approver gets frozen copies: what it decides on cannot change what runs
      const answers = yield* this.engine.awaitDecision({ runId: context.runId, agent: loop.agent.name, pending: frozen(entries) })
      return yield* this.apply(entries, (entry) => Approval.resolve(entry, answers), "approver")
    })
  }

  toolStep(): Effect.Effect<AgentResult, AgentError, RunContext> {
    const waiting = this.state.calls.filter((call) => !this.state.completed.has(call.id))
    return waiting.some((call) => this.needsApproval(call)) ? this.gate(waiting) : this.runRound(waiting)
  }

  modelStep(): Effect.Effect<AgentResult, AgentError, RunContext> {
    const { loop, state } = this
    const { agent, emit } = loop
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
    const request = {
      model: agent.model,
      messages: state.transcript.slice(),
      tools: loop.schemas,
      ...(agent.maxTokens === undefined ? {} : { maxTokens: agent.maxTokens }),
      ...(agent.temperature === undefined ? {} : { temperature: agent.temperature })
    }
    return Cancellation.check(this.context.cancellation).pipe(
      Effect.zipRight(this.engine.callModel(`turn-${state.iteration}`, request, loop.onDelta)),
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
        if (emit !== undefined) for (const call of response.toolCalls) emit(AgentEvent.ToolCall({ call }))
        state.phase = "tools"
        state.completed.clear()
        const checkpoint = this.engine.checkpoint
        return checkpoint === undefined ? this.toolStep() : Effect.zipRight(checkpoint("running"), Effect.suspend(() => this.toolStep()))
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
