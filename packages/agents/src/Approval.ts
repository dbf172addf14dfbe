/**
 * Human decisions: the pending entries a suspended run waits on, the decisions a person takes on
 * them, the digest that binds a decision to exactly what it was given for, and the optional
 * in-process `Approver`.
 *
 * A pending entry's `id` is framework-assigned and unique in the run tree (a hash of the run path,
 * the turn, the call's index and id, and the entry's kind); decisions are keyed by it. Its
 * `digest` binds the run path, the pending id, the tool's fingerprint (its advertised JSON Schema
 * bytes, flags and caps) and the canonical arguments, so a decision never applies to other
 * arguments, another tool definition or another run.
 *
 * @since 0.1.0
 */
import { CanonicalJson, ToolCall } from "@agentkit/core"
import type { ApprovalCondition, Capability, RunContext } from "@agentkit/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { lazy } from "./internal/lazy.js"

/**
 * Why an entry waits: for approval (`Approval`), because its outcome is unknown after a crash
 * (`InDoubt`), at a policy gate (`Gate`: the call would complete the lethal trifecta), or for
 * input (`Input`, kept for the MCP input requests later releases add).
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 * import { Schema } from "effect"
 *
 * Schema.is(Approval.PendingKind)("InDoubt") // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const PendingKind = Schema.Literal("Approval", "InDoubt", "Gate", "Input")

/**
 * The kind of a pending entry.
 *
 * @example
 * ```ts
 * import type { Approval } from "@agentkit/agents"
 *
 * const needsOperator = (kind: Approval.PendingKind) => kind === "InDoubt"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type PendingKind = Schema.Schema.Type<typeof PendingKind>

/**
 * The reasons an entry waits, as they appear in `reasons`.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 *
 * Approval.reasons.includes("autonomy_gated") // true
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const reasons = [
  "requires_approval",
  "autonomy_gated",
  "autonomy_manual",
  "trifecta",
  "in_doubt",
  "gate",
  "input_requested"
] as const

/**
 * What a pending entry records of the tool: its flags, caps, fingerprint and advertised parameters.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 * import { Schema } from "effect"
 *
 * Schema.is(Approval.ToolFacts)({ name: "t", sideEffecting: true, idempotent: false, requiresApproval: false, caps: [], fingerprint: "f", parameters: {} }) // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolFacts = Schema.Struct({
  name: Schema.String,
  sideEffecting: Schema.Boolean,
  idempotent: Schema.Boolean,
  requiresApproval: Schema.Boolean,
  caps: Schema.Array(Schema.Literal("private_data", "untrusted_content", "egress")),
  fingerprint: Schema.String,
  /** The advertised JSON Schema of the parameters. */
  parameters: Schema.Unknown
})

/**
 * What a pending entry records of the tool.
 *
 * @example
 * ```ts
 * import type { Approval } from "@agentkit/agents"
 *
 * const risky = (tool: Approval.ToolFacts) => tool.sideEffecting && !tool.idempotent
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolFacts extends Schema.Schema.Type<typeof ToolFacts> {}

/**
 * One entry a suspended run waits on.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 * import { Schema } from "effect"
 *
 * const decode = Schema.decodeUnknownSync(Approval.PendingEntry)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const PendingEntry = Schema.Struct({
  id: Schema.String,
  kind: PendingKind,
  /** The run id the entry waits in (a sub-run's is path-derived). */
  path: Schema.String,
  call: ToolCall.ToolCall,
  digest: Schema.String,
  reasons: Schema.Array(Schema.String),
  tool: ToolFacts,
  createdAt: Schema.Number,
  /** Kind-specific: for `InDoubt`, `{ key, claimedAt }` of the ledger claim. */
  request: Schema.optional(Schema.Unknown)
})

