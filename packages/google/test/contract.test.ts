/**
 * The chat-model contract over the Gemini API emulator, through the real `@google/genai`.
 */
import { GoogleChatModel } from "@agentkit/google"
import { ChatModelContract } from "@agentkit/testing"
import { describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { answerChunks, apiError, emulator } from "./emulator.js"
import type { Reply } from "./emulator.js"

type Json = Record<string, unknown>

const statusName = (status: number) =>
  status === 429
    ? "RESOURCE_EXHAUSTED"
    : status === 503
    ? "UNAVAILABLE"
    : status >= 500
    ? "INTERNAL"
    : "INVALID_ARGUMENT"

const toWire = (reply: ChatModelContract.Reply): Reply => {
  switch (reply._tag) {
    case "Failure":
      return apiError(reply.status, statusName(reply.status), reply.message)
    case "ContextLength":
      return apiError(
        400,
        "INVALID_ARGUMENT",
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."
      )
    case "Hang":
    case "Cut":
      return {
        _tag: "sse",
        chunks: answerChunks({ text: reply.text, calls: [], truncate: true }),
        ...(reply._tag === "Hang" ? { hang: true } : { cut: true })
      }
    case "Answer":
      return {
        _tag: "sse",
        chunks: answerChunks({
          text: reply.text,
          calls: reply.toolCalls.map((c) => ({
            id: c.id,
            name: c.name,
            args: JSON.parse(c.argumentFragments.join(""))
          })),
          tokens: {
            input: reply.usage.inputTokens,
            output: reply.usage.outputTokens,
            cached: reply.usage.cacheReadTokens
          }
        })
      }
  }
}

/** A `generateContent` request body as the contract observes it. */
export const observe = (path: string, body: Json): ChatModelContract.Observed => {
  const system = ((body["systemInstruction"] as Json | undefined)?.["parts"] as Array<Json> | undefined ?? []).map((
    p
  ) => String(p["text"]))
  const items: Array<ChatModelContract.ObservedItem> = []
  for (const content of (body["contents"] as Array<Json> | undefined) ?? []) {
    for (const part of (content["parts"] as Array<Json> | undefined) ?? []) {
      if (typeof part["text"] === "string") {
        items.push({ kind: content["role"] === "model" ? "assistant" : "user", text: part["text"] })
      } else if (part["functionCall"] !== undefined) {
        const call = part["functionCall"] as Json
        items.push({ kind: "call", id: String(call["id"]), name: String(call["name"]), arguments: call["args"] })
      } else if (part["functionResponse"] !== undefined) {
        const response = part["functionResponse"] as Json
        const payload = response["response"] as Json
        items.push({
          kind: "result",
          callId: String(response["id"]),
          content: String(payload["result"] ?? payload["error"])
        })
      }
    }
  }
  const declarations = ((body["tools"] as Array<Json> | undefined) ?? []).flatMap((t) =>
    (t["functionDeclarations"] as Array<Json> | undefined) ?? []
  )
  const calling = ((body["toolConfig"] as Json | undefined)?.["functionCallingConfig"]) as Json | undefined
  const generation = body["generationConfig"] as Json | undefined
  return {
    model: decodeURIComponent(/models\/([^:]+):/.exec(path)?.[1] ?? ""),
    system,
    items,
    tools: declarations.map((d) => String(d["name"])),
    toolChoice: calling?.["mode"] === "ANY" ? (calling["allowedFunctionNames"] as Array<string>)[0] : undefined,
    responseSchema: generation?.["responseJsonSchema"]
  }
}

const harness = (script: ReadonlyArray<ChatModelContract.Reply>) =>
  Effect.gen(function*() {
    const emu = yield* emulator(script.map(toWire))
    const service = yield* GoogleChatModel.make({ apiKey: "test-key", baseURL: emu.url })
    return {
      model: service,
      requests: () => emu.requests.map((r) => observe(r.path, r.body)),
      closedEarly: (index: number) => Effect.promise(() => emu.closedEarly(index))
    } satisfies ChatModelContract.Harness
  })

describe("GoogleChatModel", () => {
  ChatModelContract.register(it, { name: "gemini", model: "gemini-2.5-flash", make: harness })
})
