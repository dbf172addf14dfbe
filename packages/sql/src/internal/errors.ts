/**
 * Database failures as the stores' typed `StoreError`, and the retry of the transient ones on the
 * configured `Schedule`. Every store operation goes through `Runner.run`: the driver's `SqlError`
 * never leaves the package, and a defect never stands for a database that is down. @internal
 */
import { StoreError } from "@agentkit/core"
import { SqlError } from "@effect/sql/SqlError"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schedule from "effect/Schedule"
import type * as Gate from "./gate.js"

/** Postgres SQLSTATEs worth retrying: connection loss, serialization and deadlock, server shutting down or starting, lock timeouts, too many connections. */
const transientPg = /^(08...|40001|40P01|53300|55P03|57P01|57P02|57P03|57014)$/
/** Node socket errors worth retrying. */
const transientNode = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ECONNABORTED"
])
/** Driver messages of a connection that went away (pg reports these without a code). */
const transientText =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Connection timed out|database system is (starting up|shutting down)/i

const codesOf = (error: unknown): ReadonlyArray<string> => {
  const codes: Array<string> = []
  const seen = new Set<unknown>()
  const visit = (value: unknown, depth: number): void => {
    if (depth > 4 || typeof value !== "object" || value === null || seen.has(value)) return
    seen.add(value)
    const code = (value as { readonly code?: unknown }).code
    if (typeof code === "string") codes.push(code)
    visit((value as { readonly cause?: unknown }).cause, depth + 1)
    const errors = (value as { readonly errors?: unknown }).errors
    if (Array.isArray(errors)) { for (const item of errors) visit(item, depth + 1) }
  }
  visit(error, 0)
  return codes
}

const messageOf = (value: unknown): string => {
  const parts: Array<string> = []
  let current: unknown = value
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    const message = (current as { readonly message?: unknown }).message
    if (typeof message === "string" && message !== "" && !parts.some((part) => part.includes(message))) {
      parts.push(message)
    }
    current = (current as { readonly cause?: unknown }).cause
  }
  return parts.length === 0 ? String(value) : parts.join(": ")
}

