/**
 * A loopback emulator of OpenAI's two wire protocols for tests: a `node:http` server on
 * 127.0.0.1 (port 0) that answers `POST …/responses` (Responses API) and `POST
 * …/chat/completions` (Chat Completions, as OpenAI and compatible servers such as Ollama send it)
 * with scripted JSON or SSE replies, one per request, and records every request. SSE replies are
 * written in small socket writes, so frames, JSON and UTF-8 characters are split the way a network
 * splits them.
 *
 * The replies follow the wire JSON of OpenAI's API reference (and the SDK's event types): Responses
 * events named by `event:` with `type` and `sequence_number` in the data; Chat Completions
 * `chat.completion.chunk`s in `data:` lines ending with `data: [DONE]`; errors as
 * `{ "error": { "message", "type", "param", "code" } }` with an `x-request-id` header.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

/** One server-sent event: an optional `event:` name and its `data:` text. */
export interface Frame {
  readonly event?: string
  readonly data: string
}

/** A scripted reply. */
export type Reply =
  | {
    readonly _tag: "json"
    readonly status: number
    readonly body: unknown
    readonly headers?: Readonly<Record<string, string>>
  }
  | {
    readonly _tag: "sse"
    readonly frames: ReadonlyArray<Frame>
    /** Bytes per socket write (default 11: frames, JSON and UTF-8 split mid-token). */
    readonly chunkSize?: number
    /** Keep the response open after the frames, until the client goes away. */
    readonly hang?: boolean
    /** Destroy the connection after the frames, without ending the stream. */
    readonly cut?: boolean
  }

/** A request the emulator saw. */
export interface RecordedRequest {
  readonly index: number
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: Record<string, unknown>
  closedEarly: boolean
}

/** A running emulator. */
export interface Emulator {
  readonly url: string
  readonly requests: ReadonlyArray<RecordedRequest>
  readonly closedEarly: (index: number) => Promise<void>
  readonly close: () => Promise<void>
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const encode = (frames: ReadonlyArray<Frame>): string =>
  frames.map((f) => `${f.event === undefined ? "" : `event: ${f.event}\n`}data: ${f.data}\n\n`).join("")

/** Starts an emulator with a script: replies in request order. */
export const start = (script: ReadonlyArray<Reply>): Promise<Emulator> => {
  const requests: Array<RecordedRequest> = []
  const waiters = new Map<number, Array<() => void>>()
  const markEarly = (index: number) => {
    const request = requests[index]
    if (request) request.closedEarly = true
    for (const resolve of waiters.get(index) ?? []) resolve()
    waiters.delete(index)
  }
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      let body: Record<string, unknown> = {}
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>
      } catch {
        // not JSON
      }
      const index = requests.length
      requests.push({ index, path: req.url ?? "", headers: req.headers, body, closedEarly: false })
      res.on("close", () => {
        if (!res.writableFinished) markEarly(index)
      })
      void respond(res, index, script[index])
    })
  })
  const respond = async (res: http.ServerResponse, index: number, reply: Reply | undefined) => {
    const requestId = `req_emu_${index + 1}`
    if (reply === undefined) {
      res.writeHead(500, { "content-type": "application/json", "x-request-id": requestId })
      res.end(
        JSON.stringify({
          error: {
            message: `emulator: no reply scripted for request ${index + 1}`,
            type: "server_error",
            param: null,
            code: null
          }
        })
      )
      return
    }
    if (reply._tag === "json") {
      res.writeHead(reply.status, { "content-type": "application/json", "x-request-id": requestId, ...reply.headers })
      res.end(JSON.stringify(reply.body))
      return
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "x-request-id": requestId })
    res.flushHeaders()
    const bytes = Buffer.from(encode(reply.frames), "utf8")
    const size = reply.chunkSize ?? 11
    for (let offset = 0; offset < bytes.length; offset += size) {
      if (res.destroyed) return
      res.write(bytes.subarray(offset, offset + size))
      await sleep(1)
    }
    if (reply.hang) return
    if (reply.cut) {
      res.destroy()
      return
    }
    res.end()
  }
  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        url: `http://127.0.0.1:${port}/v1`,
        requests,
        closedEarly: (index) =>
          requests[index]?.closedEarly
            ? Promise.resolve()
            : new Promise<void>((done) => {
              const list = waiters.get(index) ?? []
              list.push(done)
              waiters.set(index, list)
            }),
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })
}

