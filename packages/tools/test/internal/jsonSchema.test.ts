import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc, Schema } from "effect"
import { fromParameters, isStringParameter, parameterNames } from "../../src/internal/jsonSchema.js"

const json = (schema: Schema.Schema.Any): string => JSON.stringify(fromParameters(schema))
const field = (schema: Schema.Schema.Any): string => {
  const properties = fromParameters(Schema.Struct({ x: schema })).properties as Record<string, unknown>
  return JSON.stringify(properties.x)
}

describe("fromParameters", () => {
  it("matches the seed's lookup_order schema byte for byte", () => {
    expect(json(Schema.Struct({ order_id: Schema.String }))).toBe(
      `{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}`
    )
  })

  it("leaves a defaulted parameter out of required (cancel_order)", () => {
    const cancelOrder = Schema.Struct({
      order_id: Schema.String,
      reason: Schema.optionalWith(Schema.String, { default: () => "customer request" })
    })
    expect(json(cancelOrder)).toBe(
      `{"type":"object","properties":{"order_id":{"type":"string"},"reason":{"type":"string"}},"required":["order_id"]}`
    )
  })

  it("keeps declaration order for properties and required, and emits required: [] when empty", () => {
    expect(json(Schema.Struct({ zeta: Schema.String, alpha: Schema.Number, mid: Schema.optional(Schema.Boolean) })))
      .toBe(
        `{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"number"},"mid":{"type":"boolean"}},"required":["zeta","alpha"]}`
      )
    expect(json(Schema.Struct({}))).toBe(`{"type":"object","properties":{},"required":[]}`)
    expect(json(Schema.Struct({ a: Schema.optional(Schema.String) }))).toBe(
      `{"type":"object","properties":{"a":{"type":"string"}},"required":[]}`
    )
  })

  it("maps the primitive types (Int to integer)", () => {
    expect(field(Schema.String)).toBe(`{"type":"string"}`)
    expect(field(Schema.Number)).toBe(`{"type":"number"}`)
    expect(field(Schema.Int)).toBe(`{"type":"integer"}`)
    expect(field(Schema.Boolean)).toBe(`{"type":"boolean"}`)
    expect(field(Schema.Int.pipe(Schema.positive()))).toBe(`{"type":"integer"}`)
    expect(field(Schema.NonNegativeInt)).toBe(`{"type":"integer"}`)
    expect(field(Schema.Unknown)).toBe(`{}`)
  })

  it("puts enum before type for literals and enums", () => {
    expect(field(Schema.Literal("c", "f"))).toBe(`{"enum":["c","f"],"type":"string"}`)
    expect(field(Schema.Literal(1, 2, 3))).toBe(`{"enum":[1,2,3],"type":"integer"}`)
    expect(field(Schema.Literal(1, 2.5))).toBe(`{"enum":[1,2.5],"type":"number"}`)
    expect(field(Schema.Literal(true, false))).toBe(`{"enum":[true,false],"type":"boolean"}`)
    expect(field(Schema.Literal("a", 1))).toBe(`{"enum":["a",1]}`)
    expect(field(Schema.Literal("only"))).toBe(`{"enum":["only"],"type":"string"}`)
    expect(field(Schema.Enums({ A: "a", B: "b" }))).toBe(`{"enum":["a","b"],"type":"string"}`)
    expect(field(Schema.Union(Schema.Literal("a"), Schema.Literal("b")))).toBe(`{"enum":["a","b"],"type":"string"}`)
  })

  it("drops null from unions and uses anyOf for other unions", () => {
    expect(field(Schema.NullOr(Schema.Int))).toBe(`{"type":"integer"}`)
    expect(field(Schema.NullOr(Schema.Literal("x", "y")))).toBe(`{"enum":["x","y"],"type":"string"}`)
    expect(field(Schema.NullishOr(Schema.String))).toBe(`{"type":"string"}`)
    expect(field(Schema.Union(Schema.Int, Schema.String))).toBe(`{"anyOf":[{"type":"integer"},{"type":"string"}]}`)
    expect(field(Schema.Union(Schema.Boolean, Schema.String))).toBe(`{"anyOf":[{"type":"boolean"},{"type":"string"}]}`)
    expect(field(Schema.Null)).toBe(`{"type":"null"}`)
    // NullOr does not make a parameter optional.
    expect(json(Schema.Struct({ n: Schema.NullOr(Schema.String) }))).toBe(
      `{"type":"object","properties":{"n":{"type":"string"}},"required":["n"]}`
    )
  })

  it("describes arrays of structs with full nested object schemas", () => {
    const items = Schema.Array(Schema.Struct({ sku: Schema.String, qty: Schema.optional(Schema.Int) }))
    expect(field(items)).toBe(
      `{"type":"array","items":{"type":"object","properties":{"sku":{"type":"string"},"qty":{"type":"integer"}},"required":["sku"]}}`
    )
    expect(field(Schema.Struct({ inner: Schema.Struct({ a: Schema.String }) }))).toBe(
      `{"type":"object","properties":{"inner":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}},"required":["inner"]}`
    )
  })

  it("describes tuples with prefixItems", () => {
    expect(field(Schema.Tuple(Schema.String, Schema.optionalElement(Schema.Number)))).toBe(
      `{"type":"array","prefixItems":[{"type":"string"},{"type":"number"}],"minItems":1,"maxItems":2}`
    )
    expect(field(Schema.NonEmptyArray(Schema.String))).toBe(
      `{"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"string"},"minItems":1}`
    )
  })

  it("gives a record field its own schema with additionalProperties", () => {
    expect(field(Schema.Record({ key: Schema.String, value: Schema.Number }))).toBe(
      `{"type":"object","additionalProperties":{"type":"number"}}`
    )
    expect(field(Schema.Struct({ a: Schema.String }, Schema.Record({ key: Schema.String, value: Schema.Boolean }))))
      .toBe(
        `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":{"type":"boolean"}}`
      )
  })

  it("adds only additionalProperties: true at the top level for a rest record (**kwargs)", () => {
    const withRest = Schema.Struct({ a: Schema.String }, Schema.Record({ key: Schema.String, value: Schema.Unknown }))
    expect(json(withRest)).toBe(
      `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":true}`
    )
  })

  it("emits a field's own description, last", () => {
    const schema = Schema.Struct({
      order_id: Schema.String.annotations({ description: "The order id" }),
      signature: Schema.propertySignature(Schema.String).annotations({ description: "On the signature" }),
      reason: Schema.optionalWith(Schema.String, { default: () => "customer request" }).annotations({
        description: "Why"
      }),
      inner: Schema.optionalWith(Schema.String.annotations({ description: "Inner" }), { default: () => "x" }),
      both: Schema.optionalWith(Schema.String.annotations({ description: "Inner" }), { default: () => "x" })
        .annotations({ description: "Signature wins" }),
      unit: Schema.Literal("c", "f").annotations({ description: "Unit" }),
      maybe: Schema.NullOr(Schema.Int.annotations({ description: "How many" })),
      tags: Schema.Array(Schema.String.annotations({ description: "A tag" })).annotations({ description: "Tags" }),
      address: Schema.Struct({ city: Schema.String }).annotations({ description: "Where" })
    }).annotations({ description: "top-level descriptions are not advertised here", title: "Params" })
    expect(json(schema)).toBe(
      `{"type":"object","properties":{` +
        `"order_id":{"type":"string","description":"The order id"},` +
        `"signature":{"type":"string","description":"On the signature"},` +
        `"reason":{"type":"string","description":"Why"},` +
        `"inner":{"type":"string","description":"Inner"},` +
        `"both":{"type":"string","description":"Signature wins"},` +
        `"unit":{"enum":["c","f"],"type":"string","description":"Unit"},` +
        `"maybe":{"type":"integer","description":"How many"},` +
        `"tags":{"type":"array","items":{"type":"string","description":"A tag"},"description":"Tags"},` +
        `"address":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"description":"Where"}` +
        `},"required":["order_id","signature","unit","maybe","tags","address"]}`
    )
  })

  it("does not leak refinement titles or built-in descriptions", () => {
    for (
      const schema of [
        Schema.Int,
        Schema.NonEmptyString,
        Schema.Number.pipe(Schema.positive()),
        Schema.String.pipe(Schema.minLength(3), Schema.maxLength(9)),
        Schema.UUID,
        Schema.Trimmed,
        Schema.NumberFromString,
        Schema.Date,
        Schema.BigInt,
        Schema.Array(Schema.Int),
        Schema.optional(Schema.NonEmptyString)
      ]
    ) {
      const text = JSON.stringify(fromParameters(Schema.Struct({ x: schema })))
      expect(text).not.toContain("title")
      expect(text).not.toContain("description")
    }
    // A refinement's text set by the user is kept; one set before refining is found through it.
    expect(field(Schema.String.annotations({ description: "Name" }).pipe(Schema.minLength(1)))).toBe(
      `{"type":"string","description":"Name"}`
    )
  })

  it("inlines schemas with identifiers: no $defs or $ref", () => {
    const Address = Schema.Struct({ city: Schema.String }).annotations({ identifier: "Address" })
    const text = json(Schema.Struct({ home: Address, work: Address, name: Schema.NonEmptyString }))
    expect(text).toBe(
      `{"type":"object","properties":{"home":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},` +
        `"work":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"name":{"type":"string"}},` +
        `"required":["home","work","name"]}`
    )
  })

  it("describes the encoded side of transformations (what the model sends)", () => {
    expect(field(Schema.NumberFromString)).toBe(`{"type":"string"}`)
    expect(field(Schema.Date)).toBe(`{"type":"string"}`)
    const renamed = Schema.Struct({ orderId: Schema.propertySignature(Schema.String).pipe(Schema.fromKey("order_id")) })
    expect(json(renamed)).toBe(`{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}`)
    const renamedDescribed = Schema.Struct({
      orderId: Schema.propertySignature(Schema.String).annotations({ description: "Id" }).pipe(
        Schema.fromKey("order_id")
      )
    })
    expect(json(renamedDescribed)).toBe(
      `{"type":"object","properties":{"order_id":{"type":"string","description":"Id"}},"required":["order_id"]}`
    )
    class Point extends Schema.Class<Point>("Point")({ x: Schema.Number }) {}
    expect(json(Point)).toBe(`{"type":"object","properties":{"x":{"type":"number"}},"required":["x"]}`)
  })

  it("never emits $schema, title or additionalProperties: false", () => {
    const text = json(
      Schema.Struct({
        a: Schema.Struct({ b: Schema.Array(Schema.Struct({ c: Schema.Int })) }),
        d: Schema.Option(Schema.String)
      })
    )
    expect(text).not.toMatch(/\$schema|\$ref|\$defs|title|"additionalProperties":false/)
  })

  it("throws a clear error naming the path and kind for unsupported schemas", () => {
    expect(() => fromParameters(Schema.Struct({ when: Schema.DateFromSelf }))).toThrow(
      "cannot derive a JSON Schema for parameter 'when': unsupported schema kind Declaration (DateFromSelf)"
    )
    expect(() => fromParameters(Schema.Struct({ items: Schema.Array(Schema.Struct({ n: Schema.BigIntFromSelf })) })))
      .toThrow("parameter 'items[].n': unsupported schema kind BigIntKeyword")
    expect(() => fromParameters(Schema.Struct({ s: Schema.SymbolFromSelf }))).toThrow(
      "unsupported schema kind SymbolKeyword"
    )
    expect(() => fromParameters(Schema.String)).toThrow("parameter '(root)'")
    interface Tree {
      readonly children: ReadonlyArray<Tree>
    }
    const Tree: Schema.Schema<Tree> = Schema.Struct({ children: Schema.Array(Schema.suspend(() => Tree)) })
    expect(() => fromParameters(Schema.Struct({ tree: Tree }))).toThrow("recursive schemas cannot be inlined")
  })

  it("keeps a parameter named __proto__", () => {
    const fields = Object.fromEntries([["__proto__", Schema.String]]) as { readonly __proto__: typeof Schema.String }
    expect(json(Schema.Struct(fields))).toBe(
      `{"type":"object","properties":{"__proto__":{"type":"string"}},"required":["__proto__"]}`
    )
  })
})

