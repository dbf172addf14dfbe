/**
 * The ReAct loop's working state: one mutable value per run (never on the cognition), made from
 * the input messages or from a saved `RunState`, and turned back into a `RunState` only when a
 * checkpoint is written (so a run without a store encodes nothing). The trifecta legs and the
 * tree's usage are not here: they live on the run context, shared by the run tree. @internal
 */
import type { Message, RunContext, ToolCall } from "@agentkit/core"
import { Usage } from "@agentkit/core"
import type * as Approval from "../../Approval.js"
import type * as RunState from "../../RunState.js"
import { contextState, usageOf, usageState } from "../runRecord.js"

export type CallResult = RunState.CallResult

const noPending: ReadonlyArray<Approval.PendingEntry> = Object.freeze([])

export class Run {
  iteration = 0
  phase: RunState.RunState["phase"] = "model"
  #completed: Map<string, CallResult> | undefined
  pending: ReadonlyArray<Approval.PendingEntry> = noPending
  usage: Usage.Usage = Usage.zero
  recoveries = 0
  cognitionState: unknown = undefined

  /** This turn's results so far, by call id (made on the first tool round). */
  get completed(): Map<string, CallResult> {
    return (this.#completed ??= new Map())
  }

  constructor(
    readonly agent: string,
    readonly transcript: Array<Message.Message>
  ) {}

  static fromState(state: RunState.RunState): Run {
    const run = new Run(state.agent, [...state.transcript])
    run.iteration = state.iteration
    run.phase = state.phase
    for (const result of state.turn.completed) run.completed.set(result.callId, result)
    run.pending = state.pending
    run.usage = usageOf(state.usage)
    run.recoveries = state.recoveries
    run.cognitionState = state.cognitionState
    return run
  }

  /** The calls of the current turn (the last assistant message's), in order. */
  get calls(): ReadonlyArray<ToolCall.ToolCall> {
    const last = this.transcript.at(-1)
    return last?.role === "assistant" ? last.toolCalls : []
  }

  /**
   * The state to checkpoint, as the run is now: its own usage, and from the run context the
   * tree's legs and this run's tally (its usage and its sub-runs').
   */
  toState(context: RunContext.Service, cognition: RunState.RunState["cognition"]): RunState.RunState {
    const { legs, tally } = context
    return {
      version: 2,
      runId: context.runId,
      agent: this.agent,
      cognition,
      phase: this.phase,
      iteration: this.iteration,
      transcript: this.transcript.slice(),
      usage: usageState(this.usage),
      treeUsage: usageState(tally.usage),
      turn: { completed: Array.from(this.completed.values()) },
      pending: this.pending,
      legs: { privateData: legs.privateData, untrustedContent: legs.untrustedContent, egress: legs.egress },
      budget: context.budget.snapshot(),
      recoveries: this.recoveries,
      context: contextState(context),
      ...(this.cognitionState === undefined ? {} : { cognitionState: this.cognitionState })
    }
  }
}
