/**
 * The JSON Schema a tool advertises, written by our own walker over the Schema AST.
 *
 * The stock `JSONSchema.make` adds `$schema`, `additionalProperties: false`, `$defs`/`$ref`,
 * refinement titles and built-in descriptions, and orders keys `type, required, properties`.
 * The advertised schema is part of the provider's cache-stable prompt prefix, so it must be minimal
 * and byte-stable: this module builds it once per tool.
 *
 * Rules:
 * - every object level is `{ type, properties, required }` in that order, properties (and
 *   `required`) in declaration order; `required` is always present, `[]` when empty (as Python);
 * - the encoded side of transformations is described (what the model sends);
 * - optional and defaulted properties are not required;
 * - `null` and `undefined` members of a union are dropped (`NullOr(X)` → X's schema);
 * - literals and enums → `{ enum, type }` (`type` after `enum`, only when all values share one
 *   JSON kind), unions of only literals → one `enum`, other unions → `anyOf`;
 * - `Int` (or a refinement annotated `jsonSchema: { type: "integer" }`) → `integer`;
 *   other refinement constraints, titles, identifiers, defaults and examples are never emitted;
 * - a `description` is emitted, last, for properties, array items, tuple elements and record
 *   values. It comes from the property signature, else from the field schema itself, skipping
 *   Effect's built-in texts (keyword defaults such as "a string"; built-in filter texts such as
 *   "an integer" — recognised as a refinement with an Effect schema id whose description starts
 *   with "a "/"an "; to describe such a field with a text that starts that way, annotate the
 *   property signature instead). The encoded side of a transformation is never searched for a
 *   description (Effect puts texts like "a string to be decoded into a number" there);
 * - arrays → `{ type: "array", items }`; tuples → `prefixItems` with `minItems`/`maxItems`;
 *   records → `{ type: "object", additionalProperties: <value schema> }`;
 * - at the top level nothing but `type, properties, required` appears, plus
 *   `additionalProperties: true` when the struct declares a rest record.
 *
 * @internal
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"

/** A JSON value. */
export type JsonValue = string | number | boolean | null | ReadonlyArray<JsonValue> | JsonSchemaObject

/** A JSON object, such as a JSON Schema. */
export interface JsonSchemaObject {
  readonly [key: string]: JsonValue
}

/** A schema or its AST. */
export type SchemaOrAST = Schema.Schema.Any | AST.AST

/** One property of an object shape, on the encoded (wire) side. */
export interface PropertyShape {
  readonly name: string
  readonly required: boolean
  readonly type: AST.AST
  readonly description: string | undefined
}

/** The encoded (wire) shape of a struct: its declared properties and its rest record, if any. */
export interface ObjectShape {
  readonly properties: ReadonlyArray<PropertyShape>
  /** The value schema of the rest record (index signature), when the struct declares one. */
  readonly rest: AST.AST | undefined
}

const ROOT = "(root)"

const toAST = (schema: SchemaOrAST): AST.AST => (Schema.isSchema(schema) ? schema.ast : schema)

/** Builds the advertised JSON Schema of a tool's parameters (a struct); throws on unsupported kinds. */
export const fromParameters = (schema: SchemaOrAST): JsonSchemaObject => {
  const shape = objectShape(toAST(schema), ROOT)
  const out = objectSchema(shape, ROOT, new Set())
  return shape.rest === undefined ? out : { ...out, additionalProperties: true }
}

/**
 * The JSON Schema of any value schema (a struct, an array, a union, a scalar), by the same rules
 * as a tool's parameters, except that a rest record is described (`additionalProperties: <value
 * schema>`) and the schema's own `description` annotation is kept. Throws `Unsupported` on kinds
 * without a JSON representation.
 */
export const fromSchema = (schema: SchemaOrAST): JsonSchemaObject => field(toAST(schema), ROOT, new Set())

/** The declared parameter names (encoded keys) in declaration order. */
export const parameterNames = (schema: SchemaOrAST): Array<string> =>
  objectShape(toAST(schema), ROOT).properties.map((p) => p.name)

