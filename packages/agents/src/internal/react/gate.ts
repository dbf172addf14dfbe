/**
 * The approval gate: which calls of a turn wait for a person and why, and the kind of the pending
 * entries they become. A conditional `requiresApproval` is evaluated on the call's validated
 * arguments and the run context. @internal
 */
import type { RunContext, ToolCall } from "@agentkit/core"
import type { ToolRegistry } from "@agentkit/tools"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Approval from "../../Approval.js"
import type { RunPolicy } from "../../RunPolicy.js"
import * as Trifecta from "../trifecta.js"

export type Reason = (typeof Approval.reasons)[number]

const none: ReadonlyArray<Reason> = Object.freeze([])

/** Why a call of this tool waits for a person (empty: it does not), its approval condition decided. */
export const reasonsWith = (
  tool: ToolRegistry.AnyTool,
  requiresApproval: boolean,
  context: RunContext.Service,
  policy: RunPolicy,
  projected: Trifecta.Legs | undefined
): ReadonlyArray<Reason> => {
  const manual = context.autonomy === "manual"
  const autonomyGated = context.autonomy === "gated" && tool.sideEffecting
  const trifecta = Trifecta.gated(policy, tool, projected)
  if (!requiresApproval && !manual && !autonomyGated && !trifecta) return none
  const reasons: Array<Reason> = []
  if (requiresApproval) reasons.push("requires_approval")
  if (manual) reasons.push("autonomy_manual")
  if (autonomyGated) reasons.push("autonomy_gated")
  if (trifecta) reasons.push("trifecta")
  return reasons
}

/**
 * Why each call waits (in call order), or `undefined` when none does. Calls of unknown tools never
 * wait: the model is told the tool does not exist. Computed without an effect unless a tool's
 * approval is conditional.
 */
export const reasonsFor = (
  calls: ReadonlyArray<ToolCall.ToolCall>,
  registry: ToolRegistry.ToolRegistry,
  context: RunContext.Service,
  policy: RunPolicy,
  projected: Trifecta.Legs | undefined
): Effect.Effect<ReadonlyArray<ReadonlyArray<Reason>> | undefined> => {
  const reasons: Array<ReadonlyArray<Reason>> = new Array(calls.length)
  let waits = false
  let conditional: Array<number> | undefined
  for (let i = 0; i < calls.length; i++) {
    const tool = Option.getOrUndefined(registry.getOption(calls[i]!.name))
    if (tool === undefined) {
      reasons[i] = none
      continue
    }
    if (typeof tool.requiresApproval === "function") {
      ;(conditional ??= []).push(i)
      continue
    }
    const found = reasonsWith(tool, tool.requiresApproval, context, policy, projected)
    reasons[i] = found
    if (found.length > 0) waits = true
  }
  // without a conditional approval the reasons are known now: an Exit the caller can read in place
  if (conditional === undefined) return Exit.succeed(waits ? reasons : undefined)
  return Effect.map(
    Effect.forEach(conditional, (i) => {
      const call = calls[i]!
      const tool = Option.getOrThrow(registry.getOption(call.name))
      return Effect.map(Approval.required(tool, call.arguments, context), (approval) => {
        reasons[i] = reasonsWith(tool, approval, context, policy, projected)
      })
    }),
    () => (reasons.some((found) => found.length > 0) ? reasons : undefined)
  )
}

/** The kind of a gated call's entry: a policy gate alone is a `Gate`; anything else an `Approval`. */
export const kindOf = (reasons: ReadonlyArray<string>): Approval.PendingKind =>
  reasons.length === 1 && reasons[0] === "trifecta" ? "Gate" : "Approval"
