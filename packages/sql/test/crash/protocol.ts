/**
 * The crash suite's wire: what the parent tells a worker (JSON lines on its stdin) and what the
 * worker reports (JSON lines on its stdout), and the two append-only logs the workers write the
 * ground truth to (model calls, tool side effects). The parent kills a worker with SIGKILL after a
 * random number of reported points; the logs and the database are what survives it.
 */

/** Where the stores live, for the workers and for the parent. */
export type Database =
  | { readonly kind: "sqlite"; readonly filename: string }
  | { readonly kind: "postgres"; readonly url: string; readonly schema: string }

/** A worker's configuration, its one command-line argument (JSON). */
export interface WorkerConfig {
  readonly workerId: string
  readonly database: Database
  /** Every model call, appended before the response is returned: `runId turn nonce`. */
  readonly callsLog: string
  /** Every side effect of the non-idempotent tool, appended when it happens: `key nonce`. */
  readonly effectsLog: string
  readonly leaseTtlMs: number
  readonly heartbeatMs: number
  /** How many runs a worker drives at once. */
  readonly concurrency: number
  /** How many model turns with a tool call a run has (then one that answers). */
  readonly iterations: number
  /** The turn whose tool call needs a person's approval first. */
  readonly approvalAt: number
}

/** Parent to worker. */
export type Command = { readonly t: "drive"; readonly runId: string } | { readonly t: "exit" }

/** The moments a worker reports; each is a place a kill may land just after. */
export type Point =
  | "created"
  | "takeover"
  | "resuming"
  | "before-model"
  | "after-model"
  | "committed"
  | "before-tool"
  | "after-tool"
  | "suspended"
  | "finished"

/** How a drive of a run ended in a worker. */
export type Outcome =
  | "finished" // this worker finished it
  | "already-finished" // it was finished when this worker looked
  | "suspended" // waiting for an approval
  | "in-doubt" // a tool call's outcome is unknown: waiting for a person
  | "busy" // another live worker holds it
  | "lost-lease" // taken over while this worker drove it
  | "error"

/** Worker to parent. */
export type Event =
  | { readonly t: "ready"; readonly pid: number }
  | { readonly t: "point"; readonly runId: string; readonly point: Point; readonly iteration: number }
  | { readonly t: "outcome"; readonly runId: string; readonly outcome: Outcome; readonly detail?: string }

export const encode = (message: Command | Event): string => `${JSON.stringify(message)}\n`

/** Splits a stream's chunks into lines, handing each complete one to `line`. */
export const lines = (line: (text: string) => void) => {
  let buffer = ""
  return (chunk: Buffer | string) => {
    buffer += chunk.toString()
    let newline = buffer.indexOf("\n")
    while (newline >= 0) {
      const text = buffer.slice(0, newline)
      buffer = buffer.slice(newline + 1)
      if (text.trim() !== "") line(text)
      newline = buffer.indexOf("\n")
    }
  }
}

/** The key of a turn's tool call in the side-effect log. */
export const toolKey = (runId: string, iteration: number) => `${runId}/t${iteration}/c0`
