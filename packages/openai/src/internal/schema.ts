/**
 * What both wire protocols share: the form of a JSON Schema OpenAI's strict mode accepts (every
 * object closes `additionalProperties` and requires every property; any other schema is sent
 * non-strict rather than rejected), and how a tool call's argument text becomes arguments.
 *
 * @internal
 */

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Keywords whose value is a map of name to schema (not a schema itself). */
const SCHEMA_MAPS: ReadonlySet<string> = new Set(["properties", "$defs", "definitions", "patternProperties"])
/** Keywords whose value is data, not schemas. */
const DATA: ReadonlySet<string> = new Set(["enum", "const", "required", "default", "examples"])

const isObjectSchema = (schema: Record<string, unknown>): boolean =>
  schema["type"] === "object" || isRecord(schema["properties"])

/** The subschemas of `schema`, one level down (the schemas inside a map keyword, never its data). */
const subschemas = (schema: Record<string, unknown>): Array<unknown> =>
  Object.entries(schema).flatMap(([key, value]) =>
    DATA.has(key) ? [] : SCHEMA_MAPS.has(key) && isRecord(value) ? Object.values(value) : [value]
  )

const closable = (schema: unknown): boolean => {
  if (Array.isArray(schema)) return schema.every(closable)
  if (!isRecord(schema)) return true
  if (isObjectSchema(schema)) {
    const properties = isRecord(schema["properties"]) ? schema["properties"] : {}
    const required = Array.isArray(schema["required"]) ? schema["required"] : []
    const extra = schema["additionalProperties"]
    if (extra !== undefined && extra !== false) return false
    if (schema["patternProperties"] !== undefined) return false
    if (!Object.keys(properties).every((key) => required.includes(key))) return false
  }
  return subschemas(schema).every(closable)
}

const close = (schema: unknown): unknown => {
  if (Array.isArray(schema)) return schema.map(close)
  if (!isRecord(schema)) return schema
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(schema)) {
    out[key] = DATA.has(key)
      ? value
      : SCHEMA_MAPS.has(key) && isRecord(value)
      ? Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, close(sub)]))
      : close(value)
  }
  if (isObjectSchema(schema)) out["additionalProperties"] = false
  return out
}

/**
 * A schema in the form strict mode accepts, when it can be: a schema whose every object requires
 * all its properties and allows no other (or says nothing of others) is closed
 * (`additionalProperties: false` on every object, which accepts exactly what it accepted for a
 * decoder that ignores unknown keys) and sent `strict`; any other schema is sent as it is,
 * non-strict.
 */
export const strictForm = (
  schema: Record<string, unknown>
): { readonly schema: Record<string, unknown>; readonly strict: boolean } =>
  closable(schema) ? { schema: close(schema) as Record<string, unknown>, strict: true } : { schema, strict: false }

/** The key that carries tool arguments the model sent that are not a JSON object. */
export const RAW_ARGUMENTS_KEY = "_raw"

/** `{}` for no text, the object for a JSON object, `{ _raw }` for anything else. */
export const coerceArguments = (
  raw: string
): { readonly value: Record<string, unknown>; readonly invalid: boolean } => {
  if (raw.trim() === "") return { value: {}, invalid: false }
  try {
    const parsed: unknown = JSON.parse(raw)
    if (isRecord(parsed)) return { value: parsed, invalid: false }
  } catch {
    // fall through: not JSON
  }
  return { value: { [RAW_ARGUMENTS_KEY]: raw }, invalid: true }
}

/** A count from the wire, if it is one. */
export const count = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined
