/**
 * Edited arguments checked against the JSON Schema recorded on the pending entry, before the
 * operator service records a decision (the run's owner checks them again against the tool's own
 * schema when it resumes). They are checked as strictly as the tool's own decoder checks the
 * model's: an object schema that declares properties and says nothing of others takes no other
 * key (at any depth: the advertised schema leaves `additionalProperties` out, the decoder refuses
 * unknown keys), unexpected and missing keys are named by path, and numbers must be finite. The validator is ajv 8, as in `@agentkit/mcp`: pure JavaScript, draft-07 to 2020-12,
 * every error with its JSON Pointer. A schema is compiled once per tool fingerprint. A schema ajv
 * cannot compile refuses the edit (fail closed).
 *
 * ajv is loaded on the first edit that needs it, not when the package is imported: it would be
 * most of the import cost of `@agentkit/agents`, and only operator edits use it.
 *
 * @internal
 */
import { invalidArgumentFields, PythonText, ToolArgumentError } from "@agentkit/core"
import type { ArgumentProblem } from "@agentkit/core"
import type { ErrorObject, ValidateFunction } from "ajv"
import type AjvDraft7 from "ajv"
import type { Ajv2020 } from "ajv/dist/2020.js"
import * as Effect from "effect/Effect"

interface Engines {
  readonly modern: Ajv2020
  readonly draft7: InstanceType<typeof AjvDraft7.default>
}
type Engine = Engines[keyof Engines]
const options = { strict: false, allErrors: true, validateSchema: false } as const

let loading: Promise<Engines> | undefined
const load = async (): Promise<Engines> => {
  const [draft7Module, modernModule, formatsModule] = await Promise.all([
    import("ajv"),
    import("ajv/dist/2020.js"),
    import("ajv-formats")
  ])
  const Draft7 = draft7Module.default as unknown as typeof AjvDraft7.default
  const addFormats = formatsModule.default as unknown as (ajv: Engine) => void
  const modern = new modernModule.Ajv2020(options)
  const draft7 = new Draft7(options)
  addFormats(modern)
  addFormats(draft7)
  return { modern, draft7 }
}
/** The two ajv engines, imported and built once, on first use. */
const engines: Effect.Effect<Engines> = Effect.promise(() => (loading ??= load()))

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const compiled = new Map<string, ValidateFunction | string>()

const compile = (engines: Engines, fingerprint: string, schema: unknown): ValidateFunction | string => {
  const cached = compiled.get(fingerprint)
  if (cached !== undefined) return cached
  let made: ValidateFunction | string
  try {
    if (!isObject(schema)) throw new Error("the recorded parameters are not a JSON Schema object")
    const { $id: _id, ...rest } = schema
    const declared = typeof rest.$schema === "string" ? rest.$schema : ""
    const engine = /draft-0[67]/.test(declared) ? engines.draft7 : engines.modern
    made = engine.compile(strict(rest) as Record<string, unknown>)
  } catch (error) {
    made = `the tool's recorded JSON Schema cannot be used to check an edit: ${
      error instanceof Error ? error.message : String(error)
    }`
  }
  if (compiled.size > 1000) compiled.clear()
  compiled.set(fingerprint, made)
  return made
}

/** Subschema keywords whose value is one schema. */
const single = ["items", "additionalItems", "contains", "not", "if", "then", "else", "propertyNames"]
/** Subschema keywords whose value is a list of schemas. */
const lists = ["allOf", "anyOf", "oneOf", "prefixItems"]
/** Subschema keywords whose value is a record of schemas. */
const records = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]

/**
 * The schema with every object schema that declares properties and says nothing of other keys
 * closed to them (`additionalProperties: false`), as the tool's decoder is. A schema that names
 * `additionalProperties` or `patternProperties`, or combines schemas (`allOf`), is kept open.
 */
