/**
 * A resume's decisions, checked against the entries the run waits on before anything runs: the
 * shape was checked by the lifecycle; here every id must be pending, every decision must be one
 * the entry's kind accepts and name its digest, and every edit must fit the tool. A pending entry
 * without a decision is rejected (fail closed). @internal
 */
import { CanonicalJson, PythonText } from "@agentkit/core"
import type { ToolArgumentError } from "@agentkit/core"
import type { ToolRegistry } from "@agentkit/tools"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Approval from "../../Approval.js"
import { DigestMismatch, InvalidDecision, UnknownPending } from "../../Errors.js"
import type * as RunState from "../../RunState.js"
import { lazy } from "../lazy.js"

export type DecisionError = UnknownPending | InvalidDecision | DigestMismatch | ToolArgumentError

const decode = lazy(() => Schema.decodeUnknownOption(Approval.Decision))

const received = (value: unknown): string => {
  const text = typeof value === "string" ? PythonText.repr(value) : CanonicalJson.stringify(value)
  return text.length > 200 ? `${text.slice(0, 200)}…` : text
}

export const validate = (registry: ToolRegistry.ToolRegistry) =>
(
  state: RunState.RunState,
  raw: Readonly<Record<string, unknown>>
): Effect.Effect<ReadonlyMap<string, Approval.Decision>, DecisionError> =>
  Effect.gen(function*() {
    const runId = state.runId
    const ids: ReadonlyArray<string> = state.pending.map((entry) => entry.id)
    for (const key of Object.keys(raw)) {
      if (!ids.includes(key)) return yield* new UnknownPending({ runId, pendingId: key, expected: ids })
    }
    const resolved = new Map<string, Approval.Decision>()
    for (const entry of state.pending) {
      if (!Object.hasOwn(raw, entry.id) || raw[entry.id] === undefined) {
        resolved.set(entry.id, Approval.reject(entry.digest, "no decision was given"))
        continue
      }
      const value = raw[entry.id]
      const accepted = Approval.verdictsFor(entry.kind)
      const decision = decode(value)
      if (Option.isNone(decision) || !accepted.includes(decision.value.verdict)) {
        return yield* new InvalidDecision({
          runId,
          pendingId: entry.id,
          kind: entry.kind,
          accepted,
          received: received(value)
        })
      }
      if (decision.value.digest !== entry.digest) {
        return yield* new DigestMismatch({
          runId,
          pendingId: entry.id,
          expected: entry.digest,
          received: decision.value.digest
        })
      }
      if (decision.value.verdict === "edit") {
        const tool = Option.getOrUndefined(registry.getOption(entry.call.name))
        if (tool !== undefined) yield* tool.validate(decision.value.arguments)
      }
      resolved.set(entry.id, decision.value)
    }
    return resolved
  })
