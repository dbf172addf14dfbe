/**
 * Edited arguments checked against the JSON Schema recorded on the pending entry, before the
 * operator service records a decision (the run's owner checks them again against the tool's own
 * schema when it resumes). The validator is ajv 8, as in `@agentkit/mcp`: pure JavaScript, draft-07 to 2020-12,
 * every error with its JSON Pointer. A schema is compiled once per tool fingerprint. A schema ajv
 * cannot compile refuses the edit (fail closed).
 *
 * @internal
 */
import { invalidArgumentFields, PythonText, ToolArgumentError } from "@agentkit/core"
import type { ArgumentProblem } from "@agentkit/core"
import { Ajv2020 } from "ajv/dist/2020.js"
import AjvDraft7 from "ajv"
import type { ErrorObject, ValidateFunction } from "ajv"
import addFormatsModule from "ajv-formats"

type Engine = Ajv2020 | InstanceType<typeof AjvDraft7.default>
const addFormats = addFormatsModule as unknown as (ajv: Engine) => void
const Draft7 = AjvDraft7 as unknown as typeof AjvDraft7.default
const options = { strict: false, allErrors: true, validateSchema: false } as const

let engines: { readonly modern: Ajv2020; readonly draft7: InstanceType<typeof AjvDraft7.default> } | undefined
const getEngines = () => {
  if (engines === undefined) {
    const modern = new Ajv2020(options)
    const draft7 = new Draft7(options)
    addFormats(modern)
    addFormats(draft7)
    engines = { modern, draft7 }
  }
  return engines
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const compiled = new Map<string, ValidateFunction | string>()

const compile = (fingerprint: string, schema: unknown): ValidateFunction | string => {
  const cached = compiled.get(fingerprint)
  if (cached !== undefined) return cached
  let made: ValidateFunction | string
  try {
    if (!isObject(schema)) throw new Error("the recorded parameters are not a JSON Schema object")
    const { $id: _id, ...rest } = schema
    const declared = typeof rest.$schema === "string" ? rest.$schema : ""
    const engine = /draft-0[67]/.test(declared) ? getEngines().draft7 : getEngines().modern
    made = engine.compile(rest)
  } catch (error) {
    made = `the tool's recorded JSON Schema cannot be used to check an edit: ${error instanceof Error ? error.message : String(error)}`
  }
  if (compiled.size > 1000) compiled.clear()
  compiled.set(fingerprint, made)
  return made
}

const pathOf = (pointer: string): ReadonlyArray<string> =>
  pointer === "" ? [] : pointer.slice(1).split("/").map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))

const problemOf = (error: ErrorObject): ArgumentProblem => ({ path: pathOf(error.instancePath), message: error.message ?? error.keyword })

/**
 * The problem with edited arguments, as core's `ToolArgumentError` (unexpected, missing, invalid,
 * accepted), or `undefined` when they are valid.
 */
export const check = (
  tool: { readonly name: string; readonly fingerprint: string; readonly parameters: unknown },
  args: unknown
): ToolArgumentError | undefined => {
  const accepted = PythonText.sorted(isObject(tool.parameters) && isObject(tool.parameters.properties) ? Object.keys(tool.parameters.properties) : [])
  const refuse = (fields: { unexpected?: ReadonlyArray<string>; missing?: ReadonlyArray<string>; problems?: ReadonlyArray<ArgumentProblem> }) =>
    new ToolArgumentError({ toolName: tool.name, unexpected: fields.unexpected ?? [], missing: fields.missing ?? [], ...invalidArgumentFields(fields.problems ?? []), accepted })
  if (!isObject(args)) return refuse({ problems: [{ path: [], message: "expected an object of arguments" }] })
  const validate = compile(tool.fingerprint, tool.parameters)
  if (typeof validate === "string") return refuse({ problems: [{ path: [], message: validate }] })
  if (validate(args)) return undefined
  const errors = validate.errors ?? []
  const unexpected = new Set<string>()
  const missing = new Set<string>()
  for (const error of errors) {
    if (error.instancePath !== "") continue
    if (error.keyword === "additionalProperties") unexpected.add(String(error.params.additionalProperty))
    if (error.keyword === "required") missing.add(String(error.params.missingProperty))
  }
  if (unexpected.size > 0 || missing.size > 0) return refuse({ unexpected: PythonText.sorted(unexpected), missing: PythonText.sorted(missing) })
  return refuse({ problems: errors.map(problemOf) })
}
