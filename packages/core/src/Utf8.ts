/**
 * UTF-8 sizes and cuts: the one place text is measured and cut in bytes (a tool result shown to
 * the model, content recorded on a span). Cuts never split a character, and a lone surrogate
 * counts as the three bytes of U+FFFD, as `TextEncoder` writes it.
 *
 * @since 0.1.0
 */

const encoder = new TextEncoder()
let scratch = new Uint8Array(0)

/**
 * The UTF-8 size of a string in bytes (a long one is measured by the platform's encoder into a
 * reused buffer, several times faster than counting it here).
 *
 * @example
 * ```ts
 * import { Utf8 } from "@agentkit/core"
 *
 * Utf8.byteLength("héllo") // 6
 * Utf8.byteLength("😀") // 4
 * ```
 *
 * @since 0.1.0
 * @category getters
 */
export const byteLength = (text: string): number => {
  // a long text is counted by the platform's encoder (a lone surrogate becomes U+FFFD, 3 bytes, as
  // the loop counts it); past a million code units the loop, so the buffer stays under 3 MB
  if (text.length >= 1024 && text.length <= 1_000_000) {
    if (scratch.length < text.length * 3) scratch = new Uint8Array(text.length * 3)
    return encoder.encodeInto(text, scratch).written
  }
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

/**
 * The result of `cut`: the text kept and how many UTF-8 bytes were dropped (0 when the text fit).
 *
 * @example
 * ```ts
 * import { Utf8 } from "@agentkit/core"
 *
 * const { kept, droppedBytes }: Utf8.Cut = Utf8.cut("abcdef", 4) // kept "abcd", droppedBytes 2
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Cut {
  readonly kept: string
  readonly droppedBytes: number
}

/**
 * Keeps the longest leading part of `text` whose UTF-8 form is at most `maxBytes` bytes (a
 * negative limit reads as 0), never splitting a character, and reports the bytes dropped. A
 * caller that marks the cut adds its marker itself: after the limit (`Tool.renderResult` appends
 * `…[truncated N bytes]`) or inside it (cut at `maxBytes - byteLength(marker)`, as the telemetry
 * middleware does).
 *
 * @example
 * ```ts
 * import { Utf8 } from "@agentkit/core"
 *
 * Utf8.cut("naïve", 3) // { kept: "na", droppedBytes: 4 }: "ï" takes 2 bytes and would not fit
 * Utf8.cut("short", 64) // { kept: "short", droppedBytes: 0 }
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const cut = (text: string, maxBytes: number): Cut => {
  const limit = Math.max(0, Math.floor(maxBytes))
  // Each UTF-16 code unit is at most 3 UTF-8 bytes: most texts fit without counting.
  if (text.length * 3 <= limit) return { kept: text, droppedBytes: 0 }
  const total = byteLength(text)
  if (total <= limit) return { kept: text, droppedBytes: 0 }
  if (scratch.length < limit) scratch = new Uint8Array(Math.max(limit, scratch.length * 2))
  // encodeInto writes whole characters only, and says how many code units it read
  const { read, written } = encoder.encodeInto(text, scratch.subarray(0, limit))
  return { kept: text.slice(0, read), droppedBytes: total - written }
}

/**
 * Caps `text` at `maxBytes` UTF-8 bytes for the model: a longer text is cut on a character
 * boundary and `…[truncated N bytes]` is appended after the limit, N being the bytes dropped (so
 * the marker itself is never cut, and the model always sees that something is missing). A text
 * within the limit is returned as it is. Every text agentkit shows the model goes through it: a
 * tool's result (`Tool.renderResult`), a tool failure (`toolFailureText`), an untrusted output
 * before it is wrapped.
 *
 * @example
 * ```ts
 * import { Utf8 } from "@agentkit/core"
 *
 * Utf8.truncate("a".repeat(10), 4) // "aaaa…[truncated 6 bytes]"
 * Utf8.truncate("short", 64) // "short"
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const truncate = (text: string, maxBytes: number): string => {
  const { droppedBytes, kept } = cut(text, maxBytes)
  return droppedBytes === 0 ? text : `${kept}…[truncated ${droppedBytes} bytes]`
}
