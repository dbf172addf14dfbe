/**
 * Connections that heal, against real servers started here on loopback: server-everything (SDK 1.x)
 * restarted between two calls of one run, a server that accepts connections and never answers
 * (under TestClock), a scripted server on the SDK killed in the middle of a call, and a tool that
 * can only run as a task.
 */
import { Agent, ReActCognition } from "@agentkit/agents"
import { Invoker } from "@agentkit/core"
import { McpConnectTimeout, McpStreamError, McpToolset, McpTransport } from "@agentkit/mcp"
import { Egress } from "@agentkit/middleware"
import { FakeLLM, makeTestCtx, Turn } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Exit, Fiber, Schedule, TestClock } from "effect"
import type { ChildProcess } from "node:child_process"
import { spawn } from "node:child_process"
import { createServer, type Socket } from "node:net"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import { eventually, everythingEntry, freePort, teed, waitFor } from "./fixtures.js"

const loopback = { allowPrivate: ["127.0.0.1"] }

/** server-everything over Streamable HTTP on `port`. */
const everythingOn = (port: number) =>
  Effect.gen(function*() {
    const child = spawn(process.execPath, [everythingEntry, "streamableHttp"], {
      env: { ...process.env, PORT: String(port) },
      stdio: "ignore"
    })
    yield* waitFor(port)
    return child
  })

/** Kills a process and waits until it is gone (so nothing of it still listens). */
const kill = (child: ChildProcess) =>
  Effect.async<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    child.once("exit", () => resume(Effect.void))
    child.kill("SIGKILL")
  })

const peer = fileURLToPath(new URL("./peers/scripted-http.mjs", import.meta.url))

/** The scripted server (test/peers/scripted-http.mjs) on a free port; `lines` is what it printed. */
const scripted = (mode: "json" | "sse", on?: number) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const port = on ?? (yield* freePort)
      const child = spawn(process.execPath, [peer, String(port), mode], { stdio: ["ignore", "pipe", "ignore"] })
      const lines: Array<string> = []
      child.stdout.on("data", (chunk: Buffer) => {
        for (const line of chunk.toString("utf8").split("\n")) if (line !== "") lines.push(line)
      })
      yield* eventually("the scripted server listens", () => lines.includes("ready"))
      return { port, child, lines }
    }),
    ({ child }) => kill(child)
  )

const toolResults = (transcript: ReadonlyArray<{ readonly role: string }>) =>
  transcript.filter((m) => m.role === "tool") as unknown as ReadonlyArray<{
    readonly content: string
    readonly isError: boolean
  }>

describe("a server restarted between two calls of one run", () => {
  it.live("the second call opens a new session and succeeds; the run keeps its snapshot", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const port = yield* freePort
        let child = yield* everythingOn(port)
        yield* Effect.addFinalizer(() => kill(child))
        const toolset = yield* McpToolset.make({
          name: "everything",
          transport: McpTransport.http(`http://127.0.0.1:${port}/mcp`, { egress: loopback }),
          trust: { tools: { echo: { sideEffecting: false, requiresApproval: false, caps: [] } } },
          include: ["echo"]
        })
        const snapshot = toolset.tools()
        const echo = (id: string, message: string) => ({ id, name: "mcp__everything__echo", arguments: { message } })
        let turn = 0
        const llm = FakeLLM.respond(() => {
          const n = turn++
          if (n === 0) return Turn({ toolCalls: [echo("c1", "before")] })
          if (n === 1) {
            // the server process dies and another one starts on the same port: it knows no session
            return Effect.gen(function*() {
              yield* kill(child)
              child = yield* everythingOn(port)
              return Turn({ toolCalls: [echo("c2", "after")] })
            })
          }
          return Turn({ content: "done" })
        })
        const agent = Agent.make({
          name: "echoer",
          model: "claude-sonnet-4-6",
          prompt: "Echo.",
          cognition: ReActCognition.make({ tools: snapshot })
        })
        const result = yield* agent.run("echo twice").pipe(Effect.provide(makeTestCtx({ llm })))
        expect(result.output).toBe("done")
        expect(toolResults(result.transcript).map((r) => [r.isError, r.content])).toEqual([
          [false, "Echo: before"],
          [false, "Echo: after"]
        ])
        // the new session listed the tools again: nothing changed, nothing held, the snapshot is the same
        expect(toolset.held()).toEqual([])
        expect(toolset.tools().map((t) => t.name)).toEqual(snapshot.map((t) => t.name))
      })
    ), 90_000)
})

describe("a server that is down when a call is made", () => {
  it.live(
    "the call waits for it on the reconnect schedule, and goes out once (on a new session) when it is back",
    () =>
      Effect.scoped(
        Effect.gen(function*() {
          const first = yield* scripted("json")
          // every request passes the egress check: counting them shows the client trying
          const base = Egress.policy(loopback)
          let requests = 0
          const counting: Egress.Policy = {
            ...base,
            check: (url) => {
              requests++
              return base.check(url)
            }
          }
          const toolset = yield* McpToolset.make({
            name: "scripted",
            transport: McpTransport.http(`http://127.0.0.1:${first.port}/mcp`, { egress: counting }),
            trust: { tools: { echo: { sideEffecting: false, requiresApproval: false, caps: [] } } },
            include: ["echo"],
            reconnect: Schedule.intersect(Schedule.spaced("100 millis"), Schedule.recurs(300)),
            connectTimeout: "2 minutes"
          })
          const echo = toolset.tools()[0]!
          yield* kill(first.child)
          const before = requests
          const fiber = yield* Effect.fork(
            Effect.flatMap(
              Invoker,
              (invoker) => invoker.tool({ id: "c1", name: echo.name, arguments: { message: "back" } }, echo)
            ).pipe(Effect.provide(makeTestCtx({ llm: FakeLLM.script([]) })))
          )
          // the call was refused (the connection, so the server never saw it) and a new session is being tried
          yield* eventually("the client tries to reconnect", () => requests >= before + 3)
          const second = yield* scripted("json", first.port)
          const outcome = yield* Fiber.join(fiber)
          expect(outcome.text).toBe("Echo: back")
          // sent once: the server that was down never saw it, the one that came back ran it once
          expect(first.lines.filter((line) => line.startsWith("echo"))).toEqual([])
          expect(second.lines.filter((line) => line.startsWith("echo"))).toEqual(["echo back"])
        })
      ),
    90_000
  )
})

