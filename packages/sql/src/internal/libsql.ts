/**
 * The embedded SQLite client as the stores open it, on libsql (through `@effect/sql-libsql`),
 * with two guards:
 *
 * - **One client per database file per process.** libsql waits for another connection's write
 *   lock synchronously (the busy timeout blocks the event loop), so two clients of one file in one
 *   process would wait on each other until the timeout. Every open of a file shares one client
 *   (and its transaction semaphore), reference-counted, closed with its last user.
 * - **A transaction that cannot begin fails, it does not wedge.** `@effect/sql-libsql` 0.42 takes
 *   its transaction permit before `BEGIN IMMEDIATE` and does not give it back when the BEGIN
 *   throws (`SQLITE_BUSY` from another process, a file that cannot be opened): every later
 *   statement of the client would wait forever. Here a BEGIN that throws yields a transaction
 *   whose statements fail with that error, so the transaction rolls back through the normal path,
 *   the permit is returned, and the stores' retry sees a typed, transient failure.
 * - **A connection that met SQLITE_BUSY is replaced.** libsql 0.4 does not reset a statement that
 *   failed busy: the connection then keeps a statement in progress, and its next transaction can
 *   neither commit nor let go of the write lock. The client is reopened instead (same file, same
 *   settings; the busy timeout is set again before each write).
 * @internal
 */
import type * as LibsqlTypes from "@libsql/client"
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"

/** A transaction that never began: its statements fail with why. */
const failedTransaction = (cause: unknown): LibsqlTypes.Transaction =>
  ({
    execute: () => Promise.reject(cause),
    batch: () => Promise.reject(cause),
    executeMultiple: () => Promise.reject(cause),
    commit: () => Promise.reject(cause),
    rollback: () => Promise.resolve(),
    close: () => undefined,
    closed: true
  }) as unknown as LibsqlTypes.Transaction

const isBusy = (error: unknown): boolean => {
  const code = (error as { readonly code?: unknown } | null)?.code
  return typeof code === "string" && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))
}

/**
 * A libsql client made by `make`, guarded as above: `transaction` resolves even when BEGIN throws,
 * and a busy failure swaps in a fresh client (the old one is closed).
 */
export const resilient = (make: () => LibsqlTypes.Client): LibsqlTypes.Client => {
  let current = make()
  const failed = (error: unknown): never => {
    if (isBusy(error)) {
      const old = current
      try {
        current = make()
        old.close()
      } catch {
        // the file cannot be opened right now: keep the old client, the next busy failure tries again
      }
    }
    throw error
  }
  const guarded = {
    execute: (...args: Parameters<LibsqlTypes.Client["execute"]>) => current.execute(...args).catch(failed),
    batch: (...args: Parameters<LibsqlTypes.Client["batch"]>) => current.batch(...args).catch(failed),
    executeMultiple: (sql: string) => current.executeMultiple(sql).catch(failed),
    transaction: (mode?: LibsqlTypes.TransactionMode) =>
      current.transaction(mode).catch((error: unknown) => {
        try {
          failed(error)
        } catch {
          // failed() rethrows; the transaction below carries the error instead
        }
        return failedTransaction(error)
      }),
    close: () => current.close()
  }
  return new Proxy(guarded as unknown as LibsqlTypes.Client, {
    get(target, property) {
      if (Object.hasOwn(target, property)) return Reflect.get(target, property)
      const value: unknown = Reflect.get(current, property, current)
      return typeof value === "function" ? value.bind(current) : value
    }
  })
}

interface Entry {
  refs: number
  readonly client: SqlClient.SqlClient
  readonly scope: Scope.CloseableScope
}

const open = new Map<string, Entry>()
const lock = Effect.unsafeMakeSemaphore(1)

/**
 * The client of the database file at `path`: the one already open in this process, or a new one
 * made by `make`; released with the scope (closed with its last user).
 */
export const shared = <E>(
  path: string,
  make: Effect.Effect<SqlClient.SqlClient, E, Scope.Scope>
): Effect.Effect<SqlClient.SqlClient, E, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      lock.withPermits(1)(
        Effect.suspend(() => {
          const found = open.get(path)
          if (found !== undefined) {
            found.refs++
            return Effect.succeed(found)
          }
          return Effect.flatMap(Scope.make(), (scope) =>
            make.pipe(
              Scope.extend(scope),
              Effect.onError(() => Scope.close(scope, Exit.void)),
              Effect.map((client) => {
                const entry: Entry = { refs: 1, client, scope }
                open.set(path, entry)
                return entry
              })
            )
          )
        })
      ),
      (entry) =>
        lock.withPermits(1)(
          Effect.suspend(() => {
            entry.refs--
            if (entry.refs > 0) return Effect.void
            open.delete(path)
            return Scope.close(entry.scope, Exit.void)
          })
        )
    ),
    (entry) => entry.client
  )