/** Whether `name` is a declared parameter whose advertised (encoded) type is `string`. */
export const isStringParameter = (schema: SchemaOrAST, name: string): boolean => {
  const property = objectShape(toAST(schema), ROOT).properties.find((p) => p.name === name)
  return property !== undefined && go(property.type, name, new Set()).type === "string"
}

/** A schema the walker cannot describe: where (a path from the root) and why. */
export class Unsupported extends Error {
  constructor(
    readonly path: string,
    readonly detail: string
  ) {
    super(`cannot derive a JSON Schema for parameter '${path}': ${detail}`)
  }
}

function fail(path: string, ast: AST.AST, why: string): never {
  const name = Option.getOrUndefined(AST.getIdentifierAnnotation(ast)) ??
    Option.getOrUndefined(AST.getTitleAnnotation(ast))
  const kind = name === undefined ? ast._tag : `${ast._tag} (${name})`
  throw new Unsupported(path, `unsupported schema kind ${kind}: ${why}`)
}

const join = (path: string, key: string): string => (path === ROOT ? key : `${path}.${key}`)

/**
 * The encoded (wire) shape of a struct schema: unwraps transformations (a struct with defaults or
 * renamed keys, a `Schema.Class`), refinements and suspensions; throws when it is not a struct.
 */
export const objectShape = (ast: AST.AST, path: string = ROOT): ObjectShape => shapeOf(ast, path, () => undefined)

/** `signature` gives the description annotation of an enclosing property signature, by encoded key. */
const shapeOf = (ast: AST.AST, path: string, signature: (key: PropertyKey) => string | undefined): ObjectShape => {
  switch (ast._tag) {
    case "TypeLiteral":
      return typeLiteralShape(ast, path, signature)
    case "Refinement":
      return shapeOf(ast.from, path, signature)
    case "Suspend":
      return shapeOf(ast.f(), path, signature)
    case "Transformation": {
      if (ast.transformation._tag !== "TypeLiteralTransformation" || ast.to._tag !== "TypeLiteral") {
        return shapeOf(ast.from, path, signature)
      }
      // Property-signature annotations of a transformed struct live on the type side: map the keys back.
      const renamed = new Map<PropertyKey, PropertyKey>()
      for (const t of ast.transformation.propertySignatureTransformations) renamed.set(t.from, t.to)
      const typeSide = ast.to.propertySignatures
      return shapeOf(ast.from, path, (key) => {
        const typeKey = renamed.get(key) ?? key
        const typeSignature = typeSide.find((s) => s.name === typeKey)
        return signature(typeKey) ?? (typeSignature && ownDescriptionAnnotation(typeSignature))
      })
    }
    default:
      return fail(path, ast, "tool parameters must be a struct (Schema.Struct or struct fields)")
  }
}

const typeLiteralShape = (
  ast: AST.TypeLiteral,
  path: string,
  signature: (key: PropertyKey) => string | undefined = () => undefined
): ObjectShape => {
  if (ast.indexSignatures.length > 1) fail(path, ast, "at most one rest record is supported")
  const index = ast.indexSignatures[0]
  if (index !== undefined && index.parameter._tag === "SymbolKeyword") {
    fail(path, ast, "symbol keys have no JSON representation")
  }
  return {
    rest: index?.type,
    properties: ast.propertySignatures.map((p) => {
      if (typeof p.name !== "string") fail(join(path, String(p.name)), ast, "property keys must be strings")
      const name = p.name as string
      return {
        name,
        required: !p.isOptional,
        type: p.type,
        // The property signature's text wins over the field schema's own.
        description: signature(name) ?? ownDescriptionAnnotation(p) ?? fieldDescription(p.type)
      }
    })
  }
}

