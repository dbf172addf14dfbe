/**
 * Egress control: a URL is checked before anything leaves the process.
 *
 * The checks run in this order, each with the Python agentkit's text:
 *
 * 1. the scheme (default `http`, `https`): `egress scheme 'ftp' not allowed (expected ('http', 'https'))`;
 * 2. a host: `egress URL has no host: '<url>'` (a URL that cannot be parsed reads the same);
 * 3. private, loopback, link-local, reserved, multicast and unspecified addresses in every literal
 *    form (`2130706433`, `0x7f000001`, `0177.0.0.1`, `127.1`, `[::1]`, `[::ffff:127.0.0.1]`,
 *    `fc00::/7`, `fe80::/10`, ...) and `localhost` / `*.localhost`:
 *    `egress to private/loopback/link-local host '<host>' blocked (SSRF)`;
 * 4. your own `check` (for example a DNS lookup);
 * 5. the allowlist, when one is given (`example.com` admits `api.example.com`, not
 *    `badexample.com`; an empty list denies everything): `egress to '<host>' not allowed (not in
 *    egress allowlist)`.
 *
 * Hosts are read the way the WHATWG URL parser (which `fetch` and Node's HTTP clients use) reads
 * them, so the check sees the address the client would connect to; the texts show the host as
 * written. No DNS lookup is made (a name that resolves to a private address needs `check`), and
 * redirects are the HTTP client's business: `EgressHttpClient` checks every hop.
 *
 * @since 0.1.0
 */
import { ConfigurationError, findCause, PythonText, ToolDenied } from "@agentkit/core"
import type { ToolCallRequest, ToolHandler, ToolMiddleware, ToolOutcome, ToolPipelineError } from "@agentkit/core"
import * as Effect from "effect/Effect"
import { EgressDenied } from "./Errors.js"
import { familyOf, isNonPublic, ranges } from "./internal/ip.js"

/**
 * The options of an egress policy.
 *
 * @example
 * ```ts
 * import type { Egress } from "@agentkit/middleware"
 *
 * const options: Egress.Options = {
 *   allow: ["example.com"],
 *   allowPrivate: ["10.0.0.0/8"],
 *   schemes: ["https"]
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * The allowlist: host names (an entry admits itself and its subdomains; `*.example.com` reads
   * as `example.com`) or IP literals (exact). Absent: no allowlist (the other checks still
   * apply). Empty: every URL is denied.
   */
  readonly allow?: ReadonlyArray<string> | undefined
  /** Accepted schemes, lower case. Default `["http", "https"]`. */
  readonly schemes?: ReadonlyArray<string> | undefined
  /** Refuse private, loopback, link-local and other non-public addresses. Default true. */
  readonly blockPrivate?: boolean | undefined
  /**
   * Exceptions to the private-address check: IP literals, CIDR ranges (`10.0.0.0/8`, `fd00::/8`)
   * or host names (exact), for services you run yourself. They still pass the allowlist.
   */
  readonly allowPrivate?: ReadonlyArray<string> | undefined
  /**
   * An extra check run after the built-in ones and before the allowlist, for example one that
   * resolves the host and refuses private addresses. It fails with the denial text.
   */
  readonly check?: ((url: URL) => Effect.Effect<void, string>) | undefined
}

const PolicyTypeId: unique symbol = Symbol.for("@agentkit/middleware/Egress/Policy")

/**
 * A compiled egress policy: build it once with `policy(options)` and share it between the
 * `egress` middleware and `EgressHttpClient`.
 *
 * @example
 * ```ts
 * import { Egress } from "@agentkit/middleware"
 *
 * const policy: Egress.Policy = Egress.policy({ allow: ["example.com"] })
 * // share it: Egress.egress(policy) and EgressHttpClient.layer(policy)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Policy {
  readonly [PolicyTypeId]: typeof PolicyTypeId
  /** The options it was built from. */
  readonly options: Options
  /** Checks a URL: succeeds with the parsed URL, or fails with the denial. */
  readonly check: (url: unknown) => Effect.Effect<URL, EgressDenied>
}

const SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):/
// the WHATWG parser drops leading C0 controls and spaces
// eslint-disable-next-line no-control-regex -- C0 controls are stripped on purpose, as WHATWG does
const LEADING = /^[\u0000-\u0020]+/

const stripHost = (host: string): string => {
  let h = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host
  while (h.endsWith(".")) h = h.slice(0, -1)
  return h
}

