/**
 * The errors of tools and tool calls: a tool wired wrong (`ToolDefinitionError`), arguments that
 * do not fit (`ToolArgumentError`, built with `invalidArgumentFields`), a result that does not
 * fit (`ToolShapeError`), a handler that failed or timed out (`ToolExecutionError`,
 * `ToolTimeoutError`), an unknown tool (`ToolNotFoundError`), a refused call (`ToolDenied`); and
 * which failures of a call never reach the model (`endsRun`, `isSubRunSuspension`). The text the
 * model sees for each is in `FailureText`.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"
import type { AgentkitError } from "./AgentkitError.js"
import { ErrorTypeId, ForeignValue } from "./AgentkitError.js"
import type { BudgetExceeded } from "./BudgetError.js"
import { isBudgetExceeded } from "./BudgetError.js"
import type { Cancelled } from "./CancellationError.js"
import { isCancelled } from "./CancellationError.js"
import { isTagged } from "./internal/errors.js"
import { availableText, UNREADABLE_ERROR } from "./internal/errorText.js"
import * as PythonText from "./PythonText.js"
import type { StoreError } from "./StoreError.js"

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