/** SQLite result codes (by name or by number) in words: what the operator checks. */
const sqliteWords: ReadonlyArray<readonly [RegExp, string]> = [
  [
    /SQLITE_CANTOPEN|\(14\)|: 14"?\)?$/,
    "the database file could not be opened (its directory is missing or not writable, or the path is a directory)"
  ],
  [/SQLITE_READONLY|\(8\)|: 8"?\)?$/, "the database is read-only (the file or its directory is not writable)"],
  [/SQLITE_PERM|\(3\)|: 3"?\)?$/, "permission denied on the database file"],
  [/SQLITE_FULL|\(13\)|: 13"?\)?$/, "the disk is full"],
  [/SQLITE_IOERR|\(10\)|: 10"?\)?$/, "a disk I/O error"],
  [/SQLITE_CORRUPT|SQLITE_NOTADB|\((?:11|26)\)|: (?:11|26)"?\)?$/, "the file is not a database or is corrupt"],
  [/SQLITE_BUSY|\(5\)/, "the database stayed locked by another connection past the busy timeout"]
]

/** A driver failure's text with its SQLite code in words, when it has one. */
export const inWords = (cause: unknown): string => {
  const text = messageOf(cause)
  const codes = codesOf(cause).join(" ")
  for (const [pattern, words] of sqliteWords) {
    if (pattern.test(codes) || pattern.test(text)) return `${words} (${text})`
  }
  return text
}

/** Whether trying the same operation again soon may succeed (the database was busy, restarting or unreachable). */
export const isTransient = (error: SqlError): boolean =>
  codesOf(error.cause).some(
    (code) =>
      code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED") || transientPg.test(code) ||
      transientNode.has(code)
  ) || transientText.test(messageOf(error.cause))

const recoverable =
  "nothing was half-written: what was committed is kept, and the run stays recoverable (drive it again with the same runId once the database answers)"

/**
 * A driver failure as the stores' error, naming the operation and, when known, the database
 * (`the SQLite database <path>`, `the Postgres server <host:port/database>`). A transient one is
 * retried first (its final text says how often); any other says at once that the run stays
 * recoverable.
 */
export const fromSqlError = (operation: string, error: SqlError, place?: string): StoreError => {
  const retryable = isTransient(error)
  const words = inWords(error.cause ?? error)
  const message = place === undefined || words.includes(place.replace(/^the \S+ \S+ /, ""))
    ? `${operation}: ${words}`
    : `${operation}: ${place}: ${words}`
  return new StoreError({
    operation,
    message: retryable ? message : `${message}; ${recoverable}`,
    retryable,
    cause: error.cause
  })
}

/** What runs every store operation: its database failures typed, the transient ones retried. */
export interface Runner {
  /**
   * Runs `body` (told whether it is a retry, so that a write that did commit before its answer was
   * lost can recognise its own result), maps `SqlError` to `StoreError` and retries the transient
   * ones on the schedule. When the schedule gives up, the error says so and that the run stays
   * recoverable.
   */
  readonly run: <A, E, R>(
    operation: string,
    body: (retried: boolean) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, Exclude<E, SqlError> | StoreError, R>
}

/**
 * Retries for at most `budget` in all: exponential from 20 ms, doubling, each wait at most 2 s,
 * jittered. A database restart shorter than the budget is ridden out.
 */
export const retryFor = (budget: Duration.DurationInput): Schedule.Schedule<unknown, StoreError> =>
  Schedule.exponential("20 millis", 2).pipe(
    Schedule.union(Schedule.spaced("2 seconds")),
    Schedule.jittered,
    Schedule.upTo(budget)
  )

export const defaultSchedule: Schedule.Schedule<unknown, StoreError> = retryFor("45 seconds")

/**
 * The runner of the stores: retried on `schedule`; each attempt through `gate` when there is one
 * (SQLite); its errors name `place`, the database, when known.
 */
export const makeRunner = (
  schedule: Schedule.Schedule<unknown, StoreError>,
  gate?: Gate.Gate,
  place?: string
): Runner => ({
  run: <A, E, R>(operation: string, body: (retried: boolean) => Effect.Effect<A, E, R>) =>
    Effect.suspend(() => {
      let attempts = 0
      const once = Effect.suspend(() => body(attempts++ > 0))
      // A transient failure fails (and is retried); every other outcome, typed failures included, succeeds as an Either.
      const attempt: Effect.Effect<Either.Either<A, Exclude<E, SqlError> | StoreError>, StoreError, R> = (
        gate === undefined ? once : gate.run(once)
      ).pipe(
        Effect.matchEffect({
          onFailure: (error) => {
            const typed = error instanceof SqlError
              ? fromSqlError(operation, error, place)
              : (error as Exclude<E, SqlError> | StoreError)
            return typed instanceof StoreError && typed.retryable
              ? Effect.fail(typed)
              : Effect.succeed(Either.left(typed))
          },
          onSuccess: (value) => Effect.succeed(Either.right(value))
        })
      )
      return attempt.pipe(
        Effect.retry(schedule),
        Effect.catchAll((last) =>
          Effect.succeed(
            Either.left(
              new StoreError({
                operation,
                message: `${last.message}; gave up after ${attempts} attempt${
                  attempts === 1 ? "" : "s"
                }: ${recoverable}`,
                retryable: true,
                cause: last.cause
              })
            )
          )
        ),
        Effect.flatMap((result) => (Either.isLeft(result) ? Effect.fail(result.left) : Effect.succeed(result.right)))
      )
    })
})

/** A refusal of bad input: never retried, never reaches the database. */
export const invalid = (operation: string, message: string): StoreError =>
  new StoreError({ operation, message: `${operation}: ${message}`, retryable: false })
