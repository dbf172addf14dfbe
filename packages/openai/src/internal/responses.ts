/**
 * The Responses API (`POST /responses`, streamed): the request body of a `ChatRequest`, and the
 * assembly of its stream events into one answer.
 *
 * - System messages become `system` input items in place; user and assistant texts are input
 *   messages; an assistant's tool calls are `function_call` items (arguments as JSON text) and
 *   tool results `function_call_output` items, matched by `call_id`.
 * - Tools are `function` tools, `strict` when their schema allows it; a forced tool is
 *   `tool_choice: { type: "function", name }`; a native structured output is `text.format` of
 *   type `json_schema`. `store: false`: the transcript is sent whole every call.
 * - `response.output_text.delta`s are passed to the sink as they arrive. A function call's
 *   arguments are assembled from its `response.function_call_arguments.delta`s; the final
 *   arguments the stream repeats (`…arguments.done`, `output_item.done`) must agree with them,
 *   or the stream is refused as inconsistent (never a silently different call).
 * - `response.completed` ends the answer (usage: `input_tokens` includes cached input, which is
 *   taken out); `response.incomplete` with `max_output_tokens` ends it as `max_tokens` and drops
 *   an unfinished call; `response.failed` is a failure.
 *
 * @internal
 */
import type { Chat, Message, ToolCall } from "@agentkit/core"
import type OpenAI from "openai"
import type { Assembled, Assembler, RawUsage, StreamProblem } from "./assembled.js"
import { coerceArguments, count, strictForm } from "./schema.js"

/** What the request is built with beyond the `ChatRequest`. */
export interface RequestSettings {
  readonly reasoningEffort: OpenAI.ReasoningEffort | undefined
  readonly defaultMaxTokens: number | undefined
}

type Params = OpenAI.Responses.ResponseCreateParamsStreaming
type InputItem = OpenAI.Responses.ResponseInputItem

const inputOf = (messages: ReadonlyArray<Message.Message>): Array<InputItem> => {
  const input: Array<InputItem> = []
  for (const message of messages) {
    switch (message.role) {
      case "system":
        if (message.content !== "") input.push({ role: "system", content: message.content })
        break
      case "user":
        input.push({ role: "user", content: message.content })
        break
      case "assistant":
        if (message.content !== "") input.push({ role: "assistant", content: message.content })
        for (const call of message.toolCalls) {
          input.push({
            type: "function_call",
            call_id: call.id,
            name: call.name,
            arguments: JSON.stringify(call.arguments)
          })
        }
        break
      case "tool":
        input.push({ type: "function_call_output", call_id: message.toolCallId, output: message.content })
        break
    }
  }
  return input
}

/** The whole streaming request body. */
export const toParams = (request: Chat.ChatRequest, model: string, settings: RequestSettings): Params => {
  const maxTokens = request.maxTokens ?? settings.defaultMaxTokens
  const format = request.responseFormat
  return {
    model,
    input: inputOf(request.messages),
    ...(request.tools.length > 0
      ? {
        tools: request.tools.map((tool): OpenAI.Responses.FunctionTool => {
          const { schema, strict } = strictForm(tool.parameters)
          return { type: "function", name: tool.name, description: tool.description, parameters: schema, strict }
        }),
        parallel_tool_calls: true
      }
      : {}),
    ...(request.toolChoice === undefined ? {} : { tool_choice: { type: "function", name: request.toolChoice.name } }),
    ...(format === undefined
      ? {}
      : {
        text: {
          format: { type: "json_schema", name: format.name, ...strictForm(format.schema) }
        }
      }),
    ...(maxTokens === undefined ? {} : { max_output_tokens: maxTokens }),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(settings.reasoningEffort === undefined ? {} : { reasoning: { effort: settings.reasoningEffort } }),
    store: false,
    stream: true
  }
}

interface TextState {
  readonly kind: "text"
  text: string
}

interface CallState {
  readonly kind: "call"
  readonly callId: string
  readonly name: string
  readonly fragments: Array<string>
  /** The arguments the stream repeated when the call was done. */
  final: string | undefined
  done: boolean
}

type Json = Record<string, unknown>

const isRecord = (value: unknown): value is Json => typeof value === "object" && value !== null

/** Folds Responses stream events into an answer; passes text deltas on at once. */
export class ResponsesAssembler implements Assembler {
  emitted = false
  private complete = false
  private incompleteReason: string | undefined = undefined
  private failure: { readonly code: string | null | undefined; readonly message: string } | undefined = undefined
  private inconsistency: string | undefined = undefined
  private responseId: string | undefined = undefined
  private model: string | undefined = undefined
  private refused = false
  private readonly usage: RawUsage = { input: 0, output: 0, cacheRead: 0, reasoning: 0 }
  private readonly items = new Map<number, TextState | CallState>()

  constructor(private readonly emit: (delta: Chat.ChatDelta) => void) {}

