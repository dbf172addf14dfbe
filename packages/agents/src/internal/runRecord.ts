/**
 * A run's parts in the forms its checkpoint record keeps them: the context's and usage's fields of
 * a `RunState` (enough to rebuild them in another process, money exact), a finished run's result
 * and a failed or cancelled run's reason (canonical JSON, read back into the values they were).
 * The lifecycle writes and reads them; the cognitions use the state fields when they build a
 * `RunState`. @internal
 */
import { CanonicalJson, Usage } from "@agentkit/core"
import type { CheckpointStore, RunContext } from "@agentkit/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Results from "../AgentResult.js"
import { RunStateCorrupt } from "../Errors.js"
import * as RunState from "../RunState.js"
import type { StructuredOutput } from "../StructuredOutput.js"
import { lazy } from "./lazy.js"

/** A run's result; `parsed` is the structured output's, when the agent has one. */
type AgentResult = Results.AgentResult<unknown>

/** The context's state fields: enough to rebuild it in another process. */
export const contextState = (context: RunContext.Service): RunState.RunState["context"] => {
  const { orgId, domainId, userId, sessionId } = context.scope
  const scope: {
    -readonly [K in keyof RunState.RunState["context"]["scope"]]: RunState.RunState["context"]["scope"][K]
  } = {}
  if (orgId !== undefined) scope.orgId = orgId
  if (domainId !== undefined) scope.domainId = domainId
  if (userId !== undefined) scope.userId = userId
  if (sessionId !== undefined) scope.sessionId = sessionId
  return {
    scope,
    autonomy: context.autonomy,
    limits: context.budget.limits,
    correlationId: context.correlationId,
    ...(context.threadId === undefined ? {} : { threadId: context.threadId })
  }
}

/** Usage as stored (exact money). */
export const usageState = (usage: Usage.Usage): RunState.RunState["usage"] => ({
  inputTokens: usage.inputTokens,
  outputTokens: usage.outputTokens,
  cacheReadTokens: usage.cacheReadTokens,
  cacheWriteTokens: usage.cacheWriteTokens,
  costNanos: Usage.nanos(usage)
})

/** Usage from its stored form. */
export const usageOf = (state: RunState.RunState["usage"]): Usage.Usage =>
  Usage.make({
    inputTokens: state.inputTokens,
    outputTokens: state.outputTokens,
    cacheReadTokens: state.cacheReadTokens,
    cacheWriteTokens: state.cacheWriteTokens,
    costUsd: Usage.usdOf(state.costNanos)
  })

/** A result as recorded; a graph's (`outputs`, its nodes' outputs) keeps them too. */
export const encodeResult = (
  result: AgentResult & { readonly outputs?: Readonly<Record<string, string>> },
  output: StructuredOutput<unknown> | undefined
): string =>
  CanonicalJson.stringify({
    output: result.output,
    usage: usageState(result.usage),
    ownUsage: usageState(result.ownUsage),
    partial: result.partial,
    stopReason: result.stopReason,
    transcript: result.transcript,
    ...(output === undefined || result.parsed === undefined ? {} : { parsed: output.encode(result.parsed) }),
    ...(result.error === undefined ? {} : { error: result.error }),
    ...(result.outputs === undefined ? {} : { outputs: result.outputs })
  })

const decodeRecordedResult = lazy(() => Schema.decodeUnknownEither(Schema.parseJson(RunState.RecordedResult)))
const decodeRecordedReason = lazy(() => Schema.decodeUnknownOption(Schema.parseJson(RunState.RecordedReason)))

/** A `done` run's result, read back from its record (its structured output decoded again). */
export const decodeResult = (
  record: CheckpointStore.RunRecord,
  structured: StructuredOutput<unknown> | undefined
): Effect.Effect<AgentResult, RunStateCorrupt> => {
  const decoded = decodeRecordedResult(record.result ?? "")
  if (decoded._tag === "Left") {
    return Effect.fail(
      new RunStateCorrupt({
        runId: record.runId,
        detail: "its recorded result does not decode; expected { output, usage, partial, stopReason, transcript }"
      })
    )
  }
  const { error, output, outputs, ownUsage, parsed: encoded, partial, stopReason, transcript, usage } = decoded.right
  const base: AgentResult = {
    output,
    partial,
    stopReason: stopReason as AgentResult["stopReason"],
    transcript,
    usage: usageOf(usage),
    ownUsage: usageOf(ownUsage ?? usage),
    ...(error === undefined ? {} : { error })
  }
  const result = outputs === undefined ? base : Object.assign(base, { outputs })
  if (encoded === undefined || structured === undefined) return Effect.succeed(result)
  const parsed = structured.decode(encoded)
  return parsed._tag === "Left"
    ? Effect.fail(
      new RunStateCorrupt({
        runId: record.runId,
        detail: `its recorded structured output does not decode with the agent's output schema: ${parsed.left}`
      })
    )
    : Effect.succeed({ ...result, parsed: parsed.right })
}

/** Why a run failed, as recorded: its error's tag and message. */
const reasonOf = (error: unknown): string => {
  if (typeof error === "object" && error !== null && "_tag" in error) {
    const message = "message" in error && typeof error.message === "string" ? error.message : ""
    return `${String(error._tag)}: ${message}`
  }
  return String(error)
}

/** A failed or cancelled run's reason as recorded: `{ reason }`. */
export const encodeReasonText = (reason: string): string => CanonicalJson.stringify({ reason })

/** A failed or cancelled run's reason as recorded, from its error: the error's tag and message. */
export const encodeReason = (error: unknown): string => encodeReasonText(reasonOf(error))

/** The reason a failed or cancelled run's record holds, when it holds one. */
export const decodeReason = (record: CheckpointStore.RunRecord): Option.Option<string> =>
  Option.map(decodeRecordedReason(record.result ?? ""), (recorded) => recorded.reason)