describe("parameterNames and isStringParameter", () => {
  const schema = Schema.Struct({
    url: Schema.String,
    count: Schema.Int,
    link: Schema.optional(Schema.NullOr(Schema.String)),
    alias: Schema.propertySignature(Schema.String).pipe(Schema.fromKey("wire"))
  })

  it("lists the encoded keys in declaration order", () => {
    expect(parameterNames(schema)).toEqual(["url", "count", "link", "wire"])
    expect(parameterNames(schema.ast)).toEqual(["url", "count", "link", "wire"])
  })

  it("tells whether a parameter is a string", () => {
    expect(isStringParameter(schema, "url")).toBe(true)
    expect(isStringParameter(schema, "link")).toBe(true)
    expect(isStringParameter(schema, "wire")).toBe(true)
    expect(isStringParameter(schema, "count")).toBe(false)
    expect(isStringParameter(schema, "nope")).toBe(false)
  })
})

// ---------------------------------------------------------------------------------------------------
// Property: equal schemas built separately serialise to identical bytes, in the pinned shape.

type Spec =
  | { readonly kind: "string" | "number" | "int" | "boolean" | "nonEmpty" | "numberFromString" }
  | { readonly kind: "literals"; readonly values: ReadonlyArray<string> }
  | { readonly kind: "array" | "nullOr" | "record"; readonly inner: Spec }
  | { readonly kind: "union"; readonly members: ReadonlyArray<Spec> }
  | { readonly kind: "described"; readonly inner: Spec; readonly text: string }
  | { readonly kind: "struct"; readonly fields: ReadonlyArray<FieldSpec> }

