/** How tool failures are shown to the model (the Python agentkit's texts). @internal */
import { BudgetExceeded, Cancelled, ToolShapeError } from "@agentkit/core"

/** `ERROR: no tool named 'x'. Available tools: a, b.` */
export const unknownTool = (name: string, available: ReadonlyArray<string>): string =>
  `ERROR: no tool named '${name}'. Available tools: ${available.length > 0 ? available.join(", ") : "(none)"}.`

const describe = (error: unknown): string => {
  if (typeof error === "object" && error !== null) {
    const tag = "_tag" in error && typeof error._tag === "string" ? error._tag : error instanceof Error ? error.name : "Error"
    const message = "message" in error && typeof error.message === "string" ? error.message : String(error)
    return `${tag}: ${message}`
  }
  return `Error: ${String(error)}`
}

/**
 * Whether a tool failure ends the run instead of going back to the model: cancellation and every
 * budget ceiling except a sub-agent's depth overflow.
 */
export const isFatal = (error: unknown): error is BudgetExceeded | Cancelled =>
  error instanceof Cancelled || (error instanceof BudgetExceeded && error.limit !== "depth")

/** The text the model sees for a tool failure it can fix. */
export const failureText = (toolName: string, error: unknown): string =>
  error instanceof ToolShapeError
    ? `ERROR: tool returned a value that does not match its declared output schema '${error.expected}'. Details: ${
        error.errors.length > 0 ? error.errors.join("; ") : error.message
      }`
    : `ERROR: tool '${toolName}' failed: ${describe(error)}`
