/**
 * The engine port: the loop's three effects on the outside world, passed in and never called
 * directly. `callModel(name, request)` and `runTool(name, call)` are named after the step
 * (`turn-<iteration>`, `tool-<callId>`), stable across code changes, so a durable engine can
 * journal them as activities; `checkpoint` saves the run's state (absent without a store, so the
 * loop builds nothing to save); `awaitDecision` asks an in-process approver (absent: suspend).
 * The in-process engine calls the Invoker and the checkpointer. @internal
 */
import { Invoker, RunContext } from "@agentkit/core"
import type { CallMetadata, Chat, ChatError, ToolCall, ToolOutcome } from "@agentkit/core"
import type { ToolRegistry } from "@agentkit/tools"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Approval from "../../Approval.js"
import type { Calls } from "../../RunEngine.js"
import type { WriteError } from "../checkpointer.js"
import type { Compact } from "../compaction.js"
import type { Durable } from "../lifecycle.js"
import type { Run } from "./state.js"

export interface Engine {
  readonly callModel: (
    name: string,
    request: Chat.ChatRequest,
    emit: ((delta: Chat.ChatDelta) => void) | undefined
  ) => Effect.Effect<Chat.ChatResponse, ChatError, RunContext>
  /** `meta`: the call's execution-ledger key, who approved it (absent when neither applies). */
  readonly runTool: Calls["runTool"]
  readonly checkpoint: ((status: "running" | "suspended") => Effect.Effect<void, WriteError>) | undefined
  readonly awaitDecision: ((request: Approval.ApprovalRequest) => Effect.Effect<Approval.Decisions>) | undefined
  /** Compacts a request's transcript past the window's share (absent without a `Compaction`). */
  readonly compact?: Compact | undefined
}

/** The in-process engine of one run, over the services of `env` (read once, in one step). */
class InProcess implements Engine {
  readonly checkpoint: Engine["checkpoint"]
  readonly awaitDecision: Engine["awaitDecision"]
  readonly #invoker: Invoker.Service

  constructor(run: Run, durable: Durable | undefined, env: Context.Context<Invoker | RunContext>, cognition: "react") {
    this.#invoker = Context.get(env, Invoker)
    const approver = Context.getOption(env as Context.Context<never>, Approval.Approver)
    this.awaitDecision = Option.isNone(approver) ? undefined : approver.value.decide
    this.checkpoint = durable === undefined
      ? undefined
      : (status) => durable.checkpoint(status, () => run.toState(Context.get(env, RunContext), cognition))
  }

  callModel(_name: string, request: Chat.ChatRequest, emit: ((delta: Chat.ChatDelta) => void) | undefined) {
    return this.#invoker.chat(request, emit === undefined ? undefined : { emit })
  }

  runTool(_name: string, call: ToolCall.ToolCall, tool: ToolRegistry.AnyTool, meta: CallMetadata | undefined) {
    return this.#invoker.tool(call, tool, meta === undefined ? undefined : { meta }) as Effect.Effect<
      ToolOutcome,
      unknown,
      RunContext
    >
  }
}

/** The in-process engine of one run. */
export const inProcess = (
  run: Run,
  durable: Durable | undefined,
  env: Context.Context<Invoker | RunContext>,
  cognition: "react"
): Engine => new InProcess(run, durable, env, cognition)

/** The engine whose model and tool calls are the hook's wrapping of `engine`'s (deltas are not passed on). */
export const withCalls = (engine: Engine, wrap: (calls: Calls) => Calls): Engine => {
  const calls = wrap({
    callModel: (name, request) => engine.callModel(name, request, undefined),
    runTool: (name, call, tool, meta) => engine.runTool(name, call, tool, meta)
  })
  return {
    callModel: (name, request) => calls.callModel(name, request),
    runTool: calls.runTool,
    checkpoint: engine.checkpoint,
    awaitDecision: engine.awaitDecision
  }
}

/** The engine with a compactor (its summary calls go through `engine`'s model calls). */
export const withCompaction = (engine: Engine, compact: Compact): Engine => ({
  callModel: (name, request, emit) => engine.callModel(name, request, emit),
  runTool: (name, call, tool, meta) => engine.runTool(name, call, tool, meta),
  checkpoint: engine.checkpoint,
  awaitDecision: engine.awaitDecision,
  compact
})
