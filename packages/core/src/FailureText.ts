/**
 * Every text the model sees in place of a tool result when a call does not give one: a tool that
 * failed (`toolFailureText`), a result that does not match its schema (`shapeMismatchText`), an
 * unknown tool (`unknownToolText`), a rejected approval (`approvalDeniedText`), an in-doubt call an
 * operator marked failed (`markedFailedText`). All but the last (an operator's own text) are
 * capped at `FAILURE_TEXT_MAX_BYTES` with a marker.
 *
 * @since 0.2.0
 */
import { errorMessage, errorType } from "./AgentkitError.js"
import { RecordedFailure } from "./ExecutionLedgerError.js"
import { availableText, shownName, UNREADABLE_ERROR } from "./internal/errorText.js"
import { ToolExecutionError, ToolShapeError } from "./ToolError.js"
import * as Utf8 from "./Utf8.js"

/**
 * The largest failure text the model is shown, in UTF-8 bytes: 8192 (8 KiB). `toolFailureText`,
 * `shapeMismatchText` and `unknownToolText` cut a longer text there and mark the cut
 * (`…[truncated N bytes]`), so a 1 MB rejection or error message never reaches the model whole.
 *
 * @example
 * ```ts
 * import { FAILURE_TEXT_MAX_BYTES, ToolDenied, toolFailureText, Utf8 } from "@agentkit/core"
 *
 * const text = toolFailureText("fetch_url", new ToolDenied({ toolName: "fetch_url", reason: "other", message: "x".repeat(1_000_000) }))
 * Utf8.byteLength(text) < FAILURE_TEXT_MAX_BYTES + 64 // true
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const FAILURE_TEXT_MAX_BYTES = 8192

/**
 * What the model sees for a tool whose Effect handler died: a generic failure, never the defect's
 * message (a bug's text can hold anything, secrets included). The details stay on the
 * `ToolExecutionError` (its `cause`) and go to the trace.
 *
 * @example
 * ```ts
 * import { DEFECT_TEXT, ToolExecutionError, toolFailureText } from "@agentkit/core"
 *
 * toolFailureText("boom", new ToolExecutionError({ toolName: "boom", cause: new Error("db password is hunter2"), defect: true }))
 * // "ERROR: tool 'boom' failed: internal error"
 * DEFECT_TEXT // "internal error"
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFECT_TEXT = "internal error"

/**
 * The text the model sees for a tool failure it can fix: the shape-mismatch text for a
 * `ToolShapeError`, `ERROR: tool 'x' failed: internal error` for a defect (a `ToolExecutionError`
 * with `defect: true`), else `ERROR: tool 'x' failed: <type>: <message>`. It is capped at
 * `FAILURE_TEXT_MAX_BYTES` with a marker, and never throws, whatever the error is.
 *
 * @example
 * ```ts
 * import { DepthExceeded, toolFailureText } from "@agentkit/core"
 *
 * toolFailureText("research", new DepthExceeded({ depth: 5, maxDepth: 4 }))
 * // "ERROR: tool 'research' failed: DepthExceeded: agent depth 5 > max_depth 4"
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const toolFailureText = (toolName: string, error: unknown): string => {
  const name = shownName(toolName)
  let described: string
  try {
    if (error instanceof ToolShapeError) return shapeMismatchText(error)
    if (error instanceof RecordedFailure) return Utf8.truncate(error.text, FAILURE_TEXT_MAX_BYTES)
    if (error instanceof ToolExecutionError && error.defect === true) {
      return `ERROR: tool '${name}' failed: ${DEFECT_TEXT}`
    }
    described = typeof error === "object" && error !== null
      ? `${errorType(error)}: ${errorMessage(error)}`
      : `Error: ${errorMessage(error)}`
  } catch {
    described = `Error: ${UNREADABLE_ERROR}` // an error value whose prototype chain throws
  }
  return Utf8.truncate(`ERROR: tool '${name}' failed: ${described}`, FAILURE_TEXT_MAX_BYTES)
}

/**
 * The text the model sees for a tool result that did not match the declared output schema.
 *
 * @example
 * ```ts
 * import { shapeMismatchText, ToolShapeError } from "@agentkit/core"
 *
 * shapeMismatchText(new ToolShapeError({ toolName: "quote", expected: "Quote", raw: {}, errors: ["price: is missing"] }))
 * // "ERROR: tool returned a value that does not match its declared output schema 'Quote'. Details: price: is missing"
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const shapeMismatchText = (error: ToolShapeError): string =>
  Utf8.truncate(
    `ERROR: tool returned a value that does not match its declared output schema '${error.expected}'. Details: ${
      error.errors.length > 0 ? error.errors.join("; ") : error.message
    }`,
    FAILURE_TEXT_MAX_BYTES
  )

/**
 * The text the model sees when it asks for a tool that does not exist.
 *
 * @example
 * ```ts
 * import { unknownToolText } from "@agentkit/core"
 *
 * unknownToolText("refund", ["cancel_order", "lookup_order"])
 * // "ERROR: no tool named 'refund'. Available tools: cancel_order, lookup_order."
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const unknownToolText = (name: string, available: ReadonlyArray<string>): string =>
  Utf8.truncate(
    `ERROR: no tool named '${shownName(name)}'. Available tools: ${availableText(available)}.`,
    FAILURE_TEXT_MAX_BYTES
  )

/**
 * The text the model sees for a call a person (or an approver acting for one) rejected:
 * `DENIED: tool call rejected by human approval`, then `: <reason>` when a reason is given.
 *
 * @example
 * ```ts
 * import { approvalDeniedText } from "@agentkit/core"
 *
 * approvalDeniedText() // "DENIED: tool call rejected by human approval"
 * approvalDeniedText("the customer has not confirmed")
 * // "DENIED: tool call rejected by human approval: the customer has not confirmed"
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const approvalDeniedText = (reason?: string): string =>
  reason === undefined || reason === ""
    ? APPROVAL_DENIED
    : Utf8.truncate(`${APPROVAL_DENIED}: ${reason}`, FAILURE_TEXT_MAX_BYTES)

const APPROVAL_DENIED = "DENIED: tool call rejected by human approval"

/**
 * The text the model sees for an in-doubt call that a person marked failed.
 *
 * @example
 * ```ts
 * import { markedFailedText } from "@agentkit/core"
 *
 * markedFailedText("the bank has no record of it")
 * // "ERROR: the call was interrupted and its outcome was unknown; an operator marked it failed: the bank has no record of it"
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const markedFailedText = (reason: string): string =>
  `ERROR: the call was interrupted and its outcome was unknown; an operator marked it failed: ${reason}`
