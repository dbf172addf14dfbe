/**
 * Agent events to AG-UI events, for one run: text deltas become a text message (start, content,
 * end), a tool call becomes start, args and end, a tool result its result event, steps and
 * interrupts change the run's state (snapshot, then JSON Patch deltas), and the final result
 * closes the run: success with the compact result (never the transcript), or an interrupt
 * outcome naming the approvals the user may answer. @internal
 */
import type { Event, Interrupt, JsonPatchOperation } from "@ag-ui/core"
import { EventType } from "@ag-ui/core"
import type { AgentEvent, AgentResult, Approval } from "@agentkit/agents"

/** The run state a page sees (`STATE_SNAPSHOT`, then deltas). */
export interface RunState {
  readonly runId: string
  readonly status: "running" | "waiting" | "finished"
  readonly steps: number
  readonly waitingOn: ReadonlyArray<string>
}

/** The result a `RUN_FINISHED` carries: the run's result without its transcript. */
export const compactResult = (result: AgentResult.Summary<unknown>) => ({
  output: result.output,
  stopReason: result.stopReason,
  partial: result.partial,
  usage: result.usage,
  ...(result.parsed === undefined ? {} : { parsed: result.parsed }),
  ...(result.error === undefined ? {} : { error: result.error })
})

/** What an interrupt id names: the run and the pending entry (`<runId>#<pendingId>`). */
export const interruptId = (runId: string, pendingId: string) => `${runId}#${pendingId}`

/** The run id and pending id of an interrupt id, or undefined when it is not one of ours. */
export const parseInterruptId = (id: string): { readonly runId: string; readonly pendingId: string } | undefined => {
  const at = id.lastIndexOf("#")
  if (at <= 0 || at === id.length - 1) return undefined
  return { runId: id.slice(0, at), pendingId: id.slice(at + 1) }
}

/** The answer an approval interrupt expects (its `responseSchema`). */
export const approvalResponseSchema = {
  type: "object",
  properties: {
    approved: { type: "boolean", description: "true runs the call as shown; false rejects it" },
    reason: { type: "string", description: "why (the model sees it on a rejection)" }
  },
  required: ["approved"],
  additionalProperties: false
} as const

/** An `Approval` pending entry as an AG-UI interrupt. */
export const toInterrupt = (runId: string, agent: string, entry: Approval.PendingEntry): Interrupt => ({
  id: interruptId(runId, entry.id),
  reason: "tool_approval",
  message: `${agent} wants to run ${entry.call.name} with ${JSON.stringify(entry.call.arguments)}`,
  toolCallId: entry.call.id,
  responseSchema: approvalResponseSchema,
  metadata: {
    toolName: entry.call.name,
    arguments: entry.call.arguments,
    digest: entry.digest,
    reasons: entry.reasons
  }
})

/** The entries of a suspension a user may answer: approvals only (a call in doubt stays an operator's). */
export const userEntries = (pending: ReadonlyArray<Approval.PendingEntry>) =>
  pending.filter((entry) => entry.kind === "Approval")

/**
 * Translates one run's agent events. `push` receives every AG-UI event in order; ids are derived
 * from the run id, so a run's events are the same however often it is translated.
 */
export class Translator {
  readonly #runId: string
  readonly #threadId: string
  readonly #agent: string
  readonly #push: (event: Event) => void
  #messages = 0
  #open: string | undefined = undefined
  #last: string | undefined = undefined
  #state: RunState

  constructor(options: {
    readonly runId: string
    readonly threadId: string
    readonly agent: string
    readonly push: (event: Event) => void
  }) {
    this.#runId = options.runId
    this.#threadId = options.threadId
    this.#agent = options.agent
    this.#push = options.push
    this.#state = { runId: options.runId, status: "running", steps: 0, waitingOn: [] }
  }

  /** `RUN_STARTED` and the state snapshot. */
  start(input: { readonly runId: string; readonly threadId: string }): void {
    this.#push({ type: EventType.RUN_STARTED, threadId: input.threadId, runId: input.runId, timestamp: Date.now() })
    this.#push({ type: EventType.STATE_SNAPSHOT, snapshot: { ...this.#state } })
  }

