/**
 * The engine hook (experimental): how another engine drives the same ReAct step function. The
 * loop's model and tool calls go through an engine port, named after the step (`turn-<iteration>`,
 * `tool-<callId>`, and `tool-<callId>/retry-<createdAt>` for a call retried after it was found in
 * doubt; a selector coordinator's pick is `select-<turn>`). When a `RunEngine` is in the context,
 * the ReAct cognition passes its in-process calls to `wrap` and drives the loop through what comes
 * back (and a selector coordinator its model call), so a durable engine can journal each call as
 * a named activity. Optional: read from the context, never in `agent.run`'s requirements.
 *
 * @since 0.2.0
 * @experimental
 */
import type { CallMetadata, Chat, ChatError, RunContext, ToolCall, ToolOutcome } from "@agentkit/core"
import type { ToolRegistry } from "@agentkit/tools"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"

/**
 * The calls an engine may wrap: a model call and a tool call, each with its stable step name.
 * `meta` carries the execution ledger's key for a side-effecting, non-idempotent tool and who
 * approved the call (absent when neither applies). Text deltas are not passed to a wrapped model call.
 *
 * @example
 * ```ts
 * import type { RunEngine } from "@agentkit/agents"
 *
 * const traced = (calls: RunEngine.Calls): RunEngine.Calls => ({
 *   callModel: (name, request) => calls.callModel(name, request),
 *   runTool: (name, call, tool, meta) => calls.runTool(name, call, tool, meta)
 * })
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface Calls {
  readonly callModel: (
    name: string,
    request: Chat.ChatRequest
  ) => Effect.Effect<Chat.ChatResponse, ChatError, RunContext>
  readonly runTool: (
    name: string,
    call: ToolCall.ToolCall,
    tool: ToolRegistry.AnyTool,
    meta: CallMetadata | undefined
  ) => Effect.Effect<ToolOutcome, unknown, RunContext>
}

/**
 * The engine hook: `wrap` gets a run's in-process calls and gives the calls the loop makes.
 *
 * @example
 * ```ts
 * import { RunEngine } from "@agentkit/agents"
 * import { Effect } from "effect"
 *
 * const logged = Effect.provideService(Effect.void, RunEngine.RunEngine, {
 *   wrap: (calls) => ({ ...calls, callModel: (name, request) => Effect.zipRight(Effect.log(name), calls.callModel(name, request)) })
 * })
 * ```
 *
 * @since 0.2.0
 * @category services
 */
export class RunEngine
  extends Context.Tag("@agentkit/agents/RunEngine")<RunEngine, { readonly wrap: (calls: Calls) => Calls }>()
{}
