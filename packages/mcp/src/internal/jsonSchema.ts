/**
 * A server's JSON Schema, compiled once into a validator that is stricter than the server asks:
 * an object schema that says nothing about extra keys rejects them (an absent
 * `additionalProperties` is read as `false`, at every level), so a model cannot smuggle an
 * argument the schema does not name to a remote process.
 *
 * The validator is ajv (8.x): the most used and best maintained JSON Schema validator for
 * JavaScript, pure JavaScript (no native build), supporting drafts 06/07, 2019-09 and 2020-12
 * (the MCP default dialect), compiling each schema once into a function, and reporting every
 * error with its JSON Pointer path and keyword parameters, from which the `ToolArgumentError`
 * lists (unexpected, missing, invalid) are built. The MCP SDK ships ajv too, but bundled and
 * behind an interface that only returns a joined message text.
 *
 * Strictness: a node that declares object properties and says nothing of `additionalProperties`,
 * `unevaluatedProperties` or `patternProperties` gets `additionalProperties: false`, or, when it
 * composes other schemas (`allOf`, `anyOf`, `oneOf`, `$ref`, `if`), `unevaluatedProperties: false`
 * (2019-09 and 2020-12 only; a draft-07 composed node is left as the server wrote it). The branches
 * of a composition are not made strict themselves: their parent sees every branch's keys.
 *
 * @internal
 */
import { invalidArgumentFields, PythonText } from "@agentkit/core"
import type { ArgumentProblem } from "@agentkit/core"
import AjvDraft7 from "ajv"
import type { ErrorObject, ValidateFunction } from "ajv"
import addFormatsModule from "ajv-formats"
import { Ajv2019 } from "ajv/dist/2019.js"
import { Ajv2020 } from "ajv/dist/2020.js"

/** A JSON object. */
export type JsonObject = { readonly [key: string]: unknown }

type Engine = Ajv2020 | Ajv2019 | InstanceType<typeof AjvDraft7.default>

const addFormats = addFormatsModule as unknown as (ajv: Engine) => void
const Draft7 = AjvDraft7 as unknown as typeof AjvDraft7.default

const engineOptions = { strict: false, allErrors: true, validateSchema: false, validateFormats: true } as const

let engines:
  | { readonly e2020: Ajv2020; readonly e2019: Ajv2019; readonly e7: InstanceType<typeof AjvDraft7.default> }
  | undefined

const getEngines = () => {
  if (engines === undefined) {
    const e2020 = new Ajv2020(engineOptions)
    const e2019 = new Ajv2019(engineOptions)
    const e7 = new Draft7(engineOptions)
    for (const engine of [e2020, e2019, e7]) addFormats(engine)
    engines = { e2020, e2019, e7 }
  }
  return engines
}

type Dialect = "2020-12" | "2019-09" | "draft-07"

const dialectOf = (schema: JsonObject): Dialect => {
  const declared = typeof schema.$schema === "string"
    ? schema.$schema.replace(/#$/, "").replace(/^http:/, "https:")
    : undefined
  if (declared === undefined || declared === "https://json-schema.org/draft/2020-12/schema") return "2020-12"
  if (declared === "https://json-schema.org/draft/2019-09/schema") return "2019-09"
  if (
    declared === "https://json-schema.org/draft-07/schema" || declared === "https://json-schema.org/draft-06/schema"
  ) {
    return "draft-07"
  }
  throw new Error(
    `unsupported JSON Schema dialect ${JSON.stringify(declared)} (accepted: 2020-12, 2019-09, draft-07, draft-06)`
  )
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const SCHEMA_MAPS = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"] as const
const SCHEMA_SINGLES = [
  "items",
  "additionalItems",
  "contains",
  "propertyNames",
  "additionalProperties",
  "unevaluatedItems",
  "unevaluatedProperties",
  "not"
] as const
const BRANCH_LISTS = ["allOf", "anyOf", "oneOf"] as const
const BRANCH_SINGLES = ["if", "then", "else"] as const

/** A deep copy of `schema` in which every object node is closed to keys it does not name. */
export const strict = (schema: JsonObject, dialect: Dialect): JsonObject => walk(schema, dialect, false) as JsonObject

const walk = (node: unknown, dialect: Dialect, branch: boolean): unknown => {
  if (Array.isArray(node)) return node.map((item) => walk(item, dialect, false))
  if (!isObject(node)) return node
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(node)) {
    if ((SCHEMA_MAPS as ReadonlyArray<string>).includes(key) && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, walk(sub, dialect, false)]))
    } else if ((SCHEMA_SINGLES as ReadonlyArray<string>).includes(key)) {
      out[key] = walk(value, dialect, false)
    } else if (key === "prefixItems" && Array.isArray(value)) {
      out[key] = value.map((item) => walk(item, dialect, false))
    } else if ((BRANCH_LISTS as ReadonlyArray<string>).includes(key) && Array.isArray(value)) {
      out[key] = value.map((item) => walk(item, dialect, true))
    } else if ((BRANCH_SINGLES as ReadonlyArray<string>).includes(key)) {
      out[key] = walk(value, dialect, true)
    } else {
      out[key] = value
    }
  }
  if (branch) return out
  const type = node.type
  const objectNode = type === "object" || (Array.isArray(type) && type.includes("object")) || isObject(node.properties)
  const open = "additionalProperties" in node || "unevaluatedProperties" in node || "patternProperties" in node
  if (!objectNode || open) return out
  const composed = BRANCH_LISTS.some((key) => key in node) || "$ref" in node || "$dynamicRef" in node || "if" in node
  if (!composed) out.additionalProperties = false
  else if (dialect !== "draft-07") out.unevaluatedProperties = false
  return out
}