/** An emulator for the scope: closed when the scope closes. */
export const emulator = (script: ReadonlyArray<Reply>): Effect.Effect<Emulator, never, Scope.Scope> =>
  Effect.acquireRelease(Effect.promise(() => start(script)), (emu) => Effect.promise(() => emu.close()))

// ---------------------------------------------------------------------------------------------
// Reply builders
// ---------------------------------------------------------------------------------------------

/** A scripted call: id, name, argument fragments. */
export interface Call {
  readonly id: string
  readonly name: string
  readonly fragments: ReadonlyArray<string>
}

/** Usage as `Usage` counts it (input without cached input). */
export interface Tokens {
  readonly input: number
  readonly output: number
  readonly cached: number
  readonly reasoning?: number
}

/** An error body as the API sends it. */
export const apiError = (
  status: number,
  message: string,
  type: string,
  code: string | null = null,
  headers?: Readonly<Record<string, string>>
): Reply => ({
  _tag: "json",
  status,
  body: { error: { message, type, param: null, code } },
  ...(headers === undefined ? {} : { headers })
})

/** The context-length refusal, as the API words it. */
export const contextLengthError = (): Reply =>
  apiError(
    400,
    "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.",
    "invalid_request_error",
    "context_length_exceeded"
  )

const CREATED = 1_764_900_000

/** The events of one streamed Responses answer: created, items with their deltas, completed. */
export const responsesFrames = (options: {
  readonly text: ReadonlyArray<string>
  readonly calls: ReadonlyArray<Call>
  readonly tokens?: Tokens
  readonly model?: string
  /** Leave out everything after the text deltas. */
  readonly truncate?: boolean
}): Array<Frame> => {
  const model = options.model ?? "gpt-4.1-mini-2025-04-14"
  const frames: Array<Frame> = []
  let sequence = 0
  const push = (type: string, fields: Record<string, unknown>) =>
    frames.push({ event: type, data: JSON.stringify({ type, sequence_number: sequence++, ...fields }) })
  const base = {
    id: "resp_emu_1",
    object: "response",
    created_at: CREATED,
    model,
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
    error: null,
    incomplete_details: null,
    instructions: null
  }
  push("response.created", { response: { ...base, status: "in_progress", output: [], usage: null } })
  push("response.in_progress", { response: { ...base, status: "in_progress", output: [], usage: null } })
  const output: Array<Record<string, unknown>> = []
  let index = 0
  if (options.text.length > 0) {
    const item = { id: "msg_emu_1", type: "message", status: "in_progress", role: "assistant", content: [] }
    push("response.output_item.added", { output_index: index, item })
    push("response.content_part.added", {
      item_id: item.id,
      output_index: index,
      content_index: 0,
      part: { type: "output_text", text: "", annotations: [] }
    })
    for (const delta of options.text) {
      push("response.output_text.delta", {
        item_id: item.id,
        output_index: index,
        content_index: 0,
        delta,
        logprobs: []
      })
    }
    if (options.truncate) return frames
    const text = options.text.join("")
    const part = { type: "output_text", text, annotations: [] }
    push("response.output_text.done", { item_id: item.id, output_index: index, content_index: 0, text, logprobs: [] })
    push("response.content_part.done", { item_id: item.id, output_index: index, content_index: 0, part })
    const done = { ...item, status: "completed", content: [part] }
    push("response.output_item.done", { output_index: index, item: done })
    output.push(done)
    index++
  } else if (options.truncate) return frames
  for (const call of options.calls) {
    const item = {
      id: `fc_${call.id}`,
      type: "function_call",
      status: "in_progress",
      arguments: "",
      call_id: call.id,
      name: call.name
    }
    push("response.output_item.added", { output_index: index, item })
    for (const delta of call.fragments) {
      push("response.function_call_arguments.delta", { item_id: item.id, output_index: index, delta })
    }
    const args = call.fragments.join("")
    push("response.function_call_arguments.done", { item_id: item.id, output_index: index, arguments: args })
    const done = { ...item, status: "completed", arguments: args }
    push("response.output_item.done", { output_index: index, item: done })
    output.push(done)
    index++
  }
  const tokens = options.tokens ?? { input: 21, output: 9, cached: 0 }
  push("response.completed", {
    response: {
      ...base,
      status: "completed",
      output,
      usage: {
        input_tokens: tokens.input + tokens.cached,
        input_tokens_details: { cached_tokens: tokens.cached },
        output_tokens: tokens.output,
        output_tokens_details: { reasoning_tokens: tokens.reasoning ?? 0 },
        total_tokens: tokens.input + tokens.cached + tokens.output
      }
    }
  })
  return frames
}

