/**
 * A Schema decoder or encoder built on its first call instead of when its module loads: making
 * one compiles its parser, which is import cost (issue 19) for code most imports never reach.
 *
 * @internal
 */
import type { ParseOptions } from "effect/SchemaAST"

/** `make()`'s function, made on the first call and reused after. */
export const lazy = <I, B>(
  make: () => (input: I, options?: ParseOptions) => B
): (input: I, options?: ParseOptions) => B => {
  let made: ((input: I, options?: ParseOptions) => B) | undefined
  return (input, options) => (made ??= make())(input, options)
}
