/**
 * A small Messages API emulator for tests: a `node:http` server on 127.0.0.1 (port 0) that answers
 * `POST /v1/messages` with scripted JSON or SSE replies, one per request, and records every
 * request's headers and JSON body. SSE replies are written in several socket writes, so frames and
 * JSON are split across chunks the way a real network splits them.
 *
 * The SDK 1.14 sends `authorization: Bearer <key>` and `anthropic-version: 2026-10-21`.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

/** One server-sent event. */
export interface SseEvent {
  readonly event: string
  readonly data: unknown
}

/** A scripted reply. */
export type Reply =
  | {
    /** Never answer: no status, no headers, until the client goes away. */
    readonly _tag: "silent"
  }
  | {
    readonly _tag: "json"
    readonly status: number
    readonly body: unknown
    readonly headers?: Readonly<Record<string, string>>
  }
  | {
    readonly _tag: "sse"
    readonly events: ReadonlyArray<SseEvent>
    readonly headers?: Readonly<Record<string, string>>
    /** Bytes per socket write (default 23: frames and JSON split mid-token). */
    readonly chunkSize?: number
    /** Milliseconds between writes (default 1). */
    readonly delayMs?: number
    /** Keep the response open after the last event, until the client goes away. */
    readonly hang?: boolean
    /** Close the response after the events without ending the stream properly (no `message_stop` needed). */
    readonly abruptEnd?: boolean
  }

/** A request the emulator saw. */
export interface RecordedRequest {
  readonly index: number
  readonly method: string
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly rawBody: string
  /** The parsed JSON body. */
  readonly body: Record<string, unknown>
  /** Set when the client closed the connection before the reply was finished. */
  closedEarly: boolean
}