/**
 * One entry a suspended run waits on: its id, kind, the run it waits in, the call with its
 * frozen arguments, the digest a decision must name, why it waits, the tool, when it was made.
 *
 * @example
 * ```ts
 * import type { Approval } from "@agentkit/agents"
 *
 * const line = (entry: Approval.PendingEntry) => `${entry.id} ${entry.kind} ${entry.call.name} (${entry.reasons.join(", ")})`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface PendingEntry extends Schema.Schema.Type<typeof PendingEntry> {}

/**
 * The verdicts: `approve`, `reject` and `edit` for an approval or a gate; `markDone`,
 * `markFailed` and `retry` for a call in doubt.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 * import { Schema } from "effect"
 *
 * Schema.is(Approval.Verdict)("retry") // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Verdict = Schema.Literal("approve", "reject", "edit", "markDone", "markFailed", "retry")

/**
 * A verdict.
 *
 * @example
 * ```ts
 * import type { Approval } from "@agentkit/agents"
 *
 * const runsTheCall = (verdict: Approval.Verdict) => verdict === "approve" || verdict === "edit" || verdict === "retry"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Verdict = Schema.Schema.Type<typeof Verdict>

const base = { digest: Schema.String, by: Schema.optional(Schema.String) }

/**
 * A person's decision on one pending entry: a verdict and the digest of the entry it was given
 * for (plus who decided, a reason, edited arguments, or the outcome of a call in doubt).
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 * import { Schema } from "effect"
 *
 * Schema.is(Approval.Decision)({ verdict: "reject", digest: "3f1a", reason: "not confirmed" }) // true
 * Schema.is(Approval.Decision)("approved") // false: refused
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Decision = Schema.Union(
  Schema.Struct({ verdict: Schema.Literal("approve"), ...base, reason: Schema.optional(Schema.String) }),
  Schema.Struct({ verdict: Schema.Literal("reject"), ...base, reason: Schema.optional(Schema.String) }),
  Schema.Struct({
    verdict: Schema.Literal("edit"),
    ...base,
    reason: Schema.optional(Schema.String),
    arguments: Schema.Record({ key: Schema.String, value: Schema.Unknown })
  }),
  Schema.Struct({
    verdict: Schema.Literal("markDone"),
    ...base,
    reason: Schema.optional(Schema.String),
    outcome: Schema.String
  }),
  Schema.Struct({ verdict: Schema.Literal("markFailed"), ...base, reason: Schema.String }),
  Schema.Struct({ verdict: Schema.Literal("retry"), ...base, reason: Schema.optional(Schema.String) })
)

/**
 * A person's decision on one pending entry.
 *
 * @example
 * ```ts
 * import type { Approval } from "@agentkit/agents"
 *
 * const describe = (decision: Approval.Decision) =>
 *   decision.verdict === "edit" ? `edit to ${JSON.stringify(decision.arguments)}` : decision.verdict
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Decision = Schema.Schema.Type<typeof Decision>

/**
 * Decisions by pending id. On `agent.resume` a value that is not a record, an unknown id, a
 * digest mismatch or a verdict the entry does not accept fails the whole resume with a typed
 * error and nothing runs; a pending entry with no decision is rejected (fail closed). From an
 * in-process `Approver`, a bad decision rejects that call only.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 *
 * const decisions: Approval.Decisions = { [pending.id]: Approval.approve(pending.digest) }
 * agent.resume("run-1", decisions)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Decisions = Readonly<Record<string, unknown>>

/**
 * A deep copy of decisions, deep-frozen, taken when they are handed over (to `agent.resume`, or
 * returned by an approver): changing the object afterwards changes nothing that runs. A value
 * that is not plain data (a function, a class instance that cannot be cloned) becomes a decision
 * no verdict accepts, so it rejects (fail closed).
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 *
 * const given = { [pending.id]: Approval.edit(pending.digest, { order_id: "A-771" }) }
 * const kept = Approval.snapshot(given)
 * ;(given[pending.id] as { arguments: Record<string, unknown> }).arguments.order_id = "B-1" // kept still says A-771
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const snapshot = (decisions: unknown): unknown => {
  if (typeof decisions !== "object" || decisions === null) return decisions
  try {
    return freezeDeep(structuredClone(decisions))
  } catch {
    if (Array.isArray(decisions)) return Object.freeze([])
    const copy: Record<string, unknown> = {}
    for (const key of Object.keys(decisions)) {
      let value: unknown
      try {
        value = freezeDeep(structuredClone((decisions as Record<string, unknown>)[key]))
      } catch {
        value = "not plain data"
      }
      copy[key] = value
    }
    return Object.freeze(copy)
  }
}

const freezeDeep = <A>(value: A): A => {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const key of Object.keys(value)) freezeDeep((value as Record<string, unknown>)[key])
  }
  return value
}

/**
 * Approve a pending call with the arguments the model gave.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 *
 * const decisions = { [pending.id]: Approval.approve(pending.digest, { by: "alice" }) }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const approve = (digest: string, options: { readonly by?: string | undefined } = {}): Decision =>
  options.by === undefined ? { verdict: "approve", digest } : { verdict: "approve", digest, by: options.by }

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
  reason === undefined ? { verdict: "reject", digest } : { verdict: "reject", digest, reason }

/**
 * Run a pending call with other arguments. They are validated against the tool's schema like a
 * model call: on resume a bad edit fails with `ToolArgumentError` and nothing runs.
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
  verdict: "edit",
  digest,
  arguments: args
})

/**
 * A call in doubt did happen: the model sees `outcome` as its result, and it is not run again.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 *
 * Approval.markDone(pending.digest, "charged $12.00, receipt R-88")
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const markDone = (digest: string, outcome: string): Decision => ({ verdict: "markDone", digest, outcome })

/**
 * A call in doubt did not happen: the model sees an error result with the reason (core's
 * `markedFailedText`), and it is not run again.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 *
 * Approval.markFailed(pending.digest, "the bank has no record of it")
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const markFailed = (digest: string, reason: string): Decision => ({ verdict: "markFailed", digest, reason })

/**
 * Run a call in doubt again (its ledger claim is removed first): for when a person checked that
 * its effect did not happen.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 *
 * Approval.retry(pending.digest)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const retry = (digest: string): Decision => ({ verdict: "retry", digest })

/**
 * The verdicts an entry of each kind accepts.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 *
 * Approval.verdictsFor("InDoubt") // ["markDone", "markFailed", "retry"]
 * ```
 *
 * @since 0.1.0
 * @category getters
 */
