/**
 * An audit trail of tool calls: one record per call, written to an `AuditStore` (core's port).
 *
 * @since 0.1.0
 */
import { AuditStore, CanonicalJson, errorMessage, errorType } from "@agentkit/core"
import type { ToolCallRequest, ToolHandler, ToolMiddleware, ToolOutcome, ToolPipelineError } from "@agentkit/core"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"

/**
 * What happened to a call (core's `AuditStore.Decision`): `executed`, `deduplicated`, `denied`,
 * `failed` or `in_doubt`.
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
export type Decision = AuditStore.Decision

/**
 * One audit record (core's `AuditStore.AuditRecord`).
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
export type AuditRecord = AuditStore.AuditRecord

/**
 * The in-memory store (core's `AuditStore.MemoryStore`): the port plus its records, in order.
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
export type MemoryStore = AuditStore.MemoryStore

/**
 * Makes an in-memory audit store (core's `AuditStore.makeMemory`).
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
export const memoryStore = (): MemoryStore => AuditStore.makeMemory()

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
  /** Where records go. Default: the `AuditStore` service in the context, else an in-memory store of this middleware. */
  readonly store?: AuditStore.Service | undefined
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

const isToolInDoubt = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === "ToolInDoubt"

/**
 * Writes one record per tool call, whatever its outcome and whatever its arguments: the run id,
 * the tenant key (`scope.storeKey`), the tool, the argument and result hashes (`unhashable` for
 * arguments that cannot be read) and the decision (`executed`, `deduplicated`, `denied` with the
 * denial, `failed` with the error, `in_doubt` for a call the execution ledger found claimed and
 * never completed). Records go to `options.store`, else to the `AuditStore` service in the
 * context, else to an in-memory store of this middleware. A store that fails is logged; the
 * call's result is unchanged.
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
export const audit = (options: Options = {}): ToolMiddleware => {
  const fallback = options.store === undefined ? AuditStore.makeMemory() : undefined
  const storeOf: Effect.Effect<AuditStore.Service> = options.store !== undefined
    ? Effect.succeed(options.store)
    : Effect.map(Effect.serviceOption(AuditStore), (found) => Option.getOrElse(found, () => fallback!))
  return (next: ToolHandler): ToolHandler =>
  <E, R>(invocation: ToolCallRequest<E, R>): Effect.Effect<ToolOutcome, E | ToolPipelineError, R> =>
    Effect.flatMap(
      storeOf,
      (store) =>
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
              } else if (Option.isSome(failure) && isToolInDoubt(failure.value)) {
                decision = "in_doubt"
              } else {
                decision = meta.deduplicated === true ? "deduplicated" : "failed"
                error = Option.isSome(failure)
                  ? { type: errorType(failure.value), message: errorMessage(failure.value) }
                  : Cause.isInterruptedOnly(exit.cause)
                  ? { type: "Interrupted", message: "the call was interrupted" }
                  : { type: "Defect", message: defectLine(exit.cause) }
              }
            }
            const record: AuditRecord = {
              runId: context.runId,
              tenant: context.scope.storeKey,
              tool: invocation.tool.name,
              callId: call.id,
              argHash: argumentsHash(call.arguments),
              decision,
              at,
              resultHash,
              // the person who approved (or edited) the call, set by the agent loop
              ...(typeof meta.decidedBy === "string" ? { by: meta.decidedBy } : {}),
              ...(denial === undefined ? {} : { denial }),
              ...(error === undefined ? {} : { error })
            }
            // the call already ran: a broken audit store is reported, never turned into the call's failure
            return Effect.catchAll(store.append(record), (failed) =>
              Effect.logError(
                `audit: could not append the record of ${record.tool}#${record.callId}: ${failed.message}`
              ))
          }))
    )
}
