/** Small text helpers. @internal */

/** The UTF-8 size of a string in bytes, without encoding it. */
export const utf8Length = (text: string): number => {
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) bytes += 1
    else if (code < 0x800) bytes += 2
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4
        i++
      } else bytes += 3
    } else bytes += 3
  }
  return bytes
}

const encoder = new TextEncoder()
const decoder = new TextDecoder("utf-8", { fatal: false })

/**
 * Cuts `text` to at most `maxBytes` UTF-8 bytes, suffix included, keeping the leading text and
 * never splitting a character.
 */
export const truncateUtf8 = (text: string, maxBytes: number, suffix: string): string => {
  if (text.length * 3 <= maxBytes || utf8Length(text) <= maxBytes) return text
  const room = Math.max(0, maxBytes - utf8Length(suffix))
  const bytes = encoder.encode(text)
  let end = room
  // step back to a character boundary (continuation bytes are 10xxxxxx)
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--
  return decoder.decode(bytes.subarray(0, end)) + suffix
}

/** Cuts a message to `max` characters (UTF-16 code units), never splitting a surrogate pair. */
export const cut = (text: string, max: number): string => {
  if (text.length <= max) return text
  let end = max
  const last = text.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end--
  return text.slice(0, end)
}