/** The chunks of one streamed Chat Completions answer, ending with `[DONE]`. */
export const chatFrames = (options: {
  readonly text: ReadonlyArray<string>
  readonly calls: ReadonlyArray<Call>
  readonly tokens?: Tokens
  readonly model?: string
  /** `openai`: calls in fragments, `tool_calls` finish, cached and reasoning details; `ollama`: each call whole, `stop`. */
  readonly style?: "openai" | "ollama"
  readonly truncate?: boolean
}): Array<Frame> => {
  const style = options.style ?? "openai"
  const model = options.model ?? (style === "ollama" ? "llama3.2" : "gpt-4.1-mini-2025-04-14")
  const chunk = (choices: ReadonlyArray<unknown>, usage: unknown = null): Frame => ({
    data: JSON.stringify({
      id: "chatcmpl-emu1",
      object: "chat.completion.chunk",
      created: CREATED,
      model,
      system_fingerprint: style === "ollama" ? "fp_ollama" : "fp_emu",
      choices,
      ...(style === "openai" ? { usage } : {})
    })
  })
  const delta = (fields: Record<string, unknown>, finish: string | null = null) => ({
    index: 0,
    delta: fields,
    logprobs: null,
    finish_reason: finish
  })
  const frames: Array<Frame> = [chunk([delta({ role: "assistant", content: "" })])]
  for (const text of options.text) frames.push(chunk([delta({ content: text })]))
  if (options.truncate) return frames
  options.calls.forEach((call, index) => {
    if (style === "ollama") {
      frames.push(chunk([delta({
        tool_calls: [{
          id: call.id,
          index,
          type: "function",
          function: { name: call.name, arguments: call.fragments.join("") }
        }]
      })]))
      return
    }
    frames.push(chunk([delta({
      tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }]
    })]))
    for (const fragment of call.fragments) {
      frames.push(chunk([delta({ tool_calls: [{ index, function: { arguments: fragment } }] })]))
    }
  })
  const finish = options.calls.length > 0 && style === "openai" ? "tool_calls" : "stop"
  frames.push(chunk([delta({}, finish)]))
  const tokens = options.tokens ?? { input: 21, output: 9, cached: 0 }
  const usage = {
    prompt_tokens: tokens.input + tokens.cached,
    completion_tokens: tokens.output,
    total_tokens: tokens.input + tokens.cached + tokens.output,
    ...(style === "openai"
      ? {
        prompt_tokens_details: { cached_tokens: tokens.cached, audio_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: tokens.reasoning ?? 0, audio_tokens: 0 }
      }
      : {})
  }
  frames.push(
    style === "openai"
      ? chunk([], usage)
      : {
        data: JSON.stringify({
          id: "chatcmpl-emu1",
          object: "chat.completion.chunk",
          created: CREATED,
          model,
          system_fingerprint: "fp_ollama",
          choices: [],
          usage
        })
      }
  )
  frames.push({ data: "[DONE]" })
  return frames
}
