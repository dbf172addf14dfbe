/**
 * The typed errors of agentkit. Each carries the exact text the Python agentkit (or the seed page)
 * prints, so logs and model-visible messages read the same in both frameworks.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import * as PythonText from "./PythonText.js"

/**
 * A ceiling was crossed: run cost, model calls, tokens, tool calls, depth, or a tenant quota.
 * It ends the run (it is never shown to the model as a tool error, except a sub-agent's depth
 * overflow).
 *
 * @example
 * ```ts
 * import { Errors } from "@agentkit/core"
 *
 * new Errors.BudgetExceeded({ limit: "cost", message: "cost $0.02 > $0.015" }).message // "cost $0.02 > $0.015"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class BudgetExceeded extends Data.TaggedError("BudgetExceeded")<{
  readonly limit: "cost" | "modelCalls" | "tokens" | "toolCalls" | "depth" | "quota"
  readonly message: string
}> {}

/**
 * The run was cancelled through its cancellation handle.
 *
 * @example
 * ```ts
 * import { Errors } from "@agentkit/core"
 *
 * new Errors.Cancelled().message // "run cancelled"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class Cancelled extends Data.TaggedError("Cancelled")<{}> {
  override get message(): string {
    return "run cancelled"
  }
}

/**
 * Why a model call failed.
 *
 * @example
 * ```ts
 * import { Errors, type ChatModelErrorReason } from "@agentkit/core"
 *
 * const reason: ChatModelErrorReason = "rate_limit"
 * new Errors.ChatModelError({ reason, retryable: true, message: "429 rate limited" })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type ChatModelErrorReason =
  | "rate_limit"
  | "overloaded"
  | "server"
  | "timeout"
  | "network"
  | "auth"
  | "permission"
  | "invalid_request"
  | "not_found"
  | "too_large"
  | "stream"
  | "configuration"
  | "unknown"

/**
 * A model call failed. `retryable` is the provider's classification (rate limits, overload,
 * server errors and network failures are retryable; bad requests and auth are not).
 *
 * @example
 * ```ts
 * import { Errors } from "@agentkit/core"
 *
 * const error = new Errors.ChatModelError({ reason: "overloaded", retryable: true, message: "529 overloaded" })
 * error.retryable // true
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ChatModelError extends Data.TaggedError("ChatModelError")<{
  readonly reason: ChatModelErrorReason
  readonly retryable: boolean
  readonly message: string
  readonly status?: number
  readonly requestId?: string
  readonly retryAfter?: Duration.Duration
  readonly cause?: unknown
}> {}

/**
 * Options, limits or a layer's configuration were invalid. The message names the field and what
 * is accepted.
 *
 * @example
 * ```ts
 * import { Errors } from "@agentkit/core"
 *
 * new Errors.ConfigurationError({ field: "autonomy", message: "autonomy must be one of 'auto', 'gated', 'manual'; got 'yolo'" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ConfigurationError extends Data.TaggedError("ConfigurationError")<{
  readonly field: string
  readonly message: string
}> {}

/**
 * A tool (or registry, cognition, agent) was wired wrong. Thrown synchronously when it is made,
 * so a bad tool fails when its module loads.
 *
 * @example
 * ```ts
 * import { Errors } from "@agentkit/core"
 *
 * new Errors.ToolDefinitionError({ message: "tool 'get' needs a description of at least 30 characters" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolDefinitionError extends Data.TaggedError("ToolDefinitionError")<{
  readonly message: string
}> {}

/**
 * The model's arguments did not fit the tool: unexpected keys, missing keys, or values of the
 * wrong type. Raised before the handler runs.
 *
 * @example
 * ```ts
 * import { Errors } from "@agentkit/core"
 *
 * new Errors.ToolArgumentError({
 *   toolName: "cancel_order", unexpected: ["order"], missing: ["order_id"], invalid: [], accepted: ["order_id", "reason"]
 * }).message
 * // "tool 'cancel_order' call rejected: unexpected argument(s) ['order']; missing required argument(s) ['order_id']. Accepted arguments: ['order_id', 'reason']"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolArgumentError extends Data.TaggedError("ToolArgumentError")<{
  readonly toolName: string
  readonly unexpected: ReadonlyArray<string>
  readonly missing: ReadonlyArray<string>
  /** One `<path>: <schema message>` entry per invalid value, e.g. `quantity: Expected number, actual "two"`. */
  readonly invalid: ReadonlyArray<string>
  readonly accepted: ReadonlyArray<string>
}> {
  override get message(): string {
    const clauses: Array<string> = []
    if (this.unexpected.length > 0) clauses.push(`unexpected argument(s) ${PythonText.list(this.unexpected)}`)
    if (this.missing.length > 0) clauses.push(`missing required argument(s) ${PythonText.list(this.missing)}`)
    if (clauses.length === 0 && this.invalid.length > 0) {
      const names = PythonText.sorted(new Set(this.invalid.map((problem) => problem.split(/[:.]/)[0] ?? problem)))
      clauses.push(`invalid argument(s) ${PythonText.list(names)}: ${this.invalid.join("; ")}`)
    }
    return `tool '${this.toolName}' call rejected: ${clauses.join("; ")}. Accepted arguments: ${PythonText.list(this.accepted)}`
  }
}

