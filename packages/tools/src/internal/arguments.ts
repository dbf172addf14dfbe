/**
 * Argument validation: the check a tool call passes before its handler may run.
 *
 * 1. The input must be a plain object (not `null`, an array, a primitive or a class instance).
 * 2. It is copied into plain data (see `plainCopy`): anything that is not JSON-like data, nested
 *    deeper than `MAX_DEPTH`, larger than `MAX_VALUES`, circular, or that throws when read (a
 *    getter, a proxy trap) is reported as `<path>: <fixed clause>`, and nothing else is checked.
 *    A number must be finite (JSON has none other; `1e309` parses to `Infinity`).
 *    A `__proto__` key, at any depth, is an unexpected key (it is never copied, so it can never
 *    change a prototype).
 * 3. Unexpected keys (unless that level declares a rest record) and missing required keys are
 *    reported first, at every depth, by path (`shipping.adress`). A key problem inside a union is
 *    reported this way when the value can only be one member of it (an optional or nullable
 *    struct, a tagged union's matching member); otherwise it is a value problem of the union.
 * 4. Only when no key is wrong are value problems reported, each as `<path>: <message>`, the path
 *    being the keys joined by `.` (`items.0.qty`), or `(root)` for the input itself. Alternatives
 *    of one union at one path are merged into one message (`Expected "a" | "b", actual "c"`), and
 *    the `undefined` alternative of an optional key is left out when there are others.
 *
 * Every list is sorted by code point. Defaults are applied. The decoded value is deep-frozen (see
 * `deepFreeze`). Everything is built once, by `makeArgumentDecoder`; the returned function never throws.
 *
 * @internal
 */
import { errorMessage, invalidArgumentFields, PythonText } from "@agentkit/core"
import type { ArgumentProblem } from "@agentkit/core"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import type * as Pipeable from "effect/Pipeable"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import { objectShape } from "./jsonSchema.js"

/** What is wrong with a tool call's arguments. Each list is sorted by code point. */
export interface ArgumentProblems {
  /** Keys the tool does not declare. */
  readonly unexpected: ReadonlyArray<string>
  /** Required keys that are absent. */
  readonly missing: ReadonlyArray<string>
  /** `<path>: <message>` for each value the schema rejects (only when no key is wrong). */
  readonly invalid: ReadonlyArray<string>
  /** The top-level arguments the `invalid` entries are about. */
  readonly invalidArguments: ReadonlyArray<string>
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
const NO_PROBLEMS: ReadonlyArray<ArgumentProblem> = Object.freeze([])

/** How deep arguments may nest: levels of arrays and objects below the arguments object. */
export const MAX_DEPTH = 64

/** How many values arguments may hold (every array item and object member counts, nested ones too). */
export const MAX_VALUES = 1_000_000

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
  // `exact`: an absent required key is missing even when its schema would accept `undefined`
  const strict = Schema.make<A, I, never>(strictAST(schema.ast, new Map()))
  const decode = Schema.decodeUnknownEither(strict, { errors: "all", onExcessProperty: "error", exact: true })

  return (input) => {
    try {
      const notArguments = rootProblem(input)
      if (notArguments !== undefined) return invalid([notArguments])
      const copied = plainCopy(input as object)
      if (copied.problems.length > 0) return invalid(copied.problems)
      const args = copied.value
      // the key sets are made only when a key is out of place (valid arguments make none)
      let unexpected: Set<string> | undefined = copied.protoKeys.length === 0 ? undefined : new Set(copied.protoKeys)
      if (!acceptsAnyKey) {
        for (const key of Object.keys(args)) if (!declared.has(key)) (unexpected ??= new Set()).add(key)
      }
      let missing: Set<string> | undefined
      for (const key of required) if (!Object.hasOwn(args, key)) (missing ??= new Set()).add(key)
      const result = decode(args)
      if (Either.isLeft(result)) {
        keyProblems(result.left.issue, [], true, unexpected ??= new Set(), missing ??= new Set())
      }
      if ((unexpected !== undefined && unexpected.size > 0) || (missing !== undefined && missing.size > 0)) {
        return Either.left({
          unexpected: sorted(unexpected ?? []),
          missing: sorted(missing ?? []),
          invalid: NONE,
          invalidArguments: NONE
        })
      }
      return Either.isRight(result) ? Either.right(deepFreeze(result.right)) : invalid(formatIssues(result.left))
    } catch (error) {
      // A throwing filter or transformation is still a rejected call, never a crash.
      return invalid([{ path: NONE, message: errorMessage(error) }])
    }
  }
}

