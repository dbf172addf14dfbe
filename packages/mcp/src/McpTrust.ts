/**
 * What an MCP server's tools are allowed to be. A server's annotations are hints written by the
 * server, and a malicious server can claim its destructive tool is read-only, so by default every
 * tool of a server is `sideEffecting`, `requiresApproval` and has caps
 * `[untrusted_content, egress]`, whatever it says about itself. The user loosens that by
 * declaring, per server or per tool, what to trust; the annotations can then only tighten:
 *
 * 1. start from the default (or, with `trustAnnotations: true`, from the flags the annotations
 *    describe, absent hints taking the spec's defaults);
 * 2. the declaration's own fields replace those (the tool's declaration over the server's, field
 *    by field);
 * 3. an explicit hint tightens: `readOnlyHint: false` makes the tool side-effecting,
 *    `destructiveHint: true` (not read-only) adds approval, `idempotentHint: false` removes
 *    idempotency, `openWorldHint: true` adds `untrusted_content` and `egress`.
 *
 * A server whose descriptions are not declared trusted has them treated as untrusted text: cut to
 * `maxDescriptionLength` and marked, and advertising them to the model counts as the run touching
 * untrusted content (`toolset.untrustedDescriptions`).
 *
 * @since 0.1.0
 */
import { capabilities as knownCapabilities, ConfigurationError } from "@agentkit/core"
import type { Capability } from "@agentkit/core"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"

/**
 * The server's own hints about a tool (MCP `ToolAnnotations`).
 *
 * @example
 * ```ts
 * import type { McpTrust } from "@agentkit/mcp"
 *
 * const hints: McpTrust.Annotations = { readOnlyHint: true, openWorldHint: false }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Annotations {
  readonly readOnlyHint?: boolean | undefined
  readonly destructiveHint?: boolean | undefined
  readonly idempotentHint?: boolean | undefined
  readonly openWorldHint?: boolean | undefined
}

/**
 * What the user declares about a server or one of its tools. Every field is optional; an absent
 * field keeps the conservative default.
 *
 * @example
 * ```ts
 * import type { McpTrust } from "@agentkit/mcp"
 *
 * const readOnlyLookup: McpTrust.Declaration = { sideEffecting: false, requiresApproval: false, idempotent: true, caps: ["untrusted_content"] }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Declaration {
  readonly sideEffecting?: boolean | undefined
  readonly idempotent?: boolean | undefined
  readonly requiresApproval?: boolean | undefined
  readonly caps?: ReadonlyArray<Capability> | undefined
  /** Start from the flags the server's annotations describe (you trust the server's hints). */
  readonly trustAnnotations?: boolean | undefined
  /** The server's descriptions are trusted text: not cut, not counted as untrusted content. */
  readonly trustDescriptions?: boolean | undefined
  /** A string argument holding a URL, checked by the `egress` middleware before the call. */
  readonly urlArg?: string | undefined
  /** The call's time limit (default 60 seconds): the tool's timeout and the MCP request's. */
  readonly timeout?: Duration.DurationInput | undefined
}

