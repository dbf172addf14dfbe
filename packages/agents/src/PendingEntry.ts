/**
 * Pending entries: what a suspended run waits on, the id that names one in the run tree, and the
 * digest that binds a decision to exactly what it was given for.
 *
 * A pending entry's `id` is framework-assigned and unique in the run tree (a hash of the run path,
 * the turn, the call's index and id, and the entry's kind); decisions are keyed by it. Its
 * `digest` binds the run path, the pending id, the tool's fingerprint (its advertised JSON Schema
 * bytes, flags and caps) and the canonical arguments, so a decision never applies to other
 * arguments, another tool definition or another run. Re-exported as part of `Approval`.
 *
 * @since 0.1.0
 */
import { CanonicalJson, ToolCall } from "@agentkit/core"
import type { Capability } from "@agentkit/core"
import * as Schema from "effect/Schema"

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
 * The id of a pending entry, branded: only the framework's ids (`Approval.pendingId`, an entry's
 * `id`, a decoded entry) have this type, so decisions keyed by anything else (a tool-call id, a
 * computed string) do not compile.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 * import { Schema } from "effect"
 *
 * const id: Approval.PendingId = Schema.decodeUnknownSync(Approval.PendingId)("p-0123456789abcdef")
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const PendingId = Schema.String.pipe(Schema.brand("@agentkit/agents/PendingId"))

/**
 * The id of a pending entry (a branded string).
 *
 * @example
 * ```ts
 * import type { Approval } from "@agentkit/agents"
 *
 * const short = (id: Approval.PendingId) => id.slice(0, 8)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type PendingId = Schema.Schema.Type<typeof PendingId>

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
  id: PendingId,
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
}): PendingId =>
  PendingId.make(`p-${
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
  }`)

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
