/**
 * The tenant key the stores partition by. One place: it becomes `scope.storeKey` (the injective
 * encoding of all four scope fields) when that lands; until then it is the scope's display key.
 * @internal
 */
import type { Scope } from "../Scope.js"

/** The key stores partition a run's records by. @internal */
export const tenantKey = (scope: Scope): string => scope.key
