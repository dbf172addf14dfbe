/**
 * A loopback emulator of the Gemini API for tests: a `node:http` server on 127.0.0.1 (port 0) that
 * answers `POST /v1beta/models/{model}:streamGenerateContent?alt=sse` with scripted SSE or JSON
 * error replies, one per request, and records every request. Replies follow the Gemini API
 * reference's wire JSON: `GenerateContentResponse` chunks in `data:` lines (candidates with
 * `content.parts`, `finishReason`, `usageMetadata`, `modelVersion`, `responseId`), errors as
 * `{ "error": { "code", "message", "status" } }`. Bytes are written in small socket writes.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

/** A scripted reply. */
export type Reply =
  | { readonly _tag: "json"; readonly status: number; readonly body: unknown }
  | { readonly _tag: "sse"; readonly chunks: ReadonlyArray<unknown>; readonly hang?: boolean; readonly cut?: boolean }

/** A request the emulator saw. */
export interface RecordedRequest {
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
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** An emulator for the scope: closed when the scope closes. */
export const emulator = (script: ReadonlyArray<Reply>): Effect.Effect<Emulator, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => start(script)),
    ({ server }) =>
      Effect.promise(() =>
        new Promise<void>((done) => {
          server.closeAllConnections()
          server.close(() => done())
        })
      )
  ).pipe(Effect.map(({ emulator }) => emulator))

const start = (script: ReadonlyArray<Reply>) => {
  const requests: Array<RecordedRequest> = []
  const waiters = new Map<number, Array<() => void>>()
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
      requests.push({ path: req.url ?? "", headers: req.headers, body, closedEarly: false })
      res.on("close", () => {
        if (res.writableFinished) return
        requests[index]!.closedEarly = true
        for (const resolve of waiters.get(index) ?? []) resolve()
      })
      void respond(res, script[index])
    })
  })
  const respond = async (res: http.ServerResponse, reply: Reply | undefined) => {
    if (reply === undefined || reply._tag === "json") {
      const status = reply?.status ?? 500
      res.writeHead(status, { "content-type": "application/json; charset=UTF-8" })
      res.end(
        JSON.stringify(
          reply?.body ?? { error: { code: 500, message: "emulator: no reply scripted", status: "INTERNAL" } }
        )
      )
      return
    }
    res.writeHead(200, { "content-type": "text/event-stream" })
    res.flushHeaders()
    const bytes = Buffer.from(reply.chunks.map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join(""), "utf8")
    for (let offset = 0; offset < bytes.length; offset += 13) {
      if (res.destroyed) return
      res.write(bytes.subarray(offset, offset + 13))
      await sleep(1)
    }
    if (reply.hang) return
    if (reply.cut) {
      res.destroy()
      return
    }
    res.end()
  }
  return new Promise<{ server: http.Server; emulator: Emulator }>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        server,
        emulator: {
          url: `http://127.0.0.1:${port}`,
          requests,
          closedEarly: (index) =>
            requests[index]?.closedEarly
              ? Promise.resolve()
              : new Promise<void>((done) => waiters.set(index, [...(waiters.get(index) ?? []), done]))
        }
      })
    })
  })
}

/** Usage as `Usage` counts it. */
export interface Tokens {
  readonly input: number
  readonly output: number
  readonly cached: number
  readonly thoughts?: number
}

/** The chunks of one streamed answer: one per text delta, the calls, then the finish with usage. */
export const answerChunks = (options: {
  readonly text: ReadonlyArray<string>
  readonly calls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly args: unknown }>
  readonly tokens?: Tokens
  readonly model?: string
  readonly truncate?: boolean
}): Array<unknown> => {
  const model = options.model ?? "gemini-2.5-flash"
  const tokens = options.tokens ?? { input: 21, output: 9, cached: 0 }
  const usage = {
    promptTokenCount: tokens.input + tokens.cached,
    candidatesTokenCount: tokens.output - (tokens.thoughts ?? 0),
    totalTokenCount: tokens.input + tokens.cached + tokens.output,
    ...(tokens.cached > 0 ? { cachedContentTokenCount: tokens.cached } : {}),
    ...(tokens.thoughts ? { thoughtsTokenCount: tokens.thoughts } : {})
  }
  const chunk = (parts: ReadonlyArray<unknown>, finishReason?: string) => ({
    candidates: [{ content: { parts, role: "model" }, ...(finishReason ? { finishReason } : {}), index: 0 }],
    usageMetadata: finishReason
      ? usage
      : { promptTokenCount: usage.promptTokenCount, totalTokenCount: usage.promptTokenCount },
    modelVersion: model,
    responseId: "resp-emu-1"
  })
  const chunks: Array<unknown> = options.text.map((text) => chunk([{ text }]))
  if (options.truncate) return chunks
  if (options.calls.length > 0) {
    chunks.push(chunk(options.calls.map((c) => ({ functionCall: { id: c.id, name: c.name, args: c.args } }))))
  }
  chunks.push(chunk(options.text.length === 0 && options.calls.length === 0 ? [{ text: "" }] : [], "STOP"))
  return chunks
}

/** An error reply as the API sends one. */
export const apiError = (code: number, status: string, message: string): Reply => ({
  _tag: "json",
  status: code,
  body: { error: { code, message, status } }
})
