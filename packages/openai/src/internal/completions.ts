/**
 * The Chat Completions API (`POST /chat/completions`, streamed), which OpenAI-compatible servers
 * (Azure OpenAI, Groq, Together, OpenRouter, Ollama, vLLM, DeepSeek) speak: the request body of a
 * `ChatRequest`, and the assembly of its chunks into one answer.
 *
 * - Messages map one to one: `system`, `user`, `assistant` (text, and its `tool_calls` with
 *   arguments as JSON text), `tool` (by `tool_call_id`).
 * - Tools are `function` tools (`strict` only when the schema allows it and the server is
 *   OpenAI's); a forced tool is `tool_choice: { type: "function", function: { name } }`; a native
 *   structured output is `response_format` of type `json_schema`; usage is asked for with
 *   `stream_options.include_usage`. OpenAI's own endpoint gets `max_completion_tokens` and
 *   `parallel_tool_calls`; a compatible server gets `max_tokens`, which they all accept.
 * - `delta.content` is passed to the sink as it arrives. A tool call's arguments are assembled
 *   from its `delta.tool_calls[].function.arguments` fragments, by `index` (a server that sends
 *   each call whole, as Ollama does, is one fragment). A `finish_reason` ends the answer; `length`
 *   drops the last, possibly cut, call; a server that says `stop` with tool calls (Ollama) still
 *   answers `tool_use`.
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
  /** Whether the server is OpenAI's own (its newer fields are sent). */
  readonly official: boolean
}

type Params = OpenAI.Chat.ChatCompletionCreateParamsStreaming
type MessageParam = OpenAI.Chat.ChatCompletionMessageParam

const messagesOf = (messages: ReadonlyArray<Message.Message>): Array<MessageParam> => {
  const out: Array<MessageParam> = []
  for (const message of messages) {
    switch (message.role) {
      case "system":
        if (message.content !== "") out.push({ role: "system", content: message.content })
        break
      case "user":
        out.push({ role: "user", content: message.content })
        break
      case "assistant":
        if (message.content === "" && message.toolCalls.length === 0) break
        out.push({
          role: "assistant",
          content: message.content === "" ? null : message.content,
          ...(message.toolCalls.length === 0 ? {} : {
            tool_calls: message.toolCalls.map((call) => ({
              id: call.id,
              type: "function" as const,
              function: { name: call.name, arguments: JSON.stringify(call.arguments) }
            }))
          })
        })
        break
      case "tool":
        out.push({ role: "tool", tool_call_id: message.toolCallId, content: message.content })
        break
    }
  }
  return out
}

/** The whole streaming request body. */
export const toParams = (request: Chat.ChatRequest, model: string, settings: RequestSettings): Params => {
  const maxTokens = request.maxTokens ?? settings.defaultMaxTokens
  const format = request.responseFormat
  // a compatible server gets the schema as given (not every one knows `strict`)
  const strict = (parameters: Record<string, unknown>) => {
    if (!settings.official) return { parameters }
    const form = strictForm(parameters)
    return form.strict ? { parameters: form.schema, strict: true } : { parameters }
  }
  return {
    model,
    messages: messagesOf(request.messages),
    ...(request.tools.length > 0
      ? {
        tools: request.tools.map((tool): OpenAI.Chat.ChatCompletionFunctionTool => ({
          type: "function",
          function: {
            name: tool.name,
            description: tool.description,
            ...strict(tool.parameters)
          }
        })),
        ...(settings.official ? { parallel_tool_calls: true } : {})
      }
      : {}),
    ...(request.toolChoice === undefined
      ? {}
      : { tool_choice: { type: "function", function: { name: request.toolChoice.name } } }),
    ...(format === undefined
      ? {}
      : {
        response_format: {
          type: "json_schema",
          json_schema: { name: format.name, ...strictForm(format.schema) }
        }
      }),
    ...(maxTokens === undefined
      ? {}
      : settings.official
      ? { max_completion_tokens: maxTokens }
      : { max_tokens: maxTokens }),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(settings.reasoningEffort === undefined ? {} : { reasoning_effort: settings.reasoningEffort }),
    stream: true,
    stream_options: { include_usage: true }
  }
}

interface CallState {
  id: string
  name: string
  readonly fragments: Array<string>
}

type Json = Record<string, unknown>

const isRecord = (value: unknown): value is Json => typeof value === "object" && value !== null