export const verdictsFor = (kind: PendingKind): ReadonlyArray<Verdict> =>
  kind === "InDoubt" ? ["markDone", "markFailed", "retry"] : ["approve", "reject", "edit"]

/**
 * The id of a pending entry: `p-` and 16 hex digits of a SHA-256 over the run path, the turn,
 * the call's index and id and the entry's kind (and, for a call in doubt, when it was claimed,
 * so a call that falls in doubt again gets a new entry). Deterministic: a re-driven run makes the
 * same ids.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 *
 * Approval.pendingId({ path: "run-1", iteration: 0, index: 0, callId: "c1", kind: "Approval" }) // "p-" + 16 hex digits
 * ```
 *
 * @since 0.1.0
 * @category hashing
 */
export const pendingId = (input: {
  readonly path: string
  readonly iteration: number
  readonly index: number
  readonly callId: string
  readonly kind: PendingKind
  readonly claimedAt?: number | undefined
}): string =>
  `p-${
    CanonicalJson.sha256(
      CanonicalJson.stringify([
        input.path,
        input.iteration,
        input.index,
        input.callId,
        input.kind,
        input.claimedAt ?? null
      ])
    ).slice(0, 16)
  }`

/** What a fingerprint is computed from: a tool's advertised schema, flags and caps. */
interface Fingerprinted {
  readonly schema: { readonly parameters: unknown }
  readonly sideEffecting: boolean
  readonly idempotent: boolean
  /** A condition (a function) fingerprints as `"conditional"`. */
  readonly requiresApproval: boolean | ((...args: never) => unknown)
  readonly caps: ReadonlyArray<Capability>
}

const fingerprints = new WeakMap<object, string>()

