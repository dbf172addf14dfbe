/**
 * Edited arguments checked against the JSON Schema recorded on the pending entry, before the
 * operator service records a decision (the run's owner checks them again against the tool's own
 * schema when it resumes). The validator is ajv 8, as in `@agentkit/mcp`: pure JavaScript, draft-07 to 2020-12,
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
    made = engine.compile(rest)
  } catch (error) {
    made = `the tool's recorded JSON Schema cannot be used to check an edit: ${
      error instanceof Error ? error.message : String(error)
    }`
  }
  if (compiled.size > 1000) compiled.clear()
  compiled.set(fingerprint, made)
  return made
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
    if (error.instancePath !== "") continue
    if (error.keyword === "additionalProperties") unexpected.add(String(error.params.additionalProperty))
    if (error.keyword === "required") missing.add(String(error.params.missingProperty))
  }
  if (unexpected.size > 0 || missing.size > 0) {
    return refuse({ unexpected: PythonText.sorted(unexpected), missing: PythonText.sorted(missing) })
  }
  return refuse({ problems: errors.map(problemOf) })
}
