/**
 * One store operation at a time on SQLite, first come first served.
 *
 * `@effect/sql-libsql` guards its connection with Effect 3's `Semaphore`, which wakes every waiter
 * on each release (the permit is taken only when a woken fiber runs, so each one sees it free):
 * with N operations waiting, every statement cost O(N), and N concurrent runs over one file
 * O(N²) (300 runs: 17 s; 1,000 runs did not finish in 10 minutes and grew to 4 GB). SQLite
 * writes one transaction at a time anyway, and libsql runs every statement on the event loop's
 * thread, so a gate in front of the client loses no parallelism: the operations wait here, in
 * order, and the client's semaphore never has more than a waiter or two (the app's own queries).
 *
 * The permit is handed from the holder to the next waiter. A waiter interrupted as the permit is
 * handed to it passes it on. An operation already inside the gate (or a fiber it forked) goes
 * straight through, so nothing can wait on itself.
 * @internal
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"

export interface Gate {
  readonly run: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

interface Waiter {
  readonly wake: () => void
  handed: boolean
}

export const make = (): Gate => {
  let busy = false
  const waiting: Array<Waiter> = []
  const inside = FiberRef.unsafeMake(false)

  /** The holder is done: the next waiter holds the permit, or it is free. */
  const pass = (): void => {
    const next = waiting.shift()
    if (next === undefined) {
      busy = false
      return
    }
    next.handed = true
    next.wake()
  }

  const take = Effect.async<void>((resume) => {
    if (!busy) {
      busy = true
      resume(Effect.void)
      return
    }
    const waiter: Waiter = { wake: () => resume(Effect.void), handed: false }
    waiting.push(waiter)
    // interrupted while waiting: out of the line; or, handed the permit meanwhile, on to the next
    return Effect.sync(() => {
      const index = waiting.indexOf(waiter)
      if (index >= 0) waiting.splice(index, 1)
      else if (waiter.handed) pass()
    })
  })

  const release = Effect.sync(pass)

  return {
    run: (self) =>
      Effect.flatMap(FiberRef.get(inside), (held) =>
        held
          ? self
          : Effect.uninterruptibleMask((restore) =>
            Effect.zipRight(restore(take), Effect.ensuring(restore(Effect.locally(self, inside, true)), release))
          ))
  }
}
