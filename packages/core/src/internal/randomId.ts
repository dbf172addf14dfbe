/**
 * Random ids as flat strings: a run id (a version 4 UUID) and the hex ids of spans. Their bytes
 * come from `crypto.getRandomValues`, drawn from a pool refilled 4 KB at a time (as Node's
 * `crypto.randomUUID` draws from a cache of its own). Each id is made in one piece from its
 * character codes: `crypto.randomUUID()` builds its text from about 20 pieces (~0.6 KB a run id),
 * and concatenating hex digits one at a time makes a rope of as many strings; this makes only the
 * 36- or 16/32-character string.
 *
 * @internal
 */

const pool = new Uint8Array(4096)
let next = pool.length

/** The offset in `pool` of `count` fresh random bytes (`count` ≤ 16). */
const take = (count: number): number => {
  if (next + count > pool.length) {
    crypto.getRandomValues(pool)
    next = 0
  }
  const at = next
  next += count
  return at
}

/** The character codes of `0`–`9`, `a`–`f`. */
const HEX = Array.from("0123456789abcdef", (digit) => digit.charCodeAt(0))
const DASH = 45

/** Reused for each UUID: its 36 character codes (a packed array, which `fromCharCode` reads fastest). */
const uuidCodes: Array<number> = new Array<number>(36).fill(0)

/** Reused for each hex id: its character codes. */
const hexCodes: Array<number> = []

/** A version 4 UUID (RFC 9562), lowercase: as `crypto.randomUUID()` returns. */
export const uuid = (): string => {
  const at = take(16)
  const codes = uuidCodes
  let j = 0
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) codes[j++] = DASH
    let byte = pool[at + i]!
    if (i === 6) byte = (byte & 0x0f) | 0x40 // the version, 4
    else if (i === 8) byte = (byte & 0x3f) | 0x80 // the variant, 10
    codes[j++] = HEX[byte >> 4]!
    codes[j++] = HEX[byte & 0x0f]!
  }
  return String.fromCharCode.apply(null, codes)
}

/** `length` random lowercase hex characters (a span id: 16; a trace id: 32). */
export const randomHex = (length: number): string => {
  const bytes = Math.ceil(length / 2)
  const codes = hexCodes
  codes.length = length
  let j = 0
  for (let taken = 0; taken < bytes; taken += 16) {
    const count = Math.min(16, bytes - taken)
    const at = take(count)
    for (let i = 0; i < count && j < length; i++) {
      const byte = pool[at + i]!
      codes[j++] = HEX[byte >> 4]!
      if (j < length) codes[j++] = HEX[byte & 0x0f]!
    }
  }
  return String.fromCharCode.apply(null, codes)
}
