/** Formats a number the way Python's `repr(float)` does for the values meters print: `1.0`, `0.02`, `1e-05`. */
export const pyFloat = (n: number): string => {
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

/** Python-repr style list of strings: `['a', 'b']`. */
export const pyList = (items: ReadonlyArray<string>): string => `[${items.map(pyStr).join(", ")}]`

/** Python-repr style string: single quotes unless the text holds a single quote and no double quote. */
export const pyStr = (s: string): string => {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'"
  let out = ""
  for (const ch of s) {
    if (ch === "\\") out += "\\\\"
    else if (ch === quote) out += `\\${ch}`
    else if (ch === "\n") out += "\\n"
    else if (ch === "\r") out += "\\r"
    else if (ch === "\t") out += "\\t"
    else out += ch
  }
  return `${quote}${out}${quote}`
}

/** Sorts strings by code point (never locale-aware). */
export const sortCodePoint = (items: Iterable<string>): Array<string> =>
  Array.from(items).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
