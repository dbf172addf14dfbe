/**
 * Who an operator is: the authenticator port, principals, roles and tenant scopes. The console
 * asks the `Authenticator` service to turn a presented token (an `Authorization: Bearer` header
 * from the CLI, or the HttpOnly session cookie the login form sets) into a `Principal`, on every
 * request. The default authenticator reads tokens from config. Without an authenticator the
 * console serves loopback peers only, as the local principal.
 *
 * Roles: a `viewer` reads; an `approver` also decides, resolves and cancels. `tenants` are the
 * grants of the tenants the principal may see, or `"*"` for all: a scope's `storeKey` (that
 * tenant exactly) or a scope pattern, the JSON of the first parts of a store key
 * (`Scope.pattern({ orgId: "acme" })` is `'["acme"]'`: organisation `acme` and every domain, user
 * and session under it; see core `Scope.covers`). The console enforces them server-side on every
 * read, decision and live event. Whatever a principal's grant, it may not approve a call of a run
 * it requested (the run's scope names it as the user).
 *
 * @since 0.1.0
 */
import { Scope } from "@agentkit/core"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { createHash, timingSafeEqual } from "node:crypto"
import { Unauthenticated } from "./Errors.js"

/**
 * The roles: `viewer` (read) and `approver` (read and decide).
 *
 * @example
 * ```ts
 * import { OperatorAuth } from "@agentkit/console"
 * import { Schema } from "effect"
 *
 * Schema.is(OperatorAuth.Role)("approver") // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Role = Schema.Literal("viewer", "approver")

/**
 * A role.
 *
 * @example
 * ```ts
 * import type { OperatorAuth } from "@agentkit/console"
 *
 * const mayDecide = (role: OperatorAuth.Role) => role === "approver"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Role = Schema.Schema.Type<typeof Role>

/**
 * An authenticated operator: an id (recorded as `by` on decisions and audit records), a role and
 * the tenants it may see.
 *
 * @example
 * ```ts
 * import { OperatorAuth } from "@agentkit/console"
 * import { Schema } from "effect"
 *
 * Schema.is(OperatorAuth.Principal)({ id: "alice", role: "approver", tenants: ["acme"] }) // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Principal = Schema.Struct({
  id: Schema.String,
  role: Role,
  tenants: Schema.Union(Schema.Literal("*"), Schema.Array(Schema.String))
})

/**
 * An authenticated operator.
 *
 * @example
 * ```ts
 * import type { OperatorAuth } from "@agentkit/console"
 *
 * const alice: OperatorAuth.Principal = { id: "alice", role: "approver", tenants: ["acme"] }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Principal extends Schema.Schema.Type<typeof Principal> {}

/**
 * The principal of a console without an authenticator: loopback peers only.
 *
 * @example
 * ```ts
 * import { OperatorAuth } from "@agentkit/console"
 *
 * OperatorAuth.local.id // "local"
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const local: Principal = { id: "local", role: "approver", tenants: "*" }

/**
 * Whether a principal may see a tenant's runs: `"*"`, or one of its grants covers the tenant key
 * (see core `Scope.covers`).
 *
 * @example
 * ```ts
 * import { Scope } from "@agentkit/core"
 * import { OperatorAuth } from "@agentkit/console"
 *
 * const olga: OperatorAuth.Principal = { id: "olga", role: "approver", tenants: [Scope.pattern({ orgId: "acme" })] }
 * OperatorAuth.canSee(olga, Scope.make({ orgId: "acme", userId: "u1", sessionId: "s1" }).storeKey) // true
 * OperatorAuth.canSee(olga, Scope.make({ orgId: "acme2" }).storeKey) // false
 * OperatorAuth.canSee(olga, Scope.make({ orgId: "globex" }).storeKey) // false
 * ```
 *
 * @since 0.1.0
 * @category predicates
 */
export const canSee = (principal: Principal, tenant: string): boolean =>
  principal.tenants === "*" || Scope.coveredBy(principal.tenants, tenant)

/**
 * The authenticator port: a presented token to a principal.
 *
 * @example
 * ```ts
 * import { OperatorAuth, Unauthenticated } from "@agentkit/console"
 * import { Effect, Redacted } from "effect"
 *
 * const sso: OperatorAuth.Service = {
 *   authenticate: (token) =>
 *     Redacted.value(token).startsWith("sso:")
 *       ? Effect.succeed({ id: Redacted.value(token).slice(4), role: "viewer", tenants: ["acme"] })
 *       : Effect.fail(new Unauthenticated({ message: "not an SSO token" }))
 * }
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export interface Service {
  readonly authenticate: (token: Redacted.Redacted<string>) => Effect.Effect<Principal, Unauthenticated>
}

/**
 * The authenticator service. Optional: without one the console serves loopback peers only.
 *
 * @example
 * ```ts
 * import { OperatorAuth } from "@agentkit/console"
 *
 * const AuthLive = OperatorAuth.Authenticator.tokens([{ token: "s3cret-approver-token", principal: { id: "alice", role: "approver", tenants: ["acme"] } }])
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class Authenticator extends Context.Tag("@agentkit/console/Authenticator")<Authenticator, Service>() {
  /** A fixed table of tokens. */
  static tokens(entries: ReadonlyArray<TokenEntry>): Layer.Layer<Authenticator> {
    return Layer.succeed(Authenticator, tokens(entries))
  }
  /** One token from config (`AGENTKIT_CONSOLE_TOKEN` and friends; see `fromConfig`). */
  static readonly fromConfig: Layer.Layer<Authenticator, ConfigError.ConfigError> = Layer.effect(
    Authenticator,
    Effect.suspend(() => fromConfig)
  )
}

