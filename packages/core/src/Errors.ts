/**
 * The typed errors of agentkit core. Each carries the exact text the Python agentkit (or the seed
 * page) prints, so logs and model-visible messages read the same in both frameworks.
 *
 * Every agentkit error carries `ErrorTypeId` (`isAgentkitError` tells them apart from any other
 * value). The errors that are stored (a checkpoint, an audit record) or cross a process boundary
 * are `Schema.TaggedError`s: `Schema.encode(BudgetExceeded)(error)` gives a JSON-safe value and
 * decoding it gives the error back, message and all. The text the model sees for a tool failure
 * (`toolFailureText`, `unknownToolText`, `approvalDeniedText`) is written here, next to the errors
 * it describes.
 *
 * @since 0.1.0
 */
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as PythonText from "./PythonText.js"
import { ToolCall } from "./ToolCall.js"
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

const isTagged = <T>(tag: string) => (u: unknown): u is T => isAgentkitError(u) && u._tag === tag

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
export class BudgetExceeded
  extends Schema.TaggedError<BudgetExceeded>("@agentkit/core/BudgetExceeded")("BudgetExceeded", {
    limit: Schema.Literal("cost", "modelCalls", "tokens", "toolCalls", "quota"),
    message: Schema.String
  })
{
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
  "context_length",
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
export class ChatModelError
  extends Schema.TaggedError<ChatModelError>("@agentkit/core/ChatModelError")("ChatModelError", {
    reason: ChatModelErrorReason,
    retryable: Schema.Boolean,
    message: Schema.String,
    status: Schema.optional(Schema.Number),
    requestId: Schema.optional(Schema.String),
    retryAfter: Schema.optional(Schema.Duration),
    cause: Schema.optional(ForeignValue)
  })
{
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
 * One value of a tool call's arguments that the tool's schema rejects: where it is (its path of
 * keys from the arguments object; `[]` for the object itself) and what is wrong with it.
 *
 * @example
 * ```ts
 * import type { ArgumentProblem } from "@agentkit/core"
 *
 * const problem: ArgumentProblem = { path: ["items", "0", "quantity"], message: "Expected number, actual \"two\"" }
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export interface ArgumentProblem {
  readonly path: ReadonlyArray<string>
  readonly message: string
}

/**
 * The `invalid` and `invalidArguments` fields of a `ToolArgumentError`, from the problems a
 * validator found: one `<path>: <message>` line per problem (the path's keys joined by `.`, or
 * `(root)` for the arguments object), unique and sorted by code point; and the top-level arguments
 * they are about (each path's first key, `(root)` for the object itself), taken from the paths
 * rather than from the text, so a key holding `.` or `: ` is named whole.
 *
 * @example
 * ```ts
 * import { ToolArgumentError, invalidArgumentFields } from "@agentkit/core"
 *
 * const fields = invalidArgumentFields([{ path: ["a: b", "c"], message: "Expected number, actual \"x\"" }])
 * new ToolArgumentError({ toolName: "t", unexpected: [], missing: [], accepted: [], ...fields }).message
 * // "tool 't' call rejected: invalid argument(s) ['a: b']: a: b.c: Expected number, actual \"x\". Accepted arguments: []"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export const invalidArgumentFields = (
  problems: Iterable<ArgumentProblem>
): { readonly invalid: ReadonlyArray<string>; readonly invalidArguments: ReadonlyArray<string> } => {
  const lines = new Set<string>()
  const names = new Set<string>()
  for (const { message, path } of problems) {
    lines.add(`${path.length === 0 ? "(root)" : path.join(".")}: ${message}`)
    names.add(path[0] ?? "(root)")
  }
  return { invalid: PythonText.sorted(lines), invalidArguments: PythonText.sorted(names) }
}

/**
 * The model's arguments did not fit the tool: unexpected keys, missing keys, or values of the
 * wrong type. Raised before the handler runs. Build `invalid` and `invalidArguments` with
 * `invalidArgumentFields`; an error without `invalidArguments` (one stored by an older version)
 * names its arguments from the `invalid` lines' text.
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
    /** The top-level arguments the `invalid` entries are about, sorted (see `invalidArgumentFields`). */
    invalidArguments: Schema.optional(Schema.Array(Schema.String)),
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
      const names = this.invalidArguments ??
        PythonText.sorted(new Set(this.invalid.map((problem) => argumentOf(problem, this.accepted))))
      clauses.push(`invalid argument(s) ${PythonText.list(names)}: ${this.invalid.join("; ")}`)
    }
    return `tool '${this.toolName}' call rejected: ${clauses.join("; ")}. Accepted arguments: ${
      PythonText.list(this.accepted)
    }`
  }
}

