/**
 * Decisions: the verdicts a person gives on pending entries, their constructors, and how a
 * decision is read against the entry it names (fail closed). Re-exported as part of `Approval`.
 *
 * @since 0.1.0
 */
import * as Brand from "effect/Brand"
import * as Schema from "effect/Schema"
import { lazy } from "./internal/lazy.js"
import type { PendingEntry, PendingId, PendingKind } from "./PendingEntry.js"

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
 * Decisions by pending id, built only from pending ids (`Approval.decisions`,
 * `Approval.decideEach`): a record keyed by tool-call ids, `Object.fromEntries(...)` or any
 * computed-string record does not compile. On `agent.resume` a value that is not a record (from
 * plain JavaScript), an unknown id, a digest mismatch or a verdict the entry does not accept fails
 * the whole resume with a typed error and nothing runs; a pending entry with no decision is
 * rejected (fail closed). From an in-process `Approver`, a bad decision rejects that call only,
 * and answers keyed by ids that are not the entries' reject the calls left without a decision
 * with a reason, audited and logged, that names the ids given and the ids expected.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 *
 * const decisions: Approval.Decisions = Approval.decisions([[pending.id, Approval.approve(pending.digest)]])
 * agent.resume("run-1", decisions)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Decisions = Readonly<Record<PendingId, Decision>> & Brand.Brand<"@agentkit/agents/Decisions">

const makeDecisions = Brand.nominal<Decisions>()

/**
 * Decisions from pairs of a pending id and its decision (an array of pairs, a `Map`): the only
 * keys accepted are `PendingId`s, so decisions keyed by tool-call ids do not compile. The result
 * is frozen.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 *
 * agent.resume("run-1", Approval.decisions([[pending.id, Approval.approve(pending.digest, { by: "alice" })]]))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const decisions = (entries: Iterable<readonly [PendingId, Decision]>): Decisions => {
  const record: Record<PendingId, Decision> = {}
  for (const [id, decision] of entries) record[id] = decision
  return makeDecisions(Object.freeze(record))
}

/**
 * Decisions for every pending entry given, each made by `decide` (for one verdict on all of them,
 * or a verdict chosen per entry).
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 *
 * agent.resume("run-1", Approval.decideEach([pending], (entry) => Approval.approve(entry.digest)))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const decideEach = (
  entries: Iterable<PendingEntry>,
  decide: (entry: PendingEntry) => Decision
): Decisions => {
  const pairs: Array<readonly [PendingId, Decision]> = []
  for (const entry of entries) pairs.push([entry.id, decide(entry)])
  return decisions(pairs)
}

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
 * const args = { order_id: "A-771" }
 * const kept = Approval.snapshot(Approval.decisions([[pending.id, Approval.edit(pending.digest, args)]]))
 * args.order_id = "B-1" // kept still says A-771
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
 * const decisions = Approval.decisions([[pending.id, Approval.approve(pending.digest, { by: "alice" })]])
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

const decodeDecision = lazy(() => Schema.decodeUnknownOption(Decision))
/**
 * Reads an approver's decision for a pending entry, failing closed: a missing decision, an
 * invalid value, a verdict the entry does not accept, or a digest that does not match becomes a
 * rejection with a reason.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 *
 * Approval.resolve(pending, Approval.decisions([])) // a reject: no decision was given
 * ```
 *
 * @since 0.1.0
 * @category getters
 */
export const resolve = (entry: PendingEntry, decisions: Decisions): Decision => {
  // read as untyped: from plain JavaScript a value may be anything (fail closed)
  const raw: unknown = Object.hasOwn(decisions, entry.id) ? Reflect.get(decisions, entry.id) : undefined
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