  push(raw: unknown): void {
    if (!isRecord(raw)) return
    const event = raw as Json
    switch (event["type"]) {
      case "response.created":
      case "response.in_progress":
        this.readResponse(event["response"])
        return
      case "response.output_item.added": {
        const item = event["item"]
        const index = event["output_index"]
        if (!isRecord(item) || typeof index !== "number") return
        if (item["type"] === "function_call") {
          const initial = typeof item["arguments"] === "string" ? item["arguments"] : ""
          this.items.set(index, {
            kind: "call",
            callId: String(item["call_id"]),
            name: String(item["name"]),
            fragments: initial === "" ? [] : [initial],
            final: undefined,
            done: false
          })
        } else if (item["type"] === "message") {
          this.items.set(index, { kind: "text", text: "" })
        }
        return
      }
      case "response.output_text.delta":
      case "response.refusal.delta": {
        if (event["type"] === "response.refusal.delta") this.refused = true
        const delta = event["delta"]
        if (typeof delta === "string") this.text(Number(event["output_index"]), delta)
        return
      }
      case "response.function_call_arguments.delta": {
        const state = this.items.get(Number(event["output_index"]))
        if (state?.kind === "call" && typeof event["delta"] === "string") state.fragments.push(event["delta"])
        return
      }
      case "response.function_call_arguments.done": {
        const state = this.items.get(Number(event["output_index"]))
        if (state?.kind === "call" && typeof event["arguments"] === "string") {
          this.settle(state, event["arguments"])
        }
        return
      }
      case "response.output_item.done": {
        const item = event["item"]
        const state = this.items.get(Number(event["output_index"]))
        if (state?.kind === "call" && isRecord(item) && typeof item["arguments"] === "string") {
          this.settle(state, item["arguments"])
        }
        return
      }
      case "response.completed":
        this.complete = true
        this.readResponse(event["response"])
        return
      case "response.incomplete": {
        this.complete = true
        const response = event["response"]
        this.readResponse(response)
        const details = isRecord(response) ? response["incomplete_details"] : undefined
        this.incompleteReason = isRecord(details) && typeof details["reason"] === "string"
          ? details["reason"]
          : "unknown"
        return
      }
      case "response.failed": {
        const response = event["response"]
        this.readResponse(response)
        const error = isRecord(response) ? response["error"] : undefined
        this.failure = isRecord(error)
          ? { code: typeof error["code"] === "string" ? error["code"] : null, message: String(error["message"]) }
          : { code: null, message: "response.failed without an error" }
        return
      }
      default:
        // reasoning summaries, content parts, annotations and event types this version does not know
        return
    }
  }

  finish(): Assembled | StreamProblem {
    if (this.failure !== undefined) return { _tag: "failed", ...this.failure }
    if (this.inconsistency !== undefined) return { _tag: "inconsistent", detail: this.inconsistency }
    if (!this.complete) return { _tag: "incomplete" }
    const texts: Array<string> = []
    const toolCalls: Array<ToolCall.ToolCall> = []
    const invalidToolInputs: Array<{ id: string; name: string }> = []
    const droppedToolCalls: Array<{ id: string; name: string }> = []
    const cutOff = this.incompleteReason !== undefined
    for (const index of [...this.items.keys()].sort((a, b) => a - b)) {
      const state = this.items.get(index)!
      if (state.kind === "text") {
        texts.push(state.text)
        continue
      }
      if (!state.done || (cutOff && state.final === undefined)) {
        droppedToolCalls.push({ id: state.callId, name: state.name })
        continue
      }
      const { invalid, value } = coerceArguments(state.fragments.join(""))
      if (invalid) invalidToolInputs.push({ id: state.callId, name: state.name })
      toolCalls.push({ id: state.callId, name: state.name, arguments: value })
    }
    const finishReason: Chat.FinishReason = this.incompleteReason === "max_output_tokens"
      ? "max_tokens"
      : this.incompleteReason === "content_filter" || this.refused
      ? "refusal"
      : this.incompleteReason !== undefined
      ? "other"
      : toolCalls.length > 0
      ? "tool_use"
      : "end_turn"
    return {
      responseId: this.responseId,
      model: this.model,
      content: texts.join(""),
      toolCalls,
      finishReason,
      usage: { ...this.usage },
      invalidToolInputs,
      droppedToolCalls
    }
  }

  private settle(state: CallState, final: string): void {
    state.done = true
    if (state.final !== undefined) return
    state.final = final
    const assembled = state.fragments.join("")
    if (assembled !== final) {
      this.inconsistency =
        `function call ${state.callId} ('${state.name}'): its argument deltas (${assembled.length} chars) disagree with its final arguments (${final.length} chars)`
    }
  }

  private text(index: number, text: string): void {
    if (text === "") return
    const state = this.items.get(index)
    if (state?.kind === "text") state.text += text
    else if (state === undefined) this.items.set(index, { kind: "text", text })
    this.emitted = true
    this.emit({ text })
  }

  private readResponse(response: unknown): void {
    if (!isRecord(response)) return
    if (typeof response["id"] === "string") this.responseId = response["id"]
    if (typeof response["model"] === "string") this.model = response["model"]
    const usage = response["usage"]
    if (!isRecord(usage)) return
    const input = count(usage["input_tokens"]) ?? 0
    const inputDetails = usage["input_tokens_details"]
    const cached = isRecord(inputDetails) ? count(inputDetails["cached_tokens"]) ?? 0 : 0
    const outputDetails = usage["output_tokens_details"]
    this.usage.input = Math.max(0, input - cached)
    this.usage.cacheRead = cached
    this.usage.output = count(usage["output_tokens"]) ?? 0
    this.usage.reasoning = isRecord(outputDetails) ? count(outputDetails["reasoning_tokens"]) ?? 0 : 0
  }
}
