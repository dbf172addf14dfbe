/**
 * A client that loses answers: the statement (or transaction) runs and commits, then its caller
 * is told the connection dropped, as happens when a network fails between the database's commit
 * and its reply. How the tests check that a retried write recognises its own committed result.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"

export const connectionReset = () =>
  new SqlError({
    cause: Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }),
    message: "Failed to execute statement"
  })

export interface Lossy {
  readonly client: SqlClient.SqlClient
  /** Loses the answer of the next `count` transactions. */
  readonly loseTransactions: (count: number) => void
  /** Loses the answer of the next statement whose text matches. */
  readonly loseStatement: (pattern: RegExp) => void
  readonly lost: () => number
}

export const lossy = (base: SqlClient.SqlClient): Lossy => {
  let transactions = 0
  let statement: RegExp | undefined
  let lost = 0
  const lose = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> =>
    Effect.flatMap(effect, () => {
      lost++
      return Effect.fail(connectionReset())
    })
  const tag = (strings: TemplateStringsArray, ...args: Array<unknown>) => {
    const statementEffect =
      (base as unknown as (s: TemplateStringsArray, ...a: Array<unknown>) => Effect.Effect<unknown, SqlError>)(
        strings,
        ...args
      )
    if (statement !== undefined && statement.test(strings.join("?"))) {
      statement = undefined
      return lose(statementEffect)
    }
    return statementEffect
  }
  const client: SqlClient.SqlClient = Object.assign(tag, base, {
    withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => {
      const inner = base.withTransaction(effect)
      if (transactions > 0) {
        transactions--
        return lose(inner)
      }
      return inner
    },
    withoutTransforms: () => client
  }) as unknown as SqlClient.SqlClient
  return {
    client,
    loseTransactions: (count) => {
      transactions = count
    },
    loseStatement: (pattern) => {
      statement = pattern
    },
    lost: () => lost
  }
}
