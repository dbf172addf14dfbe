/**
 * The approval gate: which calls of a turn wait for a person and why, and the pending entries
 * they become. @internal
 */
import type { RunContext } from "@agentkit/core"
import type { ToolRegistry } from "@agentkit/tools"
import type * as Approval from "../../Approval.js"
import type { RunPolicy } from "../../RunPolicy.js"
import type { Run } from "./state.js"

/** Whether a call of this tool would complete the lethal trifecta, given the legs touched so far. */
export const completesTrifecta = (tool: ToolRegistry.AnyTool, legs: Run["legs"]): boolean =>
  tool.caps.includes("egress") && legs.privateData && legs.untrustedContent

/** Why a call of this tool waits for a person (empty: it does not). */
export const gateReasons = (
  tool: ToolRegistry.AnyTool,
  context: RunContext.Service,
  policy: RunPolicy,
  legs: Run["legs"]
): ReadonlyArray<(typeof Approval.reasons)[number]> => {
  const reasons: Array<(typeof Approval.reasons)[number]> = []
  if (tool.requiresApproval) reasons.push("requires_approval")
  if (context.autonomy === "manual") reasons.push("autonomy_manual")
  if (context.autonomy === "gated" && tool.sideEffecting) reasons.push("autonomy_gated")
  if (policy.dynamic === "gate" && completesTrifecta(tool, legs)) reasons.push("trifecta")
  return reasons
}

/** The kind of a gated call's entry: a policy gate alone is a `Gate`; anything else an `Approval`. */
export const kindOf = (reasons: ReadonlyArray<string>): Approval.PendingKind =>
  reasons.length === 1 && reasons[0] === "trifecta" ? "Gate" : "Approval"
