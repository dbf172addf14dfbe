/**
 * The command-line flags of `pnpm demo:approvals`:
 * - (none): run the conversation; a terminal prompts, without one the run suspends to a SQLite
 *   file and the demo prints the command that decides it;
 * - `--approve <run id>` / `--reject <run id> [--reason <text>]`: decide a suspended run from a
 *   new process, which then resumes it to the end;
 * - `--db <file>`: the SQLite file (default: `approvals.db` in the system's temporary directory);
 * - `--console`: decide in the operator console instead of on the terminal.
 * A literal `--` (what `pnpm demo:approvals -- --approve …` may pass on) is ignored; anything else
 * is refused with the usage line.
 */
import { tmpdir } from "node:os"
import { join } from "node:path"

/** What the demo was asked to do. */
export interface Flags {
  /** Serve the operator console on 127.0.0.1 and decide there. */
  readonly console: boolean
  /** Decide a suspended run (from a new process) and resume it. */
  readonly decide?: { readonly verdict: "approve" | "reject"; readonly runId: string; readonly reason?: string | undefined } | undefined
  /** The SQLite file the runs are suspended in. */
  readonly db: string
}

/** The usage line. */
export const usage =
  "usage: pnpm demo:approvals [-- --console] [-- --approve <run id> | --reject <run id> [--reason <text>]] [--db <file>]"

/** Where the runs wait by default. */
export const defaultDb = join(tmpdir(), "agentkit-support-desk", "approvals.db")

/** Reads the flags (`process.argv.slice(2)`); an unknown flag or a missing value is an error naming it. */
export const parseFlags = (args: ReadonlyArray<string>): Flags | { readonly error: string } => {
  let console = false
  let db = defaultDb
  let decide: { verdict: "approve" | "reject"; runId: string } | undefined
  let reason: string | undefined
  const rest = args.filter((arg) => arg !== "--")
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!
    const value = () => {
      const next = rest[i + 1]
      if (next === undefined || next.startsWith("--")) return undefined
      i++
      return next
    }
    if (arg === "--console") console = true
    else if (arg === "--approve" || arg === "--reject") {
      const runId = value()
      if (runId === undefined) return { error: `${arg} needs a run id; ${usage}` }
      if (decide !== undefined) return { error: `give one of --approve and --reject, once; ${usage}` }
      decide = { verdict: arg === "--approve" ? "approve" : "reject", runId }
    } else if (arg === "--reason") {
      reason = value()
      if (reason === undefined) return { error: `--reason needs a text; ${usage}` }
    } else if (arg === "--db") {
      const file = value()
      if (file === undefined) return { error: `--db needs a file; ${usage}` }
      db = file
    } else return { error: `unknown argument ${JSON.stringify(arg)}; ${usage}` }
  }
  if (reason !== undefined && decide?.verdict !== "reject") return { error: `--reason goes with --reject; ${usage}` }
  if (console && decide !== undefined) return { error: `--console decides in the browser: give it without --approve or --reject; ${usage}` }
  return decide === undefined ? { console, db } : { console, db, decide: reason === undefined ? decide : { ...decide, reason } }
}

/**
 * What `--console` says until the console is wired to the durable demo (issue 18).
 */
export const consolePending =
  "--console needs the durable approvals demo (runs suspended in a store, resumed by a decision): " +
  "it arrives with the SQL stores. Until then this demo decides on the terminal; " +
  "see packages/console/README.md to mount the console in your own server."