/**
 * One token and the principal it stands for.
 *
 * @example
 * ```ts
 * import type { OperatorAuth } from "@agentkit/console"
 * import { Redacted } from "effect"
 *
 * const entry: OperatorAuth.TokenEntry = { token: Redacted.make("s3cret-viewer-token"), principal: { id: "bob", role: "viewer", tenants: "*" } }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface TokenEntry {
  readonly token: string | Redacted.Redacted<string>
  readonly principal: Principal
}

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest()

/**
 * An authenticator over a fixed table of tokens, compared in constant time. A token shorter than
 * 16 characters is refused when the table is made (it throws: a definition error).
 *
 * @example
 * ```ts
 * import { OperatorAuth } from "@agentkit/console"
 *
 * const auth = OperatorAuth.tokens([{ token: "s3cret-approver-token", principal: { id: "alice", role: "approver", tenants: ["acme"] } }])
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const tokens = (entries: ReadonlyArray<TokenEntry>): Service => {
  const table = entries.map((entry) => {
    const value = typeof entry.token === "string" ? entry.token : Redacted.value(entry.token)
    if (value.length < 16) {
      throw new Error(`OperatorAuth.tokens: the token of '${entry.principal.id}' must be at least 16 characters`)
    }
    return { hash: digest(value), principal: entry.principal }
  })
  return {
    authenticate: (token) =>
      Effect.suspend(() => {
        const presented = digest(Redacted.value(token))
        let found: Principal | undefined
        for (const entry of table) if (timingSafeEqual(entry.hash, presented)) found = entry.principal
        return found === undefined
          ? Effect.fail(new Unauthenticated({ message: "the token is not one this console accepts" }))
          : Effect.succeed(found)
      })
  }
}

/** Comma-separated grants, a comma inside a JSON key or pattern (brackets, strings) not splitting it. */
const splitGrants = (text: string): Array<string> => {
  const grants: Array<string> = []
  let depth = 0
  let quoted = false
  let start = 0
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quoted) {
      if (c === "\\") i++
      else if (c === "\"") quoted = false
    } else if (c === "\"" && depth > 0) quoted = true
    else if (c === "[") depth++
    else if (c === "]") depth = Math.max(0, depth - 1)
    else if (c === "," && depth === 0) {
      grants.push(text.slice(start, i))
      start = i + 1
    }
  }
  grants.push(text.slice(start))
  return grants.map((t) => t.trim()).filter((t) => t !== "")
}

/**
 * The default authenticator: one token from config. `AGENTKIT_CONSOLE_TOKEN` (required, at least
 * 16 characters), `AGENTKIT_CONSOLE_OPERATOR` (the id, default `operator`),
 * `AGENTKIT_CONSOLE_ROLE` (default `approver`), `AGENTKIT_CONSOLE_TENANTS` (comma-separated
 * grants, default `*`; a comma inside a store key or pattern does not split it:
 * `["acme"],["globex",null,"u1"]` is two grants).
 *
 * @example
 * ```ts
 * import { OperatorAuth } from "@agentkit/console"
 * import { Effect } from "effect"
 *
 * const auth = Effect.runSync(OperatorAuth.fromConfig)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromConfig: Effect.Effect<Service, ConfigError.ConfigError> = Effect.gen(function*() {
  const token = yield* Config.redacted("AGENTKIT_CONSOLE_TOKEN").pipe(
    Config.validate({
      message: "AGENTKIT_CONSOLE_TOKEN must be at least 16 characters",
      validation: (t) => Redacted.value(t).length >= 16
    })
  )
  const id = yield* Config.string("AGENTKIT_CONSOLE_OPERATOR").pipe(Config.withDefault("operator"))
  const role = yield* Config.literal("viewer", "approver")("AGENTKIT_CONSOLE_ROLE").pipe(
    Config.withDefault("approver" as const)
  )
  const tenants = yield* Config.string("AGENTKIT_CONSOLE_TENANTS").pipe(Config.withDefault("*"))
  const scope = tenants.trim() === "*" ? ("*" as const) : splitGrants(tenants)
  return tokens([{ token, principal: { id, role, tenants: scope } }])
})
