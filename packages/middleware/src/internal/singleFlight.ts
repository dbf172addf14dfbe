/** Concurrent identical calls share one execution. @internal */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"

/** What a waiter receives: the leader's exit, or `undefined` when the leader was interrupted. */
type Shared<A> = Exit.Exit<A, unknown> | undefined

/** A value, and whether it came from another caller's execution. */
export interface Outcome<A> {
  readonly value: A
  readonly shared: boolean
}

/** A registry of executions in flight, by key. */
export class Flights<A> {
  readonly #inFlight = new Map<string, Deferred.Deferred<Shared<A>>>()

  /** How many executions are in flight. */
  get size(): number {
    return this.#inFlight.size
  }

  /**
   * Runs `lead` for the first caller with `key`; a caller arriving while it runs waits and gets
   * the same exit, marked `shared` (a leader that is interrupted hands the work to the next
   * caller instead). The check and the registration happen in one step, so two callers can never
   * both lead.
   */
  run<E, R>(key: string, lead: Effect.Effect<A, E, R>): Effect.Effect<Outcome<A>, E, R> {
    return Effect.suspend((): Effect.Effect<Outcome<A>, E, R> => {
      const existing = this.#inFlight.get(key)
      if (existing !== undefined) {
        return Effect.flatMap(Deferred.await(existing), (shared) =>
          shared === undefined
            ? this.run(key, lead)
            : Effect.map(shared as Exit.Exit<A, E>, (value) => ({ value, shared: true })))
      }
      const deferred = Deferred.unsafeMake<Shared<A>>(FiberId.none)
      this.#inFlight.set(key, deferred)
      return Effect.map(
        Effect.onExit(lead, (exit) =>
          Effect.suspend(() => {
            this.#inFlight.delete(key)
            return Deferred.succeed(deferred, Exit.isInterrupted(exit) ? undefined : exit)
          })),
        (value) => ({ value, shared: false })
      )
    })
  }
}

const registries = new WeakMap<object, Flights<never>>()

/** The flights of a store (stores shared by several middleware share their flights too). */
export const flightsOf = <A>(store: object): Flights<A> => {
  let flights = registries.get(store)
  if (flights === undefined) {
    flights = new Flights<never>()
    registries.set(store, flights)
  }
  return flights as unknown as Flights<A>
}
