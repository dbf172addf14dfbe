/**
 * What only the middleware tests share: the test layer with their defaults and a tool that counts
 * its runs. Models, responses and the clock helper come from `@agentkit/testing`. (Not a test
 * file: vitest only collects `*.test.ts`.)
 */
import type { Budget, ChatMiddleware, ChatModel, ToolCall, ToolMiddleware } from "@agentkit/core"
import { FakeLLM, Fixture, makeTestCtx } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import { Layer, Schema } from "effect"

/**
 * The test context (`makeTestCtx`) over `chatModel`, with run id and correlation id `run-1` unless
 * given. The fake models bill what their scripts say: the models the requests name (`m`, `with-ceiling`) are free in the model
 * catalog, so a call under a cost ceiling reserves no money.
 */
export const setup = (options: {
  readonly chatModel?: Layer.Layer<ChatModel>
  readonly chatMiddleware?: ReadonlyArray<ChatMiddleware>
  readonly toolMiddleware?: ReadonlyArray<ToolMiddleware>
  readonly budget?: Budget.Budget | Budget.Limits
  readonly scope?: { readonly orgId?: number | string; readonly domainId?: number | string } | undefined
  readonly correlationId?: string
  readonly runId?: string
  readonly tracing?: boolean
}) =>
  Layer.merge(
    makeTestCtx({
      llm: options.chatModel ?? FakeLLM.replying().layer,
      chatMiddleware: options.chatMiddleware,
      toolMiddleware: options.toolMiddleware,
      budget: options.budget,
      scope: options.scope,
      correlationId: options.correlationId ?? "run-1",
      runId: options.runId ?? options.correlationId ?? "run-1",
      tracing: options.tracing
    }),
    FakeLLM.freeCatalog("m", "with-ceiling")
  )

/** A tool call, name first: `call(name, args?, id = "c1")`. */
export const call = (name: string, args: Record<string, unknown> = {}, id = "c1"): ToolCall.ToolCall =>
  Fixture.toolCall(id, name, args)

/**
 * A tool that accepts any arguments and counts its runs; `run(count, args)` decides each run's
 * outcome (default: "ok"). A thrown error becomes a `ToolExecutionError`.
 */
export const countingTool = (
  name: string,
  flags: { readonly sideEffecting: boolean; readonly idempotent?: boolean; readonly urlArg?: string },
  run: (count: number, args: Readonly<Record<string, unknown>>) => unknown = () => "ok"
) => {
  const state = { count: 0 }
  const tool = Tool.make(name, {
    description: `A test tool named ${name} that counts how many times it runs.`,
    parameters: flags.urlArg === undefined
      ? Schema.Struct({}, Schema.Record({ key: Schema.String, value: Schema.Unknown }))
      : Schema.Struct({ [flags.urlArg]: Schema.String }, Schema.Record({ key: Schema.String, value: Schema.Unknown })),
    sideEffecting: flags.sideEffecting,
    idempotent: flags.idempotent,
    urlArg: flags.urlArg,
    handler: (args: Readonly<Record<string, unknown>>) => {
      state.count += 1
      return run(state.count, args)
    }
  })
  return {
    tool,
    get count() {
      return state.count
    }
  }
}