/** The key of an index signature that admits no key: every key of a strict empty struct is unexpected. */
const NO_KEY = new AST.Refinement(
  AST.stringKeyword,
  (input, _options, self) => Option.some(new ParseResult.Type(self, input)),
  {
    [AST.TitleAnnotationId]: "no key"
  }
)

/**
 * The schema's AST with every empty struct made strict. Effect reads `Schema.Struct({})` as the
 * type `{}` (any value but `null` and `undefined`, any keys, no excess-key check); as a tool
 * parameter it is advertised as an object with no properties, so here it only accepts an object
 * without keys (each key is unexpected). Nodes with nothing to change are kept as they are; the
 * inside of a recursive (`Schema.suspend`) schema is left alone.
 */
const strictAST = (ast: AST.AST, done: Map<AST.AST, AST.AST>): AST.AST => {
  const known = done.get(ast)
  if (known !== undefined) return known
  const go = (node: AST.AST) => strictAST(node, done)
  let out: AST.AST = ast
  switch (ast._tag) {
    case "TypeLiteral": {
      if (ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0) {
        const named = Option.isSome(AST.getIdentifierAnnotation(ast)) || Option.isSome(AST.getTitleAnnotation(ast))
        out = new AST.TypeLiteral([], [new AST.IndexSignature(NO_KEY, AST.unknownKeyword, true)], {
          ...ast.annotations,
          ...(named ? {} : { [AST.TitleAnnotationId]: "{}" })
        })
        break
      }
      const properties = ast.propertySignatures.map((p) => {
        const type = go(p.type)
        return type === p.type ? p : new AST.PropertySignature(p.name, type, p.isOptional, p.isReadonly, p.annotations)
      })
      const indexes = ast.indexSignatures.map((i) => {
        const type = go(i.type)
        return type === i.type ? i : new AST.IndexSignature(i.parameter, type, i.isReadonly)
      })
      if (
        properties.some((p, i) => p !== ast.propertySignatures[i]) ||
        indexes.some((x, i) => x !== ast.indexSignatures[i])
      ) {
        out = new AST.TypeLiteral(properties, indexes, ast.annotations)
      }
      break
    }
    case "Union": {
      const types = ast.types.map(go)
      if (types.some((t, i) => t !== ast.types[i])) out = AST.Union.make(types, ast.annotations)
      break
    }
    case "TupleType": {
      const elements = ast.elements.map((e) => {
        const type = go(e.type)
        return type === e.type ? e : new AST.OptionalType(type, e.isOptional, e.annotations)
      })
      const rest = ast.rest.map((r) => {
        const type = go(r.type)
        return type === r.type ? r : new AST.Type(type, r.annotations)
      })
      if (elements.some((e, i) => e !== ast.elements[i]) || rest.some((r, i) => r !== ast.rest[i])) {
        out = new AST.TupleType(elements, rest, ast.isReadonly, ast.annotations)
      }
      break
    }
    case "Refinement": {
      const from = go(ast.from)
      if (from !== ast.from) out = new AST.Refinement(from, ast.filter, ast.annotations)
      break
    }
    case "Transformation": {
      // the wire side is the one checked; the type side only ever sees its output
      const from = go(ast.from)
      if (from !== ast.from) out = new AST.Transformation(from, ast.to, ast.transformation, ast.annotations)
      break
    }
  }
  done.set(ast, out)
  return out
}

const UNREADABLE = "cannot be read (a getter or proxy threw)"

/** Why the input is not an object of arguments (`undefined` when it is one). */
const rootProblem = (input: unknown): ArgumentProblem | undefined => {
  let kind: string | undefined
  try {
    kind = input === null
      ? "null"
      : typeof input !== "object"
      ? typeof input
      : Array.isArray(input)
      ? "array"
      : notData(input)
  } catch {
    return { path: NONE, message: UNREADABLE }
  }
  return kind === undefined ? undefined : { path: NONE, message: `expected an object of arguments, got ${kind}` }
}

/** What `plainCopy` returns: the copy, the paths of the `__proto__` keys left out, the problems. */
interface Copied {
  readonly value: Record<string, unknown>
  readonly protoKeys: ReadonlyArray<string>
  readonly problems: ReadonlyArray<ArgumentProblem>
}

