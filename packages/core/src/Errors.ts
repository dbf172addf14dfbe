/**
 * The typed errors of agentkit core. Each carries the exact text the Python agentkit (or the seed
 * page) prints, so logs and model-visible messages read the same in both frameworks.
 *
 * Every agentkit error carries `ErrorTypeId` (`isAgentkitError` tells them apart from any other
 * value). The errors that are stored (a checkpoint, an audit record) or cross a process boundary
 * are `Schema.TaggedError`s: `Schema.encode(BudgetExceeded)(error)` gives a JSON-safe value and
 * decoding it gives the error back, message and all. The text the model sees for a tool failure
 * (`toolFailureText`, `unknownToolText`) is written here, next to the errors it describes.
 *
 * @since 0.1.0
 */
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as PythonText from "./PythonText.js"
import * as Utf8 from "./Utf8.js"

/**
 * Marks every agentkit error (core's and the other packages').
 *
 * @example
 * ```ts
 * import { BudgetExceeded, ErrorTypeId } from "@agentkit/core"
 *
 * new BudgetExceeded({ limit: "cost", message: "cost $0.02 > $0.015" })[ErrorTypeId] === ErrorTypeId // true
 * ```
 *
 * @since 0.1.0
 * @category type ids
 */
export const ErrorTypeId = "~@agentkit/core/AgentkitError" as const

/**
 * The type of `ErrorTypeId`.
 *
 * @example
 * ```ts
 * import type { ErrorTypeId } from "@agentkit/core"
 *
 * interface MyError { readonly [key: string]: unknown; readonly "~@agentkit/core/AgentkitError": ErrorTypeId }
 * ```
 *
 * @since 0.1.0
 * @category type ids
 */
export type ErrorTypeId = typeof ErrorTypeId

