/**
 * The contract's harnesses over the emulator, one per wire protocol: the contract's script as
 * Responses events or Chat Completions chunks, and each recorded request body read back as the
 * contract observes it.
 */
import { OpenAIChatModel } from "@agentkit/openai"
import type { ChatModelContract } from "@agentkit/testing"
import * as Effect from "effect/Effect"
import { apiError, chatFrames, contextLengthError, emulator, responsesFrames } from "./emulator.js"
import type { Reply } from "./emulator.js"

type Json = Record<string, unknown>

const failure = (status: number, message: string): Reply =>
  status === 429
    ? apiError(429, message, "requests", "rate_limit_exceeded")
    : status >= 500
    ? apiError(status, message, "server_error")
    : apiError(status, message, "invalid_request_error")

/** A contract reply as a wire reply of `api`. */
export const toWire =
  (api: OpenAIChatModel.Api, style: "openai" | "ollama" = "openai") => (reply: ChatModelContract.Reply): Reply => {
    switch (reply._tag) {
      case "Failure":
        return failure(reply.status, reply.message)
      case "ContextLength":
        return contextLengthError()
      case "Hang":
      case "Cut": {
        const options = { text: reply.text, calls: [], truncate: true }
        return {
          _tag: "sse",
          frames: api === "responses" ? responsesFrames(options) : chatFrames({ ...options, style }),
          ...(reply._tag === "Hang" ? { hang: true } : { cut: true })
        }
      }
      case "Answer": {
        const options = {
          text: reply.text,
          calls: reply.toolCalls.map((c) => ({ id: c.id, name: c.name, fragments: c.argumentFragments })),
          tokens: {
            input: reply.usage.inputTokens,
            output: reply.usage.outputTokens,
            cached: reply.usage.cacheReadTokens
          }
        }
        return {
          _tag: "sse",
          frames: api === "responses" ? responsesFrames(options) : chatFrames({ ...options, style })
        }
      }
    }
  }

const parse = (text: unknown): unknown => {
  try {
    return JSON.parse(String(text))
  } catch {
    return text
  }
}

/** A Responses request body as the contract observes it. */
export const observeResponses = (body: Json): ChatModelContract.Observed => {
  const system: Array<string> = []
  const items: Array<ChatModelContract.ObservedItem> = []
  for (const item of (body["input"] as Array<Json> | undefined) ?? []) {
    if (item["type"] === "function_call") {
      items.push({
        kind: "call",
        id: String(item["call_id"]),
        name: String(item["name"]),
        arguments: parse(item["arguments"])
      })
    } else if (item["type"] === "function_call_output") {
      items.push({ kind: "result", callId: String(item["call_id"]), content: String(item["output"]) })
    } else if (item["role"] === "system" || item["role"] === "developer") {
      system.push(String(item["content"]))
    } else if (item["role"] === "user" || item["role"] === "assistant") {
      items.push({ kind: item["role"], text: String(item["content"]) })
    }
  }
  const text = body["text"] as Json | undefined
  const format = text?.["format"] as Json | undefined
  return {
    model: String(body["model"]),
    system,
    items,
    tools: ((body["tools"] as Array<Json> | undefined) ?? []).map((t) => String(t["name"])),
    toolChoice: (body["tool_choice"] as Json | undefined)?.["name"] as string | undefined,
    responseSchema: format?.["schema"]
  }
}

/** A Chat Completions request body as the contract observes it. */
export const observeChat = (body: Json): ChatModelContract.Observed => {
  const system: Array<string> = []
  const items: Array<ChatModelContract.ObservedItem> = []
  for (const message of (body["messages"] as Array<Json> | undefined) ?? []) {
    switch (message["role"]) {
      case "system":
        system.push(String(message["content"]))
        break
      case "user":
        items.push({ kind: "user", text: String(message["content"]) })
        break
      case "assistant": {
        if (typeof message["content"] === "string" && message["content"] !== "") {
          items.push({ kind: "assistant", text: message["content"] })
        }
        for (const call of (message["tool_calls"] as Array<Json> | undefined) ?? []) {
          const fn = call["function"] as Json
          items.push({
            kind: "call",
            id: String(call["id"]),
            name: String(fn["name"]),
            arguments: parse(fn["arguments"])
          })
        }
        break
      }
      case "tool":
        items.push({ kind: "result", callId: String(message["tool_call_id"]), content: String(message["content"]) })
        break
    }
  }
  const format = body["response_format"] as Json | undefined
  const choice = body["tool_choice"] as Json | undefined
  return {
    model: String(body["model"]),
    system,
    items,
    tools: ((body["tools"] as Array<Json> | undefined) ?? []).map((t) => String((t["function"] as Json)["name"])),
    toolChoice: (choice?.["function"] as Json | undefined)?.["name"] as string | undefined,
    responseSchema: (format?.["json_schema"] as Json | undefined)?.["schema"]
  }
}

/** A contract harness for one API over a fresh emulator. */
export const harness =
  (api: OpenAIChatModel.Api, options: OpenAIChatModel.Options = {}) =>
  (script: ReadonlyArray<ChatModelContract.Reply>) =>
    Effect.gen(function*() {
      const emu = yield* emulator(script.map(toWire(api)))
      const service = yield* OpenAIChatModel.make({ apiKey: "test-key", baseURL: emu.url, api, ...options })
      return {
        model: service,
        requests: () => emu.requests.map((r) => (api === "responses" ? observeResponses(r.body) : observeChat(r.body))),
        closedEarly: (index: number) => Effect.promise(() => emu.closedEarly(index))
      } satisfies ChatModelContract.Harness
    })
