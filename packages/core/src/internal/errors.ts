import { isAgentkitError } from "../AgentkitError.js"

/** A guard for the agentkit error with this `_tag`. */
export const isTagged = <T>(tag: string) => (u: unknown): u is T => isAgentkitError(u) && u._tag === tag
