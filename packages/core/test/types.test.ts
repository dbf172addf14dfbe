/**
 * Type-level tests: `tsc -b packages/core` checks them; at run time `expectTypeOf` is a no-op.
 */
import { Budget, Cancellation, ChatModel, Invoker, Quota, RunContext, Tracing } from "@agentkit/core"
import type {
  Autonomy,
  BudgetExceeded,
  Cancelled,
  Chat,
  ChatError,
  ChatMiddleware,
  ChatModelError,
  ConfigurationError,
  DepthExceeded,
  InvokableTool,
  ToolCall,
  ToolMiddleware,
  ToolOutcome,
  ToolPipelineError
} from "@agentkit/core"
import { Context, Effect } from "effect"
import type { Layer, Stream } from "effect"
import { describe, expectTypeOf, it } from "vitest"

class Database extends Context.Tag("test/Database")<Database, { readonly query: string }>() {}
class MyError {
  readonly _tag = "MyError"
}

describe("types", () => {
  it("RunContext.cancellable adds Cancelled to the errors and RunContext to the requirements", () => {
    const work = Effect.fail(new MyError()) as Effect.Effect<number, MyError, Database>
    expectTypeOf(RunContext.cancellable(work)).toEqualTypeOf<
      Effect.Effect<number, MyError | Cancelled, Database | RunContext>
    >()
  })

  it("RunContext.provide removes RunContext from the requirements and adds ConfigurationError", () => {
    const work = Effect.map(RunContext, (context) => context.depth) as Effect.Effect<
      number,
      MyError,
      Database | RunContext
    >
    expectTypeOf(work.pipe(RunContext.provide({}))).toEqualTypeOf<
      Effect.Effect<number, MyError | ConfigurationError, Database>
    >()
  })

  it("RunContext constructors and child", () => {
    expectTypeOf(RunContext.layer({})).toEqualTypeOf<Layer.Layer<RunContext, ConfigurationError>>()
    expectTypeOf(RunContext.make()).toEqualTypeOf<Effect.Effect<RunContext.Service, ConfigurationError>>()
    expectTypeOf(RunContext.child).toEqualTypeOf<Effect.Effect<RunContext.Service, DepthExceeded, RunContext>>()
    expectTypeOf<ReturnType<RunContext.Service["child"]>>().toEqualTypeOf<
      Effect.Effect<RunContext.Service, DepthExceeded>
    >()
    expectTypeOf<RunContext.Service["autonomy"]>().toEqualTypeOf<Autonomy>()
    expectTypeOf<Autonomy>().toEqualTypeOf<"auto" | "gated" | "manual">()
    // @ts-expect-error an unknown tier is a type error
    RunContext.layer({ autonomy: "yolo" })
  })

  it("`yield* RunContext` gives the service", () => {
    const program = Effect.gen(function*() {
      return yield* RunContext
    })
    expectTypeOf(program).toEqualTypeOf<Effect.Effect<RunContext.Service, never, RunContext>>()
  })

  it("Invoker.chat requires RunContext and fails with ChatError", () => {
    expectTypeOf<ReturnType<Invoker.Service["chat"]>>().toEqualTypeOf<
      Effect.Effect<Chat.ChatResponse, ChatError, RunContext>
    >()
    expectTypeOf<ChatError>().toEqualTypeOf<ChatModelError | BudgetExceeded>()
    const program = Effect.flatMap(Invoker, (invoker) => invoker.chat({ model: "m", messages: [], tools: [] }))
    expectTypeOf(program).toEqualTypeOf<Effect.Effect<Chat.ChatResponse, ChatError, Invoker | RunContext>>()
  })

  it("Invoker.tool carries the tool's own errors and requirements", () => {
    const tool = null as unknown as InvokableTool<MyError, Database>
    const call = null as unknown as ToolCall.ToolCall
    const program = Effect.flatMap(Invoker, (invoker) => invoker.tool(call, tool))
    expectTypeOf(program).toEqualTypeOf<
      Effect.Effect<ToolOutcome, MyError | ToolPipelineError, Invoker | RunContext | Database>
    >()
  })

  it("Invoker.layer needs a ChatModel", () => {
    expectTypeOf(Invoker.layer({})).toEqualTypeOf<Layer.Layer<Invoker, never, ChatModel>>()
  })

  it("middleware are handler transformers; a tool middleware stays generic", () => {
    const chat: ChatMiddleware = (next) => (call) => next(call)
    const tool: ToolMiddleware = (next) => (call) => next(call)
    expectTypeOf(chat).parameter(0).returns.toEqualTypeOf<Effect.Effect<Chat.ChatResponse, ChatError>>()
    expectTypeOf(tool).returns.toBeFunction()
    // a chat middleware may not add requirements of its own
    // @ts-expect-error the pipeline handler has no requirements
    const needsDb: ChatMiddleware = (next) => (call) => Effect.zipRight(Database, next(call))
    void needsDb
  })

  it("ChatModel.stream is a Stream of deltas", () => {
    expectTypeOf(ChatModel.stream({ model: "m", messages: [], tools: [] })).toEqualTypeOf<
      Stream.Stream<Chat.ChatDelta, ChatModelError, ChatModel>
    >()
  })

  it("meters and cancellation", () => {
    expectTypeOf(Budget.make({})).toEqualTypeOf<Effect.Effect<Budget.Budget, ConfigurationError>>()
    expectTypeOf(Budget.unsafeMake().guard).toEqualTypeOf<Effect.Effect<void, BudgetExceeded>>()
    expectTypeOf(Quota.make({})).toEqualTypeOf<Effect.Effect<Quota.Quota, ConfigurationError>>()
    expectTypeOf(Quota.unsafeMake({}).charge).returns.toEqualTypeOf<Effect.Effect<void>>()
    expectTypeOf(Cancellation.check(Cancellation.make())).toEqualTypeOf<Effect.Effect<void, Cancelled>>()
    expectTypeOf(Tracing.addEvent("x")).toEqualTypeOf<Effect.Effect<void>>()
    // never called: only the type checker reads it
    const assignSpend = (budget: Budget.Budget) => {
      // @ts-expect-error spend is read-only
      budget.spentUsd = 0
    }
    void assignSpend
  })
})
