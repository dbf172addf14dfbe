/**
 * The attack suite's model (issue 13): a small description language for tool parameter schemas
 * (nested structs, arrays, tagged unions, records, nullable values, optional and defaulted
 * fields, refinements, transformations, rest records), the Effect Schema each description
 * stands for, generators of valid arguments for it, and mutations that make a valid call
 * invalid or hostile in a known place, with what the rejection must say. The verdicts are
 * written here, from the description, never by asking the implementation. (Not a test file.)
 */
import { PythonText, ToolArgumentError, ToolDenied } from "@agentkit/core"
import { Tool } from "@agentkit/tools"
import { Cause, Exit, FastCheck as fc, Option, Schema } from "effect"

// ---------------------------------------------------------------------------------------------
// Descriptions and their schemas

/** A leaf type: its wire (encoded) form and what a wrong value for it is. */
export type Leaf = "string" | "int" | "number" | "boolean" | "enum" | "posint" | "nonempty" | "date" | "numstr" | "url"

export type Node =
  | { readonly kind: "leaf"; readonly leaf: Leaf }
  | { readonly kind: "array"; readonly item: Node }
  | { readonly kind: "struct"; readonly fields: ReadonlyArray<Field>; readonly rest: boolean }
  | { readonly kind: "record"; readonly value: Node }
  /** A union of structs told apart by a `kind` literal (`m0`, `m1`, ...). */
  | { readonly kind: "tagged"; readonly members: ReadonlyArray<ReadonlyArray<Field>> }
  | { readonly kind: "nullable"; readonly inner: Node }
  | { readonly kind: "unknown" }

export interface Field {
  readonly name: string
  readonly node: Node
  /** `default` only for leaves. */
  readonly mode: "required" | "optional" | "default"
}

export type Struct = Extract<Node, { readonly kind: "struct" }>

const leafSchema = (leaf: Leaf): Schema.Schema.AnyNoContext => {
  switch (leaf) {
    case "string":
    case "url":
      return Schema.String
    case "int":
      return Schema.Int
    case "number":
      return Schema.Number
    case "boolean":
      return Schema.Boolean
    case "enum":
      return Schema.Literal("red", "green", "blue")
    case "posint":
      return Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))
    case "nonempty":
      return Schema.NonEmptyString
    case "date":
      return Schema.Date
    case "numstr":
      return Schema.NumberFromString
  }
}

const leafDefault = (leaf: Leaf): unknown => {
  switch (leaf) {
    case "string":
    case "nonempty":
      return "d"
    case "url":
      return "https://example.com/"
    case "int":
    case "number":
    case "numstr":
      return 0
    case "posint":
      return 1
    case "boolean":
      return false
    case "enum":
      return "red"
    case "date":
      return new Date(0)
  }
}

const fieldsSchema = (fields: ReadonlyArray<Field>): Schema.Struct.Fields => {
  const out: Record<string, Schema.Schema.AnyNoContext | Schema.PropertySignature.All> = {}
  for (const field of fields) {
    const schema = toSchema(field.node)
    if (field.mode === "required") out[field.name] = schema
    else if (field.mode === "optional") out[field.name] = Schema.optional(schema)
    else {
      const fallback = field.node.kind === "leaf" ? leafDefault(field.node.leaf) : undefined
      out[field.name] = Schema.optionalWith(schema, { default: () => fallback as never })
    }
  }
  return out as Schema.Struct.Fields
}

