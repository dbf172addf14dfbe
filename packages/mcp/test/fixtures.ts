import { Approval } from "@agentkit/agents"
import { McpTransport } from "@agentkit/mcp"
import { Effect, Layer, Schedule } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { createConnection, createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const require = createRequire(import.meta.url)

/** The server-everything entry point (an interop peer built on the 1.x SDK). */
export const everythingEntry = require.resolve("@modelcontextprotocol/server-everything/dist/index.js")

const tee = fileURLToPath(new URL("./peers/tee.mjs", import.meta.url))

/** A stdio transport to `args`, through a tee that logs what the client sends; `wire()` reads the log. */
export const teed = (args: ReadonlyArray<string>) => {
  const log = join(mkdtempSync(join(tmpdir(), "mcp-wire-")), "wire.log")
  writeFileSync(log, "")
  return {
    transport: McpTransport.stdio({
      command: process.execPath,
      args: [tee, log, process.execPath, ...args],
      stderr: "ignore"
    }),
    /** Kills the server process (the tee, by the pid it wrote; its child exits with it). */
    kill: () => process.kill(Number(readFileSync(`${log}.pid`, "utf8")), "SIGKILL"),
    wire: (): ReadonlyArray<Record<string, unknown>> =>
      readFileSync(log, "utf8")
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line) as Record<string, unknown>)
  }
}

/** A free TCP port on 127.0.0.1. */
export const freePort = Effect.async<number>((resume) => {
  const probe = createServer()
  probe.listen(0, "127.0.0.1", () => {
    const address = probe.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    probe.close(() => resume(Effect.succeed(port)))
  })
})

/** server-everything over Streamable HTTP on a random port (it binds every interface; we dial 127.0.0.1). */
export const everythingHttp = Effect.acquireRelease(
  Effect.gen(function*() {
    const port = yield* freePort
    const child = spawn(process.execPath, [everythingEntry, "streamableHttp"], {
      env: { ...process.env, PORT: String(port) },
      stdio: "ignore"
    })
    yield* waitFor(port)
    return { port, child }
  }),
  ({ child }) => Effect.sync(() => child.kill("SIGTERM"))
)

/** Polls until a port accepts connections (bounded: 400 tries, 25 ms apart). */
export const waitFor = (port: number) =>
  Effect.async<boolean>((resume) => {
    const socket = createConnection({ host: "127.0.0.1", port })
    socket.once("connect", () => {
      socket.destroy()
      resume(Effect.succeed(true))
    })
    socket.once("error", () => resume(Effect.succeed(false)))
  }).pipe(
    Effect.repeat({
      schedule: Schedule.intersect(Schedule.spaced("25 millis"), Schedule.recurs(400)),
      until: (up) => up
    }),
    Effect.flatMap((up) => (up ? Effect.void : Effect.dieMessage(`nothing listens on 127.0.0.1:${port}`)))
  )

/** Polls `check` until it holds (bounded: 400 tries, 25 ms apart); dies with `what` otherwise. */
export const eventually = (what: string, check: () => boolean) =>
  Effect.sync(check).pipe(
    Effect.repeat({
      schedule: Schedule.intersect(Schedule.spaced("25 millis"), Schedule.recurs(400)),
      until: (ok) => ok
    }),
    Effect.flatMap((ok) => (ok ? Effect.void : Effect.dieMessage(`never happened: ${what}`)))
  )

/** An Approver that answers every pending call with `decide(pending)` and records what it was asked. */
export const approver = (decide: (pending: Approval.ApprovalRequest["pending"][number]) => Approval.Decision) => {
  const asked: Array<Approval.ApprovalRequest> = []
  return {
    asked,
    layer: Layer.succeed(Approval.Approver, {
      decide: (request) =>
        Effect.sync(() => {
          asked.push(request)
          return Approval.decideEach(request.pending, (pending) => decide(pending))
        })
    })
  }
}
