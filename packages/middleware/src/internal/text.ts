/** Cutting an error message for a span event. @internal */

/** Cuts a message to `max` characters (UTF-16 code units), never splitting a surrogate pair. */
export const cut = (text: string, max: number): string => {
  if (text.length <= max) return text
  let end = max
  const last = text.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end--
  return text.slice(0, end)
}