/**
 * An agentkit error: a tagged error carrying `ErrorTypeId`.
 *
 * @example
 * ```ts
 * import type { AgentkitError } from "@agentkit/core"
 *
 * const label = (error: AgentkitError) => `${error._tag}: ${error.message}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentkitError extends Error {
  readonly [ErrorTypeId]: ErrorTypeId
  readonly _tag: string
}

/**
 * Whether a value is an agentkit error (of any agentkit package).
 *
 * @example
 * ```ts
 * import { Cancelled, isAgentkitError } from "@agentkit/core"
 *
 * isAgentkitError(new Cancelled()) // true
 * isAgentkitError(new Error("boom")) // false
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isAgentkitError = (u: unknown): u is AgentkitError => Predicate.hasProperty(u, ErrorTypeId)

const isTagged =
  <T>(tag: string) =>
  (u: unknown): u is T =>
    isAgentkitError(u) && u._tag === tag

/**
 * A cause or other foreign value kept on an error. Its type is `unknown`; it encodes to a
 * JSON-safe form that never throws (an `Error` as `{ _error: { name, message } }`, anything else
 * as its JSON value or its string form), so an error carrying any cause still encodes; an encoded
 * `Error` decodes to an `Error` with that name and message.
 *
 * @example
 * ```ts
 * import { ForeignValue } from "@agentkit/core"
 * import { Schema } from "effect"
 *
 * Schema.encodeSync(ForeignValue)(new Error("boom")) // { _error: { name: "Error", message: "boom" } }
 * Schema.encodeSync(ForeignValue)({ big: 1n }) // "[object Object]"
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ForeignValue: Schema.Schema<unknown> = Schema.transform(Schema.Unknown, Schema.Unknown, {
  strict: true,
  decode: (encoded) => {
    if (Predicate.hasProperty(encoded, "_error") && Predicate.isRecord(encoded._error)) {
      const { name, message } = encoded._error
      if (typeof name === "string" && typeof message === "string") return Object.assign(new Error(message), { name })
    }
    return encoded
  },
  encode: (value) => {
    if (value instanceof Error) return { _error: { name: value.name, message: value.message } }
    if (value === undefined || value === null || typeof value !== "object") {
      return typeof value === "bigint" ? value.toString() : value
    }
    try {
      return JSON.parse(JSON.stringify(value)) as unknown
    } catch {
      return errorMessage(value)
    }
  }
})

/**
 * The error's type as telemetry, audit records and the model read it: its `_tag`, else its class
 * name, else `Error`. Never throws.
 *
 * @example
 * ```ts
 * import { Cancelled, errorType } from "@agentkit/core"
 *
 * errorType(new Cancelled()) // "Cancelled"
 * errorType(new TypeError("x")) // "TypeError"
 * errorType("oops") // "Error"
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const errorType = (error: unknown): string => {
  try {
    if (typeof error === "object" && error !== null) {
      if ("_tag" in error && typeof error._tag === "string") return error._tag
      if (error instanceof Error && typeof error.name === "string") return error.name
    }
  } catch {
    // a hostile value (a proxy that throws) is still some error
  }
  return "Error"
}

/**
 * The error's message, or its string form. Never throws: a value that cannot be read (a proxy
 * that throws, an object whose `toString` throws) reads `(an error value that cannot be read)`.
 *
 * @example
 * ```ts
 * import { errorMessage } from "@agentkit/core"
 *
 * errorMessage(new Error("card declined")) // "card declined"
 * errorMessage(42) // "42"
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const errorMessage = (error: unknown): string => {
  try {
    if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") {
      return error.message
    }
    return String(error)
  } catch {
    return UNREADABLE_ERROR
  }
}

const UNREADABLE_ERROR = "(an error value that cannot be read)"

/**
 * A ceiling was crossed: run cost, model calls, tokens, tool calls, or a tenant quota. It ends
 * the run (it is never shown to the model as a tool error). A sub-agent's depth overflow is
 * `DepthExceeded`, which the model sees.
 *
 * @example
 * ```ts
 * import { BudgetExceeded } from "@agentkit/core"
 *
 * new BudgetExceeded({ limit: "cost", message: "cost $0.02 > $0.015" }).message // "cost $0.02 > $0.015"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class BudgetExceeded extends Schema.TaggedError<BudgetExceeded>("@agentkit/core/BudgetExceeded")("BudgetExceeded", {
  limit: Schema.Literal("cost", "modelCalls", "tokens", "toolCalls", "quota"),
  message: Schema.String
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * A sub-run would nest deeper than the budget's `maxDepth`. The delegating tool call fails with
 * it and the model sees `ERROR: tool 'x' failed: DepthExceeded: agent depth 5 > max_depth 4`;
 * the parent run goes on.
 *
 * @example
 * ```ts
 * import { DepthExceeded } from "@agentkit/core"
 *
 * new DepthExceeded({ depth: 5, maxDepth: 4 }).message // "agent depth 5 > max_depth 4"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class DepthExceeded extends Schema.TaggedError<DepthExceeded>("@agentkit/core/DepthExceeded")("DepthExceeded", {
  depth: Schema.Number,
  maxDepth: Schema.Number
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `agent depth ${this.depth} > max_depth ${this.maxDepth}`
  }
}

/**
 * The run was cancelled through its cancellation handle.
 *
 * @example
 * ```ts
 * import { Cancelled } from "@agentkit/core"
 *
 * new Cancelled().message // "run cancelled"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class Cancelled extends Schema.TaggedError<Cancelled>("@agentkit/core/Cancelled")("Cancelled", {}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return "run cancelled"
  }
}

/**
 * Why a model call failed.
 *
 * @example
 * ```ts
 * import { ChatModelError, type ChatModelErrorReason } from "@agentkit/core"
 *
 * const reason: ChatModelErrorReason = "rate_limit"
 * new ChatModelError({ reason, retryable: true, message: "429 rate limited" })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type ChatModelErrorReason = Schema.Schema.Type<typeof ChatModelErrorReason>

/**
 * The accepted values of `ChatModelErrorReason`.
 *
 * @example
 * ```ts
 * import { ChatModelErrorReason } from "@agentkit/core"
 * import { Schema } from "effect"
 *
 * Schema.is(ChatModelErrorReason)("overloaded") // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatModelErrorReason = Schema.Literal(
  "rate_limit",
  "overloaded",
  "server",
  "timeout",
  "network",
  "auth",
  "permission",
  "invalid_request",
  "not_found",
  "too_large",
  "stream",
  "configuration",
  "unknown"
)

/**
 * A model call failed. `retryable` is the provider's classification (rate limits, overload,
 * server errors and network failures are retryable; bad requests and auth are not).
 *
 * @example
 * ```ts
 * import { ChatModelError } from "@agentkit/core"
 *
 * const error = new ChatModelError({ reason: "overloaded", retryable: true, message: "529 overloaded" })
 * error.retryable // true
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ChatModelError extends Schema.TaggedError<ChatModelError>("@agentkit/core/ChatModelError")("ChatModelError", {
  reason: ChatModelErrorReason,
  retryable: Schema.Boolean,
  message: Schema.String,
  status: Schema.optional(Schema.Number),
  requestId: Schema.optional(Schema.String),
  retryAfter: Schema.optional(Schema.Duration),
  cause: Schema.optional(ForeignValue)
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * Options, limits or a layer's configuration were invalid. The message names the field and what
 * is accepted.
 *
 * @example
 * ```ts
 * import { ConfigurationError } from "@agentkit/core"
 *
 * new ConfigurationError({ field: "autonomy", message: "autonomy must be one of 'auto', 'gated', 'manual'; got 'yolo'" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ConfigurationError extends Schema.TaggedError<ConfigurationError>("@agentkit/core/ConfigurationError")(
  "ConfigurationError",
  { field: Schema.String, message: Schema.String }
) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * A tool (or registry, cognition, agent) was wired wrong. Thrown synchronously when it is made,
 * so a bad tool fails when its module loads.
 *
 * @example
 * ```ts
 * import { ToolDefinitionError } from "@agentkit/core"
 *
 * new ToolDefinitionError({ message: "tool 'get' needs a description of at least 30 characters" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolDefinitionError extends Schema.TaggedError<ToolDefinitionError>("@agentkit/core/ToolDefinitionError")(
  "ToolDefinitionError",
  { message: Schema.String }
) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * The model's arguments did not fit the tool: unexpected keys, missing keys, or values of the
 * wrong type. Raised before the handler runs.
 *
 * @example
 * ```ts
 * import { ToolArgumentError } from "@agentkit/core"
 *
 * new ToolArgumentError({
 *   toolName: "cancel_order", unexpected: ["order"], missing: ["order_id"], invalid: [], accepted: ["order_id", "reason"]
 * }).message
 * // "tool 'cancel_order' call rejected: unexpected argument(s) ['order']; missing required argument(s) ['order_id']. Accepted arguments: ['order_id', 'reason']"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolArgumentError extends Schema.TaggedError<ToolArgumentError>("@agentkit/core/ToolArgumentError")(
  "ToolArgumentError",
  {
    toolName: Schema.String,
    unexpected: Schema.Array(Schema.String),
    missing: Schema.Array(Schema.String),
    /** One `<path>: <schema message>` entry per invalid value, e.g. `quantity: Expected number, actual "two"`. */
    invalid: Schema.Array(Schema.String),
    accepted: Schema.Array(Schema.String)
  }
) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    const clauses: Array<string> = []
    if (this.unexpected.length > 0) clauses.push(`unexpected argument(s) ${PythonText.list(this.unexpected)}`)
    if (this.missing.length > 0) clauses.push(`missing required argument(s) ${PythonText.list(this.missing)}`)
    if (clauses.length === 0 && this.invalid.length > 0) {
      const names = PythonText.sorted(new Set(this.invalid.map((problem) => argumentOf(problem, this.accepted))))
      clauses.push(`invalid argument(s) ${PythonText.list(names)}: ${this.invalid.join("; ")}`)
    }
    return `tool '${this.toolName}' call rejected: ${clauses.join("; ")}. Accepted arguments: ${PythonText.list(this.accepted)}`
  }
}