  #patch(next: Partial<RunState>): void {
    const delta: Array<JsonPatchOperation> = []
    for (const [key, value] of Object.entries(next)) {
      delta.push({ op: "replace", path: `/${key}`, value })
    }
    this.#state = { ...this.#state, ...next }
    if (delta.length > 0) this.#push({ type: EventType.STATE_DELTA, delta })
  }

  #close(): void {
    if (this.#open === undefined) return
    this.#push({ type: EventType.TEXT_MESSAGE_END, messageId: this.#open })
    this.#open = undefined
  }

  #newMessageId(): string {
    this.#messages += 1
    return `${this.#runId}:m${this.#messages}`
  }

  /** A piece of the assistant's text. */
  text(delta: string): void {
    if (delta.length === 0) return
    if (this.#open === undefined) {
      this.#open = this.#newMessageId()
      this.#last = this.#open
      this.#push({ type: EventType.TEXT_MESSAGE_START, messageId: this.#open, role: "assistant" })
    }
    this.#push({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: this.#open, delta })
  }

  /** The model asked for a tool call. */
  toolCall(call: { readonly id: string; readonly name: string; readonly arguments: unknown }): void {
    const parent = this.#open ?? this.#last
    this.#close()
    this.#push({
      type: EventType.TOOL_CALL_START,
      toolCallId: call.id,
      toolCallName: call.name,
      ...(parent === undefined ? {} : { parentMessageId: parent })
    })
    this.#push({ type: EventType.TOOL_CALL_ARGS, toolCallId: call.id, delta: JSON.stringify(call.arguments) })
    this.#push({ type: EventType.TOOL_CALL_END, toolCallId: call.id })
  }

  /** A tool call finished. */
  toolResult(callId: string, content: string): void {
    this.#close()
    this.#push({
      type: EventType.TOOL_CALL_RESULT,
      messageId: `${this.#runId}:t:${callId}`,
      toolCallId: callId,
      content,
      role: "tool"
    })
  }

  /** An agent event. */
  event(event: AgentEvent.AgentEvent<unknown>): void {
    switch (event._tag) {
      case "MessageDelta":
        return this.text(event.text)
      case "ToolCall":
        return this.toolCall(event.call)
      case "ToolResult":
        return this.toolResult(event.call.id, event.content)
      case "Step":
        this.#close()
        this.#last = undefined
        return this.#patch({ steps: this.#state.steps + 1 })
      case "Interrupt":
        this.#close()
        return this.#patch({ status: "waiting", waitingOn: [...this.#state.waitingOn, event.call.name] })
      case "Final":
        return this.finish(event.result)
    }
  }

  /** `RUN_FINISHED`: success with the compact result, or the approvals a suspended run waits on. */
  finish(result: AgentResult.Summary<unknown>): void {
    this.#close()
    const suspended = result.suspended
    if (suspended !== undefined) {
      const entries = userEntries(suspended.pending)
      this.#patch({ status: "waiting", waitingOn: suspended.pending.map((entry) => entry.call.name) })
      if (entries.length > 0) {
        this.#push({
          type: EventType.RUN_FINISHED,
          threadId: this.#threadId,
          runId: this.#runId,
          outcome: {
            type: "interrupt",
            interrupts: entries.map((entry) => toInterrupt(suspended.runId, this.#agent, entry))
          }
        })
        return
      }
      // it waits on an operator only (a call in doubt, a policy gate): nothing for the user to answer
      this.#push({
        type: EventType.CUSTOM,
        name: "agentkit.awaiting_operator",
        value: { runId: suspended.runId, calls: suspended.pending.map((entry) => entry.call.name) }
      })
      this.#push({
        type: EventType.RUN_FINISHED,
        threadId: this.#threadId,
        runId: this.#runId,
        result: compactResult(result)
      })
      return
    }
    this.#patch({ status: "finished", waitingOn: [] })
    this.#push({
      type: EventType.RUN_FINISHED,
      threadId: this.#threadId,
      runId: this.#runId,
      result: compactResult(result),
      outcome: { type: "success" }
    })
  }

  /** `RUN_FINISHED` with the approvals a run still waits on (part of its calls answered). */
  waiting(runId: string, pending: ReadonlyArray<Approval.PendingEntry>): void {
    this.#close()
    const entries = userEntries(pending)
    this.#patch({ status: "waiting", waitingOn: pending.map((entry) => entry.call.name) })
    this.#push({
      type: EventType.RUN_FINISHED,
      threadId: this.#threadId,
      runId: this.#runId,
      ...(entries.length === 0
        ? {}
        : {
          outcome: { type: "interrupt", interrupts: entries.map((entry) => toInterrupt(runId, this.#agent, entry)) }
        })
    })
  }

  /** `RUN_ERROR`. */
  error(message: string, code: string): void {
    this.#close()
    this.#push({ type: EventType.RUN_ERROR, message, code })
  }
}
