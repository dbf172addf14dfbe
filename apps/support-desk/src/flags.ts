/**
 * The command-line flags of `pnpm demo:approvals`: `--console` (decide in the operator console
 * instead of on the terminal). A literal `--` (what `pnpm demo:approvals -- --console` may pass
 * on) is ignored; anything else is refused with the usage line.
 */

/** What the demo was asked to do. */
export interface Flags {
  /** Serve the operator console on 127.0.0.1 and decide there. */
  readonly console: boolean
}

/** The usage line. */
export const usage = "usage: pnpm demo:approvals [-- --console]"

/** Reads the flags (`process.argv.slice(2)`); an unknown flag is an error naming it. */
export const parseFlags = (args: ReadonlyArray<string>): Flags | { readonly error: string } => {
  let console = false
  for (const arg of args) {
    if (arg === "--") continue
    if (arg === "--console") console = true
    else return { error: `unknown argument ${JSON.stringify(arg)}; ${usage}` }
  }
  return { console }
}

/**
 * What `--console` says until the durable demo lands (issue 14): the console needs runs that
 * wait in a store, so that a decision made in the browser resumes them.
 */
export const consolePending =
  "--console needs the durable approvals demo (runs suspended in a store, resumed by a decision): " +
  "it arrives with the SQL stores. Until then this demo decides on the terminal; " +
  "see packages/console/README.md to mount the console in your own server."