/** The Effect Schema a description stands for. */
export const toSchema = (node: Node): Schema.Schema.AnyNoContext => {
  switch (node.kind) {
    case "leaf":
      return leafSchema(node.leaf)
    case "array":
      return Schema.Array(toSchema(node.item))
    case "struct":
      return node.rest
        ? (Schema.Struct(
          fieldsSchema(node.fields),
          Schema.Record({ key: Schema.String, value: Schema.Unknown })
        ) as unknown as Schema.Schema.AnyNoContext)
        : (Schema.Struct(fieldsSchema(node.fields)) as unknown as Schema.Schema.AnyNoContext)
    case "record":
      return Schema.Record({ key: Schema.String, value: toSchema(node.value) })
    case "tagged":
      return Schema.Union(
        ...node.members.map((fields, i) => Schema.Struct({ kind: Schema.Literal(`m${i}`), ...fieldsSchema(fields) }))
      ) as unknown as Schema.Schema.AnyNoContext
    case "nullable":
      return Schema.NullOr(toSchema(node.inner))
    case "unknown":
      return Schema.Unknown
  }
}

// ---------------------------------------------------------------------------------------------
// Hand-written schemas and random ones

const f = (name: string, node: Node, mode: Field["mode"] = "required"): Field => ({ name, node, mode })
const leaf = (l: Leaf): Node => ({ kind: "leaf", leaf: l })
const struct = (fields: ReadonlyArray<Field>, rest = false): Struct => ({ kind: "struct", fields, rest })

/** Schemas written by hand, so every feature appears in every run. */
export const handWritten: ReadonlyArray<readonly [string, Struct]> = [
  [
    "flat",
    struct([
      f("id", leaf("string")),
      f("qty", leaf("posint")),
      f("note", leaf("string"), "optional"),
      f("mode", leaf("enum"), "default")
    ])
  ],
  [
    "shipping",
    struct([
      f("order_id", leaf("nonempty")),
      f(
        "shipping",
        struct([
          f("street", leaf("string")),
          f("city", leaf("string"), "optional"),
          f("zip", leaf("numstr"), "optional")
        ]),
        "optional"
      ),
      f("billing", { kind: "nullable", inner: struct([f("street", leaf("string")), f("country", leaf("enum"))]) }),
      f("items", {
        kind: "array",
        item: struct([f("sku", leaf("string")), f("qty", leaf("int")), f("gift", leaf("boolean"), "default")])
      })
    ])
  ],
  [
    "payment",
    struct([
      f("amount", leaf("number")),
      f("method", {
        kind: "tagged",
        members: [[f("number", leaf("string")), f("cvv", leaf("int"), "optional")], [f("iban", leaf("nonempty"))], []]
      }),
      f("when", leaf("date"), "optional")
    ])
  ],
  [
    "catalog",
    struct([
      f("prices", { kind: "record", value: leaf("number") }),
      f("stock", {
        kind: "record",
        value: struct([f("count", leaf("int")), f("where", { kind: "array", item: leaf("string") })])
      }, "optional"),
      f("tags", { kind: "array", item: { kind: "nullable", inner: leaf("enum") } }, "optional")
    ])
  ],
  [
    "search",
    struct([
      f("q", leaf("string")),
      f("limit", leaf("int"), "default"),
      f("filters", struct([f("lang", leaf("string"))], true), "optional")
    ], true)
  ],
  [
    "deep",
    struct([
      f(
        "a",
        struct([f("b", struct([f("c", struct([f("d", { kind: "array", item: struct([f("e", leaf("string"))]) })]))]))])
      ),
      f("meta", { kind: "unknown" }, "optional")
    ])
  ],
  ["empty", struct([])],
  [
    "unknowns",
    struct([f("payload", { kind: "unknown" }), f("extra", { kind: "record", value: { kind: "unknown" } }, "optional")])
  ]
]

const leafArb: fc.Arbitrary<Leaf> = fc.constantFrom(
  "string",
  "int",
  "number",
  "boolean",
  "enum",
  "posint",
  "nonempty",
  "date",
  "numstr"
)

