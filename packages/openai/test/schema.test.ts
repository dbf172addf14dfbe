/**
 * The strict form of a JSON Schema: closed when every object requires all its properties,
 * untouched otherwise; property names are names, never mistaken for keywords.
 */
import { describe, expect, it } from "@effect/vitest"
import { strictForm } from "../src/internal/schema.js"

describe("strictForm", () => {
  it("closes every object of a schema that requires all its properties, nested and in $defs", () => {
    const schema = {
      type: "object",
      properties: {
        properties: { type: "object", properties: { type: { type: "string" } }, required: ["type"] },
        items: { type: "array", items: { $ref: "#/$defs/Line" } }
      },
      required: ["properties", "items"],
      $defs: { Line: { type: "object", properties: { sku: { type: "string", enum: ["a", "b"] } }, required: ["sku"] } }
    }
    expect(strictForm(schema)).toEqual({
      strict: true,
      schema: {
        type: "object",
        properties: {
          properties: {
            type: "object",
            properties: { type: { type: "string" } },
            required: ["type"],
            additionalProperties: false
          },
          items: { type: "array", items: { $ref: "#/$defs/Line" } }
        },
        required: ["properties", "items"],
        $defs: {
          Line: {
            type: "object",
            properties: { sku: { type: "string", enum: ["a", "b"] } },
            required: ["sku"],
            additionalProperties: false
          }
        },
        additionalProperties: false
      }
    })
  })

  it("leaves a schema with an optional property or open additional properties as it is, non-strict", () => {
    const optional = { type: "object", properties: { a: { type: "string" }, b: { type: "string" } }, required: ["a"] }
    expect(strictForm(optional)).toEqual({ schema: optional, strict: false })
    const record = { type: "object", additionalProperties: { type: "number" } }
    expect(strictForm(record)).toEqual({ schema: record, strict: false })
    const nested = { type: "object", properties: { x: optional }, required: ["x"] }
    expect(strictForm(nested).strict).toBe(false)
  })
})
