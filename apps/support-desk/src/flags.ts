/**
 * The command-line flags of `pnpm demo:approvals`:
 * - (none): run the conversation; a terminal prompts, without one the run suspends to a SQLite
 *   file and the demo prints the command that decides it;
 * - `--approve <run id>` / `--reject <run id> [--reason <text>]`: decide a suspended run from a
 *   new process, which then resumes it to the end;
 * - `--db <file>`: the SQLite file (default: `approvals.db` in the system's temporary directory);
 * - `--console [--port <n>]`: suspend the run and serve the operator console on 127.0.0.1 (a free
 *   port, or `--port`) over the same file; a decision recorded there resumes the run;
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
  readonly decide?: {
    readonly verdict: "approve" | "reject"
    readonly runId: string
    readonly reason?: string | undefined
  } | undefined
  /** The SQLite file the runs are suspended in. */
  readonly db: string
  /** The console's port (`--port`, with `--console` only); absent: a free one. */
  readonly port?: number | undefined
}

/** The usage line. */
export const usage =
  "usage: pnpm demo:approvals [-- --console [--port <n>]] [-- --approve <run id> | --reject <run id> [--reason <text>]] [--db <file>]"

/** Where the runs wait by default. */
export const defaultDb = join(tmpdir(), "agentkit-support-desk", "approvals.db")

/** Reads the flags (`process.argv.slice(2)`); an unknown flag or a missing value is an error naming it. */
export const parseFlags = (args: ReadonlyArray<string>): Flags | { readonly error: string } => {
  let console = false
  let db = defaultDb
  let decide: { verdict: "approve" | "reject"; runId: string } | undefined
  let reason: string | undefined
  let port: number | undefined
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
    } else if (arg === "--port") {
      const text = value()
      const n = text === undefined || !/^\d{1,5}$/.test(text) ? Number.NaN : Number(text)
      if (!(n >= 0 && n <= 65535)) return { error: `--port needs a port number from 0 to 65535; ${usage}` }
      port = n
    } else return { error: `unknown argument ${JSON.stringify(arg)}; ${usage}` }
  }
  if (reason !== undefined && decide?.verdict !== "reject") return { error: `--reason goes with --reject; ${usage}` }
  if (console && decide !== undefined) {
    return { error: `--console decides in the browser: give it without --approve or --reject; ${usage}` }
  }
  if (port !== undefined && !console) return { error: `--port goes with --console; ${usage}` }
  if (decide !== undefined) return { console, db, decide: reason === undefined ? decide : { ...decide, reason } }
  return port === undefined ? { console, db } : { console, db, port }
}
