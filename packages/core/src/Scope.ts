/**
 * The tenant scope of a run: which organisation, domain, user and session it belongs to.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * A frozen tenant key. Every part is optional. `sessionId` is the fourth part of the tenant (a
 * caller's own partition, such as a login session, as the Python agentkit's keys have it): stores
 * and meters partition by it, and it is never a conversation. A conversation across runs is the
 * `RunContext`'s `threadId`, and a `Session` is keyed by the tenant and that `threadId`. Two keys:
 *
 * - `key` is the display text, `org<orgId>:dom<domainId>` with `None` for an absent part, exactly
 *   as the Python agentkit's keys and quota messages read. It is not unique (`{ orgId: "None" }`
 *   and `{}` both read `orgNone:domNone`), so nothing is ever stored under it.
 * - `storeKey` is what stores and meters partition by (quotas, memo and idempotency keys, audit
 *   records, run records): the JSON text of `[orgId, domainId, userId, sessionId]`, an absent part
 *   `null`, a number as a JSON number and a string as a JSON string, so `1` and `"1"` are different
 *   tenants and no two scopes share a key (a non-finite number, which JSON has no form for, is
 *   `{"$number":"NaN"}`; `0` and `-0` are the same tenant). A store may query its prefix
 *   (`[7,` is every tenant of org 7).
 *
 * @example
 * ```ts
 * import { Scope } from "@agentkit/core"
 *
 * const scope = Scope.make({ orgId: 7, domainId: 42 })
 * scope.key // "org7:dom42"
 * scope.storeKey // '[7,42,null,null]'
 * Scope.make({ orgId: "7" }).storeKey // '["7",null,null,null]'
 * Scope.empty.key // "orgNone:domNone"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export class Scope extends Schema.Class<Scope>("Scope")({
  orgId: Schema.optional(Schema.Union(Schema.Number, Schema.String)),
  domainId: Schema.optional(Schema.Union(Schema.Number, Schema.String)),
  userId: Schema.optional(Schema.String),
  sessionId: Schema.optional(Schema.String)
}) {
  #storeKey: string | undefined

  /** The display text, for messages: `org<orgId>:dom<domainId>` (`None` for an absent part). Not unique. */
  get key(): string {
    return `org${this.orgId ?? "None"}:dom${this.domainId ?? "None"}`
  }

  /** The collision-free partition key every store and meter uses: `[orgId,domainId,userId,sessionId]` as JSON. */
  get storeKey(): string {
    return (this.#storeKey ??= JSON.stringify([
      part(this.orgId),
      part(this.domainId),
      part(this.userId),
      part(this.sessionId)
    ]))
  }
}

/** One part of a store key: JSON keeps a number and a string apart; `null` is an absent part. */
const part = (value: string | number | undefined): string | number | null | { readonly $number: string } =>
  value === undefined ? null : typeof value === "number" && !Number.isFinite(value) ? { $number: String(value) } : value

/**
 * The fields a scope is made from.
 *
 * @example
 * ```ts
 * import { Scope } from "@agentkit/core"
 *
 * const fields: Scope.Fields = { orgId: 7, domainId: 42, userId: "u-9" }
 * Scope.make(fields).key // "org7:dom42"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Fields = ConstructorParameters<typeof Scope>[0]

/**
 * Makes a scope from its parts.
 *
 * @example
 * ```ts
 * import { Scope } from "@agentkit/core"
 *
 * Scope.make({ orgId: 1, userId: "u-9" }).key // "org1:domNone"
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (fields: Fields = {}): Scope => new Scope(fields)

/**
 * The scope with no parts: key `orgNone:domNone`.
 *
 * @example
 * ```ts
 * import { Scope } from "@agentkit/core"
 *
 * Scope.empty.key // "orgNone:domNone"
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const empty: Scope = new Scope({})

/** A key's or a pattern's parts, decoded from its JSON text; `undefined` when it is neither. */
const partsOf = (text: string, exact: boolean): ReadonlyArray<string> | undefined => {
  if (!text.startsWith("[")) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return undefined
  }
  if (!Array.isArray(parsed) || parsed.length === 0 || parsed.length > 4) return undefined
  if (exact && parsed.length !== 4) return undefined
  const out: Array<string> = []
  for (const value of parsed as ReadonlyArray<unknown>) {
    const ok = value === null || typeof value === "string" || (typeof value === "number" && Number.isFinite(value)) ||
      (typeof value === "object" && value !== null && !Array.isArray(value) &&
        Object.keys(value).length === 1 && typeof (value as { $number?: unknown }).$number === "string")
    if (!ok) return undefined
    // each part compared by its canonical JSON text: 1 and "1" stay apart, 0 and -0 are one
    out.push(JSON.stringify(value === 0 ? 0 : value))
  }
  return out
}

/**
 * Whether a tenant grant covers a tenant key (a scope's `storeKey`) or a narrower grant. A grant
 * is one of:
 *
 * - `"*"`: every tenant (a super-operator).
 * - a pattern: the JSON text of the first one to four parts of a store key (`[orgId, domainId,
 *   userId, sessionId]`), which covers every key that begins with those parts. `'["acme"]'` is
 *   organisation `acme` with all its domains, users and sessions;
 *   `'["acme",null,"u1"]'` is user `u1` of `acme` (no domain) with all their sessions; a full
 *   store key covers exactly that tenant. Parts compare as JSON values, whole: `"acme"` does not
 *   cover `"acme2"`, `7` does not cover `"7"`, and a part covers only its own position.
 * - any other text: exactly that tenant key.
 *
 * A pattern that is not one (`[]`, more than four parts, a part that is not a string, a finite
 * number or null) covers nothing: access fails closed. Make patterns with `pattern`.
 *
 * @example
 * ```ts
 * import { Scope } from "@agentkit/core"
 *
 * const run = Scope.make({ orgId: "acme", userId: "u1", sessionId: "s1" }).storeKey
 * Scope.covers(Scope.pattern({ orgId: "acme" }), run) // true
 * Scope.covers(Scope.pattern({ orgId: "acme2" }), run) // false
 * Scope.covers(Scope.pattern({ orgId: "globex" }), run) // false
 * Scope.covers("*", run) // true
 * Scope.covers(run, run) // true
 * ```
 *
 * @since 0.1.0
 * @category predicates
 */
