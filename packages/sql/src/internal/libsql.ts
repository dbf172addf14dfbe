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
 * - **A transaction runs on the client's one connection.** libsql's own `transaction()` hands the
 *   client's connection to the transaction and opens a new one for the client, and nothing ever
 *   closes the transaction's (its `close` only rolls back): every transaction left a connection
 *   open (about eight file descriptors a run), cost an open of the file, and put more connections
 *   of one file in one process (more busy waits). Here a transaction is `BEGIN` on the client's
 *   connection and `COMMIT`/`ROLLBACK` on it. `@effect/sql-libsql` holds its permit (a semaphore of
 *   one) from the transaction's start to its end, and every other statement takes that permit, so
 *   nothing else runs on the connection meanwhile.
 * - **A database file removed or replaced under the client is not written to.** One connection
 *   stays open on the file it opened; after the file is deleted (or another put in its place) its
 *   writes would go to a file nobody can open again, lost. Each transaction first checks that the
 *   path still names the file the connection opened, and fails with `SQLITE_CANTOPEN` if not.
 * - **Statements leave the event loop turns.** libsql runs a statement synchronously and hands back
 *   a promise already settled, so a stream of statements (concurrent runs checkpointing one after
 *   another) goes on in microtasks alone: the loop never reaches its timers or I/O. A run's lease
 *   heartbeat is a timer, so under load every lease expired unrenewed (100 concurrent runs of 20
 *   turns over one file all failed with StaleLease after 30 s), and an HTTP server in the process
 *   stopped answering. A statement (outside a transaction) or a transaction's end that comes more
 *   than `slice` ms after the loop last turned settles in its next turn (`setImmediate`) instead.
 * - **A connection that met SQLITE_BUSY is replaced.** libsql 0.4 does not reset a statement that
 *   failed busy: the connection then keeps a statement in progress, and its next transaction can
 *   neither commit nor let go of the write lock. The client is reopened instead (same file, same
 *   settings; the busy timeout is set again before each write).
 * @internal
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as LibsqlTypes from "@libsql/client"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { statSync } from "node:fs"

const BEGIN: Record<LibsqlTypes.TransactionMode, string> = {
  write: "BEGIN IMMEDIATE",
  read: "BEGIN DEFERRED",
  deferred: "BEGIN DEFERRED"
}

/** How long statements may hold the event loop before one waits for its next turn (ms). */
const slice = 5
/** When the loop last turned under a statement of this module (`performance.now()`). */
let turned = 0
let nextTurn: Promise<void> | undefined
const waitTurn = (): Promise<void> => (nextTurn ??= new Promise((resolve) =>
  setImmediate(() => {
    nextTurn = undefined
    turned = performance.now()
    resolve()
  })
))
/**
 * `statement`, settled in the loop's next turn when the loop has been held for `slice` ms or more.
 * Not for the statements inside a transaction: the write lock would be held across the turn (and
 * another process's BEGIN waits for it synchronously); a transaction's commit or rollback is.
 */
const fair = <A>(statement: Promise<A>): Promise<A> =>
  statement.finally(() => (performance.now() - turned >= slice ? waitTurn() : undefined))

/**
 * A transaction on `client`'s connection, begun already. Its statements are the client's; after a
 * commit or a rollback it is closed (a later statement rejects). A rollback of a transaction the
 * database already ended (a failed statement can end it) resolves.
 */
const sameConnection = (client: LibsqlTypes.Client): LibsqlTypes.Transaction => {
  let closed = false
  const open = () => (closed ? Promise.reject(new Error("the transaction is closed")) : Promise.resolve())
  const end = (statement: "COMMIT" | "ROLLBACK") => {
    if (closed) return statement === "ROLLBACK" ? Promise.resolve() : open()
    closed = true
    return fair(
      client.execute(statement).then(
        () => undefined,
        (error: unknown) => {
          if (statement === "ROLLBACK") return undefined // nothing left to undo (or the connection is gone)
          // a COMMIT that failed leaves the transaction open: undo it, then report the failure
          return client.execute("ROLLBACK").then(
            () => Promise.reject(error),
            () => Promise.reject(error)
          )
        }
      )
    )
  }
  const unsupported = () => Promise.reject(new Error("batch and executeMultiple are not used inside a transaction"))
  return {
    execute: (...args: Parameters<LibsqlTypes.Transaction["execute"]>) => open().then(() => client.execute(...args)),
    batch: unsupported,
    executeMultiple: unsupported,
    commit: () => end("COMMIT"),
    rollback: () => end("ROLLBACK"),
    close: () => void end("ROLLBACK"),
    get closed() {
      return closed
    }
  } as unknown as LibsqlTypes.Transaction
}

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
export const resilient = (make: () => LibsqlTypes.Client, path: string): LibsqlTypes.Client => {
  /** The identity of the file at `path` (device and inode), `undefined` when there is none. */
  const fileAt = (): string | undefined => {
    try {
      const stat = statSync(path)
      return `${stat.dev}:${stat.ino}`
    } catch {
      return undefined
    }
  }
  let current = make()
  let opened = fileAt()
  const failed = (error: unknown): never => {
    if (isBusy(error)) {
      const old = current
      try {
        current = make()
        opened = fileAt()
        old.close()
      } catch {
        // the file cannot be opened right now: keep the old client, the next busy failure tries again
      }
    }
    throw error
  }
  /** `client`'s statements, a busy failure replacing the current client as any other's. */
  const guardedClient = (client: LibsqlTypes.Client) =>
    ({
      execute: (...args: Parameters<LibsqlTypes.Client["execute"]>) => client.execute(...args).catch(failed)
    }) as LibsqlTypes.Client
  const guarded = {
    execute: (...args: Parameters<LibsqlTypes.Client["execute"]>) => fair(current.execute(...args).catch(failed)),
    batch: (...args: Parameters<LibsqlTypes.Client["batch"]>) => fair(current.batch(...args).catch(failed)),
    executeMultiple: (sql: string) => fair(current.executeMultiple(sql).catch(failed)),
    transaction: (mode: LibsqlTypes.TransactionMode = "write") => {
      const client = current
      if (opened === undefined || fileAt() !== opened) {
        const gone = Object.assign(
          new Error(
            `SQLITE_CANTOPEN: unable to open database file: ${path} was removed or replaced since it was opened`
          ),
          { code: "SQLITE_CANTOPEN" }
        )
        return Promise.resolve(failedTransaction(gone))
      }
      return client.execute(BEGIN[mode]).then(
        () => sameConnection(guardedClient(client)),
        (error: unknown) => {
          try {
            failed(error)
          } catch {
            // failed() rethrows; the transaction below carries the error instead
          }
          return failedTransaction(error)
        }
      )
    },
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
            ))
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
