/**
 * The errors of the execution ledger (`ExecutionLedger`): a call in doubt (`ToolInDoubt`), a call
 * whose recorded failure is replayed (`RecordedFailure`), an entry not in the state a resolution
 * expected (`LedgerConflict`); with the `ExecutionLedgerError` union. The text the model sees for a
 * call an operator marked failed is `markedFailedText` (in `FailureText`).
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"
import { ErrorTypeId } from "./AgentkitError.js"
import { ToolCall } from "./ToolCall.js"

/**
 * A side-effecting, non-idempotent call was claimed in the execution ledger and never completed
 * (the process stopped mid-call): whether its effect happened is unknown, so it is not run again.
 * The agent loop suspends the run with an `InDoubt` pending entry; it is never shown to the model.
 *
 * @example
 * ```ts
 * import { ToolInDoubt } from "@agentkit/core"
 *
 * new ToolInDoubt({ key: "run-1/t0/c0", call: { id: "c1", name: "charge", arguments: {} }, claimedAt: 0 }).message
 * // "tool call 'c1' (charge) was claimed at 1970-01-01T00:00:00.000Z and never completed: its outcome is unknown"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolInDoubt extends Schema.TaggedError<ToolInDoubt>("@agentkit/core/ToolInDoubt")("ToolInDoubt", {
  key: Schema.String,
  call: ToolCall,
  claimedAt: Schema.Number
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `tool call '${this.call.id}' (${this.call.name}) was claimed at ${
      new Date(this.claimedAt).toISOString()
    } and never completed: its outcome is unknown`
  }
}

/**
 * A call whose failure the execution ledger recorded: it is not run again, and the model sees the
 * text it saw the first time (`toolFailureText` gives `text` as it is).
 *
 * @example
 * ```ts
 * import { RecordedFailure, toolFailureText } from "@agentkit/core"
 *
 * toolFailureText("charge", new RecordedFailure({ toolName: "charge", text: "ERROR: tool 'charge' failed: card declined" }))
 * // "ERROR: tool 'charge' failed: card declined"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class RecordedFailure
  extends Schema.TaggedError<RecordedFailure>("@agentkit/core/RecordedFailure")("RecordedFailure", {
    toolName: Schema.String,
    text: Schema.String
  })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return this.text
  }
}

/**
 * An execution-ledger entry was not in the state a resolution expected (it is not in doubt, or
 * another claim replaced the one that was decided).
 *
 * @example
 * ```ts
 * import { LedgerConflict } from "@agentkit/core"
 *
 * new LedgerConflict({ key: "run-1/t0/c0", state: "completed" }).message
 * // "ledger entry 'run-1/t0/c0' is not in doubt (it is completed)"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class LedgerConflict
  extends Schema.TaggedError<LedgerConflict>("@agentkit/core/LedgerConflict")("LedgerConflict", {
    key: Schema.String,
    state: Schema.Literal("none", "completed", "reclaimed")
  })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    const state = this.state === "none"
      ? "it has no claim"
      : this.state === "completed"
      ? "it is completed"
      : "another claim replaced it"
    return `ledger entry '${this.key}' is not in doubt (${state})`
  }
}

/**
 * Every error of the execution ledger.
 *
 * @example
 * ```ts
 * import type { ExecutionLedgerError } from "@agentkit/core"
 *
 * const suspends = (error: ExecutionLedgerError) => error._tag === "ToolInDoubt"
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export type ExecutionLedgerError = ToolInDoubt | RecordedFailure | LedgerConflict

/**
 * The schema of `ExecutionLedgerError`: decodes an encoded ledger error back to its class.
 *
 * @example
 * ```ts
 * import { ExecutionLedgerError, LedgerConflict } from "@agentkit/core"
 * import { Schema } from "effect"
 *
 * const error = Schema.decodeUnknownSync(ExecutionLedgerError)({ _tag: "LedgerConflict", key: "run-1/t0/c0", state: "none" })
 * error instanceof LedgerConflict // true
 * ```
 *
 * @since 0.2.0
 * @category schemas
 */
export const ExecutionLedgerError: Schema.Union<[typeof ToolInDoubt, typeof RecordedFailure, typeof LedgerConflict]> =
  Schema.Union(ToolInDoubt, RecordedFailure, LedgerConflict)