/**
 * A tool's fingerprint: SHA-256 over its advertised JSON Schema bytes, its flags and its caps
 * (computed once per tool value; a conditional `requiresApproval` counts as `"conditional"`). A
 * change to any of them changes every digest made for it.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 *
 * Approval.fingerprint(cancelOrder).length // 64
 * ```
 *
 * @since 0.1.0
 * @category hashing
 */
export const fingerprint = (tool: Fingerprinted): string => {
  let found = fingerprints.get(tool)
  if (found === undefined) {
    found = CanonicalJson.hash({
      schema: JSON.stringify(tool.schema.parameters),
      sideEffecting: tool.sideEffecting,
      idempotent: tool.idempotent,
      requiresApproval: typeof tool.requiresApproval === "function" ? "conditional" : tool.requiresApproval,
      caps: [...tool.caps]
    })
    fingerprints.set(tool, found)
  }
  return found
}

/**
 * The digest a decision must name: SHA-256 of the canonical JSON of the run path, the pending id,
 * the tool's fingerprint and the arguments.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 *
 * Approval.digest({ path: "run-1", pendingId: "p-0123456789abcdef", fingerprint: Approval.fingerprint(cancelOrder), arguments: { order_id: "A-771" } }).length // 64
 * ```
 *
 * @since 0.1.0
 * @category hashing
 */
export const digest = (input: {
  readonly path: string
  readonly pendingId: string
  readonly fingerprint: string
  readonly arguments: unknown
}): string =>
  CanonicalJson.hash({ run: input.path, pending: input.pendingId, tool: input.fingerprint, arguments: input.arguments })

/**
 * What a pending entry records of a tool.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 *
 * Approval.toolFacts(cancelOrder).sideEffecting // true
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const toolFacts = (tool: Fingerprinted & { readonly name: string }): ToolFacts => ({
  name: tool.name,
  sideEffecting: tool.sideEffecting,
  idempotent: tool.idempotent,
  // a conditional approval is recorded as `true`: the tool may require it (the entry's reasons say whether it did)
  requiresApproval: tool.requiresApproval !== false,
  caps: [...tool.caps],
  fingerprint: fingerprint(tool),
  parameters: tool.schema.parameters
})

/**
 * Makes the pending entry of one call of a turn: its id, digest and tool facts computed from the
 * run path, the turn, the call's index and the tool. (The agent loop makes them; tests and
 * operator tools that need one make it the same way.)
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 *
 * const entry = Approval.makeEntry({
 *   kind: "Approval", path: "run-1", iteration: 0, index: 0, reasons: ["autonomy_gated"], createdAt: 0,
 *   call: { id: "c1", name: "cancel_order", arguments: { order_id: "A-771" } }, tool: cancelOrder
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeEntry = (input: {
  readonly kind: PendingKind
  readonly path: string
  readonly iteration: number
  readonly index: number
  readonly call: ToolCall.ToolCall
  readonly tool: Fingerprinted & { readonly name: string }
  readonly reasons: ReadonlyArray<string>
  readonly createdAt: number
  readonly request?: { readonly key: string; readonly claimedAt: number } | undefined
}): PendingEntry => {
  const id = pendingId({
    path: input.path,
    iteration: input.iteration,
    index: input.index,
    callId: input.call.id,
    kind: input.kind,
    claimedAt: input.request?.claimedAt
  })
  const facts = toolFacts(input.tool)
  const entry: PendingEntry = {
    id,
    kind: input.kind,
    path: input.path,
    call: input.call,
    digest: digest({
      path: input.path,
      pendingId: id,
      fingerprint: facts.fingerprint,
      arguments: input.call.arguments
    }),
    reasons: [...input.reasons],
    tool: facts,
    createdAt: input.createdAt
  }
  return input.request === undefined ? entry : { ...entry, request: { ...input.request } }
}

/**
 * What an approver is asked: the run and every pending entry of one turn.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 * import { Effect } from "effect"
 *
 * const rejectAll = (request: Approval.ApprovalRequest) =>
 *   Effect.succeed(Object.fromEntries(request.pending.map((p) => [p.id, Approval.reject(p.digest, `${request.agent} may not act alone`)])))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ApprovalRequest {
  readonly runId: string
  readonly agent: string
  readonly pending: ReadonlyArray<PendingEntry>
}

/**
 * An in-process approver (a terminal prompt, a callback in a server): asked and awaited, so the
 * run goes on without a checkpoint round trip. It answers with decisions by pending id.
 * Optional: without one, a gated call suspends the run. (A call in doubt always suspends: a
 * person has to look at the outside world.)
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 * import { Effect, Layer } from "effect"
 *
 * const ApproveAll = Layer.succeed(Approval.Approver, {
 *   decide: ({ pending }) => Effect.succeed(Object.fromEntries(pending.map((p) => [p.id, Approval.approve(p.digest)])))
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

const decodeDecision = lazy(() => Schema.decodeUnknownOption(Decision))

const yes = Effect.succeed(true)
const no = Effect.succeed(false)

/**
 * Whether a call of a tool requires a person's approval by the tool's own `requiresApproval`: a
 * boolean as it is; a condition is evaluated on the call's validated arguments and the run
 * context. Arguments that do not validate never run (the model is told), so they need none; a
 * condition that throws, fails or dies holds, and so does any answer but `false` (fail closed).
 * The agent loop and the MCP server both decide with it.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 * import { RunContext } from "@agentkit/core"
 * import { Tool } from "@agentkit/tools"
 * import { Effect, Schema } from "effect"
 *
 * const refund = Tool.make("refund", {
 *   description: "Refund an order; refunds over 1000 need a person's approval.",
 *   parameters: { amount: Schema.Number },
 *   sideEffecting: true,
 *   requiresApproval: ({ amount }) => amount > 1000,
 *   handler: ({ amount }) => `refunded ${amount}`
 * })
 * const needsPerson = Effect.flatMap(RunContext, (context) => Approval.required(refund, { amount: 5000 }, context)) // true
 * ```
 *
 * @since 0.1.0
 * @category predicates
 */
