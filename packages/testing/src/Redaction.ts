/**
 * Redaction of credentials from what a test keeps (a recorded run, a fixture file): the secrets a
 * caller names (an API key, a token) wherever they occur, every value whose key names a credential
 * (`authorization`, `x-api-key`, `password`, `*_token`, `*secret`, ...), and credential-shaped text
 * (`Bearer ...`, `sk-...` keys, GitHub, Slack, AWS and Google keys, JWTs, private key blocks,
 * passwords in URLs, `api_key=...` pairs). Each is replaced by `[redacted]`.
 *
 * @since 0.1.0
 */
import * as Redacted from "effect/Redacted"

/**
 * What replaces a credential.
 *
 * @example
 * ```ts
 * import { Redaction } from "@agentkit/testing"
 *
 * Redaction.MARK // "[redacted]"
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const MARK = "[redacted]"

/**
 * The options of a redactor: secrets to remove wherever they occur (plain strings or `Redacted`
 * values; a secret shorter than 4 characters is ignored, it would match too much).
 *
 * @example
 * ```ts
 * import { Redaction } from "@agentkit/testing"
 * import { Redacted } from "effect"
 *
 * const options: Redaction.Options = { secrets: ["s3cr3t-value", Redacted.make("sk-ant-test")] }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly secrets?: ReadonlyArray<string | Redacted.Redacted<string>> | undefined
}

/**
 * A redactor: `text` cleans a string, `value` a JSON-like value (deeply, keys included in the
 * decision, never mutating its input).
 *
 * @example
 * ```ts
 * import { Redaction } from "@agentkit/testing"
 *
 * const redactor: Redaction.Redactor = Redaction.make({ secrets: ["hunter22"] })
 * redactor.text("password is hunter22") // "password is [redacted]"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Redactor {
  readonly text: (input: string) => string
  readonly value: (input: unknown) => unknown
}

/** Keys whose value is a credential, whatever it looks like. */
const SECRET_KEY =
  /(?:^|[^a-z])(?:authorization|cookie|credentials?|password|passwd|secret|token|api[_-]?key|apikey|private[_-]?key)$/i
const SECRET_KEY_CAMEL = /(?:Secret|Password|Token|ApiKey|Credentials?)$/

/** Whether a property name names a credential (`x-api-key`, `client_secret`, `accessToken`, ...). */
const isSecretKey = (key: string): boolean => SECRET_KEY.test(key) || SECRET_KEY_CAMEL.test(key)

const PATTERNS: ReadonlyArray<readonly [RegExp, string]> = [
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g, MARK],
  // an authorization scheme followed by a credential (one with a digit or a symbol, so prose such as
  // "Bearer tokens" or "Basic information" is left alone)
  [/\b(Bearer|Basic)(\s+)(?=[A-Za-z._~+/=-]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{8,}/g, `$1$2${MARK}`],
  [/\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}/g, MARK],
  [/\bsk-[A-Za-z0-9_-]{8,}/g, MARK],
  [/\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{16,}/g, MARK],
  [/\bgithub_pat_[A-Za-z0-9_]{16,}/g, MARK],
  [/\bxox[abprs]-[A-Za-z0-9-]{8,}/g, MARK],
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, MARK],
  [/\bAIza[0-9A-Za-z_-]{30,}/g, MARK],
  [/\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)[^\s@/]+@/gi, `$1${MARK}@`],
  [
    /\b((?:x-)?api[_-]?key|access[_-]?token|refresh[_-]?token|id[_-]?token|client[_-]?secret|password|passwd|secret|token|authorization)(["']?\s*[:=]\s*["']?)(?!Bearer\b|Basic\b|\[redacted\])[^\s"',;&]{6,}/gi,
    `$1$2${MARK}`
  ]
]

const secretTexts = (options: Options | undefined): ReadonlyArray<string> =>
  (options?.secrets ?? [])
    .map((secret) => (Redacted.isRedacted(secret) ? Redacted.value(secret) : secret))
    .filter((secret): secret is string => typeof secret === "string" && secret.length >= 4)
    .sort((a, b) => b.length - a.length)

/**
 * Makes a redactor. The named secrets go first (longest first), then the credential patterns.
 *
 * @example
 * ```ts
 * import { Redaction } from "@agentkit/testing"
 *
 * const redactor = Redaction.make({ secrets: ["tenant-7-key"] })
 * redactor.value({ headers: { "x-api-key": "abc123456" }, note: "uses tenant-7-key" })
 * // { headers: { "x-api-key": "[redacted]" }, note: "uses [redacted]" }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options?: Options): Redactor => {
  const secrets = secretTexts(options)
  const text = (input: string): string => {
    let out = input
    for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(MARK)
    for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement)
    return out
  }
  const value = (input: unknown): unknown => {
    if (typeof input === "string") return text(input)
    if (Array.isArray(input)) return input.map(value)
    if (typeof input !== "object" || input === null) return input
    const out: Record<string, unknown> = {}
    for (const [key, field] of Object.entries(input)) {
      out[key] = isSecretKey(key) && (typeof field === "string" || typeof field === "number") ? MARK : value(field)
    }
    return out
  }
  return { text, value }
}

/**
 * Redacts a text with no named secrets: credential-shaped values only.
 *
 * @example
 * ```ts
 * import { Redaction } from "@agentkit/testing"
 *
 * Redaction.text("Authorization: Bearer abc.def.ghi-123") // "Authorization: Bearer [redacted]"
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const text = (input: string): string => make().text(input)

/**
 * Redacts a JSON-like value with no named secrets.
 *
 * @example
 * ```ts
 * import { Redaction } from "@agentkit/testing"
 *
 * Redaction.value({ password: "hunter22", user: "ana" }) // { password: "[redacted]", user: "ana" }
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const value = (input: unknown): unknown => make().value(input)
