/**
 * The crash suite's figures, counted from what survives the kills: the append-only logs of model
 * calls and tool side effects, the runs' final records and the recorded decisions. Pure functions
 * of those, so the counting is tested on its own (test/crash.test.ts feeds it made-up histories).
 */
import { toolKey } from "./protocol.js"

export interface ModelCall {
  readonly runId: string
  readonly iteration: number
  readonly nonce: string
}

export interface SideEffect {
  readonly key: string
  readonly nonce: string
  readonly at: number
}

/**
 * A run at the end: its status and, when done, what its result shows: the committed model
 * responses (their nonces, by turn), and who approved the gated turn's call when that call's
 * result is the charge (not a refusal).
 */
export interface FinalRun {
  readonly runId: string
  readonly status: string
  readonly result?:
    | { readonly responses: ReadonlyArray<string>; readonly approvals: Readonly<Record<string, string>> }
    | undefined
  /** The approval recorded for the gated turn: who, and when (store time). */
  readonly approval?: { readonly by: string; readonly at: number } | undefined
}

export interface Figures {
  readonly runs: number
  readonly finished: number
  /** Runs a kill stopped mid-way (they had reported a point and no outcome when their worker died). */
  readonly interrupted: number
  /** Of those, how many finished (taken over or resumed by a later worker) or ended in doubt. */
  readonly resumedOrInDoubt: number
  /** Calls whose outcome was in doubt after a kill and a person decided. */
  readonly inDoubtResolved: number
  readonly kills: number
  /** An approval recorded but not applied to the run (or applied with another approver). */
  readonly lostApprovals: number
  /** The gated tool ran before its approval was recorded (or without one). */
  readonly unapprovedExecutions: number
  /** A side-effecting, non-idempotent tool call whose effect happened twice. */
  readonly doubleExecutions: number
  /** A model call made again after the response of that turn had been committed. */
  readonly repeatedCommittedModelCalls: number
}

export const parseCalls = (text: string): ReadonlyArray<ModelCall> =>
  text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const [runId, iteration, nonce] = line.split(" ")
      return { runId: runId!, iteration: Number(iteration), nonce: nonce! }
    })

export const parseEffects = (text: string): ReadonlyArray<SideEffect> =>
  text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const [key, nonce, at] = line.split(" ")
      return { key: key!, nonce: nonce!, at: Number(at) }
    })

export const count = (input: {
  readonly runs: ReadonlyArray<FinalRun>
  readonly calls: ReadonlyArray<ModelCall>
  readonly effects: ReadonlyArray<SideEffect>
  readonly interrupted: ReadonlySet<string>
  readonly inDoubtResolved: number
  readonly kills: number
  readonly approvalAt: number
}): Figures => {
  const effectsByKey = new Map<string, Array<SideEffect>>()
  for (const effect of input.effects) {
    const list = effectsByKey.get(effect.key) ?? []
    list.push(effect)
    effectsByKey.set(effect.key, list)
  }
  let lostApprovals = 0
  let unapprovedExecutions = 0
  let repeated = 0
  for (const run of input.runs) {
    const gated = effectsByKey.get(toolKey(run.runId, input.approvalAt)) ?? []
    if (gated.some((effect) => run.approval === undefined || effect.at < run.approval.at)) unapprovedExecutions++
    if (run.status === "done" && run.result !== undefined) {
      if (run.approval === undefined || run.result.approvals[String(input.approvalAt)] !== run.approval.by) {
        lostApprovals++
      }
      // each turn's committed response: any call of that turn after it is a repeat
      run.result.responses.forEach((committed, iteration) => {
        const turn = input.calls.filter((call) => call.runId === run.runId && call.iteration === iteration)
        const at = turn.findIndex((call) => call.nonce === committed)
        if (at >= 0) repeated += turn.length - at - 1
      })
    }
  }
  const done = new Set(input.runs.filter((run) => run.status === "done").map((run) => run.runId))
  return {
    runs: input.runs.length,
    finished: done.size,
    interrupted: input.interrupted.size,
    resumedOrInDoubt: [...input.interrupted].filter((runId) => done.has(runId)).length,
    inDoubtResolved: input.inDoubtResolved,
    kills: input.kills,
    lostApprovals,
    unapprovedExecutions,
    doubleExecutions: [...effectsByKey.values()].filter((list) => list.length > 1).length,
    repeatedCommittedModelCalls: repeated
  }
}

/** The figures as the suite prints them. */
export const describe = (name: string, figures: Figures): string => {
  const pct = figures.interrupted === 0 ? 100 : (100 * figures.resumedOrInDoubt) / figures.interrupted
  return [
    `crash suite (${name}): ${figures.runs} runs, ${figures.kills} kills (SIGKILL), ${figures.finished} finished`,
    `  runs resumed or in doubt: ${
      pct.toFixed(1)
    }% (${figures.resumedOrInDoubt} of ${figures.interrupted} interrupted; ${figures.inDoubtResolved} in-doubt calls decided)`,
    `  lost approvals: ${figures.lostApprovals}; unapproved executions: ${figures.unapprovedExecutions}`,
    `  double executions of side-effecting non-idempotent tools: ${figures.doubleExecutions}`,
    `  repeated model calls whose response was committed: ${figures.repeatedCommittedModelCalls}`
  ].join("\n")
}