export const required = (
  tool: {
    readonly requiresApproval: boolean | ApprovalCondition
    readonly validate: (args: unknown) => Effect.Effect<unknown, unknown>
  },
  args: unknown,
  context: RunContext.Service
): Effect.Effect<boolean> => {
  const condition = tool.requiresApproval
  if (typeof condition !== "function") return condition ? yes : no
  return Effect.matchEffect(tool.validate(args), {
    onFailure: () => no,
    onSuccess: (valid) => {
      let answer: boolean | Effect.Effect<boolean, unknown>
      try {
        answer = condition(valid, context)
      } catch {
        return yes
      }
      return Effect.isEffect(answer)
        ? Effect.catchAllCause(
          Effect.map(answer, (value) => value !== false),
          () => yes
        )
        : Effect.succeed(answer !== false)
    }
  })
}

/**
 * Reads an approver's decision for a pending entry, failing closed: a missing decision, an
 * invalid value, a verdict the entry does not accept, or a digest that does not match becomes a
 * rejection with a reason.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 *
 * Approval.resolve(pending, { [pending.id]: "approved" }) // a reject: not a valid decision
 * ```
 *
 * @since 0.1.0
 * @category getters
 */
export const resolve = (entry: PendingEntry, decisions: Decisions): Decision => {
  const raw = Object.hasOwn(decisions, entry.id) ? decisions[entry.id] : undefined
  if (raw === undefined) return reject(entry.digest, "no decision was given")
  const decision = decodeDecision(raw)
  if (decision._tag === "None" || !verdictsFor(entry.kind).includes(decision.value.verdict)) {
    return reject(
      entry.digest,
      `the decision was not ${verdictsFor(entry.kind).slice(0, -1).join(", ")} or ${verdictsFor(entry.kind).at(-1)}`
    )
  }
  if (decision.value.digest !== entry.digest) {
    return reject(entry.digest, "the decision was given for other arguments (digest mismatch)")
  }
  return decision.value
}