/** Random descriptions (field names `f0`, `f1`, ... per level). */
export const structArb: fc.Arbitrary<Struct> = fc.letrec<{ node: Node; struct: Struct }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    { arbitrary: leafArb.map((l): Node => ({ kind: "leaf", leaf: l })), weight: 6 },
    { arbitrary: tie("struct"), weight: 2 },
    { arbitrary: tie("node").map((item): Node => ({ kind: "array", item })), weight: 1 },
    { arbitrary: tie("node").map((value): Node => ({ kind: "record", value })), weight: 1 },
    {
      arbitrary: tie("node").map((inner): Node => (inner.kind === "nullable" ? inner : { kind: "nullable", inner })),
      weight: 1
    },
    {
      arbitrary: fc.array(fc.array(tie("node"), { maxLength: 2 }), { minLength: 1, maxLength: 3 }).map(
        (members): Node => ({
          kind: "tagged",
          members: members.map((nodes) => nodes.map((node, i) => f(`f${i}`, node)))
        })
      ),
      weight: 1
    },
    { arbitrary: fc.constant<Node>({ kind: "unknown" }), weight: 1 }
  ),
  struct: fc
    .tuple(
      fc.array(fc.tuple(tie("node"), fc.constantFrom<Field["mode"]>("required", "required", "optional", "default")), {
        maxLength: 4
      }),
      fc.boolean()
    )
    .map(([fields, rest]): Struct => ({
      kind: "struct",
      rest: rest && fields.length % 3 === 0,
      fields: fields.map(([node, mode], i) =>
        f(`f${i}`, node, mode === "default" && node.kind !== "leaf" ? "optional" : mode)
      )
    }))
})).struct

// ---------------------------------------------------------------------------------------------
// Valid arguments (the wire form), generated from the description

const safeKey = fc.string({ maxLength: 6 }).filter((k) => k !== "__proto__")

/** JSON data with no `__proto__` key (that one is a hostile class of its own). */
export const jsonData: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.string({ maxLength: 6 }),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(safeKey, tie("value"), { maxKeys: 3 })
  )
})).value

const leafValue = (l: Leaf): fc.Arbitrary<unknown> => {
  switch (l) {
    case "string":
      return fc.string({ maxLength: 8 })
    case "int":
      return fc.integer({ min: -1000, max: 1000 })
    case "number":
      return fc.double({ noNaN: true, noDefaultInfinity: true })
    case "boolean":
      return fc.boolean()
    case "enum":
      return fc.constantFrom("red", "green", "blue")
    case "posint":
      return fc.integer({ min: 1, max: 1000 })
    case "nonempty":
      return fc.string({ minLength: 1, maxLength: 8 })
    case "date":
      return fc.date({ min: new Date(0), max: new Date(4102444800000), noInvalidDate: true }).map((d) =>
        d.toISOString()
      )
    case "numstr":
      return fc.integer().map(String)
    case "url":
      return fc.constantFrom("https://example.com/", "https://api.example.com/v1?q=1", "http://docs.example.com/a#b")
  }
}

const fieldsValue = (fields: ReadonlyArray<Field>, rest: boolean): fc.Arbitrary<Record<string, unknown>> => {
  const model: Record<string, fc.Arbitrary<unknown>> = {}
  for (const field of fields) model[field.name] = valueArb(field.node)
  const declared = fc.record(model, { requiredKeys: fields.filter((x) => x.mode === "required").map((x) => x.name) })
  if (!rest) return declared
  const names = new Set(fields.map((x) => x.name))
  return fc
    .tuple(declared, fc.dictionary(safeKey.filter((k) => !names.has(k)), jsonData, { maxKeys: 2 }))
    .map(([d, extra]) => ({ ...extra, ...d }))
}

/** Valid wire values of a description. */
export const valueArb = (node: Node): fc.Arbitrary<unknown> => {
  switch (node.kind) {
    case "leaf":
      return leafValue(node.leaf)
    case "array":
      return fc.array(valueArb(node.item), { maxLength: 3 })
    case "struct":
      return fieldsValue(node.fields, node.rest)
    case "record":
      return fc.dictionary(safeKey, valueArb(node.value), { maxKeys: 3 })
    case "tagged":
      return fc.oneof(
        ...node.members.map((fields, i) => fieldsValue(fields, false).map((v) => ({ kind: `m${i}`, ...v })))
      )
    case "nullable":
      return fc.oneof(fc.constant(null), valueArb(node.inner))
    case "unknown":
      return jsonData
  }
}

