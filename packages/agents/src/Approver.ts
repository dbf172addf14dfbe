/**
 * The optional in-process approver (asked and awaited, so a run goes on without a checkpoint
 * round trip) and the rule for whether a call needs a person's approval at all. Re-exported as
 * part of `Approval`.
 *
 * @since 0.1.0
 */
import type { ApprovalCondition, RunContext } from "@agentkit/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type { Decisions } from "./Decision.js"
import type { PendingEntry } from "./PendingEntry.js"

/**
 * What an approver is asked: the run and every pending entry of one turn.
 *
 * @example
 * ```ts
 * import { Approval } from "@agentkit/agents"
 * import { Effect } from "effect"
 *
 * const rejectAll = (request: Approval.ApprovalRequest) =>
 *   Effect.succeed(Approval.decideEach(request.pending, (p) => Approval.reject(p.digest, `${request.agent} may not act alone`)))
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
 *   decide: ({ pending }) => Effect.succeed(Approval.decideEach(pending, (p) => Approval.approve(p.digest)))
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