export const covers = (grant: string, key: string): boolean => {
  if (grant === "*") return true
  if (grant === key) return true
  if (!grant.startsWith("[")) return false
  const prefix = partsOf(grant, false)
  const parts = partsOf(key, false)
  if (prefix === undefined || parts === undefined || prefix.length > parts.length) return false
  return prefix.every((part, i) => part === parts[i])
}

/**
 * Whether any of a set of grants (`"*"`, patterns, exact keys) covers a tenant key. See `covers`.
 *
 * @example
 * ```ts
 * import { Scope } from "@agentkit/core"
 *
 * Scope.coveredBy(['["acme"]', '["globex",null,"u7"]'], Scope.make({ orgId: "globex", userId: "u7" }).storeKey) // true
 * ```
 *
 * @since 0.1.0
 * @category predicates
 */
export const coveredBy = (grants: ReadonlyArray<string>, key: string): boolean =>
  grants.some((grant) => covers(grant, key))

/**
 * Whether a grant names exactly one tenant key (a full store key or opaque text), so a store can
 * look it up by equality; `"*"` and shorter patterns are not exact.
 *
 * @example
 * ```ts
 * import { Scope } from "@agentkit/core"
 *
 * Scope.isExact(Scope.make({ orgId: "acme" }).storeKey) // true
 * Scope.isExact(Scope.pattern({ orgId: "acme" })) // false
 * ```
 *
 * @since 0.1.0
 * @category predicates
 */
export const isExact = (grant: string): boolean =>
  grant !== "*" && (!grant.startsWith("[") || partsOf(grant, true) !== undefined)

/**
 * The pattern covering a scope's parts up to its last present one: `{ orgId: "acme" }` is
 * `'["acme"]'` (the organisation and everything under it), `{ orgId: "acme", userId: "u1" }` is
 * `'["acme",null,"u1"]'` (that user of `acme`, no domain, any session). An empty scope is `"*"`.
 *
 * @example
 * ```ts
 * import { Scope } from "@agentkit/core"
 *
 * Scope.pattern({ orgId: "acme" }) // '["acme"]'
 * Scope.pattern({ orgId: 7, userId: "u1" }) // '[7,null,"u1"]'
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const pattern = (fields: Fields): string => {
  const all = JSON.parse(make(fields).storeKey) as Array<unknown>
  let length = all.length
  while (length > 0 && all[length - 1] === null) length--
  return length === 0 ? "*" : JSON.stringify(all.slice(0, length))
}

/**
 * A tenant key's (or a pattern's) parts as a scope's fields, absent parts left out; `undefined`
 * for text that is neither (a tenant key an app chose itself).
 *
 * @example
 * ```ts
 * import { Scope } from "@agentkit/core"
 *
 * Scope.fieldsOf('["acme",null,"u1",null]') // { orgId: "acme", userId: "u1" }
 * Scope.fieldsOf("acme") // undefined
 * ```
 *
 * @since 0.1.0
 * @category getters
 */
export const fieldsOf = (key: string): Fields | undefined => {
  const parts = partsOf(key, false)
  if (parts === undefined) return undefined
  const values = parts.map((text) => JSON.parse(text) as unknown)
  const value = (i: number): string | number | undefined => {
    const v = values[i]
    if (v === null || v === undefined) return undefined
    if (typeof v === "string" || typeof v === "number") return v
    return Number((v as { $number: string }).$number)
  }
  const orgId = value(0)
  const domainId = value(1)
  const userId = value(2)
  const sessionId = value(3)
  return {
    ...(orgId === undefined ? {} : { orgId }),
    ...(domainId === undefined ? {} : { domainId }),
    ...(userId === undefined ? {} : { userId: String(userId) }),
    ...(sessionId === undefined ? {} : { sessionId: String(sessionId) })
  }
}

/**
 * A tenant key (or a pattern) as people read it: its present parts, `org acme · user u1`; a
 * pattern ends `· …` (everything under it); `(no scope)` for the empty key, `all tenants` for
 * `"*"`; any other text as it is.
 *
 * @example
 * ```ts
 * import { Scope } from "@agentkit/core"
 *
 * Scope.label('["acme",null,"u1",null]') // "org acme · user u1"
 * Scope.label('["acme"]') // "org acme · …"
 * ```
 *
 * @since 0.1.0
 * @category getters
 */
export const label = (key: string): string => {
  if (key === "*") return "all tenants"
  const parts = partsOf(key, false)
  const fields = fieldsOf(key)
  if (parts === undefined || fields === undefined) return key
  const named = [
    fields.orgId === undefined ? undefined : `org ${fields.orgId}`,
    fields.domainId === undefined ? undefined : `domain ${fields.domainId}`,
    fields.userId === undefined ? undefined : `user ${fields.userId}`,
    fields.sessionId === undefined ? undefined : `session ${fields.sessionId}`
  ].filter((text) => text !== undefined)
  if (parts.length < 4) named.push("…")
  return named.length === 0 ? "(no scope)" : named.join(" · ")
}
