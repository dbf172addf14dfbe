/**
 * The JSON Schema of an Effect Schema, written by agentkit's own walker over the Schema AST: the
 * same minimal, byte-stable output a tool advertises for its parameters (keys `type, properties,
 * required` at every object level, declaration order, `Int` → `integer`, no `$schema`, `$defs` or
 * refinement titles). Structured output uses it to tell the model the shape of an answer, so the
 * bytes of a prompt stay the same from run to run.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import type * as Schema from "effect/Schema"
import { fromSchema, type JsonSchemaObject, Unsupported } from "./internal/jsonSchema.js"

/**
 * A JSON Schema document (a JSON object).
 *
 * @example
 * ```ts
 * import type { JsonSchema } from "@agentkit/tools"
 *
 * const schema: JsonSchema.JsonSchema = { type: "object", properties: { status: { type: "string" } }, required: ["status"] }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type JsonSchema = JsonSchemaObject

/**
 * The JSON Schema of a schema's encoded side (what a model writes), or why it has none: a
 * declaration without a JSON encoding (`Schema.DateFromSelf`), a `bigint`, a symbol, a recursive
 * schema. Serialize it with `JSON.stringify`: equal schemas give equal bytes.
 *
 * @example
 * ```ts
 * import { JsonSchema } from "@agentkit/tools"
 * import { Either, Schema } from "effect"
 *
 * const Verdict = Schema.Struct({ status: Schema.Literal("shipped", "lost"), days: Schema.Int })
 * const schema = Either.getOrThrow(JsonSchema.make(Verdict))
 * JSON.stringify(schema)
 * // {"type":"object","properties":{"status":{"enum":["shipped","lost"],"type":"string"},"days":{"type":"integer"}},"required":["status","days"]}
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (schema: Schema.Schema.Any): Either.Either<JsonSchema, string> => {
  try {
    return Either.right(fromSchema(schema))
  } catch (error) {
    if (error instanceof Unsupported) {
      const where = error.path === "(root)" ? "the schema" : `'${error.path}'`
      return Either.left(`cannot derive a JSON Schema for ${where}: ${error.detail}`)
    }
    throw error
  }
}