interface FieldSpec {
  readonly name: string
  readonly mode: "required" | "optional" | "default"
  readonly spec: Spec
}

// No Object.prototype names (`__proto__`, `constructor`, ...): Effect 3.22 itself rejects them as defaulted
// keys ("Duplicate property signature transformation").
const fieldName = fc.oneof(
  fc.constantFrom("order_id", "reason", "a", "B", "é", "x y", "0"),
  fc.string({ minLength: 1, maxLength: 6 })
)

const { struct } = fc.letrec<{ spec: Spec; struct: Spec }>((tie) => ({
  spec: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom<Spec>(
      { kind: "string" },
      { kind: "number" },
      { kind: "int" },
      { kind: "boolean" },
      { kind: "nonEmpty" },
      { kind: "numberFromString" }
    ),
    fc.record({
      kind: fc.constant("literals" as const),
      values: fc.uniqueArray(fc.string(), { minLength: 1, maxLength: 4 })
    }),
    fc.record({ kind: fc.constantFrom("array" as const, "nullOr" as const, "record" as const), inner: tie("spec") }),
    fc.record({ kind: fc.constant("union" as const), members: fc.array(tie("spec"), { minLength: 2, maxLength: 3 }) }),
    fc.record({ kind: fc.constant("described" as const), inner: tie("spec"), text: fc.string({ minLength: 1 }) }),
    tie("struct")
  ),
  struct: fc.record({
    kind: fc.constant("struct" as const),
    fields: fc.uniqueArray(
      fc.record({
        name: fieldName,
        mode: fc.constantFrom("required" as const, "optional" as const, "default" as const),
        spec: tie("spec")
      }),
      { maxLength: 4, selector: (f) => f.name }
    )
  })
}))

