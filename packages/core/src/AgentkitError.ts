/**
 * What every agentkit error is, in every agentkit package: a tagged error carrying `ErrorTypeId`
 * (`isAgentkitError` tells them apart from any other value), and how to read any error, agentkit's
 * or not (`errorType`, `errorMessage`, `findCause`, `ForeignValue` for a cause kept on a stored
 * error).
 *
 * Each error lives beside its concept (`BudgetError`, `ToolError`, `ChatModelError`,
 * `CheckpointStoreError`, ...) and carries the exact text the Python agentkit (or the seed page)
 * prints, so logs read the same in both frameworks. The errors that are stored (a checkpoint, an
 * audit record) or cross a process boundary are `Schema.TaggedError`s:
 * `Schema.encode(BudgetExceeded)(error)` gives a JSON-safe value and decoding it gives the error
 * back, message and all. The text the model sees for a failed tool call is in `FailureText`.
 *
 * @since 0.2.0
 */
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import { UNREADABLE_ERROR } from "./internal/errorText.js"

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
