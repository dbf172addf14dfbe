/**
 * The durable engine's calls: every model and tool call of the step function a named activity
 * whose result (or failure) is journaled, so a re-driven body replays it instead of calling
 * again. Failures are journaled in the form the step reads them: an error that ends the run or a
 * call found in doubt as itself, any other tool failure as the text the model would see
 * (`RecordedFailure`), so a replay gives the model the same words. @internal
 */
import { BudgetExceeded, Cancelled, Chat, ChatModelError, endsRun, RecordedFailure, StoreError, toolFailureText, ToolInDoubt } from "@agentkit/core"
import type { RunEngine } from "@agentkit/agents"
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

/** The calls of one workflow execution, each an activity named after the step. */
export const wrap =
  (journal: Journal) =>
  (calls: RunEngine.Calls): RunEngine.Calls => ({
    callModel: (name, request) =>
      Activity.make({ name, success: Chat.ChatResponse, error: ModelFailure, execute: calls.callModel(name, request) }).pipe(
        Effect.provideService(WorkflowEngine, journal.engine),
        Effect.provideService(WorkflowInstance, journal.instance)
      ),
    runTool: (name, call, tool, meta) =>
      Activity.make({
        name,
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
      )
  })