/**
 * A tool returned a value that does not match its declared `success` schema.
 *
 * @example
 * ```ts
 * import { Errors } from "@agentkit/core"
 *
 * new Errors.ToolShapeError({ toolName: "quote", expected: "Quote", raw: "oops", errors: ["top-level: expected object"] }).message
 * // "tool 'quote' returned value not matching schema 'Quote'"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolShapeError extends Data.TaggedError("ToolShapeError")<{
  readonly toolName: string
  readonly expected: string
  readonly raw: unknown
  readonly errors: ReadonlyArray<string>
}> {
  override get message(): string {
    return `tool '${this.toolName}' returned value not matching schema '${this.expected}'`
  }
}

/**
 * A tool's handler threw or rejected. The original error is the `cause`.
 *
 * @example
 * ```ts
 * import { Errors } from "@agentkit/core"
 *
 * new Errors.ToolExecutionError({ toolName: "charge", cause: new Error("card declined") }).message // "card declined"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolExecutionError extends Data.TaggedError("ToolExecutionError")<{
  readonly toolName: string
  readonly cause: unknown
}> {
  override get message(): string {
    const cause = this.cause
    if (cause instanceof Error) return cause.message
    return typeof cause === "string" ? cause : String(cause)
  }
}

/**
 * A tool's handler ran past its `timeout`; its `AbortSignal` was aborted.
 *
 * @example
 * ```ts
 * import { Errors } from "@agentkit/core"
 *
 * new Errors.ToolTimeoutError({ toolName: "slow", timeout: "2 seconds" }).message // "tool 'slow' timed out after 2 seconds"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolTimeoutError extends Data.TaggedError("ToolTimeoutError")<{
  readonly toolName: string
  readonly timeout: string
}> {
  override get message(): string {
    return `tool '${this.toolName}' timed out after ${this.timeout}`
  }
}

/**
 * No tool has that name. The text lists the available tools, sorted.
 *
 * @example
 * ```ts
 * import { Errors } from "@agentkit/core"
 *
 * new Errors.ToolNotFoundError({ name: "x", available: ["a", "b"] }).message // "no tool 'x'. Available tools: a, b."
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolNotFoundError extends Data.TaggedError("ToolNotFoundError")<{
  readonly name: string
  readonly available: ReadonlyArray<string>
}> {
  override get message(): string {
    return `no tool '${this.name}'. Available tools: ${this.available.length > 0 ? this.available.join(", ") : "(none)"}.`
  }
}

/**
 * A single tool call was refused (egress, a per-call policy, a rejected approval). The model sees
 * the reason and the run goes on without that call.
 *
 * @example
 * ```ts
 * import { Errors } from "@agentkit/core"
 *
 * new Errors.ToolDenied({ toolName: "fetch_url", reason: "egress", message: "host 'evil.com' not in allowlist" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolDenied extends Data.TaggedError("ToolDenied")<{
  readonly toolName: string
  readonly reason: "egress" | "policy" | "approval" | "other"
  readonly message: string
}> {}