// ---------------------------------------------------------------------------------------------
// Where a valid value can be broken

type Path = ReadonlyArray<string>

interface Targets {
  /** Objects of a struct without a rest record (where an unknown key is an error). */
  readonly strictObjects: Array<Path>
  /** Required keys present (not a tagged union's `kind`). */
  readonly required: Array<readonly [Path, string]>
  /** Values with a known wrong value. */
  readonly typed: Array<readonly [Path, unknown]>
  /** Every plain object (a `__proto__` key may go anywhere). */
  readonly objects: Array<Path>
  /** Every value below the root. */
  readonly positions: Array<Path>
}

const wrongValue = (node: Node): unknown => {
  switch (node.kind) {
    case "leaf":
      switch (node.leaf) {
        case "string":
        case "nonempty":
        case "date":
        case "numstr":
        case "url":
          return 12345
        case "int":
        case "number":
          return "seven"
        case "posint":
          return 0
        case "boolean":
          return "yes"
        case "enum":
          return "purple"
      }
      return undefined
    case "array":
      return "not-an-array"
    case "struct":
    case "record":
    case "tagged":
      return 42
    case "nullable":
      return wrongValue(node.inner)
    case "unknown":
      return undefined
  }
}

const collect = (value: unknown, node: Node, path: Path, targets: Targets): void => {
  if (path.length > 0) targets.positions.push(path)
  const wrong = wrongValue(node)
  if (path.length > 0 && wrong !== undefined) targets.typed.push([path, wrong])
  const visitFields = (
    object: Record<string, unknown>,
    fields: ReadonlyArray<Field>,
    strict: boolean,
    tagged: boolean
  ) => {
    targets.objects.push(path)
    if (strict) targets.strictObjects.push(path)
    const declared = new Set(fields.map((x) => x.name))
    if (tagged) declared.add("kind")
    for (const field of fields) {
      if (!Object.hasOwn(object, field.name)) continue
      if (field.mode === "required") targets.required.push([path, field.name])
      collect(object[field.name], field.node, [...path, field.name], targets)
    }
    for (const key of Object.keys(object)) {
      if (!declared.has(key)) collect(object[key], { kind: "unknown" }, [...path, key], targets)
    }
  }
  switch (node.kind) {
    case "leaf":
      return
    case "array":
      ;(value as ReadonlyArray<unknown>).forEach((item, i) => collect(item, node.item, [...path, String(i)], targets))
      return
    case "struct":
      return visitFields(value as Record<string, unknown>, node.fields, !node.rest, false)
    case "record":
      targets.objects.push(path)
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
        collect(item, node.value, [...path, key], targets)
      }
      return
    case "tagged": {
      const object = value as Record<string, unknown>
      const member = node.members[Number(String(object["kind"]).slice(1))]!
      return visitFields(object, member, true, true)
    }
    case "nullable":
      if (value !== null) {
        // the same position: only descend
        const inner: Targets = { ...targets, positions: [], typed: [] }
        collect(value, node.inner, path, inner)
      }
      return
    case "unknown":
      if (Array.isArray(value)) value.forEach((item, i) => collect(item, node, [...path, String(i)], targets))
      else if (typeof value === "object" && value !== null) {
        targets.objects.push(path)
        for (const [key, item] of Object.entries(value)) collect(item, node, [...path, key], targets)
      }
      return
  }
}

// ---------------------------------------------------------------------------------------------
// Calls and their verdicts

/** The classes of calls the suite counts. */
export const classes = [
  "valid",
  "nested unknown keys",
  "missing keys",
  "wrong types",
  "non-objects",
  "deep nesting",
  "proxies that throw",
  "prototype keys",
  "non-JSON values"
] as const
export type Class = (typeof classes)[number]

