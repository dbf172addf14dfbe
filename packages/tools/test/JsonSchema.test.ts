/**
 * `JsonSchema.make`: the JSON Schema of any value schema (structured output's shape), by the
 * tool parameters' walker; byte-stable; the encoded side; a schema without JSON is a `Left` that
 * names where, never a throw.
 */
import { JsonSchema } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"

const text = (schema: Schema.Schema.Any) => JSON.stringify(Either.getOrThrow(JsonSchema.make(schema)))

describe("JsonSchema.make", () => {
  it("structs, arrays, unions and scalars, in declaration order, the encoded side", () => {
    expect(
      text(
        Schema.Struct({
          status: Schema.Literal("a", "b"),
          days: Schema.Int,
          at: Schema.optional(Schema.NumberFromString)
        })
      )
    ).toBe(
      "{\"type\":\"object\",\"properties\":{\"status\":{\"enum\":[\"a\",\"b\"],\"type\":\"string\"},\"days\":{\"type\":\"integer\"},\"at\":{\"type\":\"string\"}},\"required\":[\"status\",\"days\"]}"
    )
    expect(text(Schema.Array(Schema.String))).toBe("{\"type\":\"array\",\"items\":{\"type\":\"string\"}}")
    expect(text(Schema.Boolean)).toBe("{\"type\":\"boolean\"}")
  })

  it("a rest record is described by its value schema", () => {
    expect(Either.getOrThrow(JsonSchema.make(Schema.Record({ key: Schema.String, value: Schema.Number }))))
      .toMatchObject({
        type: "object",
        additionalProperties: { type: "number" }
      })
  })

  it("equal schemas give equal bytes", () => {
    const make = () => Schema.Struct({ items: Schema.Array(Schema.Struct({ id: Schema.String, n: Schema.Int })) })
    expect(text(make())).toBe(text(make()))
  })

  it("no JSON representation: a Left naming the field, or the schema itself", () => {
    const at = JsonSchema.make(Schema.Struct({ when: Schema.DateFromSelf }))
    expect(Either.isLeft(at) && at.left).toMatch(
      /^cannot derive a JSON Schema for 'when': unsupported schema kind Declaration/
    )
    const whole = JsonSchema.make(Schema.BigIntFromSelf)
    expect(Either.isLeft(whole) && whole.left).toMatch(/^cannot derive a JSON Schema for the schema: /)
  })
})
