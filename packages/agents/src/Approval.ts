/**
 * Human approval: the decisions a person can take on a pending tool call, the digest that ties a
 * decision to the exact arguments it was given for, and the optional in-process `Approver`.
 *
 * @since 0.1.0
 */
import { CanonicalJson } from "@agentkit/core"
import type { ToolCall } from "@agentkit/core"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { PendingCall } from "./AgentResult.js"

/**
 * A person's decision on one pending call. It names the digest of the arguments it was given
 * for; a decision whose digest does not match the pending call is refused (the call does not run).
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 * import { Schema } from "effect"
 *
 * Schema.is(Approval.Decision)({ _tag: "Reject", digest: "3f1a", reason: "not confirmed" }) // true
 * Schema.is(Approval.Decision)("approved") // false: read as a rejection
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Decision = Schema.Union(
  Schema.TaggedStruct("Approve", { digest: Schema.String }),
  Schema.TaggedStruct("Reject", { digest: Schema.String, reason: Schema.optional(Schema.String) }),
  Schema.TaggedStruct("Edit", {
    digest: Schema.String,
    arguments: Schema.Record({ key: Schema.String, value: Schema.Unknown })
  })
)

/**
 * A person's decision on one pending call: `Approve`, `Reject` or `Edit`, each naming the digest of
 * the arguments it was given for.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 *
 * const describe = (decision: Approval.Decision) =>
 *   decision._tag === "Edit" ? `edit to ${JSON.stringify(decision.arguments)}` : decision._tag.toLowerCase()
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Decision = Schema.Schema.Type<typeof Decision>

/**
 * Decisions by tool call id. A pending call with no decision is rejected; so is any value that is
 * not a valid decision (fail closed).
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 *
 * const decisions: Approval.Decisions = { [pending.call.id]: Approval.approve(pending.digest) }
 * agent.resume("run-1", decisions)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Decisions = Readonly<Record<string, unknown>>

/**
 * Approve a pending call with the arguments the model gave.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 *
 * const decisions = { [pending.call.id]: Approval.approve(pending.digest) }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const approve = (digest: string): Decision => ({ _tag: "Approve", digest })

/**
 * Reject a pending call; the model sees `DENIED: tool call rejected by human approval` and the
 * reason.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 *
 * Approval.reject(pending.digest, "the customer has not confirmed")
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const reject = (digest: string, reason?: string): Decision =>
  reason === undefined ? { _tag: "Reject", digest } : { _tag: "Reject", digest, reason }

/**
 * Run a pending call with other arguments. They are validated against the tool's schema like a
 * model call: a bad edit fails the resume with `ToolArgumentError` and nothing runs.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 *
 * Approval.edit(pending.digest, { order_id: "A-771", reason: "duplicate order" })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const edit = (digest: string, args: Readonly<Record<string, unknown>>): Decision => ({
  _tag: "Edit",
  digest,
  arguments: args
})

/**
 * The digest of a call's name and arguments: SHA-256 over their canonical JSON (keys sorted).
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 *
 * Approval.digest({ id: "c1", name: "cancel_order", arguments: { order_id: "A-771" } }).length // 64
 * ```
 *
 * @since 0.1.0
 * @category hashing
 */
export const digest = (call: ToolCall.ToolCall): string =>
  CanonicalJson.hash({ name: call.name, arguments: call.arguments })

/**
 * What an approver is asked: the run and every pending call of one turn.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 * import { Effect } from "effect"
 *
 * const rejectAll = (request: Approval.ApprovalRequest) =>
 *   Effect.succeed(Object.fromEntries(request.pending.map((p) => [p.call.id, Approval.reject(p.digest, `${request.agent} may not act alone`)])))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ApprovalRequest {
  readonly runId: string
  readonly agent: string
  readonly pending: ReadonlyArray<PendingCall>
}

/**
 * An in-process approver (a terminal prompt, a callback in a server): asked and awaited, so the
 * run goes on without a checkpoint round trip. Optional: without one, a gated call suspends the
 * run.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 * import { Effect, Layer } from "effect"
 *
 * const ApproveAll = Layer.succeed(Approval.Approver, {
 *   decide: ({ pending }) => Effect.succeed(Object.fromEntries(pending.map((p) => [p.call.id, Approval.approve(p.digest)])))
 * })
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class Approver extends Context.Tag("@agentkit/agents/Approver")<
  Approver,
  { readonly decide: (request: ApprovalRequest) => Effect.Effect<Decisions> }
>() {}

const decodeDecision = Schema.decodeUnknownOption(Decision)

/**
 * Reads a decision for a pending call, failing closed: a missing decision, an invalid value, or
 * a digest that does not match becomes a rejection with a reason.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 *
 * Approval.resolve(pending, { [pending.call.id]: "approved" }) // a Reject: not a valid decision
 * ```
 *
 * @since 0.1.0
 * @category getters
 */
export const resolve = (pending: PendingCall, decisions: Decisions): Decision => {
  const raw = Object.hasOwn(decisions, pending.call.id) ? decisions[pending.call.id] : undefined
  if (raw === undefined) return reject(pending.digest, "no decision was given")
  const decision = decodeDecision(raw)
  if (decision._tag === "None") return reject(pending.digest, "the decision was not approve, reject or edit")
  if (decision.value.digest !== pending.digest) {
    return reject(pending.digest, "the decision was given for other arguments (digest mismatch)")
  }
  return decision.value
}
