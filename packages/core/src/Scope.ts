/**
 * The tenant scope of a run: which organisation, domain, user and session it belongs to.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * A frozen tenant key. Every part is optional. Two keys:
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
