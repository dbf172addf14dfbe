/**
 * The gate every tool call passes, whichever path runs it (the ReAct loop's turns, a graph's tool
 * node; coordinators, `runAgents` and durable activities run tools through the loop): the
 * dynamic trifecta check on the run tree's legs and the tool's caps (`denies`), why a call waits
 * for a person (`requiresApproval`, conditional ones evaluated on the validated arguments; the
 * autonomy tier; the trifecta gate), the kind of the pending entry it becomes, and what a
 * person's approve or edit lets run (`admit`: the digest recomputed with the tool as it is now,
 * an edit validated like the model's arguments). @internal
 */
import type { RunContext, ToolCall } from "@agentkit/core"
import type { ToolRegistry } from "@agentkit/tools"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Approval from "../Approval.js"
import type { RunPolicy } from "../RunPolicy.js"
import * as Trifecta from "./trifecta.js"

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

/** Whether the dynamic check denies a call of this tool outright (only under `dynamic: "deny"`). */
export const denies = (policy: RunPolicy, tool: ToolRegistry.AnyTool, projected: Trifecta.Legs | undefined): boolean =>
  Trifecta.denied(policy, tool, projected)

/** The gate's verdict on one call before it runs. */
export type Verdict =
  | { readonly _tag: "Deny" }
  | { readonly _tag: "Wait"; readonly reasons: ReadonlyArray<Reason> }
  | { readonly _tag: "Run" }

const run: Verdict = { _tag: "Run" }
const deny: Verdict = { _tag: "Deny" }

/**
 * The gate's verdict on one call of a known tool, alone in its turn: denied by the dynamic check,
 * waiting (with why), or free to run. The loop decides a turn's calls together with `reasonsFor`
 * and `denies`, which this is made of.
 */
export const verdict = (
  tool: ToolRegistry.AnyTool,
  call: ToolCall.ToolCall,
  context: RunContext.Service,
  policy: RunPolicy,
  projected: Trifecta.Legs | undefined
): Effect.Effect<Verdict> => {
  if (denies(policy, tool, projected)) return Effect.succeed(deny)
  const approval = typeof tool.requiresApproval === "function"
    ? Approval.required(tool, call.arguments, context)
    : Effect.succeed(tool.requiresApproval)
  return Effect.map(approval, (required) => {
    const reasons = reasonsWith(tool, required, context, policy, projected)
    return reasons.length === 0 ? run : { _tag: "Wait", reasons }
  })
}

/** What an approve or edit lets run: the call (edited arguments in place), or why it is rejected. */
export type Admitted =
  | { readonly _tag: "Run"; readonly call: ToolCall.ToolCall }
  | { readonly _tag: "Reject"; readonly reason: string }

/**
 * What an approve or edit of an entry lets run. The pinned digest is recomputed with the tool as
 * it is now (a decision binds one tool definition and arguments); an edit is validated against
 * the tool's schema like a model call.
 */
export const admit = (
  entry: Approval.PendingEntry,
  decision: Approval.Decision & { readonly verdict: "approve" | "edit" },
  tool: ToolRegistry.AnyTool
): Effect.Effect<Admitted> => {
  const fingerprint = Approval.fingerprint(tool)
  const bound = Approval.digest({ path: entry.path, pendingId: entry.id, fingerprint, arguments: entry.call.arguments })
  if (bound !== decision.digest) {
    return Effect.succeed({
      _tag: "Reject",
      reason: "the decision was given for another tool definition or other arguments (digest mismatch)"
    })
  }
  if (decision.verdict === "approve") return Effect.succeed({ _tag: "Run", call: entry.call })
  const edited = decision.arguments
  return Effect.map(Effect.either(tool.validate(edited)), (checked) =>
    Either.isLeft(checked)
      ? { _tag: "Reject", reason: `the edited arguments were invalid: ${checked.left.message}` }
      : { _tag: "Run", call: { ...entry.call, arguments: edited } })
}

/**
 * Reads an in-process approver's answers for its entries, failing closed: the answers are
 * snapshot (frozen, cut off from the approver), and each entry's decision is read with
 * `Approval.resolve`. Answers keyed by ids that are not the entries' (tool-call ids, another
 * run's ids) are logged with the ids expected, and the rejection of an entry left without a
 * decision names them too (it is audited with that reason).
 */
export const approverAnswers = (
  entries: ReadonlyArray<Approval.PendingEntry>,
  answers: unknown
): Effect.Effect<(entry: Approval.PendingEntry) => Approval.Decision> => {
  const snapshot = Approval.snapshot(answers)
  const record = typeof snapshot === "object" && snapshot !== null && !Array.isArray(snapshot)
    ? (snapshot as Approval.Decisions)
    : Approval.decisions([])
  const ids: ReadonlyArray<string> = entries.map((entry) => entry.id)
  const unknown = Object.keys(record).filter((key) => !ids.includes(key))
  const read = (entry: Approval.PendingEntry) => Approval.resolve(entry, record)
  if (unknown.length === 0) return Effect.succeed(read)
  const named = `the approver answered unknown pending id(s) ${JSON.stringify(unknown)}; decisions are keyed by ` +
    `pending id, expected ${JSON.stringify(ids)}`
  return Effect.as(
    Effect.logWarning(`approver: ${named}`),
    (entry: Approval.PendingEntry) =>
      Object.hasOwn(record, entry.id) ? read(entry) : Approval.reject(entry.digest, `no decision was given: ${named}`)
  )
}