describe("the connect deadline", () => {
  it.effect(
    "a server that accepts connections and never answers fails make with McpConnectTimeout",
    () =>
      Effect.gen(function*() {
        const accepted = yield* Deferred.make<void>()
        const sockets: Array<Socket> = []
        const silent = createServer((socket) => {
          sockets.push(socket)
          Deferred.unsafeDone(accepted, Exit.void)
        })
        const port = yield* Effect.acquireRelease(
          Effect.async<number>((resume) => {
            silent.listen(0, "127.0.0.1", () => resume(Effect.succeed((silent.address() as AddressInfo).port)))
          }),
          () =>
            Effect.sync(() => {
              for (const socket of sockets) socket.destroy()
              silent.close()
            })
        )
        const fiber = yield* Effect.fork(
          Effect.scoped(
            McpToolset.make({
              name: "silent",
              transport: McpTransport.http(`http://127.0.0.1:${port}/mcp`, { egress: loopback })
            })
          )
        )
        yield* Deferred.await(accepted)
        // the deadline is waiting on the test clock (no wall-clock wait)
        yield* TestClock.sleeps().pipe(Effect.repeat({ until: Chunk.isNonEmpty, times: 100_000 }))
        yield* TestClock.adjust("9 seconds")
        expect(fiber.unsafePoll()).toBeNull()
        yield* TestClock.adjust("1 second")
        const error = yield* Effect.flip(Fiber.join(fiber))
        expect(error).toBeInstanceOf(McpConnectTimeout)
        expect(error.message).toBe("MCP server 'silent' did not complete the connection within 10s")
      }).pipe(Effect.scoped),
    30_000
  )

  it.effect("connectTimeout is an option; one that cannot work is refused before anything starts", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Effect.scoped(
          McpToolset.make({
            name: "s",
            transport: McpTransport.stdio({ command: "/nonexistent/agentkit-mcp-test-server" }),
            connectTimeout: "soon" as never
          })
        )
      )
      expect([error._tag, (error as { field?: string }).field, error.message]).toEqual([
        "ConfigurationError",
        "connectTimeout",
        "MCP server 's': `connectTimeout` must be a positive Duration (e.g. \"10 seconds\"); got soon"
      ])
    }))
})

describe("a server killed in the middle of a call", () => {
  it.live.each(
    [
      ["an SSE stream", "sse", "the response stream ended before the server answered (SSE stream disconnected: "],
      ["a JSON answer", "json", "the request failed on the wire ("]
    ] as const
  )(
    "answered as %s: the call fails with the stream error when the stream breaks, not at the tool's timeout",
    ([, mode, reason]) =>
      Effect.scoped(
        Effect.gen(function*() {
          const { child, lines, port } = yield* scripted(mode)
          const toolset = yield* McpToolset.make({
            name: "scripted",
            transport: McpTransport.http(`http://127.0.0.1:${port}/mcp`, { egress: loopback }),
            trust: { tools: { hang: { requiresApproval: false, timeout: "10 minutes" } } },
            include: ["hang"]
          })
          const hang = toolset.tools()[0]!
          const fiber = yield* Effect.fork(
            Effect.flatMap(Invoker, (invoker) => invoker.tool({ id: "c1", name: hang.name, arguments: {} }, hang)).pipe(
              Effect.provide(makeTestCtx({ llm: FakeLLM.script([]) }))
            )
          )
          // a JSON answer is never started (the tool never answers); an SSE answer's stream is open
          const inFlight = mode === "sse" ? "hang-open" : "hang"
          yield* eventually("the call is in flight", () => lines.includes(inFlight))
          yield* kill(child)
          const error = yield* Effect.flip(Fiber.join(fiber))
          expect(error).toBeInstanceOf(McpStreamError)
          expect((error as McpStreamError).reason.startsWith(reason), error.message).toBe(true)
          expect(error.message).toMatch(/^MCP tool 'hang' of server 'scripted' failed: .+; the call was not re-sent$/)
        })
      ),
    60_000
  )
})

describe("a tool that can only run as a task", () => {
  it.live("is not offered to the model, and the toolset says why", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const { transport } = teed([everythingEntry, "stdio"])
        const toolset = yield* McpToolset.make({ name: "everything", transport, exclude: ["get-env"] })
        const names = toolset.tools().map((t) => t.name)
        expect(names).toContain("mcp__everything__echo")
        expect(names).not.toContain("mcp__everything__simulate-research-query")
        expect(toolset.rejected()).toContainEqual({
          tool: "simulate-research-query",
          reason:
            "it runs only as a task (execution.taskSupport 'required'), which agentkit does not run; it is not offered to the model"
        })
      })
    ), 30_000)
})