/** What a rejection must say. */
export type Expect =
  | { readonly kind: "valid" }
  | { readonly kind: "unexpected"; readonly path: string }
  | { readonly kind: "missing"; readonly path: string }
  /**
   * a value problem: some line of `invalid` is at `path` or below it, ending with `clause` if given,
   * and the summary names `top`, the top-level key (taken from the path's keys, not its text)
   */
  | { readonly kind: "invalid"; readonly path: string; readonly top: string; readonly clause?: RegExp | undefined }

export interface Call {
  readonly class: Class
  readonly input: unknown
  readonly expect: Expect
}

const clone = <A>(value: A): A => structuredClone(value)

const parentOf = (root: unknown, path: Path): Record<string, unknown> => {
  let at = root as Record<string, unknown>
  for (const key of path.slice(0, -1)) at = at[key] as Record<string, unknown>
  return at
}
const setAt = (root: unknown, path: Path, value: unknown): void => {
  parentOf(root, path)[path[path.length - 1]!] = value
}
const objectAt = (root: unknown, path: Path): Record<string, unknown> => {
  let at = root as Record<string, unknown>
  for (const key of path) at = at[key] as Record<string, unknown>
  return at
}

const join = (path: Path): string => (path.length === 0 ? "(root)" : path.join("."))
const invalidAt = (path: Path, clause?: RegExp): Expect => ({
  kind: "invalid",
  path: join(path),
  top: path[0] ?? "(root)",
  clause
})

class Widget {
  readonly size = 1
}

const nest = (depth: number, shape: "array" | "object"): unknown => {
  let value: unknown = "bottom"
  for (let i = 0; i < depth; i++) value = shape === "array" ? [value] : { d: value }
  return value
}

const throwing = (kind: number): unknown => {
  const boom = () => {
    throw new Error("hostile")
  }
  switch (kind % 5) {
    case 0:
      return new Proxy({}, { ownKeys: boom })
    case 1:
      return new Proxy({ a: 1, b: 2 }, { get: boom })
    case 2:
      return new Proxy({}, { getPrototypeOf: boom })
    case 3: {
      const revocable = Proxy.revocable([1, 2], {})
      revocable.revoke()
      return revocable.proxy
    }
    default:
      return Object.defineProperty({ ok: 1 }, "bad", { enumerable: true, get: boom })
  }
}

const nonJson = (kind: number): unknown => {
  switch (kind % 9) {
    case 0:
      return 10n
    case 1:
      return Symbol("s")
    case 2:
      return () => "f"
    case 3:
      return new Date(0)
    case 4:
      return new Map([["k", 1]])
    case 5:
      return new Widget()
    case 6:
      return new Uint8Array([1])
    case 7: {
      const cyclic: Record<string, unknown> = { a: 1 }
      cyclic["self"] = cyclic
      return cyclic
    }
    default:
      return [1, new Set([1])]
  }
}

const nonObjects: ReadonlyArray<readonly [unknown, string]> = [
  [null, "null"],
  [undefined, "undefined"],
  [0, "number"],
  [Number.NaN, "number"],
  ["{\"id\":\"x\"}", "string"],
  [true, "boolean"],
  [[], "array"],
  [[{ id: "x" }], "array"],
  [10n, "bigint"],
  [Symbol("s"), "symbol"],
  [() => ({}), "function"],
  [new Date(0), "a class instance"],
  [new Map(), "a class instance"],
  [new Widget(), "a class instance"]
]

/** fast-check prints a counterexample through this (a hostile input would throw if it were stringified). */
const printable = (call: Call): Call =>
  Object.assign(call, {
    [fc.toStringMethod]: () => {
      let input: string
      try {
        input = JSON.stringify(call.input, (_k, v: unknown) => (typeof v === "bigint" ? `${v}n` : v))?.slice(0, 2000) ??
          String(call.input)
      } catch {
        input = "(hostile)"
      }
      return `${call.class} ${JSON.stringify(call.expect)} ${input}`
    }
  })

