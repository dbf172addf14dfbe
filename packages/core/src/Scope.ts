/**
 * The tenant scope of a run: which organisation, domain, user and session it belongs to.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * A frozen tenant key. Every part is optional; `key` renders an absent part as `None`, exactly as
 * the Python agentkit's keys and quota messages read.
 *
 * @example
 * ```ts
 * import { Scope } from "@agentkit/core"
 *
 * const scope = Scope.make({ orgId: 7, domainId: 42 })
 * scope.key // "org7:dom42"
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
  /** The partition key used by quotas, idempotency and audit: `org<orgId>:dom<domainId>`. */
  get key(): string {
    return `org${this.orgId ?? "None"}:dom${this.domainId ?? "None"}`
  }
}

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