/** A running emulator. */
export interface Emulator {
  readonly url: string
  readonly requests: ReadonlyArray<RecordedRequest>
  /** Resolves when the connection of request `index` closes before its reply finished. */
  readonly closedEarly: (index: number) => Promise<void>
  readonly close: () => Promise<void>
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** The SSE bytes of events. */
export const encodeSse = (events: ReadonlyArray<SseEvent>): string =>
  events.map((e) => `event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`).join("")

/** Starts an emulator with a script: a list of replies (in request order) or a function. */
export const start = (
  script: ReadonlyArray<Reply> | ((request: RecordedRequest) => Reply)
): Promise<Emulator> => {
  const requests: Array<RecordedRequest> = []
  const earlyWaiters = new Map<number, Array<() => void>>()
  const markEarly = (index: number) => {
    const request = requests[index]
    if (request) request.closedEarly = true
    for (const resolve of earlyWaiters.get(index) ?? []) resolve()
    earlyWaiters.delete(index)
  }

  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8")
      let body: Record<string, unknown> = {}
      try {
        body = JSON.parse(rawBody) as Record<string, unknown>
      } catch {
        // not JSON: leave {}
      }
      const index = requests.length
      const recorded: RecordedRequest = {
        index,
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        rawBody,
        body,
        closedEarly: false
      }
      requests.push(recorded)
      res.on("close", () => {
        if (!res.writableFinished) markEarly(index)
      })
      const reply = typeof script === "function" ? script(recorded) : script[index]
      void respond(res, index, reply)
    })
  })

  const respond = async (res: http.ServerResponse, index: number, reply: Reply | undefined): Promise<void> => {
    const requestId = `req_emu_${index + 1}`
    if (reply === undefined) {
      res.writeHead(500, { "content-type": "application/json", "request-id": requestId })
      res.end(
        JSON.stringify({
          type: "error",
          error: { type: "api_error", message: `emulator: no reply scripted for request ${index + 1}` }
        })
      )
      return
    }
    if (reply._tag === "silent") return
    if (reply._tag === "json") {
      res.writeHead(reply.status, { "content-type": "application/json", "request-id": requestId, ...reply.headers })
      res.end(JSON.stringify(reply.body))
      return
    }
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      "request-id": requestId,
      ...reply.headers
    })
    res.flushHeaders()
    const bytes = Buffer.from(encodeSse(reply.events), "utf8")
    const size = reply.chunkSize ?? 23
    for (let offset = 0; offset < bytes.length; offset += size) {
      if (res.destroyed) return
      res.write(bytes.subarray(offset, offset + size))
      await sleep(reply.delayMs ?? 1)
    }
    if (reply.hang) return // the client has to go away
    if (reply.abruptEnd) {
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
        url: `http://127.0.0.1:${port}`,
        requests,
        closedEarly: (index) =>
          requests[index]?.closedEarly
            ? Promise.resolve()
            : new Promise<void>((done) => {
              const list = earlyWaiters.get(index) ?? []
              list.push(done)
              earlyWaiters.set(index, list)
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
export const emulator = (
  script: ReadonlyArray<Reply> | ((request: RecordedRequest) => Reply)
): Effect.Effect<Emulator, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => start(script)),
    (emu) => Effect.promise(() => emu.close())
  )

// ---------------------------------------------------------------------------------------------
// Reply builders
// ---------------------------------------------------------------------------------------------

/** A content block of a scripted message: text (in deltas) or a tool use (input in JSON fragments). */
export type Block =
  | { readonly text: ReadonlyArray<string> }
  | {
    readonly toolUse: {
      readonly id: string
      readonly name: string
      readonly json: ReadonlyArray<string>
      readonly stop?: boolean
    }
  }

/** Usage as the API reports it. */
export interface ApiUsage {
  readonly input_tokens: number
  readonly output_tokens: number
  readonly cache_read_input_tokens?: number
  readonly cache_creation_input_tokens?: number
}

/** The events of one streamed message: message_start, a ping, the blocks, message_delta, message_stop. */
export const messageEvents = (options: {
  readonly id?: string
  readonly model?: string
  readonly blocks: ReadonlyArray<Block>
  readonly stopReason: string | null
  readonly usage?: ApiUsage
  /** Events inserted after message_start (e.g. unknown event types). */
  readonly extra?: ReadonlyArray<SseEvent>
  /** Leave out message_delta and message_stop. */
  readonly truncate?: boolean
}): Array<SseEvent> => {
  const usage = options.usage ?? { input_tokens: 10, output_tokens: 5 }
  const events: Array<SseEvent> = [
    {
      event: "message_start",
      data: {
        type: "message_start",
        message: {
          id: options.id ?? "msg_emu_1",
          type: "message",
          role: "assistant",
          model: options.model ?? "claude-sonnet-4-6",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: {
            input_tokens: usage.input_tokens,
            output_tokens: 1,
            cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
            cache_creation_input_tokens: usage.cache_creation_input_tokens ?? 0
          }
        }
      }
    },
    { event: "ping", data: { type: "ping" } },
    ...(options.extra ?? [])
  ]
  options.blocks.forEach((block, index) => {
    if ("text" in block) {
      events.push({
        event: "content_block_start",
        data: { type: "content_block_start", index, content_block: { type: "text", text: "" } }
      })
      for (const text of block.text) {
        events.push({
          event: "content_block_delta",
          data: { type: "content_block_delta", index, delta: { type: "text_delta", text } }
        })
      }
      events.push({ event: "content_block_stop", data: { type: "content_block_stop", index } })
    } else {
      const { id, json, name } = block.toolUse
      events.push({
        event: "content_block_start",
        data: { type: "content_block_start", index, content_block: { type: "tool_use", id, name, input: {} } }
      })
      for (const partial_json of json) {
        events.push({
          event: "content_block_delta",
          data: { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } }
        })
      }
      if (block.toolUse.stop !== false) {
        events.push({ event: "content_block_stop", data: { type: "content_block_stop", index } })
      }
    }
  })
  if (options.truncate) return events
  events.push(
    {
      event: "message_delta",
      data: {
        type: "message_delta",
        delta: { stop_reason: options.stopReason, stop_sequence: null },
        usage: { output_tokens: usage.output_tokens }
      }
    },
    { event: "message_stop", data: { type: "message_stop" } }
  )
  return events
}

/** An SSE reply of one message. */
export const sse = (options: Parameters<typeof messageEvents>[0] & { readonly chunkSize?: number }): Reply => ({
  _tag: "sse",
  events: messageEvents(options),
  ...(options.chunkSize !== undefined ? { chunkSize: options.chunkSize } : {})
})

/** A JSON error reply, as the API sends one. */
export const apiError = (
  status: number,
  type: string,
  message: string,
  headers?: Readonly<Record<string, string>>
): Reply => ({
  _tag: "json",
  status,
  body: { type: "error", error: { type, message } },
  ...(headers !== undefined ? { headers } : {})
})

/** An `error` event as sent after HTTP 200. */
export const errorEvent = (type: string, message: string): SseEvent => ({
  event: "error",
  data: { type: "error", error: { type, message } }
})
