/**
 * A server asking for input in the middle of a call (an `input_required` round on 2026-07-28
 * connections, an `elicitation/create` push on 2025-era ones) is answered by the `Approver` of
 * `@agentkit/agents`, in-process, as a pending call of the tool that asked:
 *
 * - the pending call's arguments are `{ input: <key>, message, requestedSchema }` and its id
 *   `<callId>:input:<key>`, where `callId` is the model's id for the call that asked (the
 *   handler's; the tool's name for a direct `tool.run`); its digest binds them;
 * - `Approve` accepts with no content (only valid when the form requires nothing), `Edit` accepts
 *   with its arguments as the form's content (checked against `requestedSchema`), `Reject`
 *   declines; an invalid or mismatched decision declines (fail closed);
 * - with no `Approver`, or for a kind agentkit never answers (sampling, roots, URL elicitation),
 *   the call fails with `McpInputRefused`.
 *
 * (Phase 2 turns the "no Approver" case into a suspension with a pending entry of kind `Input`.)
 *
 * @internal
 */
import { Approval } from "@agentkit/agents"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { McpInputRefused } from "../Errors.js"
import { argumentCheck, type JsonObject } from "./jsonSchema.js"

/** A form answer in the MCP `ElicitResult` shape. */
export type Answer =
  | { readonly action: "accept"; readonly content: Record<string, string | number | boolean | ReadonlyArray<string>> }
  | { readonly action: "decline" }

const isObject = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

const MAX_MESSAGE = 2000

/** The call and the server the request came from. */
export interface Asker {
  readonly server: string
  /** The agentkit name of the tool that asked. */
  readonly tool: string
  /** The model's id for the call that asked. */
  readonly callId: string
  /** The run the call belongs to. */
  readonly runId: string
}

/**
 * Answers one form elicitation through the Approver. Fails with `McpInputRefused` when there is no
 * Approver; every answer it gives is a valid `ElicitResult`.
 */
export const answerForm = (
  asker: Asker,
  key: string,
  params: JsonObject
): Effect.Effect<Answer, McpInputRefused> =>
  Effect.flatMap(Effect.serviceOption(Approval.Approver), (approver) => {
    if (Option.isNone(approver)) {
      return Effect.fail(
        new McpInputRefused({
          server: asker.server,
          tool: asker.tool,
          reason: "no Approver is provided to answer the server's request for input"
        })
      )
    }
    const requested = isObject(params.requestedSchema) ? params.requestedSchema : { type: "object", properties: {} }
    let check: ReturnType<typeof argumentCheck>
    try {
      check = argumentCheck({ ...requested, type: "object" })
    } catch {
      return Effect.succeed<Answer>({ action: "decline" })
    }
    const message = typeof params.message === "string" ? params.message.slice(0, MAX_MESSAGE) : ""
    const call = {
      id: `${asker.callId}:input:${key}`,
      name: asker.tool,
      arguments: { input: key, message, requestedSchema: requested }
    }
    // what the person answers: the form the server asked for, as an "Input" entry of the run
    const form = {
      name: asker.tool,
      schema: { parameters: requested },
      sideEffecting: true,
      idempotent: false,
      requiresApproval: true,
      caps: []
    }
    return Effect.flatMap(Clock.currentTimeMillis, (createdAt) => {
      const pending = Approval.makeEntry({
        kind: "Input",
        path: asker.runId,
        iteration: 0,
        index: 0,
        call,
        tool: form,
        reasons: ["input_requested"],
        createdAt
      })
      return Effect.map(
        approver.value.decide({ runId: asker.runId, agent: `mcp:${asker.server}`, pending: [pending] }),
        (decisions): Answer => {
          const decision = Approval.resolve(pending, decisions)
          const content = decision.verdict === "edit"
            ? decision.arguments
            : decision.verdict === "approve"
            ? {}
            : undefined
          if (content === undefined || check(content) !== undefined) return { action: "decline" }
          return {
            action: "accept",
            content: content as Record<string, string | number | boolean | ReadonlyArray<string>>
          }
        }
      )
    })
  })

/** The kind of an embedded input request, for the refusal text. */
export const kindOf = (request: unknown): string => {
  if (!isObject(request)) return "a malformed request"
  const method = typeof request.method === "string" ? request.method : "an unknown request"
  if (method === "elicitation/create" && isObject(request.params) && request.params.mode === "url") {
    return "URL elicitation"
  }
  return method === "sampling/createMessage"
    ? "sampling (its model calls would bypass the run's budget and policy)"
    : method
}

/** Whether an embedded request is a form elicitation (the only kind answered). */
export const isForm = (
  request: unknown
): request is { readonly method: "elicitation/create"; readonly params: JsonObject } =>
  isObject(request) && request.method === "elicitation/create" && isObject(request.params) &&
  request.params.mode !== "url"