/** Calls of every class for a description: a valid value, then (maybe) one mutation of it. */
export const callArb = (schema: Struct): fc.Arbitrary<Call> =>
  fc.tuple(valueArb(schema), fc.nat(8), fc.nat(1_000_000), fc.nat(1_000_000)).map(([valid, pick, a, b]) =>
    printable(mutate(schema, valid, pick, a, b))
  )

const mutate = (schema: Struct, valid: unknown, pick: number, a: number, b: number): Call => {
  {
    const targets: Targets = { strictObjects: [], required: [], typed: [], objects: [], positions: [] }
    collect(valid, schema, [], targets)
    const input = clone(valid) as Record<string, unknown>
    const choose = <A>(
      items: ReadonlyArray<A>
    ): A | undefined => (items.length === 0 ? undefined : items[a % items.length])
    switch (pick) {
      case 1: {
        const at = choose(targets.strictObjects)
        if (at === undefined) break
        objectAt(input, at)["zz_extra"] = b % 2 === 0 ? "x" : { nested: [1] }
        return { class: "nested unknown keys", input, expect: { kind: "unexpected", path: join([...at, "zz_extra"]) } }
      }
      case 2: {
        const target = choose(targets.required)
        if (target === undefined) break
        delete objectAt(input, target[0])[target[1]]
        return { class: "missing keys", input, expect: { kind: "missing", path: join([...target[0], target[1]]) } }
      }
      case 3: {
        const target = choose(targets.typed)
        if (target === undefined) break
        setAt(input, target[0], target[1])
        return { class: "wrong types", input, expect: invalidAt(target[0]) }
      }
      case 4: {
        const [value, kind] = nonObjects[a % nonObjects.length]!
        return {
          class: "non-objects",
          input: value,
          expect: invalidAt([], new RegExp(`^\\(root\\): expected an object of arguments, got ${kind}$`))
        }
      }
      case 5: {
        const at = choose(targets.positions)
        if (at === undefined) break
        setAt(input, at, nest([65, 66, 200, 10_000][b % 4]!, b % 3 === 0 ? "object" : "array"))
        return { class: "deep nesting", input, expect: invalidAt(at, /: nested deeper than 64 levels$/) }
      }
      case 6: {
        const at = choose(targets.positions)
        const hostile = throwing(b)
        if (at === undefined) {
          return {
            class: "proxies that throw",
            input: hostile,
            expect: invalidAt([], /: cannot be read \(a getter or proxy threw\)$/)
          }
        }
        if (b % 7 === 0) {
          // a getter on the parent that throws
          const key = at[at.length - 1]!
          Object.defineProperty(parentOf(input, at), key, {
            enumerable: true,
            configurable: true,
            get: () => {
              throw new Error("getter")
            }
          })
        } else setAt(input, at, hostile)
        return {
          class: "proxies that throw",
          input,
          expect: invalidAt(at, /: cannot be read \(a getter or proxy threw\)$/)
        }
      }
      case 7: {
        const at = choose(targets.objects)!
        const object = objectAt(input, at)
        Object.defineProperty(object, "__proto__", {
          value: b % 2 === 0 ? { polluted: true } : "x",
          enumerable: true,
          writable: true,
          configurable: true
        })
        return { class: "prototype keys", input, expect: { kind: "unexpected", path: join([...at, "__proto__"]) } }
      }
      case 8: {
        const at = choose(targets.positions)
        if (at === undefined) break
        setAt(input, at, nonJson(b))
        return {
          class: "non-JSON values",
          input,
          expect: invalidAt(at, /: (expected JSON data, got .+|a circular reference)$/)
        }
      }
    }
    return { class: "valid", input, expect: { kind: "valid" } }
  }
}