/**
 * The declarations for one server: `server` applies to every tool, `tools` (by the server's own
 * tool name) to one; a tool's fields win over the server's.
 *
 * @example
 * ```ts
 * import type { McpTrust } from "@agentkit/mcp"
 *
 * const trust: McpTrust.Trust = {
 *   server: { trustAnnotations: true, trustDescriptions: true },
 *   tools: { "get-sum": { requiresApproval: false, caps: [] } }
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Trust {
  readonly server?: Declaration | undefined
  readonly tools?: Readonly<Record<string, Declaration>> | undefined
}

/**
 * The flags an MCP tool gets.
 *
 * @example
 * ```ts
 * import { McpTrust } from "@agentkit/mcp"
 *
 * const flags: McpTrust.Flags = McpTrust.flags(undefined, { readOnlyHint: true })
 * flags.sideEffecting // true: an undeclared server gets no credit for its hints
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Flags {
  readonly sideEffecting: boolean
  readonly idempotent: boolean
  readonly requiresApproval: boolean
  readonly caps: ReadonlyArray<Capability>
  readonly urlArg: string | undefined
  readonly trustDescriptions: boolean
  readonly timeout: Duration.Duration
}

/**
 * The default time limit of an MCP call: 60 seconds (the MCP SDK's own request default).
 *
 * @example
 * ```ts
 * import { McpTrust } from "@agentkit/mcp"
 * import { Duration } from "effect"
 *
 * Duration.toSeconds(McpTrust.defaultTimeout) // 60
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultTimeout: Duration.Duration = Duration.seconds(60)

const UNTRUSTED: ReadonlyArray<Capability> = ["untrusted_content", "egress"]

const FIELDS = new Set([
  "sideEffecting",
  "idempotent",
  "requiresApproval",
  "caps",
  "trustAnnotations",
  "trustDescriptions",
  "urlArg",
  "timeout"
])

/**
 * Checks a declaration's fields; throws `ConfigurationError` naming the field (`trust.server.caps`,
 * `trust.tools.<tool>.timeout`, ...) and what is accepted.
 *
 * @example
 * ```ts
 * import { McpTrust } from "@agentkit/mcp"
 *
 * McpTrust.check({ server: { sideEffecting: false } }, "docs") // ok
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const check = (trust: Trust | undefined, server: string): void => {
  if (trust === undefined) return
  const refuse = (field: string, message: string): never => {
    throw new ConfigurationError({ field, message: `MCP server '${server}': ${message}` })
  }
  if (typeof trust !== "object" || trust === null || Array.isArray(trust)) {
    refuse("trust", "trust must be an object with 'server' and 'tools'")
  }
  for (const key of Object.keys(trust)) {
    if (key !== "server" && key !== "tools") refuse("trust", `unknown trust key '${key}'; accepted: server, tools`)
  }
  const one = (field: string, where: string, declaration: unknown) => {
    if (declaration === undefined) return
    if (typeof declaration !== "object" || declaration === null || Array.isArray(declaration)) {
      refuse(field, `trust for ${where} must be an object`)
    }
    for (const [key, value] of Object.entries(declaration as object)) {
      const at = `${field}.${key}`
      if (!FIELDS.has(key)) {
        refuse(at, `unknown trust field '${key}' for ${where}; accepted: ${Array.from(FIELDS).join(", ")}`)
      }
      if (value === undefined) continue
      if (
        ["sideEffecting", "idempotent", "requiresApproval", "trustAnnotations", "trustDescriptions"].includes(key) &&
        typeof value !== "boolean"
      ) {
        refuse(at, `trust field '${key}' for ${where} must be true or false`)
      }
      if (key === "caps" && (!Array.isArray(value) || value.some((cap) => !knownCapabilities.includes(cap)))) {
        refuse(at, `trust field 'caps' for ${where} must list 'private_data', 'untrusted_content', 'egress'`)
      }
      if (key === "urlArg" && typeof value !== "string") {
        refuse(at, `trust field 'urlArg' for ${where} must be an argument name`)
      }
      if (key === "timeout") {
        const decoded = Duration.decodeUnknown(value)
        if (Option.isNone(decoded) || Duration.toMillis(decoded.value) <= 0) {
          refuse(at, `trust field 'timeout' for ${where} must be a positive Duration`)
        }
      }
    }
  }
  one("trust.server", "the server", trust.server)
  const tools: unknown = trust.tools
  if (tools === undefined) return
  if (typeof tools !== "object" || tools === null || Array.isArray(tools)) {
    refuse("trust.tools", "trust.tools must map tool names to declarations")
  }
  for (const [tool, declaration] of Object.entries(tools as object)) {
    one(`trust.tools.${tool}`, `tool '${tool}'`, declaration)
  }
}

/**
 * The flags of one tool: the declaration (the server's merged with the tool's) over the
 * conservative default, tightened by the explicit hints.
 *
 * @example
 * ```ts
 * import { McpTrust } from "@agentkit/mcp"
 *
 * // an undeclared server: everything is guarded, whatever the hints say
 * McpTrust.flags(undefined, { readOnlyHint: true }).requiresApproval // true
 * // a declared read-only tool stays read-only until the server itself says otherwise
 * McpTrust.flags({ sideEffecting: false, requiresApproval: false }, { readOnlyHint: false }).sideEffecting // true
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const flags = (declared: Declaration | undefined, annotations: Annotations | undefined): Flags => {
  const a = annotations ?? {}
  const d = declared ?? {}
  let sideEffecting = true
  let idempotent = false
  let requiresApproval = true
  let caps: ReadonlyArray<Capability> = UNTRUSTED
  if (d.trustAnnotations === true) {
    const readOnly = a.readOnlyHint === true
    sideEffecting = !readOnly
    idempotent = readOnly || a.idempotentHint === true
    requiresApproval = !readOnly && a.destructiveHint !== false
    caps = a.openWorldHint === false ? [] : UNTRUSTED
  }
  if (d.sideEffecting !== undefined) sideEffecting = d.sideEffecting
  if (d.idempotent !== undefined) idempotent = d.idempotent
  if (d.requiresApproval !== undefined) requiresApproval = d.requiresApproval
  if (d.caps !== undefined) caps = d.caps
  // the hints tighten, never loosen
  if (a.readOnlyHint === false) sideEffecting = true
  if (a.destructiveHint === true && a.readOnlyHint !== true) {
    sideEffecting = true
    requiresApproval = true
  }
  if (a.idempotentHint === false && sideEffecting) idempotent = false
  if (a.openWorldHint === true) caps = Array.from(new Set([...caps, ...UNTRUSTED]))
  return {
    sideEffecting,
    idempotent,
    requiresApproval,
    caps: Array.from(new Set(caps)).sort(),
    urlArg: d.urlArg,
    trustDescriptions: d.trustDescriptions === true,
    timeout: d.timeout === undefined ? defaultTimeout : Duration.decode(d.timeout)
  }
}

/**
 * The declaration that applies to one tool: the server's, with the tool's fields over it.
 *
 * @example
 * ```ts
 * import { McpTrust } from "@agentkit/mcp"
 *
 * McpTrust.declarationFor({ server: { trustAnnotations: true }, tools: { echo: { caps: [] } } }, "echo")
 * // { trustAnnotations: true, caps: [] }
 * ```
 *
 * @since 0.1.0
 * @category getters
 */
export const declarationFor = (trust: Trust | undefined, tool: string): Declaration | undefined => {
  const server = trust?.server
  const own = trust?.tools !== undefined && Object.hasOwn(trust.tools, tool) ? trust.tools[tool] : undefined
  if (own === undefined) return server
  if (server === undefined) return own
  const merged: Record<string, unknown> = { ...server }
  for (const [key, value] of Object.entries(own)) if (value !== undefined) merged[key] = value
  return merged as Declaration
}
