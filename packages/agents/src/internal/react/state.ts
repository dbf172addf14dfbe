/**
 * The ReAct loop's working state: one mutable value per run (never on the cognition), made from
 * the input messages or from a saved `RunState`, and turned back into a `RunState` only when a
 * checkpoint is written (so a run without a store encodes nothing). @internal
 */
import type { Message, RunContext, ToolCall } from "@agentkit/core"
import { Usage } from "@agentkit/core"
import type * as Approval from "../../Approval.js"
import type * as RunState from "../../RunState.js"
import { contextState, usageOf, usageState } from "../lifecycle.js"

export type CallResult = RunState.CallResult

/** The legs of a run that has touched none (replaced, never changed: legs are copied on write). */
const noLegs: Run["legs"] = Object.freeze({ privateData: false, untrustedContent: false, egress: false })
const noPending: ReadonlyArray<Approval.PendingEntry> = Object.freeze([])

export class Run {
  iteration = 0
  phase: RunState.RunState["phase"] = "model"
  #completed: Map<string, CallResult> | undefined
  pending: ReadonlyArray<Approval.PendingEntry> = noPending
  legs: { readonly privateData: boolean; readonly untrustedContent: boolean; readonly egress: boolean } = noLegs
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
    run.legs = state.legs
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

  /** The state to checkpoint, as the run is now. */
  toState(context: RunContext.Service, cognition: RunState.RunState["cognition"]): RunState.RunState {
    const usage = usageState(this.usage)
    return {
      version: 1,
      runId: context.runId,
      agent: this.agent,
      cognition,
      phase: this.phase,
      iteration: this.iteration,
      transcript: this.transcript.slice(),
      usage,
      treeUsage: usage,
      turn: { completed: Array.from(this.completed.values()) },
      pending: this.pending,
      legs: { ...this.legs },
      budget: context.budget.snapshot(),
      recoveries: this.recoveries,
      context: contextState(context),
      ...(this.cognitionState === undefined ? {} : { cognitionState: this.cognitionState })
    }
  }
}