// ---------------------------------------------------------------------------------------------
// Judging an outcome

/** The figures a suite prints. */
export class Figures {
  calls = 0
  crashes = 0
  handlerRunsOnInvalid = 0
  handlerSawBadArguments = 0
  validRejected = 0
  answeredFromStore = 0
  invalid = 0
  invalidNamingTheField = 0
  readonly byClass = new Map<Class, number>(classes.map((c) => [c, 0]))
  readonly failures: Array<string> = []

  note(failure: string): void {
    if (this.failures.length < 10) this.failures.push(failure)
  }

  table(title: string): string {
    const rows = [
      `${title}: ${this.calls} generated calls`,
      `  crashes (a defect or a throw instead of a typed error): ${this.crashes}`,
      `  handler runs on invalid input: ${this.handlerRunsOnInvalid}`,
      `  handler given arguments that are not the schema's plain, frozen data: ${this.handlerSawBadArguments}`,
      `  valid calls rejected: ${this.validRejected}`,
      `  invalid calls whose error names the field: ${this.invalidNamingTheField} / ${this.invalid}`,
      ...(this.answeredFromStore > 0
        ? [
          `  non-JSON calls canonically equal to an earlier valid call, answered by idempotency (handler not run): ${this.answeredFromStore}`
        ]
        : []),
      "  per class:",
      ...classes.map((c) => `    ${c.padEnd(20)} ${this.byClass.get(c)}`)
    ]
    return rows.join("\n")
  }
}

/** Whether the error names the path the mutation broke. */
const names = (error: unknown, expect: Exclude<Expect, { kind: "valid" }>): boolean => {
  if (error instanceof ToolArgumentError) {
    switch (expect.kind) {
      case "unexpected":
        return error.unexpected.includes(expect.path) && error.message.includes(PythonText.repr(expect.path))
      case "missing":
        return error.missing.includes(expect.path) && error.message.includes(PythonText.repr(expect.path))
      case "invalid": {
        if (error.unexpected.length > 0 || error.missing.length > 0) return false
        const line = error.invalid.find(
          (l) =>
            (l.startsWith(`${expect.path}:`) || l.startsWith(`${expect.path}.`) || expect.path === "(root)") &&
            (expect.clause === undefined || expect.clause.test(l))
        )
        // the summary names the top-level argument (a hostile root is named by its lines alone)
        return (
          line !== undefined &&
          (expect.path === "(root)" ||
            (error.invalidArguments?.includes(expect.top) === true &&
              error.message.includes(PythonText.repr(expect.top))))
        )
      }
    }
  }
  // a middleware may refuse the call first (egress: the URL argument; idempotency: arguments it
  // cannot hash), naming where
  if (error instanceof ToolDenied) {
    if (expect.path === "(root)") return expect.kind === "invalid"
    const top = expect.kind === "invalid" ? expect.top : expect.path.split(".")[0]!
    return error.message.includes(` at ${expect.path}`) || error.message.includes(PythonText.repr(top))
  }
  return false
}

const isPlainFrozen = (value: unknown, depth = 0): boolean => {
  if (typeof value !== "object" || value === null || value instanceof Date) return true
  if (depth > 80 || !Object.isFrozen(value)) return false
  if (!Array.isArray(value)) {
    const proto: unknown = Object.getPrototypeOf(value)
    if (proto !== Object.prototype && proto !== null) return false
  }
  return Object.values(value).every((v) => isPlainFrozen(v, depth + 1))
}

/** A tool for a description whose handler counts its runs and checks what it was given. */
export const toolFor = (name: string, schema: Struct, options: { readonly urlArg?: boolean } = {}) => {
  const state = { runs: 0, bad: 0 }
  const node: Struct = options.urlArg === true ? withUrl(schema) : schema
  const parameters = toSchema(node)
  const isType = Schema.is(Schema.typeSchema(parameters))
  const tool = Tool.make(name, {
    description: `Fuzz target ${name}: takes the arguments its generated schema describes.`,
    parameters,
    sideEffecting: true,
    urlArg: options.urlArg === true ? "url" : undefined,
    handler: (args: unknown) => {
      state.runs++
      if (!isType(args) || !isPlainFrozen(args)) state.bad++
      return "ok"
    }
  })
  return { tool, node, state }
}

