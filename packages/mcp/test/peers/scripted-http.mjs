/* global Headers, Request, Response */
// A scripted MCP server on the SDK (v2) over Streamable HTTP on 127.0.0.1:<port>, answering each
// call as one JSON body or over an SSE stream (<mode>: "json" or "sse"). It prints "ready" once
// it listens, "echo <message>" for each echo it runs, and "hang" when `hang` is called (a call it
// never answers), so that a test knows the call is in flight before it kills this process (and
// "hang-open" once the answer's headers are sent: the stream of an SSE answer is open).
import { createMcpHandler, Server } from "@modelcontextprotocol/server"
import { createServer } from "node:http"
import { Readable } from "node:stream"

const port = Number(process.argv[2])
const responseMode = process.argv[3] === "sse" ? "sse" : "json"
const object = (properties, required = []) => ({ type: "object", properties, required })
const handler = createMcpHandler(() => {
  const server = new Server({ name: "scripted", version: "1.0.0" }, { capabilities: { tools: {} } })
  server.setRequestHandler("tools/list", () =>
    Promise.resolve({
      tools: [
        {
          name: "echo",
          description: "Echoes the message.",
          inputSchema: object({ message: { type: "string" } }, ["message"])
        },
        { name: "hang", description: "Never answers.", inputSchema: object({}) }
      ]
    }))
  server.setRequestHandler("tools/call", (request) => {
    if (request.params.name === "hang") {
      process.stdout.write("hang\n")
      return new Promise(() => undefined)
    }
    process.stdout.write(`echo ${request.params.arguments?.message}\n`)
    return Promise.resolve({ content: [{ type: "text", text: `Echo: ${request.params.arguments?.message}` }] })
  })
  return server
}, { responseMode })

createServer(async (req, res) => {
  const headers = new Headers()
  for (const [key, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(key, value)
  const text = req.method === "GET" || req.method === "HEAD"
    ? undefined
    : await new Response(Readable.toWeb(req)).text()
  const hang = text !== undefined && text.includes("\"name\":\"hang\"")
  handler.fetch(new Request(`http://127.0.0.1:${port}${req.url}`, { method: req.method, headers, body: text })).then(
    (response) => {
      res.writeHead(response.status, Object.fromEntries(response.headers))
      // an SSE answer is open before its first event; "hang-open": the stream of the call to `hang` is
      res.flushHeaders()
      if (hang) process.stdout.write("hang-open\n")
      if (response.body === null) res.end()
      else Readable.fromWeb(response.body).pipe(res)
    },
    () => {
      res.writeHead(500)
      res.end()
    }
  )
}).listen(port, "127.0.0.1", () => process.stdout.write("ready\n"))
