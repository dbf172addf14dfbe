/**
 * The execution ledger: at most once for side-effecting calls. When one is provided, the
 * Invoker's tool terminal claims every call of a `sideEffecting`, non-`idempotent` tool before
 * it runs and completes the claim after (success or failure, with the text the model sees):
 *
 * - `Claimed`: nobody ran it; it runs now.
 * - `Completed(outcome)`: it ran before (a re-driven run); the stored outcome is returned and the
 *   tool does not run again.
 * - `InDoubt`: it was claimed and never completed (the process stopped mid-call), or claimed with
 *   other arguments: whether its effect happened is unknown. The call fails with `ToolInDoubt`
 *   and the agent loop suspends the run for a person (`markDone`, `markFailed` or `retry`).
 *
 * Entries are never evicted by count; `prune` forgets completed ones explicitly.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { LedgerConflict } from "./ExecutionLedgerError.js"
import { makeMemory as makeMemoryLedger } from "./internal/executionLedger.js"
import type { StoreError } from "./StoreError.js"

/**
 * What a completed call produced: the text the model saw and whether it was an error.
 *
 * @example
 * ```ts
 * import type { ExecutionLedger } from "@agentkit/core"
 *
 * const outcome: ExecutionLedger.Outcome = { text: "charged $12", isError: false }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Outcome {
  readonly text: string
  readonly isError: boolean
}

/**
 * The answer to a claim.
 *
 * @example
 * ```ts
 * import type { ExecutionLedger } from "@agentkit/core"
 *
 * const describe = (claim: ExecutionLedger.Claim) =>
 *   claim._tag === "Completed" ? claim.outcome.text : claim._tag === "InDoubt" ? "outcome unknown" : "run it"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Claim =
  | { readonly _tag: "Claimed" }
  | { readonly _tag: "Completed"; readonly outcome: Outcome }
  | { readonly _tag: "InDoubt"; readonly claimedAt: number; readonly digest: string }

/**
 * How a person decided an in-doubt call: it happened (`Done`, with what it produced), it did not
 * (`Failed`, with why: the stored text is `markedFailedText(reason)`), or run it again (`Retry`:
 * the claim is removed).
 *
 * @example
 * ```ts
 * import type { ExecutionLedger } from "@agentkit/core"
 *
 * const done: ExecutionLedger.Resolution = { _tag: "Done", outcome: { text: "charged $12", isError: false } }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Resolution =
  | { readonly _tag: "Done"; readonly outcome: Outcome }
  | { readonly _tag: "Failed"; readonly reason: string }
  | { readonly _tag: "Retry" }

/**
 * The ledger operations.
 *
 * @example
 * ```ts
 * import { ExecutionLedger } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const ledger = yield* ExecutionLedger
 *   const claim = yield* ledger.claim("run-1/t0/c0", "digest-of-the-arguments")
 *   if (claim._tag === "Claimed") yield* ledger.complete("run-1/t0/c0", { text: "done", isError: false })
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Claims a call before it runs (atomically: of two concurrent claimers exactly one gets `Claimed`). */
  readonly claim: (key: string, digest: string) => Effect.Effect<Claim, StoreError>
  /** Records what a claimed call produced (the first completion wins). */
  readonly complete: (key: string, outcome: Outcome) => Effect.Effect<void, StoreError>
  /**
   * Decides an in-doubt claim. With `claimedAt`, only the claim made at that time is decided (a
   * newer claim of the same key is `LedgerConflict { state: "reclaimed" }`).
   */
  readonly resolve: (
    key: string,
    resolution: Resolution,
    options?: { readonly claimedAt?: number | undefined }
  ) => Effect.Effect<void, LedgerConflict | StoreError>
  /** Forgets completed entries completed before `before` (Unix ms); in-doubt claims stay. Returns how many. */
  readonly prune: (options: { readonly before: number }) => Effect.Effect<number, StoreError>
}

/**
 * The in-memory ledger: the port plus its size (for bounded-memory tests).
 *
 * @example
 * ```ts
 * import { ExecutionLedger } from "@agentkit/core"
 *
 * const ledger: ExecutionLedger.MemoryLedger = ExecutionLedger.makeMemory()
 * ledger.size // 0
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryLedger extends Service {
  readonly size: number
}

/**
 * Makes an in-memory ledger (one per process).
 *
 * @example
 * ```ts
 * import { ExecutionLedger } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const ledger = ExecutionLedger.makeMemory()
 * const program = agent.run(task).pipe(Effect.provide(ExecutionLedger.layer(ledger)))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory = (): MemoryLedger => makeMemoryLedger()

/**
 * The execution ledger service, optional: the Invoker reads it with `Effect.serviceOption` (only
 * for side-effecting, non-idempotent tools), so without one nothing is claimed.
 *
 * @example
 * ```ts
 * import { ExecutionLedger } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const program = agent.run(task).pipe(Effect.provide(ExecutionLedger.memory()))
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class ExecutionLedger extends Context.Tag("@agentkit/core/ExecutionLedger")<ExecutionLedger, Service>() {
  /** A layer of a fresh in-memory ledger. */
  static memory(): Layer.Layer<ExecutionLedger> {
    return Layer.sync(ExecutionLedger, makeMemory)
  }
  /** A layer of a given ledger value. */
  static layer(ledger: Service): Layer.Layer<ExecutionLedger> {
    return Layer.succeed(ExecutionLedger, ledger)
  }
  /** Makes an in-memory ledger value. */
  static readonly makeMemory = makeMemory
}

/**
 * The ledger's types, reachable through the `ExecutionLedger` class.
 *
 * @example
 * ```ts
 * import type { ExecutionLedger } from "@agentkit/core"
 *
 * const isDone = (claim: ExecutionLedger.Claim) => claim._tag === "Completed"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace ExecutionLedger {
  /** @since 0.1.0 */
  export type Service = import("./ExecutionLedger.js").Service
  /** @since 0.1.0 */
  export type MemoryLedger = import("./ExecutionLedger.js").MemoryLedger
  /** @since 0.1.0 */
  export type Claim = import("./ExecutionLedger.js").Claim
  /** @since 0.1.0 */
  export type Outcome = import("./ExecutionLedger.js").Outcome
  /** @since 0.1.0 */
  export type Resolution = import("./ExecutionLedger.js").Resolution
}
