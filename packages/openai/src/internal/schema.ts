/**
 * What both wire protocols share: whether a JSON Schema can be sent `strict` (OpenAI's strict
 * mode accepts only schemas whose every object closes `additionalProperties` and requires every
 * property; any other schema is sent non-strict rather than rejected), and how a tool call's
 * argument text becomes arguments.
 *
 * @internal
 */

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Whether every object in the schema is closed and requires all its properties. */
export const strictCompatible = (schema: unknown): boolean => {
  if (Array.isArray(schema)) return schema.every(strictCompatible)
  if (!isRecord(schema)) return true
  if (schema["type"] === "object" || isRecord(schema["properties"])) {
    const properties = isRecord(schema["properties"]) ? schema["properties"] : {}
    const required = Array.isArray(schema["required"]) ? schema["required"] : []
    if (schema["additionalProperties"] !== false) return false
    if (!Object.keys(properties).every((key) => required.includes(key))) return false
  }
  for (const [key, value] of Object.entries(schema)) {
    if (key === "enum" || key === "const" || key === "required") continue
    if (typeof value === "object" && value !== null && !strictCompatible(value)) return false
  }
  return true
}

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
