/** What `errorMessage` (and the model) reads for an error value that cannot be read. */
export const UNREADABLE_ERROR = "(an error value that cannot be read)"

/** A name as the model sent it, cut to 64 characters (a tool name is at most 64). */
export const shownName = (name: string): string => (name.length <= 64 ? name : `${name.slice(0, 64)}…`)

/** The available tools as a list in a text: `a, b`, or `(none)`. */
export const availableText = (available: ReadonlyArray<string>): string =>
  available.length > 0 ? available.join(", ") : "(none)"
