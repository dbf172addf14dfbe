/**
 * A token's listeners as objects: the run's cancellation boundary listens with itself (its
 * `cancelled` method) and stops listening by itself, where `onCancel` would make a listener
 * closure and a closure that removes it, both kept alive while the run waits. The token's class
 * body provides the two operations (it holds the listeners).
 *
 * @internal
 */
import type { CancellationToken } from "../Cancellation.js"

/** A listener object: `cancelled` is called once, when the token is cancelled. */
export interface Listener {
  cancelled(): void
}

/** The operations, as the token's class body provides them. */
export interface Listening {
  /** Adds `listener` (called at once if the token is already cancelled), as `onCancel` does. */
  readonly listen: (token: CancellationToken, listener: Listener) => void
  /** Removes `listener`, as the function `onCancel` returns does. */
  readonly unlisten: (token: CancellationToken, listener: Listener) => void
}

let listening: Listening | undefined

/** Called once, by `CancellationToken`'s class body. */
export const provide = (provided: Listening): void => {
  listening = provided
}

/** `token.onCancel` with a listener object. */
export const listen: Listening["listen"] = (token, listener) => listening!.listen(token, listener)

/** Removes a listener object added with `listen`. */
export const unlisten: Listening["unlisten"] = (token, listener) => listening!.unlisten(token, listener)
