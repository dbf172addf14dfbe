/**
 * Python-style text: how the Python agentkit prints values in the messages agentkit keeps
 * byte-for-byte (`unexpected argument(s) ['order']`, `cost $1.0 > $0.5`, `egress scheme 'ftp' not
 * allowed (expected ('http', 'https'))`). Every package that writes such a message uses these.
 *
 * @since 0.1.0
 */

const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u

const escapeCodePoint = (code: number): string => {
  const hex = code.toString(16)
  return code < 0x100
    ? `\\x${hex.padStart(2, "0")}`
    : code < 0x10000
    ? `\\u${hex.padStart(4, "0")}`
    : `\\U${hex.padStart(8, "0")}`
}

/**
 * Python `repr` of a string: single quotes, or double quotes when the text holds a single quote
 * and no double quote; backslash, the quote, `\n`, `\r`, `\t` and non-printable characters escaped.
 *
 * @example
 * ```ts
 * import { PythonText } from "@agentkit/core"
 *
 * PythonText.repr("order") // "'order'"
 * PythonText.repr("it's") // "\"it's\""
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const repr = (text: string): string => {
  const quote = text.includes("'") && !text.includes("\"") ? "\"" : "'"
  let out = ""
  for (const ch of text) {
    if (ch === "\\" || ch === quote) out += `\\${ch}`
    else if (ch === "\n") out += "\\n"
    else if (ch === "\r") out += "\\r"
    else if (ch === "\t") out += "\\t"
    else if (ch !== " " && NON_PRINTABLE.test(ch)) out += escapeCodePoint(ch.codePointAt(0) ?? 0)
    else out += ch
  }
  return `${quote}${out}${quote}`
}

/**
 * Python `repr` of a list of strings.
 *
 * @example
 * ```ts
 * import { PythonText } from "@agentkit/core"
 *
 * PythonText.list(["order_id", "reason"]) // "['order_id', 'reason']"
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const list = (items: ReadonlyArray<string>): string => `[${items.map(repr).join(", ")}]`

/**
 * Python `repr` of a tuple of strings (a one-element tuple keeps its comma).
 *
 * @example
 * ```ts
 * import { PythonText } from "@agentkit/core"
 *
 * PythonText.tuple(["http", "https"]) // "('http', 'https')"
 * PythonText.tuple(["https"]) // "('https',)"
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const tuple = (items: ReadonlyArray<string>): string =>
  items.length === 1 ? `(${repr(items[0]!)},)` : `(${items.map(repr).join(", ")})`

/**
 * A number the way Python's `repr(float)` writes it: `1.0`, `0.02`, `1e-05`.
 *
 * @example
 * ```ts
 * import { PythonText } from "@agentkit/core"
 *
 * PythonText.float(1) // "1.0"
 * PythonText.float(0.015) // "0.015"
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const float = (n: number): string => {
  if (!Number.isFinite(n)) return n > 0 ? "inf" : n < 0 ? "-inf" : "nan"
  if (Number.isInteger(n) && Math.abs(n) < 1e16) return n.toFixed(1)
  const abs = Math.abs(n)
  if (abs !== 0 && (abs < 1e-4 || abs >= 1e16)) {
    // Python writes exponents with at least two digits and no plus sign for small numbers.
    const [mantissa, exponent = "0"] = n.toExponential().split("e")
    const sign = exponent.startsWith("-") ? "-" : "+"
    const digits = exponent.replace(/^[+-]/, "").padStart(2, "0")
    return `${mantissa}e${sign}${digits}`
  }
  return String(n)
}

/**
 * Compares two strings by Unicode code point, as Python compares `str` (never locale-aware, and
 * not by UTF-16 code unit: U+FF5E sorts before U+1F600, though its code unit is larger than the
 * surrogate's).
 *
 * @example
 * ```ts
 * import { PythonText } from "@agentkit/core"
 *
 * ["\u{1F600}", "\uFF5E"].sort(PythonText.compare) // ["\uFF5E", "\u{1F600}"]
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const compare = (a: string, b: string): number => {
  const length = Math.min(a.length, b.length)
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    // UTF-16 order differs from code point order only between surrogates and U+E000..U+FFFF.
    if (x !== y) return codePointRank(x) - codePointRank(y)
  }
  return a.length - b.length
}

const codePointRank = (unit: number): number =>
  unit >= 0xd800 && unit <= 0xdfff ? unit + 0x2000 : unit >= 0xe000 ? unit - 0x800 : unit

/**
 * Sorts strings by code point, as Python does (never locale-aware).
 *
 * @example
 * ```ts
 * import { PythonText } from "@agentkit/core"
 *
 * PythonText.sorted(["b", "B", "a"]) // ["B", "a", "b"]
 * PythonText.sorted(["\u{1F600}", "\uFF5E"]) // ["\uFF5E", "\u{1F600}"]
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const sorted = (items: Iterable<string>): Array<string> => Array.from(items).sort(compare)
