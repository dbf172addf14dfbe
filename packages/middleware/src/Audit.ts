/**
 * An audit trail of tool calls: one record per call.
 *
 * @since 0.1.0
 */
import { CanonicalJson, errorMessage, errorType } from "@agentkit/core"
import type { ToolHandler, ToolCallRequest, ToolMiddleware, ToolOutcome, ToolPipelineError } from "@agentkit/core"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"

/**
 * What happened to a call: it ran (`executed`), a stored result was returned (`deduplicated`),
 * it was refused (`denied`: egress, policy, approval, an open circuit), or it failed or was
 * interrupted (`failed`).
 *
 * @example
 * ```ts
 * import type { Audit } from "@agentkit/middleware"
 *
 * const decision: Audit.Decision = "deduplicated"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Decision = "executed" | "deduplicated" | "denied" | "failed"

/**
 * One audit record.
 *
 * @example
 * ```ts
 * import { Audit } from "@agentkit/middleware"
 *
 * const store = Audit.memoryStore()
 * // after a run:
 * const denied = store.records.filter((record: Audit.AuditRecord) => record.decision === "denied")
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface AuditRecord {
  /** The run's correlation id. */
  readonly runId: string
  /** The tenant, as stores key it: the scope's collision-free `storeKey` (`[orgId,domainId,userId,sessionId]` as JSON). */
  readonly tenant: string
  /** The tenant's display key (`org<orgId>:dom<domainId>`), for people reading the record; not unique. */
  readonly scope: string
  readonly tool: string
  /** The model's tool call id. */
  readonly callId: string
  /**
   * SHA-256 of the arguments' canonical JSON (key order does not matter); `unhashable` when the
   * arguments could not be read (a getter or proxy that throws: the record is written anyway).
   */
  readonly argumentsHash: string
  /** SHA-256 of the result text the model saw; absent when there is no result. */
  readonly resultHash: string | undefined
  readonly decision: Decision
  /** For a denied call: why, and the text the model saw. */
  readonly denial: { readonly reason: string; readonly message: string } | undefined
  /** For a failed call: the error type (`Interrupted` for an interrupted call) and message. */
  readonly error: { readonly type: string; readonly message: string } | undefined
  /** When the call ended (epoch milliseconds, from Effect's `Clock`). */
  readonly at: number
}

/**
 * Where audit records go: the port. `append` must not fail (an implementation decides what to do
 * when its backend is down: buffer, log, or die).
 *
 * @example
 * ```ts
 * import type { Audit } from "@agentkit/middleware"
 * import { Effect } from "effect"
 *
 * const store: Audit.AuditStore = { append: (record) => Effect.log("audit", record) }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface AuditStore {
  readonly append: (record: AuditRecord) => Effect.Effect<void>
}

/**
 * The in-memory store: an `AuditStore` that keeps its records in order.
 *
 * @example
 * ```ts
 * import { Audit } from "@agentkit/middleware"
 *
 * const store: Audit.MemoryStore = Audit.memoryStore()
 * store.records.length // 0
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryStore extends AuditStore {
  readonly records: ReadonlyArray<AuditRecord>
}

/**
 * Makes an in-memory audit store (tests, demos).
 *
 * @example
 * ```ts
 * import { Audit } from "@agentkit/middleware"
 *
 * const store = Audit.memoryStore()
 * const audit = Audit.audit({ store })
 * // ... run an agent ...
 * store.records.map((record) => record.decision)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const memoryStore = (): MemoryStore => {
  const records: Array<AuditRecord> = []
  return {
    records,
    append: (record) =>
      Effect.sync(() => {
        records.push(record)
      })
  }
}

/**
 * The options of `audit`.
 *
 * @example
 * ```ts
 * import { Audit } from "@agentkit/middleware"
 *
 * const options: Audit.Options = { store: Audit.memoryStore() }
 * const audit = Audit.audit(options)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly store: AuditStore
}

/** The arguments' hash; `unhashable` when they cannot be read, so the record is still written. */
const argumentsHash = (args: unknown): string => {
  try {
    return CanonicalJson.hashOnce(args)
  } catch {
    return "unhashable"
  }
}

/** The first line of a defect's rendering (never throws, and at most 1000 characters). */
const defectLine = (cause: Cause.Cause<unknown>): string => {
  try {
    const line = Cause.pretty(cause).split("\n")[0] ?? ""
    return line.length > 1000 ? `${line.slice(0, 1000)}…` : line
  } catch {
    return "a defect that cannot be rendered"
  }
}

const isToolDenied = (error: unknown): error is { readonly reason: string; readonly message: string } =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === "ToolDenied"

/**
 * Writes one record per tool call, whatever its outcome and whatever its arguments: the run, the
 * tenant (`scope.storeKey`, and the display key), the tool, the argument and result hashes
 * (`unhashable` for arguments that cannot be read) and the decision (`executed`,
 * `deduplicated`, `denied` with the denial, `failed` with the error).
 *
 * Place: on the tool pipeline, outside `egress` and `idempotent` (Python put it inside, so
 * deduplicated calls were never audited): `[telemetry, audit, egress, idempotent, retry]`.
 *
 * @example
 * ```ts
 * import { Invoker } from "@agentkit/core"
 * import { Audit, Idempotency } from "@agentkit/middleware"
 *
 * const store = Audit.memoryStore()
 * const InvokerLive = Invoker.layer({ toolMiddleware: [Audit.audit({ store }), Idempotency.idempotent()] })
 * ```
 *
 * @since 0.1.0
 * @category middleware
 */
export const audit = (options: Options): ToolMiddleware => {
  const store = options.store
  return (next: ToolHandler): ToolHandler =>
    <E, R>(invocation: ToolCallRequest<E, R>): Effect.Effect<ToolOutcome, E | ToolPipelineError, R> =>
      Effect.onExit(next(invocation), (exit) =>
        Effect.flatMap(Clock.currentTimeMillis, (at) => {
          const { call, context, meta } = invocation
          let decision: Decision
          let resultHash: string | undefined
          let denial: AuditRecord["denial"]
          let error: AuditRecord["error"]
          if (Exit.isSuccess(exit)) {
            decision = meta.deduplicated === true ? "deduplicated" : "executed"
            resultHash = CanonicalJson.sha256(exit.value.text)
          } else {
            const failure = Cause.failureOption(exit.cause)
            if (Option.isSome(failure) && isToolDenied(failure.value)) {
              decision = "denied"
              denial = { reason: failure.value.reason, message: failure.value.message }
            } else {
              decision = "failed"
              error = Option.isSome(failure)
                ? { type: errorType(failure.value), message: errorMessage(failure.value) }
                : Cause.isInterruptedOnly(exit.cause)
                  ? { type: "Interrupted", message: "the call was interrupted" }
                  : { type: "Defect", message: defectLine(exit.cause) }
            }
          }
          return store.append({
            runId: context.correlationId,
            tenant: context.scope.storeKey,
            scope: context.scope.key,
            tool: invocation.tool.name,
            callId: call.id,
            argumentsHash: argumentsHash(call.arguments),
            resultHash,
            decision,
            denial,
            error,
            at
          })
        })
      )
}
