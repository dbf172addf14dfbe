/**
 * The durable engine's calls: every model and tool call of the step function a named activity
 * whose result (or failure) is journaled, so a re-driven body replays it instead of calling
 * again. Failures are journaled in the form the step reads them: an error that ends the run or a
 * call found in doubt as itself, any other tool failure as the text the model would see
 * (`RecordedFailure`), so a replay gives the model the same words.
 *
 * Sub-runs (`asTool`, `runAgents`, coordinators, graphs) reach the same calls on their own run
 * context: their steps are journaled too, each under the sub-run's path below the root, built of
 * the seams' segments (`ask_billing#c1/turn-0`, `fan#c2/alpha#0/tool-k1`, `critic#3/turn-1`,
 * `draft/turn-0`), so names stay stable and never collide with the root's or a sibling's. A
 * delegating call (one that starts sub-runs) is not an activity itself: its sub-runs' steps are,
 * and the sub-runs' records keep where they are, so a re-driven call replays them, and a sub-run
 * that suspends reaches the loop as a suspension, never journaled as the call's result. @internal
 */
import type { RunEngine } from "@agentkit/agents"
import {
  BudgetExceeded,
  Cancelled,
  Chat,
  ChatModelError,
  endsRun,
  RecordedFailure,
  RunContext,
  StoreError,
  toolFailureText,
  ToolInDoubt
} from "@agentkit/core"
import * as Activity from "@effect/workflow/Activity"
import { WorkflowEngine, WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

const ModelFailure = Schema.Union(ChatModelError, BudgetExceeded)
const ToolFailure = Schema.Union(ToolInDoubt, RecordedFailure, BudgetExceeded, Cancelled, StoreError)
const ToolResult = Schema.Struct({ text: Schema.String })

type Journal = { readonly engine: WorkflowEngine["Type"]; readonly instance: WorkflowInstance["Type"] }

/** A tool failure as journaled: kept when the step acts on it, else the text the model sees. */
const journaled = (name: string) => (error: unknown): Schema.Schema.Type<typeof ToolFailure> =>
  error instanceof ToolInDoubt || error instanceof RecordedFailure || (endsRun(error) && Schema.is(ToolFailure)(error))
    ? error
    : new RecordedFailure({ toolName: name, text: toolFailureText(name, error) })

/** A step's journal name: the root's as it is, a sub-run's under its path below the root. */
export const scoped = (context: RunContext.Service, name: string): string => {
  if (context.runId === context.rootRunId) return name
  const below = context.runId.startsWith(`${context.rootRunId}/`)
    ? context.runId.slice(context.rootRunId.length + 1)
    : context.runId
  return `${below}/${name}`
}

/** The calls of one workflow execution, each an activity named after the step (and the sub-run it is in). */
export const wrap = (journal: Journal) => (calls: RunEngine.Calls): RunEngine.Calls => ({
  callModel: (name, request) =>
    Effect.flatMap(
      RunContext,
      (context) =>
        Activity.make({
          name: scoped(context, name),
          success: Chat.ChatResponse,
          error: ModelFailure,
          execute: calls.callModel(name, request)
        }).pipe(
          Effect.provideService(WorkflowEngine, journal.engine),
          Effect.provideService(WorkflowInstance, journal.instance)
        )
    ),
  runTool: (name, call, tool, meta) =>
    tool.delegating
      ? calls.runTool(name, call, tool, meta)
      : Effect.flatMap(RunContext, (context) =>
        Activity.make({
          name: scoped(context, name),
          success: ToolResult,
          error: ToolFailure,
          execute: calls.runTool(name, call, tool, meta).pipe(
            Effect.map((outcome) => ({ text: outcome.text })),
            Effect.mapError(journaled(call.name))
          )
        }).pipe(
          Effect.map((result) => ({ text: result.text, value: result.text })),
          Effect.provideService(WorkflowEngine, journal.engine),
          Effect.provideService(WorkflowInstance, journal.instance)
        ))
})