/**
 * For an error without `invalidArguments`: the top-level argument a `<path>: <message>` line is
 * about, the declared name the path starts with (the longest, so a name holding `.` or `:` is
 * kept whole), else the path's first `.`-separated segment (the path ends at the first `: `).
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
export class ToolShapeError
  extends Schema.TaggedError<ToolShapeError>("@agentkit/core/ToolShapeError")("ToolShapeError", {
    toolName: Schema.String,
    expected: Schema.String,
    raw: ForeignValue,
    errors: Schema.Array(Schema.String)
  })
{
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
 * A store could not do what it was asked: its backend is unreachable or broken. `retryable` says
 * whether trying again may help (a lost connection) or not (a misconfigured table). The
 * compare-and-set outcomes of the store ports (`StaleLease`, `VersionConflict`, ...) are errors
 * of their own.
 *
 * @example
 * ```ts
 * import { StoreError } from "@agentkit/core"
 *
 * new StoreError({ operation: "save", message: "database is locked", retryable: true })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class StoreError extends Schema.TaggedError<StoreError>("@agentkit/core/StoreError")("StoreError", {
  operation: Schema.String,
  message: Schema.String,
  retryable: Schema.Boolean,
  cause: Schema.optional(ForeignValue)
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * A run record with this id exists already (`CheckpointStore.create`).
 *
 * @example
 * ```ts
 * import { RunExists } from "@agentkit/core"
 *
 * new RunExists({ runId: "run-1" }).message // "run 'run-1' exists already"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class RunExists extends Schema.TaggedError<RunExists>("@agentkit/core/RunExists")("RunExists", {
  runId: Schema.String
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `run '${this.runId}' exists already`
  }
}

/**
 * No run record has this id.
 *
 * @example
 * ```ts
 * import { RunNotFound } from "@agentkit/core"
 *
 * new RunNotFound({ runId: "run-1" }).message // "no run 'run-1' in the store"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class RunNotFound extends Schema.TaggedError<RunNotFound>("@agentkit/core/RunNotFound")("RunNotFound", {
  runId: Schema.String
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `no run '${this.runId}' in the store`
  }
}

/**
 * The lease a write carried is no longer the run's: it expired, was released, or another process
 * took the run over (a newer fencing token). The writer has lost the run and must stop.
 *
 * @example
 * ```ts
 * import { StaleLease } from "@agentkit/core"
 *
 * new StaleLease({ runId: "run-1", token: 1 }).message
 * // "the lease on run 'run-1' (token 1) is no longer held: it expired or the run was taken over"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class StaleLease extends Schema.TaggedError<StaleLease>("@agentkit/core/StaleLease")("StaleLease", {
  runId: Schema.String,
  token: Schema.Number
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `the lease on run '${this.runId}' (token ${this.token}) is no longer held: it expired or the run was taken over`
  }
}

/**
 * Another owner holds a live lease on the run (`CheckpointStore.claim`).
 *
 * @example
 * ```ts
 * import { LeaseHeld } from "@agentkit/core"
 *
 * new LeaseHeld({ runId: "run-1", owner: "worker-a", expiresAt: 0 }).message
 * // "run 'run-1' is leased by 'worker-a' until 1970-01-01T00:00:00.000Z"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class LeaseHeld extends Schema.TaggedError<LeaseHeld>("@agentkit/core/LeaseHeld")("LeaseHeld", {
  runId: Schema.String,
  owner: Schema.String,
  expiresAt: Schema.Number
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `run '${this.runId}' is leased by '${this.owner}' until ${new Date(this.expiresAt).toISOString()}`
  }
}

/**
 * The run is finished (done, failed or cancelled): its record takes no more writes.
 *
 * @example
 * ```ts
 * import { RunFinished } from "@agentkit/core"
 *
 * new RunFinished({ runId: "run-1", status: "done" }).message // "run 'run-1' is finished (done)"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class RunFinished extends Schema.TaggedError<RunFinished>("@agentkit/core/RunFinished")("RunFinished", {
  runId: Schema.String,
  status: Schema.Literal("done", "failed", "cancelled")
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `run '${this.runId}' is finished (${this.status})`
  }
}

/**
 * A compare-and-set write named a version that is not the record's current one: someone else
 * wrote since it was read.
 *
 * @example
 * ```ts
 * import { VersionConflict } from "@agentkit/core"
 *
 * new VersionConflict({ runId: "run-1", expected: 3, actual: 4 }).message
 * // "run 'run-1': expected version 3, the store has version 4"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class VersionConflict
  extends Schema.TaggedError<VersionConflict>("@agentkit/core/VersionConflict")("VersionConflict", {
    runId: Schema.String,
    expected: Schema.Number,
    actual: Schema.Number
  })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `run '${this.runId}': expected version ${this.expected}, the store has version ${this.actual}`
  }
}

/**
 * A stored entry cannot be read back (a corrupt row): the store names it and leaves it untouched.
 *
 * @example
 * ```ts
 * import { CorruptEntry } from "@agentkit/core"
 *
 * new CorruptEntry({ store: "checkpoints", key: "run-1", detail: "status must be one of ...; got 'banana'" }).message
 * // "checkpoints entry 'run-1' is corrupt: status must be one of ...; got 'banana'"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class CorruptEntry extends Schema.TaggedError<CorruptEntry>("@agentkit/core/CorruptEntry")("CorruptEntry", {
  store: Schema.String,
  key: Schema.String,
  detail: Schema.String
}) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `${this.store} entry '${this.key}' is corrupt: ${this.detail}`
  }
}

/**
 * A pending entry was decided already: the first decision wins; this one names it and who made it.
 *
 * @example
 * ```ts
 * import { AlreadyDecided } from "@agentkit/core"
 *
 * new AlreadyDecided({ rootRunId: "run-1", pendingId: "p-1", decision: "{}", by: "alice" }).message
 * // "pending entry 'p-1' of run 'run-1' was decided already by alice"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class AlreadyDecided
  extends Schema.TaggedError<AlreadyDecided>("@agentkit/core/AlreadyDecided")("AlreadyDecided", {
    rootRunId: Schema.String,
    pendingId: Schema.String,
    decision: Schema.String,
    by: Schema.optional(Schema.String)
  })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `pending entry '${this.pendingId}' of run '${this.rootRunId}' was decided already${
      this.by === undefined ? "" : ` by ${this.by}`
    }`
  }
}

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
 * What a sub-run that stopped to wait for decisions fails with, as core sees it (the agents
 * package's `RunSuspended`: the sub-run's id and the pending entries it waits on, each with the
 * path of the run it waits in).
 *
 * @example
 * ```ts
 * import type { SubRunSuspension } from "@agentkit/core"
 *
 * const waitsIn = (suspension: SubRunSuspension) => suspension.runId
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface SubRunSuspension extends AgentkitError {
  readonly _tag: "RunSuspended"
  readonly runId: string
  readonly pending: ReadonlyArray<{ readonly id: string; readonly path: string }>
}

/**
 * Whether a failure is a sub-run that suspended (a gated call with no approver, a call in doubt):
 * it is never shown to the model. `asTool` passes it through untouched, and the agent loop that
 * made the call suspends the whole run tree on it, listing the sub-run's pending entries; `resume`
 * on the top-level run continues the sub-run, then its parents.
 *
 * @example
 * ```ts
 * import { Cancelled, isSubRunSuspension } from "@agentkit/core"
 *
 * isSubRunSuspension(new Cancelled()) // false
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isSubRunSuspension: (u: unknown) => u is SubRunSuspension = isTagged("RunSuspended")

/**
 * Whether a tool failure ends the whole run instead of going back to the model: cancellation,
 * every budget ceiling and a broken store (a sub-agent's `DepthExceeded` goes back to the model).
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
export const endsRun = (error: unknown): error is BudgetExceeded | Cancelled | StoreError =>
  isCancelled(error) || isBudgetExceeded(error) || isTagged("StoreError")(error)

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
  Utf8.truncate(
    `ERROR: no tool named '${shownName(name)}'. Available tools: ${availableText(available)}.`,
    FAILURE_TEXT_MAX_BYTES
  )

/** A name as the model sent it, cut to 64 characters (a tool name is at most 64). */
const shownName = (name: string): string => (name.length <= 64 ? name : `${name.slice(0, 64)}…`)

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