const pathText = (path: ReadonlyArray<string>): string => (path.length === 0 ? "(root)" : path.join("."))

/** A child's path: built only when it is reported, or for a nested array or object. */
const childPath = (path: ReadonlyArray<string>, key: string): ReadonlyArray<string> => [...path, key]

/** The kind of a value that is not JSON-like data, for its clause; `undefined` for data. */
const notData = (value: unknown): string | undefined => {
  switch (typeof value) {
    case "string":
    case "number":
    case "boolean":
    case "undefined":
      return undefined
    case "bigint":
      return "a bigint"
    case "symbol":
      return "a symbol"
    case "function":
      return "a function"
  }
  if (value === null || Array.isArray(value)) return undefined
  const prototype: unknown = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null ? undefined : "a class instance"
}

/** An object or array being copied: its keys, the next one to copy, where the copies go. */
interface Open {
  readonly source: object
  readonly target: Record<string, unknown> | Array<unknown>
  /** The object's own enumerable keys; `undefined` for an array. */
  readonly keys: ReadonlyArray<string> | undefined
  readonly length: number
  readonly path: ReadonlyArray<string>
  index: number
}

/** Opens `source` for copying into `target` (on top of `stack`); the problem when its keys cannot be read. */
const open = (
  stack: Array<Open>,
  source: object,
  target: Open["target"],
  path: ReadonlyArray<string>
): ArgumentProblem | undefined => {
  try {
    const keys = Array.isArray(source) ? undefined : Object.keys(source)
    const length = keys === undefined ? (source as ReadonlyArray<unknown>).length : keys.length
    stack.push({ source, target, keys, length, path, index: 0 })
    return undefined
  } catch {
    return { path, message: UNREADABLE }
  }
}

/**
 * Copies the arguments into plain data, without recursion: fresh arrays and plain objects holding
 * strings, numbers, booleans, `null` and `undefined`, each value read once (a getter runs once; a
 * later change to the caller's objects never reaches the copy). Never throws: a value that throws
 * when read (a getter, a proxy trap) is a problem at its path, and so is anything else that is not
 * data (a bigint, a symbol, a function, a class instance, a cycle), a value nested deeper than
 * `MAX_DEPTH`, and input with more than `MAX_VALUES` values. A `__proto__` key is left out and its
 * path returned.
 */
const plainCopy = (input: object): Copied => {
  // the lists of problems and `__proto__` keys are made only when there is one
  let problems: Array<ArgumentProblem> | undefined
  let protoKeys: Array<string> | undefined
  const root: Record<string, unknown> = {}
  const stack: Array<Open> = []
  let values = 0
  const unreadable = open(stack, input, root, NONE)
  if (unreadable !== undefined) (problems ??= []).push(unreadable)
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!
    if (top.index === top.length) {
      stack.pop()
      continue
    }
    const at = top.index++
    const key = top.keys === undefined ? String(at) : top.keys[at]!
    if (key === "__proto__" && top.keys !== undefined) {
      ;(protoKeys ??= []).push(pathText(childPath(top.path, key)))
      continue
    }
    if (++values > MAX_VALUES) {
      ;(problems ??= []).push({ path: NONE, message: `more than ${MAX_VALUES} values` })
      break
    }
    let value: unknown
    let kind: string | undefined
    let isArray = false
    try {
      value = top.keys === undefined
        ? (top.source as ReadonlyArray<unknown>)[at]
        : (top.source as Record<string, unknown>)[key]
      kind = notData(value)
      isArray = Array.isArray(value)
    } catch {
      ;(problems ??= []).push({ path: childPath(top.path, key), message: UNREADABLE })
      continue
    }
    if (kind !== undefined) {
      ;(problems ??= []).push({ path: childPath(top.path, key), message: `expected JSON data, got ${kind}` })
      continue
    }
    if (typeof value === "number" && !Number.isFinite(value)) {
      // JSON has no NaN or Infinity (a number too large, such as 1e309, parses to Infinity)
      ;(problems ??= []).push({ path: childPath(top.path, key), message: `expected a finite number, got ${value}` })
      continue
    }
    let copy: unknown = value
    if (typeof value === "object" && value !== null) {
      // the open objects are the value's ancestors (at most MAX_DEPTH of them)
      if (stack.some((ancestor) => ancestor.source === value)) {
        ;(problems ??= []).push({ path: childPath(top.path, key), message: "a circular reference" })
        continue
      }
      if (top.path.length >= MAX_DEPTH) {
        ;(problems ??= []).push({ path: childPath(top.path, key), message: `nested deeper than ${MAX_DEPTH} levels` })
        continue
      }
      copy = isArray ? [] : {}
      const problem = open(stack, value, copy as Open["target"], childPath(top.path, key))
      if (problem !== undefined) (problems ??= []).push(problem)
    }
    if (top.keys === undefined) (top.target as Array<unknown>).push(copy)
    else (top.target as Record<string, unknown>)[key] = copy
  }
  return { value: root, protoKeys: protoKeys ?? NONE, problems: problems ?? NO_PROBLEMS }
}