/** What is wrong with a tool call's arguments: the lists of `ToolArgumentError`. */
export interface Problems {
  readonly unexpected: ReadonlyArray<string>
  readonly missing: ReadonlyArray<string>
  readonly invalid: ReadonlyArray<string>
  readonly invalidArguments: ReadonlyArray<string>
}

/** A compiled argument check: `undefined` when the input is valid. */
export type ArgumentCheck = (input: unknown) => Problems | undefined

/** A compiled value check (an output schema): `undefined` when valid, else the error lines. */
export type ValueCheck = (input: unknown) => ReadonlyArray<string> | undefined

const compile = (schema: JsonObject, closed: boolean): { readonly validate: ValidateFunction } => {
  const dialect = dialectOf(schema)
  const { e2019, e2020, e7 } = getEngines()
  const engine: Engine = dialect === "2020-12" ? e2020 : dialect === "2019-09" ? e2019 : e7
  const { $id: _id, ...rest } = schema // never register the server's ids in the shared engine
  const source = closed ? strict(rest, dialect) : rest
  return { validate: engine.compile(source) }
}

const unescape = (segment: string): string => segment.replace(/~1/g, "/").replace(/~0/g, "~")

const pathOf = (pointer: string): Array<string> => (pointer === "" ? [] : pointer.slice(1).split("/").map(unescape))

const render = (value: unknown): string => {
  if (value === undefined) return "undefined"
  try {
    const text = JSON.stringify(value) ?? String(value)
    return text.length > 80 ? `${text.slice(0, 77)}...` : text
  } catch {
    return String(value)
  }
}

const valueAt = (root: unknown, path: ReadonlyArray<string>): unknown => {
  let current: unknown = root
  for (const key of path) {
    if (typeof current !== "object" || current === null) return undefined
    current = (current as Record<string, unknown>)[key]
  }
  return current
}

const messageOf = (error: ErrorObject, input: unknown): string => {
  const actual = () => render(valueAt(input, pathOf(error.instancePath)))
  switch (error.keyword) {
    case "type":
      return `Expected ${String(error.params.type)}, actual ${actual()}`
    case "enum":
      return `Expected ${
        (error.params.allowedValues as ReadonlyArray<unknown>).map(render).join(" | ")
      }, actual ${actual()}`
    case "const":
      return `Expected ${render(error.params.allowedValue)}, actual ${actual()}`
    case "additionalProperties":
      return `is unexpected: ${PythonText.repr(String(error.params.additionalProperty))}`
    case "unevaluatedProperties":
      return `is unexpected: ${PythonText.repr(String(error.params.unevaluatedProperty))}`
    case "required":
      return `is missing: ${PythonText.repr(String(error.params.missingProperty))}`
    default:
      return error.message ?? error.keyword
  }
}

const problemsOf = (errors: ReadonlyArray<ErrorObject>, input: unknown): ReadonlyArray<ArgumentProblem> =>
  errors
    // "must match a schema in anyOf" and friends repeat what the branch errors already say
    .filter((error) => !["anyOf", "oneOf", "if", "allOf"].includes(error.keyword) || errors.length === 1)
    .map((error) => ({ path: pathOf(error.instancePath), message: messageOf(error, input) }))

const lines = (errors: ReadonlyArray<ErrorObject>, input: unknown): ReadonlyArray<string> =>
  invalidArgumentFields(problemsOf(errors, input)).invalid

/** The argument names a schema declares at its top level, sorted by code point. */
export const acceptedOf = (schema: JsonObject): ReadonlyArray<string> =>
  PythonText.sorted(isObject(schema.properties) ? Object.keys(schema.properties) : [])

/**
 * Compiles an argument check for a tool's input schema, closed to undeclared keys. Throws (at
 * compile time only) when the schema is not one ajv can compile.
 */
export const argumentCheck = (schema: JsonObject): ArgumentCheck => {
  const { validate } = compile(schema, true)
  return (input) => {
    if (!isObject(input)) {
      const got = input === null ? "null" : Array.isArray(input) ? "array" : typeof input
      return {
        unexpected: [],
        missing: [],
        ...invalidArgumentFields([{ path: [], message: `expected an object of arguments, got ${got}` }])
      }
    }
    if (validate(input)) return undefined
    const errors = validate.errors ?? []
    const unexpected: Array<string> = []
    const missing: Array<string> = []
    for (const error of errors) {
      if (error.instancePath !== "") continue
      if (error.keyword === "additionalProperties") unexpected.push(String(error.params.additionalProperty))
      if (error.keyword === "unevaluatedProperties") unexpected.push(String(error.params.unevaluatedProperty))
      if (error.keyword === "required") missing.push(String(error.params.missingProperty))
    }
    if (unexpected.length > 0 || missing.length > 0) {
      return {
        unexpected: PythonText.sorted(new Set(unexpected)),
        missing: PythonText.sorted(new Set(missing)),
        invalid: [],
        invalidArguments: []
      }
    }
    return { unexpected: [], missing: [], ...invalidArgumentFields(problemsOf(errors, input)) }
  }
}

/** Compiles a value check for an output schema, as the server wrote it. Throws at compile time only. */
export const valueCheck = (schema: JsonObject): ValueCheck => {
  const { validate } = compile(schema, false)
  return (input) => (validate(input) ? undefined : lines(validate.errors ?? [], input))
}