/**
 * The top-level argument a `<path>: <message>` problem is about: the declared name the path
 * starts with (the longest, so a name holding `.` or `:` is kept whole), else the path's first
 * `.`-separated segment (the path ends at the first `: `).
 */
const argumentOf = (problem: string, accepted: ReadonlyArray<string>): string => {
  let best: string | undefined
  for (const name of accepted) {
    if ((best === undefined || name.length > best.length) && problem.startsWith(name)) {
      const next = problem[name.length]
      if (next === "." || next === ":") best = name
    }
  }
  if (best !== undefined) return best
  const end = problem.indexOf(": ")
  const path = end === -1 ? problem : problem.slice(0, end)
  return path.split(".")[0] ?? path
}

/**
 * A tool returned a value that does not match its declared `success` schema. The model sees
 * `shapeMismatchText(error)`.
 *
 * @example
 * ```ts
 * import { ToolShapeError } from "@agentkit/core"
 *
 * new ToolShapeError({ toolName: "quote", expected: "Quote", raw: "oops", errors: ["top-level: expected object"] }).message
 * // "tool 'quote' returned value not matching schema 'Quote'"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolShapeError extends Schema.TaggedError<ToolShapeError>("@agentkit/core/ToolShapeError")("ToolShapeError", {
  toolName: Schema.String,
  expected: Schema.String,
  raw: ForeignValue,
  errors: Schema.Array(Schema.String)
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `tool '${this.toolName}' returned value not matching schema '${this.expected}'`
  }
}

/**
 * A tool's handler threw or rejected (the model sees the message, as it would a Python
 * exception's), or, with `defect: true`, an Effect handler died: a bug, not a result, so the
 * model sees only a generic failure (`toolFailureText`) while the error keeps the details. The
 * original error is the `cause`.
 *
 * @example
 * ```ts
 * import { ToolExecutionError } from "@agentkit/core"
 *
 * new ToolExecutionError({ toolName: "charge", cause: new Error("card declined") }).message // "card declined"
 * new ToolExecutionError({ toolName: "charge", cause: new TypeError("x is undefined"), defect: true }).defect // true
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolExecutionError extends Schema.TaggedError<ToolExecutionError>("@agentkit/core/ToolExecutionError")(
  "ToolExecutionError",
  { toolName: Schema.String, cause: ForeignValue, defect: Schema.optional(Schema.Boolean) }
) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    const cause = this.cause
    try {
      if (cause instanceof Error) return cause.message
      return typeof cause === "string" ? cause : String(cause)
    } catch {
      return UNREADABLE_ERROR
    }
  }
}

/**
 * A tool's handler ran past its `timeout`; its `AbortSignal` was aborted.
 *
 * @example
 * ```ts
 * import { ToolTimeoutError } from "@agentkit/core"
 *
 * new ToolTimeoutError({ toolName: "slow", timeout: "2 seconds" }).message // "tool 'slow' timed out after 2 seconds"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolTimeoutError extends Schema.TaggedError<ToolTimeoutError>("@agentkit/core/ToolTimeoutError")(
  "ToolTimeoutError",
  { toolName: Schema.String, timeout: Schema.String }
) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `tool '${this.toolName}' timed out after ${this.timeout}`
  }
  /** A timeout is transient: retry may run the call again (an idempotent tool's). */
  get retryable(): boolean {
    return true
  }
}

