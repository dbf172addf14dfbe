/**
 * Type-level tests: checked by `tsc -b packages/tools` (the `expectTypeOf` calls are no-ops at
 * run time). The runtime halves check that what the types forbid also fails for plain JavaScript.
 */
import { RunContext, ToolDefinitionError } from "@agentkit/core"
import type {
  BudgetExceeded,
  Cancelled,
  DepthExceeded,
  StoreError,
  ToolArgumentError,
  ToolExecutionError,
  ToolShapeError,
  ToolTimeoutError
} from "@agentkit/core"
import { asTool, Tool, ToolRegistry } from "@agentkit/tools"
import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import { Context, Data, Effect, Schema } from "effect"

const DESCRIPTION = "A test tool with a description long enough to pass."

class Foo extends Context.Tag("test/Foo")<Foo, { readonly greeting: string }>() {}
class Bar extends Context.Tag("test/Bar")<Bar, { readonly n: number }>() {}
class NotFound extends Data.TaggedError("NotFound")<{ readonly id: string }> {}

type Builtin = ToolArgumentError | ToolShapeError | ToolExecutionError | ToolTimeoutError

describe("types", () => {
  it("Tool.make without `sideEffecting` does not compile (and throws for plain JavaScript)", () => {
    expect(() =>
      // @ts-expect-error sideEffecting is a required property
      Tool.make("x", { description: DESCRIPTION, parameters: {}, handler: () => "ok" })
    ).toThrow(ToolDefinitionError)
  })

  it("sideEffecting must be a boolean", () => {
    expect(() =>
      // @ts-expect-error a string is not a boolean
      Tool.make("x", { description: DESCRIPTION, parameters: {}, sideEffecting: "no", handler: () => "ok" })
    ).toThrow(ToolDefinitionError)
  })

  it("the handler's arguments are readonly and typed from struct fields", () => {
    Tool.make("typed", {
      description: DESCRIPTION,
      parameters: {
        order_id: Schema.String,
        qty: Schema.Number,
        tags: Schema.Array(Schema.String),
        nested: Schema.Struct({ level: Schema.Literal("low", "high") }),
        note: Schema.optional(Schema.String)
      },
      sideEffecting: false,
      handler: (args, handlerContext) => {
        expectTypeOf(args).toEqualTypeOf<{
          readonly order_id: string
          readonly qty: number
          readonly tags: ReadonlyArray<string>
          readonly nested: { readonly level: "low" | "high" }
          readonly note?: string | undefined
        }>()
        expectTypeOf(args.nested.level).toEqualTypeOf<"low" | "high">()
        expectTypeOf(handlerContext.signal).toEqualTypeOf<AbortSignal>()
        expectTypeOf(handlerContext.context).toEqualTypeOf<RunContext.Service>()
        // @ts-expect-error the arguments are readonly
        args.order_id = "other"
        // @ts-expect-error nested values are readonly too
        args.nested.level = "low"
        // @ts-expect-error arrays are readonly
        args.tags.push("x")
        // @ts-expect-error an undeclared argument does not exist
        void args.order
        return "ok"
      }
    })
  })

  it("a whole Schema.Struct types the arguments, defaults applied", () => {
    Tool.make("cancel_order", {
      description: DESCRIPTION,
      parameters: Schema.Struct({
        order_id: Schema.String,
        reason: Schema.optionalWith(Schema.String, { default: () => "customer request" })
      }),
      sideEffecting: true,
      handler: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ readonly order_id: string; readonly reason: string }>()
        // @ts-expect-error readonly
        args.reason = "x"
        return "ok"
      }
    })
  })

  it("an inline data-first `Schema.optionalWith(...)` among plain fields defeats inference: args are a loud type, never `any`", () => {
    // microsoft/TypeScript#54184: a dual (data-first / data-last) call written directly in the
    // fields is skipped in the first inference pass, so `P` falls back to its constraint. Tool.make
    // then types the arguments as `ParametersNotInferred`, so any use of them is a compile error.
    Tool.make("cancel_order", {
      description: DESCRIPTION,
      parameters: {
        order_id: Schema.String,
        reason: Schema.optionalWith(Schema.String, { default: () => "customer request" })
      },
      sideEffecting: true,
      handler: (args) => {
        expectTypeOf(args).toEqualTypeOf<Tool.ParametersNotInferred>()
        return "ok"
      }
    })
    // the data-last form infers
    Tool.make("cancel_order", {
      description: DESCRIPTION,
      parameters: {
        order_id: Schema.String,
        reason: Schema.String.pipe(Schema.optionalWith({ default: () => "customer request" }))
      },
      sideEffecting: true,
      handler: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ readonly order_id: string; readonly reason: string }>()
        return "ok"
      }
    })
    const fields = {
      order_id: Schema.String,
      reason: Schema.optionalWith(Schema.String, { default: () => "customer request" })
    }
    Tool.make("cancel_order", {
      description: DESCRIPTION,
      parameters: fields,
      sideEffecting: true,
      handler: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ readonly order_id: string; readonly reason: string }>()
        return "ok"
      }
    })
  })

  it("a plain or Promise handler: the tool needs only RunContext and fails only with the built-in errors", () => {
    const plain = Tool.make("plain", {
      description: DESCRIPTION,
      parameters: {},
      sideEffecting: false,
      handler: () => 42
    })
    expectTypeOf(plain.run).returns.toEqualTypeOf<Effect.Effect<number, Builtin, RunContext>>()
    const promised = Tool.make("promised", {
      description: DESCRIPTION,
      parameters: {},
      sideEffecting: false,
      handler: async () => ({ ok: true })
    })
    expectTypeOf(promised.run).returns.toEqualTypeOf<Effect.Effect<{ ok: boolean }, Builtin, RunContext>>()
    expectTypeOf(plain.name).toEqualTypeOf<"plain">()
  })

  it("an Effect handler's requirements and errors flow into the tool's run; RunContext is not added twice", () => {
    const greet = Tool.make("greet", {
      description: DESCRIPTION,
      parameters: { id: Schema.String },
      sideEffecting: false,
      handler: ({ id }) =>
        Effect.gen(function*() {
          const foo = yield* Foo
          const run = yield* RunContext
          if (id === "") return yield* Effect.fail(new NotFound({ id }))
          return `${foo.greeting} ${id} (${run.correlationId})`
        })
    })
    expectTypeOf(greet.run).returns.toEqualTypeOf<Effect.Effect<string, Builtin | NotFound, RunContext | Foo>>()
    expectTypeOf<Effect.Effect.Context<ReturnType<typeof greet.run>>>().toEqualTypeOf<RunContext | Foo>()

    const whoami = Tool.make("whoami", {
      description: DESCRIPTION,
      parameters: {},
      sideEffecting: false,
      handler: () => Effect.map(RunContext, (run) => run.correlationId)
    })
    expectTypeOf<Effect.Effect.Context<ReturnType<typeof whoami.run>>>().toEqualTypeOf<RunContext>()
  })

  it("a success schema decides the tool's success type", () => {
    const Quote = Schema.Struct({ symbol: Schema.String, price: Schema.Number })
    const quote = Tool.make("quote", {
      description: DESCRIPTION,
      parameters: { symbol: Schema.String },
      success: Quote,
      sideEffecting: false,
      handler: ({ symbol }) => Effect.succeed({ symbol, price: 101.5 })
    })
    expectTypeOf<Effect.Effect.Success<ReturnType<typeof quote.run>>>().toEqualTypeOf<typeof Quote.Type>()
  })

  it("a handler whose result is not of the success schema's type does not compile (plain, Promise or Effect)", () => {
    const Quote = Schema.Struct({ symbol: Schema.String, price: Schema.Number })
    const options = {
      description: DESCRIPTION,
      parameters: { symbol: Schema.String },
      success: Quote,
      sideEffecting: false
    } as const
    // @ts-expect-error price must be a number
    Tool.make("plain", { ...options, handler: ({ symbol }) => ({ symbol, price: "a lot" }) })
    // @ts-expect-error price must be a number
    Tool.make("promised", { ...options, handler: async ({ symbol }) => ({ symbol, price: "a lot" }) })
    // @ts-expect-error price must be a number
    Tool.make("effectful", { ...options, handler: ({ symbol }) => Effect.succeed({ symbol, price: "a lot" }) })
    // @ts-expect-error symbol is missing
    Tool.make("missing", { ...options, handler: () => Effect.succeed({ price: 1 }) })
    // the right shape compiles in each form
    Tool.make("ok1", { ...options, handler: ({ symbol }) => ({ symbol, price: 1 }) })
    Tool.make("ok2", { ...options, handler: async ({ symbol }) => ({ symbol, price: 1 }) })
    Tool.make("ok3", { ...options, handler: ({ symbol }) => Effect.succeed({ symbol, price: 1 }) })
  })

  it("an untyped upstream value is checked against success without a cast: Tool.unchecked", () => {
    const Quote = Schema.Struct({ symbol: Schema.String, price: Schema.Number })
    const upstream: Effect.Effect<unknown> = Effect.succeed({ symbol: "ACME", price: 1 })
    const options = { description: DESCRIPTION, parameters: {}, success: Quote, sideEffecting: false } as const
    // @ts-expect-error an unknown value is not of the schema's type
    Tool.make("untyped", { ...options, handler: () => upstream })
    const quote = Tool.make("marked", { ...options, handler: () => Effect.map(upstream, Tool.unchecked) })
    expectTypeOf<Effect.Effect.Success<ReturnType<typeof quote.run>>>().toEqualTypeOf<typeof Quote.Type>()
    Tool.make("promised", { ...options, handler: () => Promise.resolve<unknown>({}).then(Tool.unchecked) })
  })

  it("a registry's tools carry the union of their requirements", () => {
    const a = Tool.make("a", {
      description: DESCRIPTION,
      parameters: {},
      sideEffecting: false,
      handler: () => Effect.map(Foo, (f) => f.greeting)
    })
    const b = Tool.make("b", {
      description: DESCRIPTION,
      parameters: {},
      sideEffecting: false,
      handler: () => Effect.map(Bar, (x) => x.n)
    })
    const registry = ToolRegistry.fromTools([a, b])
    expectTypeOf<ToolRegistry.Requirements<ReturnType<typeof registry.get>>>().toEqualTypeOf<Foo | Bar>()
  })

  it("asTool: the runnable's requirements minus RunContext, plus BudgetExceeded | Cancelled | DepthExceeded | StoreError", () => {
    const sub = asTool(
      { run: (task: string) => Effect.flatMap(RunContext, () => Effect.map(Foo, (f) => `${f.greeting} ${task}`)) },
      { name: "sub", description: DESCRIPTION }
    )
    expectTypeOf(sub.run).returns.toEqualTypeOf<
      Effect.Effect<string, Builtin | BudgetExceeded | Cancelled | DepthExceeded | StoreError, RunContext | Foo>
    >()
  })
})
