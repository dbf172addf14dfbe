/**
 * A cancellation handle that plain (non-Effect) code can flip, for example an HTTP handler
 * cancelling a run it started. A run wrapped in `RunContext.cancellable` stops with a typed
 * `Cancelled` failure when the handle flips; its finalizers run.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import { Cancelled } from "./CancellationError.js"
import * as Listening from "./internal/cancellation.js"

/**
 * A one-way flag shared by a run and all its sub-runs.
 *
 * @example
 * ```ts
 * import { Cancellation } from "@agentkit/core"
 *
 * const token = Cancellation.make()
 * token.cancel()
 * token.isCancelled // true
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export class CancellationToken {
  #cancelled = false
  // One listener (the common case: the run's own boundary) in a field; a second one moves both
  // into a set, which then keeps every later one, in the order they came. A listener is a
  // function (`onCancel`) or an object (`internal/cancellation.ts`: the run's boundary).
  #one: Listener | undefined = undefined
  #many: Set<Listener> | undefined = undefined

  /** Whether `cancel()` has been called. */
  get isCancelled(): boolean {
    return this.#cancelled
  }

  /** Flips the flag (idempotent) and notifies every listener once. Safe to call from any code. */
  cancel(): void {
    if (this.#cancelled) return
    this.#cancelled = true
    const listeners = this.#many === undefined ? (this.#one === undefined ? [] : [this.#one]) : Array.from(this.#many)
    this.#one = undefined
    this.#many = undefined
    for (const listener of listeners) notify(listener)
  }

  /**
   * Calls `listener` when the token is cancelled (at once if it already is). Returns a function
   * that removes the listener. A listener added twice is called once.
   */
  onCancel(listener: () => void): () => void {
    if (!this.#add(listener)) return () => {}
    return () => this.#remove(listener)
  }

  /** Adds a listener; `false` when the token is already cancelled (the listener was just called). */
  #add(listener: Listener): boolean {
    if (this.#cancelled) {
      notify(listener)
      return false
    }
    if (this.#many === undefined && (this.#one === undefined || this.#one === listener)) {
      this.#one = listener
    } else {
      if (this.#many === undefined) {
        this.#many = new Set([this.#one!])
        this.#one = undefined
      }
      this.#many.add(listener)
    }
    return true
  }

  #remove(listener: Listener): void {
    if (this.#one === listener) this.#one = undefined
    else this.#many?.delete(listener)
  }

  static {
    Listening.provide({
      listen: (token, listener) => {
        token.#add(listener)
      },
      unlisten: (token, listener) => token.#remove(listener)
    })
  }
}

type Listener = (() => void) | Listening.Listener

const notify = (listener: Listener): void => {
  if (typeof listener === "function") listener()
  else listener.cancelled()
}

/**
 * Makes a fresh, uncancelled token.
 *
 * @example
 * ```ts
 * import { Cancellation } from "@agentkit/core"
 *
 * Cancellation.make().isCancelled // false
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (): CancellationToken => new CancellationToken()

/**
 * Fails with `Cancelled` when the token has been cancelled, succeeds otherwise. The agent loop
 * calls it at the top of every iteration.
 *
 * @example
 * ```ts
 * import { Cancellation } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const token = Cancellation.make()
 * token.cancel()
 * Effect.runSyncExit(Cancellation.check(token)) // Exit.fail(Cancelled)
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const check = (token: CancellationToken): Effect.Effect<void, Cancelled> =>
  token.isCancelled ? Effect.fail(new Cancelled()) : Effect.void