const build = (s: Spec): Schema.Schema.AnyNoContext => {
  switch (s.kind) {
    case "string":
      return Schema.String
    case "number":
      return Schema.Number
    case "int":
      return Schema.Int
    case "boolean":
      return Schema.Boolean
    case "nonEmpty":
      return Schema.NonEmptyString
    case "numberFromString":
      return Schema.NumberFromString
    case "literals":
      return Schema.Literal(...(s.values as [string, ...Array<string>]))
    case "array":
      return Schema.Array(build(s.inner))
    case "nullOr":
      return Schema.NullOr(build(s.inner))
    case "record":
      return Schema.Record({ key: Schema.String, value: build(s.inner) })
    case "union":
      return Schema.Union(...s.members.map(build))
    case "described":
      return build(s.inner).annotations({ description: s.text })
    case "struct":
      return Schema.Struct(
        Object.fromEntries(
          s.fields.map((f) => {
            const inner = build(f.spec)
            const property = f.mode === "required"
              ? inner
              : f.mode === "optional"
              ? Schema.optional(inner)
              : Schema.optionalWith(inner as Schema.Schema<unknown>, { default: () => undefined })
            return [f.name, property]
          })
        )
      )
  }
}

/** Every object level starts with type, properties, required; nothing the pinned rules forbid appears. */
const checkShape = (node: unknown): void => {
  if (Array.isArray(node)) return node.forEach(checkShape)
  if (typeof node !== "object" || node === null) return
  const keys = Object.keys(node)
  for (const banned of ["$schema", "$ref", "$defs", "title"]) expect(keys).not.toContain(banned)
  if ("properties" in node) {
    expect(keys.slice(0, 3)).toEqual(["type", "properties", "required"])
    const required = (node as unknown as { readonly required: ReadonlyArray<string> }).required
    for (const name of required) expect(Object.keys(node.properties as object)).toContain(name)
  }
  if ("enum" in node) expect(keys[0]).toBe("enum")
  if ("description" in node) expect(keys[keys.length - 1]).toBe("description")
  for (const [key, value] of Object.entries(node)) {
    if (key === "properties") Object.values(value as object).forEach(checkShape)
    else if (key !== "enum" && key !== "required") checkShape(value)
  }
}

describe("fromParameters (property)", () => {
  it("serialises separately built, equal schemas to identical bytes in the pinned shape", () => {
    fc.assert(
      fc.property(struct, (s) => {
        const first = JSON.stringify(fromParameters(build(s)))
        const second = JSON.stringify(fromParameters(build(s)))
        expect(second).toBe(first)
        const parsed = JSON.parse(first) as Record<string, unknown>
        expect(Object.keys(parsed)).toEqual(["type", "properties", "required"])
        checkShape(parsed)
      }),
      { numRuns: 300 }
    )
  })
})
