/**
 * The Gemini API (`models/{model}:streamGenerateContent?alt=sse`, through `@google/genai`): the
 * request of a `ChatRequest`, the assembly of its stream chunks into one answer, and the mapping
 * of what the SDK throws to a `ChatModelError`.
 *
 * - System messages are the `systemInstruction`; user texts and tool results are `user` turns
 *   (a result is a `functionResponse` part, `{ result }` or `{ error }`, by call id and name); the
 *   assistant's text and calls are `model` turns (`functionCall` parts). Neighbouring turns of one
 *   role are merged.
 * - Tools are `functionDeclarations` with `parametersJsonSchema`; a forced tool is
 *   `functionCallingConfig: { mode: ANY, allowedFunctionNames: [name] }`; a native structured
 *   output is `responseMimeType: application/json` with `responseJsonSchema`.
 * - Text parts are passed to the sink as they arrive (thought parts are not); a `functionCall`
 *   part arrives whole (its `args` an object). A `finishReason` ends the answer; a stream without
 *   one is incomplete. Usage: `promptTokenCount` includes `cachedContentTokenCount`, which is taken
 *   out; `thoughtsTokenCount` is output.
 *
 * @internal
 */
import { ChatModelError, errorMessage, statusReason } from "@agentkit/core"
import type { Chat, Message, ToolCall } from "@agentkit/core"
import { ApiError, FunctionCallingConfigMode } from "@google/genai"
import type { Content, GenerateContentConfig, Part } from "@google/genai"

/** What the request is built with beyond the `ChatRequest`. */
export interface RequestSettings {
  readonly defaultMaxTokens: number | undefined
  readonly thinkingBudget: number | undefined
}

/** The `contents` of a conversation: turns merged by role. */
export const contentsOf = (messages: ReadonlyArray<Message.Message>): Array<Content> => {
  const contents: Array<Content> = []
  const turn = (role: "user" | "model"): Array<Part> => {
    const last = contents[contents.length - 1]
    if (last !== undefined && last.role === role && last.parts !== undefined) return last.parts
    const parts: Array<Part> = []
    contents.push({ role, parts })
    return parts
  }
  for (const message of messages) {
    switch (message.role) {
      case "system":
        break
      case "user":
        if (message.content !== "") turn("user").push({ text: message.content })
        break
      case "assistant": {
        if (message.content === "" && message.toolCalls.length === 0) break
        const parts = turn("model")
        if (message.content !== "") parts.push({ text: message.content })
        for (const call of message.toolCalls) {
          parts.push({ functionCall: { id: call.id, name: call.name, args: call.arguments } })
        }
        break
      }
      case "tool":
        turn("user").push({
          functionResponse: {
            id: message.toolCallId,
            name: message.name,
            response: message.isError ? { error: message.content } : { result: message.content }
          }
        })
        break
    }
  }
  return contents
}

/** The model and the `config` of one streamed call (the abort signal is added per call). */
export const toConfig = (request: Chat.ChatRequest, settings: RequestSettings): GenerateContentConfig => {
  const system = request.messages.flatMap((m) => (m.role === "system" && m.content !== "" ? [{ text: m.content }] : []))
  const maxTokens = request.maxTokens ?? settings.defaultMaxTokens
  const format = request.responseFormat
  return {
    ...(system.length > 0 ? { systemInstruction: { parts: system } } : {}),
    ...(request.tools.length > 0
      ? {
        tools: [{
          functionDeclarations: request.tools.map((tool) => ({
            name: tool.name,
            description: tool.description,
            parametersJsonSchema: tool.parameters
          }))
        }]
      }
      : {}),
    ...(request.toolChoice === undefined ? {} : {
      toolConfig: {
        functionCallingConfig: { mode: FunctionCallingConfigMode.ANY, allowedFunctionNames: [request.toolChoice.name] }
      }
    }),
    ...(format === undefined ? {} : { responseMimeType: "application/json", responseJsonSchema: format.schema }),
    ...(maxTokens === undefined ? {} : { maxOutputTokens: maxTokens }),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(settings.thinkingBudget === undefined ? {} : { thinkingConfig: { thinkingBudget: settings.thinkingBudget } })
  }
}

/** Token counts as `Usage` counts them, plus thinking tokens. */
export interface RawUsage {
  input: number
  output: number
  cacheRead: number
  reasoning: number
}

/** One assembled answer. */
export interface Assembled {
  readonly responseId: string | undefined
  readonly model: string | undefined
  readonly content: string
  readonly toolCalls: ReadonlyArray<ToolCall.ToolCall>
  readonly finishReason: Chat.FinishReason
  readonly usage: Readonly<RawUsage>
}

type Json = Record<string, unknown>
const isRecord = (value: unknown): value is Json => typeof value === "object" && value !== null
const count = (value: unknown): number => typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0

const refusals: ReadonlySet<string> = new Set([
  "SAFETY",
  "RECITATION",
  "BLOCKLIST",
  "PROHIBITED_CONTENT",
  "SPII",
  "IMAGE_SAFETY"
])

/** Folds stream chunks into an answer; passes text parts on at once. */
export class Assembler {
  emitted = false
  private finish: string | undefined = undefined
  private responseId: string | undefined = undefined
  private model: string | undefined = undefined
  private text = ""
  private readonly calls: Array<ToolCall.ToolCall> = []
  private readonly usage: RawUsage = { input: 0, output: 0, cacheRead: 0, reasoning: 0 }