const objectSchema = (shape: ObjectShape, path: string, active: Set<AST.AST>): JsonSchemaObject => {
  // `Object.fromEntries` defines own properties, so even a parameter named `__proto__` is kept.
  const properties: JsonSchemaObject = Object.fromEntries(
    shape.properties.map((p) => [p.name, describe(go(p.type, join(path, p.name), active), p.description)])
  )
  const required = shape.properties.filter((p) => p.required).map((p) => p.name)
  return { type: "object", properties, required }
}

/** The schema of a value in a field position (property, item, element, record value). */
const field = (ast: AST.AST, path: string, active: Set<AST.AST>): JsonSchemaObject =>
  describe(go(ast, path, active), fieldDescription(ast))

const describe = (schema: JsonSchemaObject, description: string | undefined): JsonSchemaObject =>
  description === undefined ? schema : { ...schema, description }

const go = (ast: AST.AST, path: string, active: Set<AST.AST>): JsonSchemaObject => {
  switch (ast._tag) {
    case "StringKeyword":
    case "TemplateLiteral":
      return { type: "string" }
    case "NumberKeyword":
      return { type: "number" }
    case "BooleanKeyword":
      return { type: "boolean" }
    case "UnknownKeyword":
    case "AnyKeyword":
      return {}
    case "ObjectKeyword":
      return { type: "object" }
    case "Literal":
    case "Enums":
      return ast._tag === "Literal" && ast.literal === null ? { type: "null" } : enumSchema([ast], path)
    case "Union":
      return unionSchema(ast, path, active)
    case "TupleType":
      return tupleSchema(ast, path, active)
    case "TypeLiteral": {
      const shape = typeLiteralShape(ast, path)
      if (shape.rest === undefined) return objectSchema(shape, path, active)
      const additionalProperties = field(shape.rest, `${path}[*]`, active)
      if (shape.properties.length === 0) return { type: "object", additionalProperties }
      return { ...objectSchema(shape, path, active), additionalProperties }
    }
    case "Refinement": {
      const from = go(ast.from, path, active)
      return from.type === "number" && isInt(ast) ? { ...from, type: "integer" } : from
    }
    case "Transformation":
      if (ast.transformation._tag === "TypeLiteralTransformation") {
        // A struct with defaults or renamed keys: keep the type side's property descriptions.
        const shape = objectShape(ast, path)
        if (shape.rest === undefined) return objectSchema(shape, path, active)
      }
      return go(ast.from, path, active)
    case "Suspend": {
      if (active.has(ast)) fail(path, ast, "recursive schemas cannot be inlined")
      active.add(ast)
      try {
        return go(ast.f(), path, active)
      } finally {
        active.delete(ast)
      }
    }
    case "Declaration":
      return fail(path, ast, "it has no JSON encoding (use a schema that transforms from JSON, e.g. Schema.Date)")
    case "BigIntKeyword":
      return fail(path, ast, "bigint has no JSON representation (use Schema.BigInt, encoded as a string)")
    case "UndefinedKeyword":
    case "VoidKeyword":
    case "NeverKeyword":
    case "SymbolKeyword":
    case "UniqueSymbol":
      return fail(path, ast, "it has no JSON representation")
  }
}

const isInt = (ast: AST.Refinement): boolean => {
  if (ast.annotations[AST.SchemaIdAnnotationId] === Schema.IntSchemaId) return true
  const jsonSchema = AST.getJSONSchemaAnnotation(ast)
  return Option.isSome(jsonSchema) && (jsonSchema.value as { readonly type?: unknown }).type === "integer"
}

/** Union members, nested unions flattened, with `null` and `undefined` dropped (they are never advertised). */
const unionMembers = (ast: AST.Union): Array<AST.AST> =>
  ast.types.flatMap((member): Array<AST.AST> => {
    if (member._tag === "Union") return unionMembers(member)
    if (member._tag === "UndefinedKeyword" || member._tag === "VoidKeyword") return []
    if (member._tag === "Literal" && member.literal === null) return []
    return [member]
  })