/** The description with a required `url` argument (the egress middleware checks it). */
export const withUrl = (schema: Struct): Struct => ({
  ...schema,
  fields: [...schema.fields.filter((x) => x.name !== "url"), f("url", leaf("url"))]
})

/**
 * Judges one call's exit against its verdict, counting into `figures`; returns what went wrong
 * (`undefined` when nothing did), so a property can fail on it and fast-check shrink it.
 * `pipeline`: the call went through the middleware, so a middleware may refuse hostile arguments
 * (`ToolDenied`) and a valid call may be served from the idempotency store (no handler run).
 */
export const judge = (
  figures: Figures,
  call: Call,
  exit: Exit.Exit<unknown, unknown> | { readonly thrown: unknown },
  handlerRuns: number,
  pipeline = false,
  deduplicated = false
): string | undefined => {
  figures.calls++
  figures.byClass.set(call.class, (figures.byClass.get(call.class) ?? 0) + 1)
  const fail = (text: string) => {
    figures.note(text)
    return text
  }
  if ("thrown" in exit) {
    figures.crashes++
    return fail(`${call.class}: threw ${String(exit.thrown)}`)
  }
  if (Exit.isFailure(exit) && (Cause.isDie(exit.cause) || Option.isNone(Cause.failureOption(exit.cause)))) {
    figures.crashes++
    return fail(`${call.class}: crashed: ${Cause.pretty(exit.cause).slice(0, 500)}`)
  }
  if (call.expect.kind === "valid") {
    if (Exit.isFailure(exit)) {
      figures.validRejected++
      const error = Option.getOrUndefined(Cause.failureOption(exit.cause))
      return fail(`valid call rejected: ${error instanceof Error ? error.message.slice(0, 500) : String(error)}`)
    }
    if (handlerRuns !== 1 && !(pipeline && handlerRuns === 0)) {
      return fail(`valid call ran the handler ${handlerRuns} times`)
    }
    return undefined
  }
  figures.invalid++
  if (handlerRuns > 0) {
    figures.handlerRunsOnInvalid++
    return fail(`${call.class}: the handler ran on invalid input (${JSON.stringify(call.expect)})`)
  }
  if (Exit.isSuccess(exit)) {
    // Idempotency answers a call whose canonical arguments equal an earlier valid call's (a Date
    // and its ISO string hash alike) with that call's outcome, before any validation: the
    // handler does not run, and the result is that valid call's.
    if (pipeline && deduplicated) {
      figures.invalid--
      figures.answeredFromStore++
      return undefined
    }
    return fail(`${call.class}: accepted (${JSON.stringify(call.expect)})`)
  }
  const error = Option.getOrUndefined(Cause.failureOption(exit.cause))
  if (names(error, call.expect) && (pipeline || error instanceof ToolArgumentError)) {
    figures.invalidNamingTheField++
    return undefined
  }
  return fail(
    `${call.class}: ${JSON.stringify(call.expect)} got ${
      error instanceof Error ? error.message.slice(0, 500) : String(error)
    }`
  )
}

/** The checks every suite ends with, after printing its figures. */
export const verdict = (figures: Figures, title: string, badArguments: number) => {
  figures.handlerSawBadArguments = badArguments
  console.log(figures.table(title))
  return {
    crashes: figures.crashes,
    handlerRunsOnInvalid: figures.handlerRunsOnInvalid,
    handlerSawBadArguments: figures.handlerSawBadArguments,
    validRejected: figures.validRejected,
    unnamed: figures.invalid - figures.invalidNamingTheField,
    failures: figures.failures
  }
}