/** Folds Chat Completions chunks into an answer; passes text deltas on at once. */
export class CompletionsAssembler implements Assembler {
  emitted = false
  private finishReason: string | undefined = undefined
  private responseId: string | undefined = undefined
  private model: string | undefined = undefined
  private text = ""
  private readonly usage: RawUsage = { input: 0, output: 0, cacheRead: 0, reasoning: 0 }
  private readonly calls = new Map<number, CallState>()

  constructor(private readonly emit: (delta: Chat.ChatDelta) => void) {}

  push(raw: unknown): void {
    if (!isRecord(raw)) return
    if (typeof raw["id"] === "string" && raw["id"] !== "") this.responseId = raw["id"]
    if (typeof raw["model"] === "string" && raw["model"] !== "") this.model = raw["model"]
    if (isRecord(raw["usage"])) this.readUsage(raw["usage"])
    const choices = raw["choices"]
    if (!Array.isArray(choices)) return
    for (const choice of choices) {
      if (!isRecord(choice) || (choice["index"] !== undefined && choice["index"] !== 0)) continue
      const delta = choice["delta"]
      if (isRecord(delta)) {
        for (const key of ["content", "refusal"] as const) {
          const text = delta[key]
          if (typeof text === "string" && text !== "") {
            this.text += text
            this.emitted = true
            this.emit({ text })
          }
        }
        const toolCalls = delta["tool_calls"]
        if (Array.isArray(toolCalls)) {
          toolCalls.forEach((call, position) => {
            if (isRecord(call)) this.toolCallDelta(call, position)
          })
        }
      }
      if (typeof choice["finish_reason"] === "string") this.finishReason = choice["finish_reason"]
    }
  }

  finish(): Assembled | StreamProblem {
    if (this.finishReason === undefined) return { _tag: "incomplete" }
    const toolCalls: Array<ToolCall.ToolCall> = []
    const invalidToolInputs: Array<{ id: string; name: string }> = []
    const droppedToolCalls: Array<{ id: string; name: string }> = []
    const indices = [...this.calls.keys()].sort((a, b) => a - b)
    const last = indices[indices.length - 1]
    for (const index of indices) {
      const call = this.calls.get(index)!
      if (call.name === "" || (this.finishReason === "length" && index === last)) {
        droppedToolCalls.push({ id: call.id, name: call.name })
        continue
      }
      const { invalid, value } = coerceArguments(call.fragments.join(""))
      if (invalid) invalidToolInputs.push({ id: call.id, name: call.name })
      toolCalls.push({ id: call.id, name: call.name, arguments: value })
    }
    const finishReason: Chat.FinishReason = this.finishReason === "length"
      ? "max_tokens"
      : this.finishReason === "content_filter"
      ? "refusal"
      : toolCalls.length > 0
      ? "tool_use"
      : this.finishReason === "stop"
      ? "end_turn"
      : this.finishReason === "tool_calls" || this.finishReason === "function_call"
      ? "tool_use"
      : "other"
    return {
      responseId: this.responseId,
      model: this.model,
      content: this.text,
      toolCalls,
      finishReason,
      usage: { ...this.usage },
      invalidToolInputs,
      droppedToolCalls
    }
  }

  private toolCallDelta(call: Json, position: number): void {
    const index = typeof call["index"] === "number" ? call["index"] : position
    let state = this.calls.get(index)
    if (state === undefined) {
      state = { id: `call_${index}`, name: "", fragments: [] }
      this.calls.set(index, state)
    }
    if (typeof call["id"] === "string" && call["id"] !== "") state.id = call["id"]
    const fn = call["function"]
    if (!isRecord(fn)) return
    if (typeof fn["name"] === "string" && fn["name"] !== "") state.name = fn["name"]
    if (typeof fn["arguments"] === "string") state.fragments.push(fn["arguments"])
  }

  private readUsage(usage: Json): void {
    const prompt = count(usage["prompt_tokens"]) ?? 0
    const promptDetails = usage["prompt_tokens_details"]
    const cached = isRecord(promptDetails) ? count(promptDetails["cached_tokens"]) ?? 0 : 0
    const completionDetails = usage["completion_tokens_details"]
    this.usage.input = Math.max(0, prompt - cached)
    this.usage.cacheRead = cached
    this.usage.output = count(usage["completion_tokens"]) ?? 0
    this.usage.reasoning = isRecord(completionDetails) ? count(completionDetails["reasoning_tokens"]) ?? 0 : 0
  }
}