  constructor(private readonly emit: (delta: Chat.ChatDelta) => void) {}

  push(chunk: unknown): void {
    if (!isRecord(chunk)) return
    if (typeof chunk["responseId"] === "string") this.responseId = chunk["responseId"]
    if (typeof chunk["modelVersion"] === "string") this.model = chunk["modelVersion"]
    const usage = chunk["usageMetadata"]
    if (isRecord(usage)) {
      const cached = count(usage["cachedContentTokenCount"])
      this.usage.input = Math.max(0, count(usage["promptTokenCount"]) - cached)
      this.usage.cacheRead = cached
      this.usage.reasoning = count(usage["thoughtsTokenCount"])
      this.usage.output = count(usage["candidatesTokenCount"]) + this.usage.reasoning
    }
    const feedback = chunk["promptFeedback"]
    if (isRecord(feedback) && typeof feedback["blockReason"] === "string") this.finish = "SAFETY"
    const candidates = chunk["candidates"]
    const candidate = Array.isArray(candidates) ? candidates[0] : undefined
    if (!isRecord(candidate)) return
    const content = candidate["content"]
    const parts = isRecord(content) && Array.isArray(content["parts"]) ? content["parts"] : []
    for (const part of parts) {
      if (!isRecord(part) || part["thought"] === true) continue
      if (typeof part["text"] === "string" && part["text"] !== "") {
        this.text += part["text"]
        this.emitted = true
        this.emit({ text: part["text"] })
      }
      const call = part["functionCall"]
      if (isRecord(call) && typeof call["name"] === "string") {
        const args = isRecord(call["args"]) && !Array.isArray(call["args"]) ? call["args"] : {}
        const id = typeof call["id"] === "string" && call["id"] !== "" ? call["id"] : `call_${this.calls.length + 1}`
        this.calls.push({ id, name: call["name"], arguments: args })
      }
    }
    if (typeof candidate["finishReason"] === "string") this.finish = candidate["finishReason"]
  }

  /** The answer, or `undefined` when the stream ended without a finish reason. */
  result(): Assembled | undefined {
    const finish = this.finish
    if (finish === undefined) return undefined
    const cut = finish === "MAX_TOKENS"
    const toolCalls = cut ? [] : this.calls
    const finishReason: Chat.FinishReason = cut
      ? "max_tokens"
      : refusals.has(finish)
      ? "refusal"
      : toolCalls.length > 0
      ? "tool_use"
      : finish === "STOP"
      ? "end_turn"
      : "other"
    return {
      responseId: this.responseId,
      model: this.model,
      content: this.text,
      toolCalls,
      finishReason,
      usage: { ...this.usage }
    }
  }
}

const CONTEXT_LENGTH = /input token count.*exceeds|exceeds the maximum number of tokens|context (length|window)/i

/** The `error.message` of the JSON body the SDK puts in an `ApiError`'s message, else the message. */
const apiMessage = (error: ApiError): string => {
  const text = error.message
  const start = text.indexOf("{")
  if (start === -1) return text
  try {
    const body: unknown = JSON.parse(text.slice(start))
    const inner = isRecord(body) ? body["error"] : undefined
    if (isRecord(inner) && typeof inner["message"] === "string") {
      return typeof inner["status"] === "string" ? `${inner["status"]}: ${inner["message"]}` : inner["message"]
    }
  } catch {
    // not JSON
  }
  return text
}

const isAbort = (error: unknown): boolean =>
  isRecord(error) && (error["name"] === "AbortError" || error["name"] === "APIUserAbortError")

/** Maps anything a call threw to a `ChatModelError`. */
export const toChatModelError = (error: unknown, emitted: boolean): ChatModelError => {
  if (error instanceof ChatModelError) return error
  const committed = emitted ? " (after text was streamed; not retryable)" : ""
  if (error instanceof ApiError) {
    const message = apiMessage(error)
    if (CONTEXT_LENGTH.test(message)) {
      return new ChatModelError({
        reason: "context_length",
        retryable: false,
        status: error.status,
        message: `Gemini API error ${error.status} ${message}`,
        cause: error
      })
    }
    const keyInvalid = error.status === 400 && /API key not valid|API_KEY_INVALID/.test(error.message)
    const { reason, retryable } = keyInvalid
      ? { reason: "auth" as const, retryable: false }
      : statusReason(error.status)
    return new ChatModelError({
      reason,
      retryable: retryable && !emitted,
      status: error.status,
      message: `Gemini API error ${error.status} ${message}${committed}`,
      cause: error
    })
  }
  if (isAbort(error)) {
    return new ChatModelError({ reason: "network", retryable: false, message: "Gemini request aborted", cause: error })
  }
  if (error instanceof TypeError && error.message === "fetch failed") {
    return new ChatModelError({
      reason: "network",
      retryable: !emitted,
      message: `Gemini connection error: ${errorMessage(error.cause ?? error)}${committed}`,
      cause: error
    })
  }
  return new ChatModelError({
    reason: "stream",
    retryable: !emitted,
    message: `Gemini stream failed: ${errorMessage(error)}${committed}`,
    cause: error
  })
}