/** The host as written in the URL (lower case), for the denial texts. */
const writtenHost = (text: string, fallback: string): string => {
  const start = text.indexOf("//")
  if (start === -1) return fallback
  let rest = text.slice(start + 2)
  const end = rest.search(/[/?#\\]/)
  if (end !== -1) rest = rest.slice(0, end)
  const at = rest.lastIndexOf("@")
  if (at !== -1) rest = rest.slice(at + 1)
  if (rest.startsWith("[")) {
    const close = rest.indexOf("]")
    return (close === -1 ? rest.slice(1) : rest.slice(1, close)).toLowerCase()
  }
  const colon = rest.lastIndexOf(":")
  return (colon === -1 ? rest : rest.slice(0, colon)).toLowerCase()
}

/** The longest URL, host or scheme a denial text quotes, in characters; longer ones are cut with `…`. */
const MAX_QUOTED = 200

/** A value as a denial text quotes it: Python's repr, cut to `MAX_QUOTED` characters. */
const quoted = (text: string): string =>
  PythonText.repr(text.length <= MAX_QUOTED ? text : `${text.slice(0, MAX_QUOTED)}…`)

const normalizeHost = (field: string, entry: string): string => {
  const fail = (): never => {
    throw new ConfigurationError({
      field,
      message: `${field} entries must be host names or IP addresses; got ${JSON.stringify(entry)}`
    })
  }
  if (typeof entry !== "string") return fail()
  let text = entry.trim().toLowerCase()
  if (text.startsWith("*.")) text = text.slice(2)
  if (text === "") return fail()
  if (text.includes(":") && !text.startsWith("[")) text = `[${text}]`
  try {
    const host = stripHost(new URL(`http://${text}/`).hostname)
    return host === "" ? fail() : host
  } catch {
    return fail()
  }
}

/**
 * Compiles a policy. Bad options (an entry that is not a host name or address, a scheme list that
 * is not a list of strings) throw `ConfigurationError`.
 *
 * @example
 * ```ts
 * import { Egress } from "@agentkit/middleware"
 * import { Effect } from "effect"
 *
 * const policy = Egress.policy({ allow: ["example.com"] })
 * Effect.runSync(Effect.flip(policy.check("http://2130706433/"))).message
 * // "egress to private/loopback/link-local host '2130706433' blocked (SSRF)"
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const policy = (options: Options = {}): Policy => {
  const schemes = options.schemes ?? ["http", "https"]
  if (!Array.isArray(schemes) || schemes.some((s) => typeof s !== "string")) {
    throw new ConfigurationError({ field: "egress.schemes", message: "egress.schemes must be a list of scheme names" })
  }
  const accepted = schemes.map((s) => s.toLowerCase())
  const allow = options.allow === undefined
    ? undefined
    : options.allow.map((entry) => normalizeHost("egress.allow", entry))
  const blockPrivate = options.blockPrivate ?? true
  const privateRanges = ranges()
  let anyPrivateRange = false
  const privateHosts = new Set<string>()
  for (const entry of options.allowPrivate ?? []) {
    if (typeof entry === "string" && privateRanges.add(entry.trim().replace(/^\[|\]$/g, ""))) {
      anyPrivateRange = true
      continue
    }
    if (typeof entry === "string" && entry.includes("/")) {
      throw new ConfigurationError({
        field: "egress.allowPrivate",
        message: `egress.allowPrivate ranges must be a.b.c.d/n or x::/n with a prefix in range; got ${
          JSON.stringify(entry)
        }`
      })
    }
    privateHosts.add(normalizeHost("egress.allowPrivate", entry))
  }
  const extra = options.check

  const deny = (url: string, message: string) => Effect.fail(new EgressDenied({ url, message }))

  const allowed = (host: string): boolean => {
    if (allow === undefined) return true
    const isName = familyOf(host) === undefined
    for (const entry of allow) {
      if (host === entry || (isName && host.endsWith(`.${entry}`))) return true
    }
    return false
  }

  const exempt = (host: string): boolean => {
    if (privateHosts.has(host)) return true
    return anyPrivateRange && privateRanges.has(host)
  }

  const check = (input: unknown): Effect.Effect<URL, EgressDenied> => {
    if (typeof input !== "string") return deny(typeof input, `egress URL must be a string; got ${typeof input}`)
    const text = input.replace(LEADING, "")
    const found = SCHEME.exec(text)?.[1]
    if (found === undefined) return deny(input, `egress URL is not a valid URL (no scheme): ${quoted(input)}`)
    const scheme = found.toLowerCase()
    if (!accepted.includes(scheme)) {
      return deny(input, `egress scheme ${quoted(scheme)} not allowed (expected ${PythonText.tuple(accepted)})`)
    }
    let url: URL
    try {
      url = new URL(text)
    } catch {
      return deny(
        input,
        writtenHost(text, "") === ""
          ? `egress URL has no host: ${quoted(input)}`
          : `egress URL is not a valid URL: ${quoted(input)}`
      )
    }
    const parsedScheme = url.protocol.slice(0, -1)
    if (!accepted.includes(parsedScheme)) {
      return deny(input, `egress scheme ${quoted(parsedScheme)} not allowed (expected ${PythonText.tuple(accepted)})`)
    }
    const host = stripHost(url.hostname)
    if (host === "") return deny(input, `egress URL has no host: ${quoted(input)}`)
    const shown = () => writtenHost(text, host) || host
    if (blockPrivate && !exempt(host)) {
      if (host === "localhost" || host.endsWith(".localhost") || isNonPublic(host)) {
        return deny(input, `egress to private/loopback/link-local host ${quoted(shown())} blocked (SSRF)`)
      }
    }
    const last = (): Effect.Effect<URL, EgressDenied> =>
      allowed(host)
        ? Effect.succeed(url)
        : deny(input, `egress to ${quoted(shown())} not allowed (not in egress allowlist)`)
    if (extra === undefined) return last()
    return Effect.flatMap(
      Effect.mapError(Effect.suspend(() => extra(url)), (message) => new EgressDenied({ url: input, message })),
      last
    )
  }

  return { [PolicyTypeId]: PolicyTypeId, options, check }
}

/**
 * Whether a value is a compiled egress policy.
 *
 * @example
 * ```ts
 * import { Egress } from "@agentkit/middleware"
 *
 * Egress.isPolicy(Egress.policy()) // true
 * Egress.isPolicy({ allow: [] }) // false
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isPolicy = (u: unknown): u is Policy => typeof u === "object" && u !== null && PolicyTypeId in u

/**
 * A shallow copy of the arguments, each own key read once; the denial text when they cannot be
 * read; `undefined` when they are not an object.
 */
const snapshotOf = (args: unknown): Record<string, unknown> | string | undefined => {
  if (typeof args !== "object" || args === null) return undefined
  let keys: ReadonlyArray<string>
  try {
    if (Array.isArray(args)) return undefined
    keys = Object.keys(args)
  } catch {
    return "egress: the arguments cannot be read (blocked)"
  }
  const snapshot: Record<string, unknown> = {}
  for (const key of keys) {
    try {
      Object.defineProperty(snapshot, key, {
        value: (args as Record<string, unknown>)[key],
        enumerable: true,
        writable: true,
        configurable: true
      })
    } catch {
      return `egress: argument ${quoted(key)} cannot be read (blocked)`
    }
  }
  return snapshot
}

const isEgressDenied = (u: unknown): u is EgressDenied => u instanceof EgressDenied

/**
 * Checks the URL argument of every tool that declares `urlArg`, before the tool runs. A missing or
 * non-string argument is blocked (fail closed, unlike Python). A denial is a `ToolDenied` with
 * reason `"egress"` and the policy's text, which the model sees as the call's error. A tool that
 * fetches through `EgressHttpClient` and is refused there fails the same way: any failure whose
 * cause chain holds an `EgressDenied` becomes that `ToolDenied`. Denials are never retried.
 *
 * Place: on the tool pipeline, inside `audit` (so denials are audited) and outside `idempotent`
 * and `retry`: `[telemetry, audit, egress, idempotent, retry]`.
 *
 * @example
 * ```ts
 * import { Invoker } from "@agentkit/core"
 * import { Egress } from "@agentkit/middleware"
 *
 * const InvokerLive = Invoker.layer({ toolMiddleware: [Egress.egress({ allow: ["example.com"] })] })
 * // a tool with urlArg "url" called with https://evil.com/x never runs; the model reads
 * // "ERROR: tool 'fetch_url' failed: ToolDenied: egress to 'evil.com' not allowed (not in egress allowlist)"
 * ```
 *
 * @since 0.1.0
 * @category middleware
 */
export const egress = (options: Options | Policy = {}): ToolMiddleware => {
  const compiled = isPolicy(options) ? options : policy(options)
  return (next: ToolHandler): ToolHandler =>
  <E, R>(invocation: ToolCallRequest<E, R>): Effect.Effect<ToolOutcome, E | ToolPipelineError, R> => {
    const toolName = invocation.tool.name
    const toDenied = (error: E | ToolPipelineError): E | ToolPipelineError => {
      const denied = findCause(error, isEgressDenied)
      return denied !== undefined ? new ToolDenied({ toolName, reason: "egress", message: denied.message }) : error
    }
    const urlArg = invocation.tool.urlArg
    if (urlArg === undefined) return Effect.mapError(next(invocation), toDenied)
    // The arguments are read once, into a snapshot that goes on down the pipeline: the URL the
    // tool receives is the one checked here, whatever getter or proxy the caller passed.
    const read = snapshotOf(invocation.call.arguments)
    if (typeof read === "string") return Effect.fail(new ToolDenied({ toolName, reason: "egress", message: read }))
    const snapshot = read
    const value = snapshot !== undefined && Object.hasOwn(snapshot, urlArg) ? snapshot[urlArg] : undefined
    if (typeof value !== "string") {
      return Effect.fail(
        new ToolDenied({
          toolName,
          reason: "egress",
          message: `egress URL argument ${PythonText.repr(urlArg)} is missing or not a string (blocked)`
        })
      )
    }
    const checked: ToolCallRequest<E, R> = { ...invocation, call: { ...invocation.call, arguments: snapshot! } }
    return Effect.flatMap(
      Effect.mapError(
        compiled.check(value),
        (denied) => new ToolDenied({ toolName, reason: "egress", message: denied.message })
      ),
      () => Effect.mapError(next(checked), toDenied)
    )
  }
}
