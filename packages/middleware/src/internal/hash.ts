/** The per-arguments-object cache of stable hashes. @internal */
import { CanonicalJson } from "@agentkit/core"

const argumentHashes = new WeakMap<object, string>()

/**
 * The stable hash of a tool call's arguments, computed once per arguments object (the audit and
 * idempotency middleware both need it).
 */
export const argumentsHash = (args: object): string => {
  let hash = argumentHashes.get(args)
  if (hash === undefined) {
    hash = CanonicalJson.hash(args)
    argumentHashes.set(args, hash)
  }
  return hash
}