const isKindMismatch = (issue: ParseResult.ParseIssue): boolean =>
  issue._tag === "Type" ||
  ((issue._tag === "Refinement" && issue.kind === "From") ||
      (issue._tag === "Transformation" && issue.kind === "Encoded")
    ? isKindMismatch(issue.issue)
    : false)

/**
 * Collects the key problems of a parse error (unexpected and missing keys) by path, where the
 * path is decided: not inside a union, or inside one whose other members all failed on the kind
 * of the value (an optional or nullable struct, a tagged union's matching member).
 */
const keyProblems = (
  issue: ParseResult.ParseIssue,
  path: ReadonlyArray<PropertyKey>,
  decided: boolean,
  unexpected: Set<string>,
  missing: Set<string>
): void => {
  switch (issue._tag) {
    case "Unexpected":
      if (decided) unexpected.add(path.map(String).join("."))
      return
    case "Missing":
      if (decided) missing.add(path.map(String).join("."))
      return
    case "Pointer":
      return keyProblems(issue.issue, path.concat(issue.path), decided, unexpected, missing)
    case "Refinement":
    case "Transformation":
      return keyProblems(issue.issue, path, decided, unexpected, missing)
    case "Composite": {
      const issues = Array.isArray(issue.issues) ? issue.issues : [issue.issues as ParseResult.ParseIssue]
      const inner = decided &&
        (issue.ast._tag !== "Union" || issues.filter((member) => !isKindMismatch(member)).length === 1)
      for (const member of issues) keyProblems(member, path, inner, unexpected, missing)
      return
    }
    case "Type":
    case "Forbidden":
      return
  }
}

const invalid = (problems: ReadonlyArray<ArgumentProblem>): Either.Either<never, ArgumentProblems> =>
  Either.left({ unexpected: NONE, missing: NONE, ...invalidArgumentFields(problems) })

const EXPECTED = /^Expected (.*), actual (.*)$/s

/** The value problems of a parse error, one per path and message. */
const formatIssues = (error: ParseResult.ParseError): ReadonlyArray<ArgumentProblem> => {
  // Group union alternatives: one entry per (path, actual value), listing every expected alternative.
  const lines = new Map<
    string,
    { readonly path: ReadonlyArray<string>; readonly actual: string; readonly expected: Array<string> }
  >()
  const plain: Array<ArgumentProblem> = []
  const paths: Array<ReadonlyArray<string>> = []
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
    const path = issue.path.map(String)
    paths.push(path)
    const match = issue._tag === "Type" ? EXPECTED.exec(issue.message) : null
    if (match === null) {
      plain.push({ path, message: issue.message })
      continue
    }
    const [, expected = "", actual = ""] = match
    const key = `${JSON.stringify(path)}\u0000${actual}`
    const line = lines.get(key)
    if (line === undefined) lines.set(key, { path, actual, expected: [expected] })
    else if (!line.expected.includes(expected)) line.expected.push(expected)
  }
  const below = (path: ReadonlyArray<string>): boolean =>
    paths.some((other) => other.length > path.length && path.every((key, i) => other[i] === key))
  for (const { actual, expected, path } of lines.values()) {
    const shown = expected.length > 1 ? expected.filter((e) => e !== "undefined") : expected
    // an optional or nullable value whose inner problems are listed: "Expected undefined" says nothing
    if (shown.every((e) => e === "undefined" || e === "null") && below(path)) continue
    plain.push({ path, message: `Expected ${shown.join(" | ")}, actual ${actual}` })
  }
  return plain
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
