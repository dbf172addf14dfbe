/** Reading errors by their type (their `_tag`), never by their text. @internal */

/** The error's tag (`_tag`), its class name, or `Error`. */
export const errorType = (error: unknown): string => {
  if (typeof error === "object" && error !== null) {
    if ("_tag" in error && typeof error._tag === "string") return error._tag
    if (error instanceof Error) return error.name
  }
  return "Error"
}

/** The error's message, or its string form. */
export const errorMessage = (error: unknown): string => {
  if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") {
    return error.message
  }
  return String(error)
}

const causeOf = (error: unknown): unknown =>
  typeof error === "object" && error !== null && "cause" in error ? error.cause : undefined

/** The first error in `error`'s cause chain (itself included, at most 8 deep) with one of these tags. */
export const findInCauses = (error: unknown, tags: ReadonlySet<string>): unknown => {
  let current = error
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth++) {
    if (typeof current === "object" && "_tag" in current && typeof current._tag === "string" && tags.has(current._tag)) {
      return current
    }
    current = causeOf(current)
  }
  return undefined
}
