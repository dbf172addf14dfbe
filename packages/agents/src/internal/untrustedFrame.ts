/**
 * Neutralises the untrusted frame's markers inside a tool's text, so the frame cannot be closed
 * (or a fake one opened) from inside. The text is read as a model may read it: Unicode
 * compatibility forms folded (fullwidth, mathematical letters), format and zero-width characters,
 * combining marks and whitespace dropped, confusable letters and angle brackets read as their
 * ASCII look-alikes, case ignored. Any `UNTRUSTED` so read that comes with a frame's part (angle
 * brackets before or after it, `END` before it, `... OUTPUT` after it) is replaced, from its
 * first character to its last, by `[marker removed]`. Everything else is kept as it is. @internal
 */

const confusables: Readonly<Record<string, string>> = {
  // Cyrillic, Greek, Armenian and Cherokee capitals and small letters that look like Latin ones
  "А": "A",
  "а": "A",
  "В": "B",
  "Е": "E",
  "е": "E",
  "Н": "H",
  "К": "K",
  "М": "M",
  "О": "O",
  "о": "O",
  "Р": "P",
  "р": "P",
  "С": "C",
  "с": "C",
  "Т": "T",
  "т": "T",
  "У": "Y",
  "у": "Y",
  "Х": "X",
  "х": "X",
  "Ѕ": "S",
  "ѕ": "S",
  "І": "I",
  "і": "I",
  "Ј": "J",
  "ј": "J",
  "Ԁ": "D",
  "ԁ": "D",
  "Α": "A",
  "Β": "B",
  "Ε": "E",
  "Ζ": "Z",
  "Η": "H",
  "Ι": "I",
  "Κ": "K",
  "Μ": "M",
  "Ν": "N",
  "Ο": "O",
  "ο": "O",
  "Ρ": "P",
  "ρ": "P",
  "Τ": "T",
  "τ": "T",
  "Υ": "Y",
  "υ": "U",
  "Χ": "X",
  "Ս": "U",
  "ս": "U",
  "Ꭰ": "D",
  "Ꭱ": "R",
  "Ꮪ": "S",
  "Ꭲ": "T",
  "Ꭼ": "E",
  // small capitals
  "ᴀ": "A",
  "ᴅ": "D",
  "ᴇ": "E",
  "ɴ": "N",
  "ᴏ": "O",
  "ᴘ": "P",
  "ʀ": "R",
  "ꜱ": "S",
  "ᴛ": "T",
  "ᴜ": "U",
  // angle brackets and their look-alikes
  "‹": "<",
  "›": ">",
  "«": "<<",
  "»": ">>",
  "〈": "<",
  "〉": ">",
  "《": "<<",
  "》": ">>",
  "⟨": "<",
  "⟩": ">",
  "⟪": "<<",
  "⟫": ">>",
  "❮": "<",
  "❯": ">",
  "❬": "<",
  "❭": ">",
  "ᐸ": "<",
  "ᐳ": ">",
  "˂": "<",
  "˃": ">",
  "⦉": "<",
  "⦊": ">",
  "⧼": "<",
  "⧽": ">"
}

const dropped = /[\p{Cf}\p{Mn}\p{Me}\s]/u
/** A frame's words, as folded: brackets, `END`, `UNTRUSTED`, a source and `OUTPUT`, brackets. */
const marker = /(<*)(END)?UNTRUSTED((?:[A-Z0-9_-]{0,64}?OUTPUT)?)(>*)/g
/** Plain ASCII with no `untrusted` in any case or spacing: nothing to fold, nothing to find. */
const ascii = /^[\p{ASCII}]*$/u
const spelled = /u\s*n\s*t\s*r\s*u\s*s\s*t\s*e\s*d/i

export const replacement = "[marker removed]"

export const neutralise = (text: string): string => {
  if (ascii.test(text) && !spelled.test(text)) return text
  // the folded text, and for each of its characters the original range it came from
  let folded = ""
  const from: Array<number> = []
  const to: Array<number> = []
  let index = 0
  for (const point of text) {
    const end = index + point.length
    for (const char of point.normalize("NFKC")) {
      if (dropped.test(char)) continue
      const read = (confusables[char] ?? char).toUpperCase()
      for (let i = 0; i < read.length; i++) {
        folded += read[i]
        from.push(index)
        to.push(end)
      }
    }
    index = end
  }
  const ranges: Array<[number, number]> = []
  for (const match of folded.matchAll(marker)) {
    const [whole, open, endWord, output, close] = match
    if (open === "" && endWord === undefined && output === "" && close === "") continue
    const first = match.index
    const start = from[first]!
    const stop = to[first + whole.length - 1]!
    const last = ranges[ranges.length - 1]
    if (last !== undefined && start <= last[1]) last[1] = Math.max(last[1], stop)
    else ranges.push([start, stop])
  }
  if (ranges.length === 0) return text
  let out = ""
  let at = 0
  for (const [start, stop] of ranges) {
    out += text.slice(at, start) + replacement
    at = stop
  }
  return out + text.slice(at)
}
