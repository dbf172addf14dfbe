/**
 * The agent loop's own audit records: the decisions that never reach the tool pipeline (a policy
 * denial, a person's rejection, a call in doubt marked done or failed), written whenever an
 * `AuditStore` is provided. What runs is audited by the `audit` middleware. A broken store is
 * logged; it never changes the run. @internal
 */
import { AuditStore, CanonicalJson } from "@agentkit/core"
import type { RunContext, ToolCall } from "@agentkit/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

export interface Entry {
  readonly decision: AuditStore.Decision
  /** The text the model saw for the call. */
  readonly text: string
  readonly by?: string | undefined
  readonly reason?: string | undefined
  readonly denial?: { readonly reason: string; readonly message: string } | undefined
}

export const record = (context: RunContext.Service, call: ToolCall.ToolCall, entry: Entry): Effect.Effect<void> =>
  Effect.flatMap(Effect.serviceOption(AuditStore), (store) =>
    Option.isNone(store)
      ? Effect.void
      : Effect.flatMap(Clock.currentTimeMillis, (at) => {
        const audited: AuditStore.AuditRecord = {
          runId: context.runId,
          tenant: context.scope.storeKey,
          tool: call.name,
          callId: call.id,
          decision: entry.decision,
          argHash: CanonicalJson.hashOnce(call.arguments),
          resultHash: CanonicalJson.sha256(entry.text),
          at,
          ...(entry.by === undefined ? {} : { by: entry.by }),
          ...(entry.reason === undefined ? {} : { reason: entry.reason }),
          ...(entry.denial === undefined ? {} : { denial: entry.denial })
        }
        return Effect.catchAll(store.value.append(audited), (failed) =>
          Effect.logError(`audit: could not append the record of ${call.name}#${call.id}: ${failed.message}`))
      }))