const strict = (schema: unknown): unknown => {
  if (Array.isArray(schema)) return schema.map(strict)
  if (!isObject(schema)) return schema
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(schema)) {
    if (single.includes(key) || key === "additionalProperties") out[key] = strict(value)
    else if (lists.includes(key) && Array.isArray(value)) out[key] = value.map(strict)
    else if (records.includes(key) && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, strict(inner)]))
    } else out[key] = value
  }
  if (
    isObject(schema.properties) && !("additionalProperties" in schema) && !("patternProperties" in schema) &&
    !("allOf" in schema) && !("unevaluatedProperties" in schema)
  ) {
    out.additionalProperties = false
  }
  return out
}

/** The non-finite numbers in edited arguments, by path (JSON has none; the tool's decoder refuses them). */
const nonFinite = (value: unknown, path: ReadonlyArray<string>, found: Array<ArgumentProblem>): void => {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) found.push({ path, message: `expected a finite number, got ${value}` })
  } else if (Array.isArray(value)) value.forEach((item, i) => nonFinite(item, [...path, String(i)], found))
  else if (isObject(value)) { for (const [key, item] of Object.entries(value)) nonFinite(item, [...path, key], found) }
}

const pathOf = (pointer: string): ReadonlyArray<string> =>
  pointer === "" ? [] : pointer.slice(1).split("/").map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))

const problemOf = (error: ErrorObject): ArgumentProblem => ({
  path: pathOf(error.instancePath),
  message: error.message ?? error.keyword
})

type Refuse = (
  fields: {
    unexpected?: ReadonlyArray<string>
    missing?: ReadonlyArray<string>
    problems?: ReadonlyArray<ArgumentProblem>
  }
) => ToolArgumentError

/**
 * The problem with edited arguments, as core's `ToolArgumentError` (unexpected, missing, invalid,
 * accepted), or `undefined` when they are valid (loading ajv on the first call that needs it).
 */
export const check = (
  tool: { readonly name: string; readonly fingerprint: string; readonly parameters: unknown },
  args: unknown
): Effect.Effect<ToolArgumentError | undefined> => {
  const accepted = PythonText.sorted(
    isObject(tool.parameters) && isObject(tool.parameters.properties) ? Object.keys(tool.parameters.properties) : []
  )
  const refuse: Refuse = (fields) =>
    new ToolArgumentError({
      toolName: tool.name,
      unexpected: fields.unexpected ?? [],
      missing: fields.missing ?? [],
      ...invalidArgumentFields(fields.problems ?? []),
      accepted
    })
  if (!isObject(args)) {
    return Effect.succeed(refuse({ problems: [{ path: [], message: "expected an object of arguments" }] }))
  }
  const numbers: Array<ArgumentProblem> = []
  nonFinite(args, [], numbers)
  if (numbers.length > 0) return Effect.succeed(refuse({ problems: numbers }))
  return Effect.map(engines, (engines) => checkWith(engines, tool, args, refuse))
}

const checkWith = (
  engines: Engines,
  tool: { readonly fingerprint: string; readonly parameters: unknown },
  args: Record<string, unknown>,
  refuse: Refuse
): ToolArgumentError | undefined => {
  const validate = compile(engines, tool.fingerprint, tool.parameters)
  if (typeof validate === "string") return refuse({ problems: [{ path: [], message: validate }] })
  if (validate(args)) return undefined
  const errors = validate.errors ?? []
  const unexpected = new Set<string>()
  const missing = new Set<string>()
  for (const error of errors) {
    // a key problem inside one branch of a union is the union's value problem, not a key's
    if (/\/(anyOf|oneOf)\//.test(error.schemaPath)) continue
    const at = pathOf(error.instancePath)
    if (error.keyword === "additionalProperties") {
      unexpected.add([...at, String(error.params.additionalProperty)].join("."))
    }
    if (error.keyword === "required") missing.add([...at, String(error.params.missingProperty)].join("."))
  }
  if (unexpected.size > 0 || missing.size > 0) {
    return refuse({ unexpected: PythonText.sorted(unexpected), missing: PythonText.sorted(missing) })
  }
  return refuse({ problems: errors.map(problemOf) })
}
