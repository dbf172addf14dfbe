/** A minimal node:http host for an @effect/platform app on 127.0.0.1 (what NodeHttpServer does in an app). */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { Cause, Effect, Runtime } from "effect"
import { createServer, request as httpRequest } from "node:http"
import type { AddressInfo } from "node:net"
import { Readable } from "node:stream"
import type { ReadableStream as WebReadableStream } from "node:stream/web"

export const serve = <E, R>(app: HttpApp.Default<E, R>) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const runtime = yield* Effect.runtime<R>()
      const server = createServer((req, res) => {
        const headers = new Headers()
        for (const [key, value] of Object.entries(req.headers)) {
          if (typeof value === "string") headers.set(key, value)
          else if (Array.isArray(value)) { for (const v of value) headers.append(key, v) }
        }
        const hasBody = req.method !== "GET" && req.method !== "HEAD"
        const abort = new AbortController()
        res.on("close", () => abort.abort())
        const web = new Request(`http://127.0.0.1${req.url ?? "/"}`, {
          method: req.method ?? "GET",
          headers,
          signal: abort.signal,
          ...(hasBody ? { body: Readable.toWeb(req) as unknown as ReadableStream, duplex: "half" } : {})
        } as RequestInit)
        const serverRequest = HttpServerRequest.fromWeb(web).modify({ remoteAddress: req.socket.remoteAddress ?? "" })
        Runtime.runPromise(runtime)(
          app.pipe(
            Effect.provideService(HttpServerRequest.HttpServerRequest, serverRequest),
            Effect.scoped,
            Effect.catchAllCause((cause) =>
              Effect.succeed(HttpServerResponse.text(Cause.pretty(cause), { status: 500 }))
            )
          ) as Effect.Effect<HttpServerResponse.HttpServerResponse, never, R>
        ).then((response) => {
          const out = HttpServerResponse.toWeb(response)
          res.writeHead(out.status, Object.fromEntries(out.headers))
          if (out.body === null) res.end()
          else Readable.fromWeb(out.body as unknown as WebReadableStream).pipe(res)
        }, () => {
          res.writeHead(500)
          res.end()
        })
      })
      yield* Effect.async<void>((resume) => {
        server.listen(0, "127.0.0.1", () => resume(Effect.void))
      })
      return { port: (server.address() as AddressInfo).port, server }
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

/** A raw request with any Host header (fetch refuses to set Host). */
export const rawPost = (port: number, headers: Record<string, string>, body: string) =>
  Effect.async<{ readonly status: number; readonly body: string }>((resume) => {
    const req = httpRequest({
      host: "127.0.0.1",
      port,
      method: "POST",
      path: "/mcp",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers }
    }, (res) => {
      let text = ""
      res.on("data", (chunk) => (text += chunk))
      res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, body: text })))
    })
    req.on("error", (error) => resume(Effect.die(error)))
    req.end(body)
  })
