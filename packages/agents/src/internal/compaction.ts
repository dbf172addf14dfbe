/**
 * Compaction in the ReAct loop: the check before each model call (the request counted by the
 * run's `TokenEstimator` against `share` of the model's window) and, past it, the policy's
 * strategy, its summary calls made through the engine (`compact-<iteration>`), its outcome
 * audited. @internal
 */
import { AuditStore, CanonicalJson, ModelCatalog, TokenEstimator } from "@agentkit/core"
import type { Chat, ChatError, Message, RunContext } from "@agentkit/core"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Compaction } from "../Compaction.js"

/** Compacts a request's transcript when it is over the window's share: the new transcript, or `undefined`. */
export type Compact = (
  request: Chat.ChatRequest,
  iteration: number
) => Effect.Effect<ReadonlyArray<Message.Message> | undefined, ChatError, RunContext>

/** The compactor of a run over `env` (undefined without a `Compaction` in context: nothing is counted). */
export const compactor = (
  env: Context.Context<never>,
  context: RunContext.Service,
  callModel: (name: string, request: Chat.ChatRequest) => Effect.Effect<Chat.ChatResponse, ChatError, RunContext>
): Compact | undefined => {
  const found = Context.getOption(env, Compaction)
  if (Option.isNone(found)) return undefined
  const policy = found.value
  const estimator = Option.getOrElse(
    Context.getOption(env, TokenEstimator.TokenEstimator),
    () => TokenEstimator.utf8Bytes
  )
  const catalog = Option.getOrElse(Context.getOption(env, ModelCatalog.ModelCatalog), () => ModelCatalog.standard)
  const audit = Context.getOption(env, AuditStore)
  let warned = false
  return (request, iteration) => {
    const window = policy.contextWindow ??
      Option.getOrUndefined(Option.map(catalog.lookup(request.model), (entry) => entry.contextWindow))
    if (window === undefined) {
      if (warned) return Effect.succeed(undefined)
      warned = true
      return Effect.as(
        Effect.logWarning(
          `compaction: model '${request.model}' is not in the model catalog and no contextWindow is set; the transcript is sent as it is`
        ),
        undefined
      )
    }
    const tokens = (messages: ReadonlyArray<Message.Message>) => estimator.inputTokens({ ...request, messages })
    const before = tokens(request.messages)
    if (before <= policy.share * window) return Effect.succeed(undefined)
    const name = `compact-${iteration}`
    let calls = 0
    const strategyContext = {
      tokens,
      target: Math.floor(policy.target * window),
      threshold: Math.floor(policy.share * window),
      model: request.model,
      complete: (summary: Chat.ChatRequest) => callModel(calls++ === 0 ? name : `${name}/${calls - 1}`, summary)
    }
    return Effect.flatMap(policy.strategy.apply(request.messages, strategyContext), (compacted) => {
      const after = tokens(compacted)
      const record = Option.isNone(audit) ?
        Effect.void :
        Effect.flatMap(Clock.currentTimeMillis, (at) =>
          Effect.catchAll(
            audit.value.append({
              runId: context.runId,
              tenant: context.scope.storeKey,
              tool: "agentkit.compaction",
              callId: name,
              decision: "executed",
              argHash: CanonicalJson.hash(request.messages),
              resultHash: CanonicalJson.hash(compacted),
              reason: `${policy.strategy.name}: ${before} -> ${after} tokens (${estimator.name}) of ${window}`,
              at
            }),
            (failed) => Effect.logError(`audit: could not append the record of ${name}: ${failed.message}`)
          ))
      return Effect.as(
        Effect.zipRight(
          record,
          Effect.logDebug(`compaction ${name}: ${before} -> ${after} tokens of ${window}`)
        ),
        compacted
      )
    })
  }
}
