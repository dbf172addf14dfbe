/**
 * The secret and PII detector behind `Guardrail.secrets`: patterns for API keys and tokens, private
 * key blocks, e-mail addresses and card numbers (13 to 19 digits, spaces or dashes between groups,
 * kept only when the Luhn check holds). Findings are redacted to `[REDACTED:<kind>]`; a trip names
 * the kinds found, never the values. @internal
 */
import { AgentDefinitionError } from "../Errors.js"
import type * as Guardrail from "../Guardrail.js"

export type SecretKind = "api_key" | "token" | "private_key" | "email" | "card_number"

export const allKinds: ReadonlyArray<SecretKind> = Object.freeze([
  "api_key",
  "token",
  "private_key",
  "email",
  "card_number"
])

const patterns: ReadonlyArray<readonly [SecretKind, RegExp]> = [
  ["private_key", /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z]+ )?PRIVATE KEY-----/g],
  [
    "api_key",
    /\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}|xox[abposr]-[A-Za-z0-9-]{10,}|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}|AIza[0-9A-Za-z_-]{35})\b/g
  ],
  ["token", /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g],
  ["token", /\b(Bearer\s+)[A-Za-z0-9._~+/=-]{16,}/gi],
  ["email", /\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b/g],
  ["card_number", /\b\d(?:[ -]?\d){12,18}\b/g]
]

const luhn = (digits: string): boolean => {
  let sum = 0
  let double = false
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48
    if (double) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
    double = !double
  }
  return sum % 10 === 0
}

/** The kinds asked for, checked (a kind the detector does not know throws). */
export const kindsOf = (kinds: ReadonlyArray<SecretKind> | undefined): ReadonlyArray<SecretKind> => {
  if (kinds === undefined) return allKinds
  if (!Array.isArray(kinds) || kinds.length === 0) {
    throw new AgentDefinitionError({
      message: `Guardrail.secrets: kinds must be a non-empty array of ${allKinds.join(", ")}`
    })
  }
  for (const kind of kinds) {
    if (!allKinds.includes(kind)) {
      throw new AgentDefinitionError({
        message: `Guardrail.secrets: kinds holds '${String(kind)}'; accepted: ${allKinds.join(", ")}`
      })
    }
  }
  return Object.freeze([...new Set(kinds)])
}

/** The text with every finding of `kinds` redacted, and the kinds found (in the order of `allKinds`). */
export const redact = (
  text: string,
  kinds: ReadonlyArray<SecretKind>
): { readonly text: string; readonly found: ReadonlyArray<SecretKind> } => {
  const found = new Set<SecretKind>()
  let out = text
  for (const [kind, pattern] of patterns) {
    if (!kinds.includes(kind)) continue
    out = out.replace(pattern, (match: string, prefix?: unknown) => {
      if (kind === "card_number" && !luhn(match.replace(/[ -]/g, ""))) return match
      found.add(kind)
      return `${typeof prefix === "string" ? prefix : ""}[REDACTED:${kind}]`
    })
  }
  return { text: out, found: allKinds.filter((kind) => found.has(kind)) }
}

const tripText = (found: ReadonlyArray<SecretKind>) => `found ${found.join(", ")}`

export const checkText = (
  text: string,
  kinds: ReadonlyArray<SecretKind>,
  action: "redact" | "trip"
): Guardrail.Verdict<string> => {
  const result = redact(text, kinds)
  if (result.found.length === 0) return { _tag: "Pass" }
  return action === "trip" ? { _tag: "Trip", reason: tripText(result.found) } : { _tag: "Rewrite", value: result.text }
}

/** Every string inside a parsed value redacted (plain objects and arrays walked; others kept). */
const redactDeep = (value: unknown, kinds: ReadonlyArray<SecretKind>, found: Set<SecretKind>): unknown => {
  if (typeof value === "string") {
    const result = redact(value, kinds)
    for (const kind of result.found) found.add(kind)
    return result.text
  }
  if (Array.isArray(value)) return value.map((item) => redactDeep(item, kinds, found))
  if (typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(value)) out[key] = redactDeep(item, kinds, found)
    return out
  }
  return value
}

export const checkAnswer = (
  answer: Guardrail.Answer,
  kinds: ReadonlyArray<SecretKind>,
  action: "redact" | "trip"
): Guardrail.Verdict<Guardrail.Answer> => {
  const found = new Set<SecretKind>()
  const text = redactDeep(answer.text, kinds, found) as string
  const parsed = answer.parsed === undefined ? undefined : redactDeep(answer.parsed, kinds, found)
  if (found.size === 0) return { _tag: "Pass" }
  if (action === "trip") return { _tag: "Trip", reason: tripText(allKinds.filter((kind) => found.has(kind))) }
  return { _tag: "Rewrite", value: { text, parsed } }
}
