/**
 * `pnpm demo:chat`: the support desk as a chat page. The support agent behind an AG-UI endpoint
 * (`@agentkit/ag-ui`) on 127.0.0.1, and a page built on `@ag-ui/client` (bundled by esbuild when
 * the server starts; no CDN, no external fonts): the answer streams in, tool calls are shown, and
 * the cancel approval is answered in the page, which survives a reload (it asks the endpoint for
 * its thread). The model is the offline scripted one: it looks up an order named in the message
 * and cancels one when asked. `--db <file>` keeps the runs in a SQLite file, so a suspended run
 * also survives a restart of the server.
 */
import { AgUi } from "@agentkit/ag-ui"
import { Operator } from "@agentkit/agents"
import { AuditStore, CheckpointStore, Scope } from "@agentkit/core"
import type { ChatModel } from "@agentkit/core"
import { FakeLLM, Turn } from "@agentkit/testing"
import { HttpLayerRouter, HttpServer, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { createServer } from "node:http"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { invokerLayer, supportAgent } from "./conversation.js"
import { storesAt } from "./durable.js"
import { isEntry } from "./entry.js"
import type { OrderBook } from "./orders.js"
import { seedOrders } from "./orders.js"

const ORDER = /\b([A-Z]-\d{3})\b/

/**
 * The chat's scripted model: an order named in the message is looked up; "cancel" cancels it
 * (a side-effecting call, so the page is asked to approve); a tool's result is answered in words.
 * It reads the conversation, so a resumed run gets the same answers in any process.
 */
export const chatModel = (): Layer.Layer<ChatModel> =>
  FakeLLM.respond((request) => {
    const last = request.messages.at(-1)
    const callId = `call-${request.messages.length}`
    if (last?.role === "tool") {
      if (last.name === "lookup_order") {
        return Turn({ content: `Here is what I found: ${last.content}.`, chunkSize: 3 })
      }
      if (!last.isError) return Turn({ content: `Done: ${last.content}. Anything else?`, chunkSize: 3 })
      const why = last.content.replace(/^DENIED: tool call rejected by human approval:? ?/, "")
      return Turn({
        content: `I have not cancelled it: the cancellation was not approved${why === "" ? "" : ` (${why})`}.`,
        chunkSize: 3
      })
    }
    const text = last?.role === "user" ? last.content : ""
    const order = ORDER.exec(text)?.[1]
    if (order === undefined) {
      return Turn({ content: "I can look up or cancel an order: tell me its number (A-771 or B-102).", chunkSize: 3 })
    }
    if (/\bcancel/i.test(text)) {
      return Turn({
        content: `I'll cancel order ${order} for you.`,
        chunkSize: 3,
        toolCalls: [{ id: callId, name: "cancel_order", arguments: { order_id: order, reason: "customer request" } }]
      })
    }
    return Turn({
      content: `Let me look up order ${order}.`,
      chunkSize: 3,
      toolCalls: [{ id: callId, name: "lookup_order", arguments: { order_id: order } }]
    })
  }).layer

/** The page's files: the folder holding `chat/page.ts`, from this module's place (source, build or bundle). */
const webDir = (): string => {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    for (const candidate of [join(dir, "web"), join(dir, "apps", "support-desk", "web")]) {
      if (existsSync(join(candidate, "chat", "page.ts"))) return join(candidate, "chat")
    }
    const parent = dirname(dir)
    if (parent === dir) throw new Error("the chat page's files (apps/support-desk/web/chat) were not found")
    dir = parent
  }
}

/** The page script: `page.ts` and `@ag-ui/client`, bundled for the browser. */
export const bundlePage = async (): Promise<string> => {
  const esbuild = await import("esbuild")
  const built = await esbuild.build({
    entryPoints: [join(webDir(), "page.ts")],
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    legalComments: "none",
    logLevel: "silent"
  })
  return built.outputFiles[0]!.text
}

/** No inline script or style, nothing from another origin. */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const secure = (response: HttpServerResponse.HttpServerResponse) =>
  HttpServerResponse.setHeaders(response, {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store"
  })

/** The page's routes under `/chat`. */
const pageRoutes = HttpLayerRouter.use((router) =>
  Effect.gen(function*() {
    const script = yield* Effect.promise(bundlePage)
    const dir = webDir()
    const html = HttpServerResponse.text(readFileSync(join(dir, "index.html"), "utf8"), {
      contentType: "text/html; charset=utf-8"
    })
    const css = HttpServerResponse.text(readFileSync(join(dir, "chat.css"), "utf8"), {
      contentType: "text/css; charset=utf-8"
    })
    const js = HttpServerResponse.text(script, { contentType: "text/javascript; charset=utf-8" })
    const icon = HttpServerResponse.text(readFileSync(join(dir, "favicon.svg"), "utf8"), {
      contentType: "image/svg+xml"
    })
    yield* router.add("GET", "/chat", Effect.sync(() => secure(html)))
    yield* router.add("GET", "/chat/page.js", Effect.sync(() => secure(js)))
    yield* router.add("GET", "/chat/chat.css", Effect.sync(() => secure(css)))
    yield* router.add("GET", "/chat/favicon.svg", Effect.sync(() => secure(icon)))
  })
)

/**
 * The demo's one user: the server binds loopback only. A real app identifies the user from its
 * session here, and each user sees only their own runs.
 */
const identify: AgUi.Identify = () => Effect.succeed(Scope.make({ orgId: "support-desk", userId: "customer" }))

/** The chat page and its AG-UI endpoint (`/chat/agent`) as routes, over the given stores. */
export const chatRoutes = <E>(
  book: OrderBook,
  stores: Layer.Layer<CheckpointStore | AuditStore, E>,
  model: Layer.Layer<ChatModel> = chatModel()
) =>
  Layer.mergeAll(
    AgUi.layer({ agent: supportAgent(book), identify, basePath: "/chat/agent" }),
    pageRoutes
  ).pipe(
    Layer.provide(Layer.mergeAll(Operator.Operator.layer, invokerLayer(model))),
    Layer.provide(stores)
  )

/** The chat on its own server on 127.0.0.1 (`port`, default a free one); the layer provides the `HttpServer`. */
export const serve = (options: { readonly port?: number | undefined; readonly db?: string | undefined } = {}) => {
  const book = seedOrders()
  const stores = options.db === undefined
    ? Layer.merge(CheckpointStore.memory(), AuditStore.memory())
    : storesAt(options.db)
  return HttpLayerRouter.serve(chatRoutes(book, stores), { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: options.port ?? 0 }))
  )
}

const flag = (name: string) => {
  const at = process.argv.indexOf(name)
  return at === -1 ? undefined : process.argv[at + 1]
}

if (isEntry(import.meta.url)) {
  const port = flag("--port")
  const program = HttpServer.addressFormattedWith((url) =>
    Effect.sync(() => {
      console.log(`support desk chat: ${url}/chat  (Ctrl-C stops it)`)
      console.log("try: \"What happened to order A-771?\", then \"Please cancel B-102\"")
    })
  ).pipe(
    Effect.zipRight(Effect.never),
    Effect.provide(serve({ port: port === undefined ? undefined : Number(port), db: flag("--db") }))
  )
  Effect.runPromise(program).catch((error: unknown) => {
    console.error(error)
    process.exitCode = 1
  })
}
