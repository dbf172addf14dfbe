/**
 * Argument validation: the check a tool call passes before its handler may run.
 *
 * 1. The input must be a plain object (not `null`, an array or a primitive).
 * 2. Unexpected keys (unless the struct declares a rest record) and missing required keys are
 *    reported first, by name.
 * 3. Only when no key is wrong is the input decoded with the schema; each problem is reported as
 *    `<path>: <message>`, the path being the keys joined by `.` (`items.0.qty`), or `(root)` for the
 *    input itself. Alternatives of one union at one path are merged into one message
 *    (`Expected "a" | "b", actual "c"`), and the `undefined` alternative of an optional key is left
 *    out when there are others.
 *
 * Every list is sorted by code point. Defaults are applied. The decoded value is deep-frozen (see
 * `deepFreeze`). Everything is built once, by `makeArgumentDecoder`; the returned function never throws.
 *
 * @internal
 */
import { errorMessage, PythonText } from "@agentkit/core"
import * as Either from "effect/Either"
import type * as Pipeable from "effect/Pipeable"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { objectShape } from "./jsonSchema.js"

/** What is wrong with a tool call's arguments. Each list is sorted by code point. */
export interface ArgumentProblems {
  /** Keys the tool does not declare. */
  readonly unexpected: ReadonlyArray<string>
  /** Required keys that are absent. */
  readonly missing: ReadonlyArray<string>
  /** `<path>: <message>` for each value the schema rejects (only when no key is wrong). */
  readonly invalid: ReadonlyArray<string>
}

type Leaf =
  | string
  | number
  | boolean
  | bigint
  | symbol
  | null
  | undefined
  | ((...args: never) => unknown)
  | Date
  | RegExp
  | ReadonlyMap<unknown, unknown>
  | ReadonlySet<unknown>
  | Pipeable.Pipeable

/**
 * A deep-frozen value: plain objects and arrays are read-only all the way down; functions, dates and
 * Effect data types (`Option`, `Chunk`, ...) are left as they are.
 */
export type Frozen<A> = A extends Leaf ? A : { readonly [K in keyof A]: Frozen<A[K]> }

/** Validates and decodes raw tool-call arguments; never throws. */
export type ArgumentDecoder<A> = (input: unknown) => Either.Either<Frozen<A>, ArgumentProblems>

const NONE: ReadonlyArray<string> = Object.freeze([])

const sorted = (items: Iterable<string>): ReadonlyArray<string> => Array.from(items).sort(PythonText.compare)

/** The argument names a tool accepts (its declared keys), sorted by code point. */
export const acceptedArguments = (schema: Schema.Schema.Any): ReadonlyArray<string> =>
  sorted(objectShape(schema.ast).properties.map((p) => p.name))

/**
 * Builds, once, the argument decoder of a struct schema. Throws (at make time only) when the
 * schema is not a struct.
 */
export const makeArgumentDecoder = <A, I>(schema: Schema.Schema<A, I, never>): ArgumentDecoder<A> => {
  const shape = objectShape(schema.ast)
  const declared = new Set(shape.properties.map((p) => p.name))
  const required = shape.properties.filter((p) => p.required).map((p) => p.name)
  const acceptsAnyKey = shape.rest !== undefined
  const decode = Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "ignore" })

  return (input) => {
    try {
      if (typeof input !== "object" || input === null || Array.isArray(input)) {
        return invalid([`(root): expected an object of arguments, got ${kindOf(input)}`])
      }
      const unexpected = acceptsAnyKey ? NONE : sorted(Object.keys(input).filter((key) => !declared.has(key)))
      const missing = sorted(required.filter((key) => !Object.hasOwn(input, key)))
      if (unexpected.length > 0 || missing.length > 0) return Either.left({ unexpected, missing, invalid: NONE })
      const result = decode(input)
      return Either.isRight(result) ? Either.right(deepFreeze(result.right)) : invalid(formatIssues(result.left))
    } catch (error) {
      // A throwing filter or transformation is still a rejected call, never a crash.
      return invalid([`(root): ${errorMessage(error)}`])
    }
  }
}

const invalid = (messages: ReadonlyArray<string>): Either.Either<never, ArgumentProblems> =>
  Either.left({ unexpected: NONE, missing: NONE, invalid: messages })

const kindOf = (value: unknown): string => (value === null ? "null" : Array.isArray(value) ? "array" : typeof value)

const EXPECTED = /^Expected (.*), actual (.*)$/s

/** `<path>: <message>` lines from a parse error, one per path and message, sorted by code point. */
const formatIssues = (error: ParseResult.ParseError): ReadonlyArray<string> => {
  // Group union alternatives: one entry per (path, actual value), listing every expected alternative.
  const lines = new Map<string, { readonly path: string; readonly actual: string; readonly expected: Array<string> }>()
  const plain = new Set<string>()
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
    const path = issue.path.length === 0 ? "(root)" : issue.path.map(String).join(".")
    const match = issue._tag === "Type" ? EXPECTED.exec(issue.message) : null
    if (match === null) {
      plain.add(`${path}: ${issue.message}`)
      continue
    }
    const [, expected = "", actual = ""] = match
    const key = `${path}\u0000${actual}`
    const line = lines.get(key)
    if (line === undefined) lines.set(key, { path, actual, expected: [expected] })
    else if (!line.expected.includes(expected)) line.expected.push(expected)
  }
  for (const { actual, expected, path } of lines.values()) {
    const shown = expected.length > 1 ? expected.filter((e) => e !== "undefined") : expected
    plain.add(`${path}: Expected ${shown.join(" | ")}, actual ${actual}`)
  }
  return sorted(plain)
}

/**
 * Returns a deep-frozen copy: plain objects and arrays are copied and frozen, nested ones included,
 * so the caller's own objects are never frozen (the arguments are cut off from their source).
 * Anything else (class instances such as `Option`, `Date`, `Chunk` or `Data` values, whose hashing
 * or internals freezing would break) is kept as it is, and not descended into.
 */
export const deepFreeze = <A>(value: A): Frozen<A> => frozenCopy(value, new Map()) as Frozen<A>

const frozenCopy = (value: unknown, copies: Map<object, unknown>): unknown => {
  if (typeof value !== "object" || value === null) return value
  const done = copies.get(value)
  if (done !== undefined) return done
  if (Array.isArray(value)) {
    const out: Array<unknown> = []
    copies.set(value, out)
    for (const item of value) out.push(frozenCopy(item, copies))
    return Object.freeze(out)
  }
  const prototype: unknown = Object.getPrototypeOf(value)
  if (prototype !== Object.prototype && prototype !== null) return value
  const out: Record<string, unknown> = prototype === null ? Object.create(null) : {}
  copies.set(value, out)
  for (const key of Object.keys(value)) {
    const item = frozenCopy((value as Record<string, unknown>)[key], copies)
    if (key === "__proto__") Object.defineProperty(out, key, { value: item, enumerable: true })
    else out[key] = item
  }
  return Object.freeze(out)
}