const unionSchema = (ast: AST.Union, path: string, active: Set<AST.AST>): JsonSchemaObject => {
  const members = unionMembers(ast)
  const [first] = members
  if (first === undefined) return { type: "null" }
  if (members.length === 1) return go(first, path, active)
  if (members.every((m) => m._tag === "Literal" || m._tag === "Enums")) {
    return enumSchema(members as Array<AST.Literal | AST.Enums>, path)
  }
  return { anyOf: members.map((m) => go(m, path, active)) }
}

const enumSchema = (members: ReadonlyArray<AST.Literal | AST.Enums>, path: string): JsonSchemaObject => {
  const values: Array<string | number | boolean> = []
  for (const m of members) {
    if (m._tag === "Enums") {
      for (const [, value] of m.enums) values.push(value)
    } else if (typeof m.literal === "bigint") {
      fail(path, m, "bigint literals have no JSON representation")
    } else if (m.literal !== null) {
      values.push(m.literal)
    }
  }
  const kinds = new Set(
    values.map((v) => (typeof v === "number" ? (Number.isInteger(v) ? "integer" : "number") : typeof v))
  )
  if (kinds.has("integer") && kinds.has("number")) kinds.delete("integer")
  const [kind] = kinds
  return kinds.size === 1 && kind !== undefined ? { enum: values, type: kind } : { enum: values }
}

const tupleSchema = (ast: AST.TupleType, path: string, active: Set<AST.AST>): JsonSchemaObject => {
  const [rest, ...after] = ast.rest
  if (after.length > 0) fail(path, ast, "elements after a rest element are not supported")
  if (ast.elements.length === 0) {
    return rest === undefined
      ? { type: "array", maxItems: 0 }
      : { type: "array", items: field(rest.type, `${path}[]`, active) }
  }
  const prefixItems = ast.elements.map((e, i) => field(e.type, `${path}[${i}]`, active))
  const minItems = ast.elements.filter((e) => !e.isOptional).length
  return rest === undefined
    ? { type: "array", prefixItems, minItems, maxItems: ast.elements.length }
    : { type: "array", prefixItems, items: field(rest.type, `${path}[]`, active), minItems }
}

// ---------------------------------------------------------------------------------------------------
// Descriptions: a field's own text, never Effect's built-in ones.

const ownDescriptionAnnotation = (annotated: AST.Annotated): string | undefined =>
  Option.getOrUndefined(AST.getDescriptionAnnotation(annotated))

const keywordDefaults: Partial<Record<AST.AST["_tag"], AST.AST>> = {
  StringKeyword: AST.stringKeyword,
  NumberKeyword: AST.numberKeyword,
  BooleanKeyword: AST.booleanKeyword,
  BigIntKeyword: AST.bigIntKeyword,
  SymbolKeyword: AST.symbolKeyword,
  UndefinedKeyword: AST.undefinedKeyword,
  VoidKeyword: AST.voidKeyword,
  NeverKeyword: AST.neverKeyword,
  UnknownKeyword: AST.unknownKeyword,
  AnyKeyword: AST.anyKeyword,
  ObjectKeyword: AST.objectKeyword
}

const isEffectSchemaId = (id: unknown): boolean =>
  typeof id === "symbol" && (Symbol.keyFor(id)?.startsWith("effect/") ?? false)

/** The user's description of a schema in a field position, looking through `NullOr`/optional and refinements. */
const fieldDescription = (ast: AST.AST): string | undefined => {
  const own = ownDescriptionAnnotation(ast)
  if (own !== undefined) {
    const keyword = keywordDefaults[ast._tag]
    const builtIn = keyword !== undefined
      ? own === ownDescriptionAnnotation(keyword)
      : ast._tag === "Refinement" && isEffectSchemaId(ast.annotations[AST.SchemaIdAnnotationId]) &&
        /^an? /.test(own)
    if (!builtIn) return own
  }
  if (ast._tag === "Refinement") return fieldDescription(ast.from)
  if (ast._tag === "Union") {
    const members = unionMembers(ast)
    const [only] = members
    if (members.length === 1 && only !== undefined) return fieldDescription(only)
  }
  return undefined
}