/**
 * No tool has that name. The text lists the available tools, sorted. (The model, asking for an
 * unknown tool, sees `unknownToolText`.)
 *
 * @example
 * ```ts
 * import { ToolNotFoundError } from "@agentkit/core"
 *
 * new ToolNotFoundError({ name: "x", available: ["a", "b"] }).message // "no tool 'x'. Available tools: a, b."
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolNotFoundError extends Schema.TaggedError<ToolNotFoundError>("@agentkit/core/ToolNotFoundError")(
  "ToolNotFoundError",
  { name: Schema.String, available: Schema.Array(Schema.String) }
) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `no tool '${this.name}'. Available tools: ${availableText(this.available)}.`
  }
}

/**
 * A single tool call was refused (egress, a per-call policy, a rejected approval). The model sees
 * the reason and the run goes on without that call.
 *
 * @example
 * ```ts
 * import { ToolDenied } from "@agentkit/core"
 *
 * new ToolDenied({ toolName: "fetch_url", reason: "egress", message: "host 'evil.com' not in allowlist" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolDenied extends Schema.TaggedError<ToolDenied>("@agentkit/core/ToolDenied")("ToolDenied", {
  toolName: Schema.String,
  reason: Schema.Literal("egress", "policy", "approval", "other"),
  message: Schema.String
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * A value could not be written as canonical JSON (so not hashed): a getter, proxy trap or
 * `toJSON` threw while it was read, or its text would pass the engine's string limit. `path`
 * names where (`items.3.name`, `(root)` for the value itself); `reason` is what was thrown, cut to
 * 200 characters.
 *
 * @example
 * ```ts
 * import { CanonicalJsonError } from "@agentkit/core"
 *
 * new CanonicalJsonError({ path: "items.3", reason: "Error: revoked" }).message
 * // "cannot write the value at items.3 as canonical JSON: Error: revoked"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class CanonicalJsonError extends Schema.TaggedError<CanonicalJsonError>("@agentkit/core/CanonicalJsonError")(
  "CanonicalJsonError",
  { path: Schema.String, reason: Schema.String }
) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `cannot write the value at ${this.path} as canonical JSON: ${this.reason}`
  }
}

/**
 * Whether a value is a `BudgetExceeded` (a ceiling that ends the run).
 *
 * @example
 * ```ts
 * import { BudgetExceeded, isBudgetExceeded } from "@agentkit/core"
 *
 * isBudgetExceeded(new BudgetExceeded({ limit: "toolCalls", message: "tool calls 3 > 2" })) // true
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isBudgetExceeded: (u: unknown) => u is BudgetExceeded = isTagged("BudgetExceeded")

/**
 * Whether a value is a `DepthExceeded` (a sub-run nested too deep; the model is told).
 *
 * @example
 * ```ts
 * import { DepthExceeded, isDepthExceeded } from "@agentkit/core"
 *
 * isDepthExceeded(new DepthExceeded({ depth: 2, maxDepth: 1 })) // true
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isDepthExceeded: (u: unknown) => u is DepthExceeded = isTagged("DepthExceeded")

/**
 * Whether a value is a `Cancelled`.
 *
 * @example
 * ```ts
 * import { Cancelled, isCancelled } from "@agentkit/core"
 *
 * isCancelled(new Cancelled()) // true
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isCancelled: (u: unknown) => u is Cancelled = isTagged("Cancelled")

/**
 * Whether a value is a `ChatModelError`.
 *
 * @example
 * ```ts
 * import { ChatModelError, isChatModelError } from "@agentkit/core"
 *
 * isChatModelError(new ChatModelError({ reason: "timeout", retryable: true, message: "timed out" })) // true
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isChatModelError: (u: unknown) => u is ChatModelError = isTagged("ChatModelError")

/**
 * Whether a tool failure ends the whole run instead of going back to the model: cancellation and
 * every budget ceiling (a sub-agent's `DepthExceeded` goes back to the model).
 *
 * @example
 * ```ts
 * import { Cancelled, DepthExceeded, endsRun } from "@agentkit/core"
 *
 * endsRun(new Cancelled()) // true
 * endsRun(new DepthExceeded({ depth: 2, maxDepth: 1 })) // false
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const endsRun = (error: unknown): error is BudgetExceeded | Cancelled => isCancelled(error) || isBudgetExceeded(error)

const availableText = (available: ReadonlyArray<string>): string =>
  available.length > 0 ? available.join(", ") : "(none)"

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
  Utf8.truncate(`ERROR: no tool named '${shownName(name)}'. Available tools: ${availableText(available)}.`, FAILURE_TEXT_MAX_BYTES)

/** A name as the model sent it, cut to 64 characters (a tool name is at most 64). */
const shownName = (name: string): string => (name.length <= 64 ? name : `${name.slice(0, 64)}…`)

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
    if (error instanceof ToolExecutionError && error.defect === true) return `ERROR: tool '${name}' failed: ${DEFECT_TEXT}`
    described =
      typeof error === "object" && error !== null ? `${errorType(error)}: ${errorMessage(error)}` : `Error: ${errorMessage(error)}`
  } catch {
    described = `Error: ${UNREADABLE_ERROR}` // an error value whose prototype chain throws
  }
  return Utf8.truncate(`ERROR: tool '${name}' failed: ${described}`, FAILURE_TEXT_MAX_BYTES)
}

/**
 * The first error in `error`'s cause chain (itself included, following `cause` at most 8 deep)
 * that `predicate` accepts.
 *
 * @example
 * ```ts
 * import { Cancelled, findCause, isCancelled, ToolExecutionError } from "@agentkit/core"
 *
 * findCause(new ToolExecutionError({ toolName: "t", cause: new Cancelled() }), isCancelled) // the Cancelled
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const findCause = <A>(error: unknown, predicate: (u: unknown) => u is A): A | undefined => {
  let current = error
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth++) {
    if (predicate(current)) return current
    current = typeof current === "object" && "cause" in current ? current.cause : undefined
  }
  return undefined
}
