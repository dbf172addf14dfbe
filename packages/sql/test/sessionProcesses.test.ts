/**
 * Sessions across real processes (compiled JS, `node`, one request each) over the SQL stores: a
 * thread continues from one process to the next; a process killed with SIGKILL after its run
 * finished and before its turns were appended leaves the thread as it was (no half turn), and the
 * same request driven again appends the recorded turns once, with no model call; two processes on
 * one thread at once never interleave their turns.
 */
import { Message, SessionStore } from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { execFileSync, spawn } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { Database } from "./crash/protocol.js"
import type { SessionWorkerConfig } from "./crash/sessionWorker.js"
import { targets } from "./databases.js"
import type { Place } from "./databases.js"

const packageDir = fileURLToPath(new URL("..", import.meta.url))
const workerScript = join(packageDir, "build/crash/test/crash/sessionWorker.js")

const buildWorker = () => {
  const tsc = join(packageDir, "../../node_modules/typescript/bin/tsc")
  execFileSync(process.execPath, [tsc, "-b", join(packageDir, "tsconfig.crash.json")], { stdio: "inherit" })
  if (!existsSync(workerScript)) throw new Error(`the session worker was not built at ${workerScript}`)
}

interface Outcome {
  readonly ok?: boolean
  readonly output?: string
  readonly error?: string
  readonly point?: string
  readonly killed?: boolean
}

/** Runs one worker to its end; with `killAt`, kills it (SIGKILL) when it reports that point. */
const drive = (config: SessionWorkerConfig, killAt?: string): Promise<Outcome> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [workerScript, JSON.stringify(config)], { stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    let err = ""
    let last: Outcome | undefined
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8")
      let newline: number
      while ((newline = out.indexOf("\n")) >= 0) {
        const line = out.slice(0, newline)
        out = out.slice(newline + 1)
        const event = JSON.parse(line) as Outcome
        last = event
        if (killAt !== undefined && event.point === killAt) child.kill("SIGKILL")
      }
    })
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")))
    child.on("error", reject)
    child.on("exit", (code, signal) => {
      if (signal === "SIGKILL") return resolve({ ...last, killed: true })
      if (code !== 0 || last === undefined) return reject(new Error(`session worker exited ${code}: ${err}`))
      resolve(last)
    })
  })

const databaseOf = (place: Place): Database =>
  place.name === "sqlite"
    ? { kind: "sqlite", filename: place.where }
    : { kind: "postgres", url: process.env["DATABASE_URL"]!, schema: place.options.schema! }

const decodeMessages = Schema.decodeUnknownSync(Schema.parseJson(Schema.Array(Message.Message)))
const key = (threadId: string) => ({ tenant: "[\"acme\",null,null,null]", threadId })

/** Every tool call of a thread has its result right after it, and nothing else comes between. */
const wellFormed = (messages: ReadonlyArray<Message.Message>) => {
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!
    if (message.role === "assistant" && message.toolCalls.length > 0) {
      const results = messages.slice(i + 1, i + 1 + message.toolCalls.length)
      expect(results.map((m) => (m.role === "tool" ? m.toolCallId : m.role))).toEqual(
        message.toolCalls.map((call) => call.id)
      )
    }
  }
}

for (const target of targets) {
  describe(`sessions across processes on ${target.name}`, () => {
    it.scopedLive(
      "a thread continues across processes; a SIGKILL before the append leaves it whole",
      () =>
        Effect.gen(function*() {
          yield* Effect.sync(buildWorker)
          const place = yield* target.fresh
          const stores = yield* Layer.build(place.stores())
          const sessions = Context.get(stores, SessionStore.SessionStore)
          const callsLog = join(packageDir, `build/session-calls-${process.pid}-${target.name}.log`)
          writeFileSync(callsLog, "")
          const base = { database: databaseOf(place), threadId: "t-1", callsLog }
          const run = (runId: string, input: string, killAt?: string, pause = false) =>
            Effect.promise(() => drive({ ...base, runId, input, pauseBeforeAppend: pause }, killAt))
          const thread = Effect.map(sessions.load(key("t-1")), Option.getOrThrow)
          const calls = () => readFileSync(callsLog, "utf8").split("\n").filter((line) => line !== "")

          expect(yield* run("r1", "turn 1: my code is FACT-1-ABC")).toMatchObject({ ok: true, output: "ok" })
          expect(yield* run("r2", "what was the code of turn 1?")).toMatchObject({ ok: true, output: "ABC" })
          const before = yield* thread
          expect([before.version, before.lastRunId]).toEqual([2, "r2"])

          // killed after its run finished, before its turns were appended
          expect(yield* run("r3", "turn 3: my code is FACT-3-XYZ", "appending", true)).toMatchObject({ killed: true })
          const after = yield* thread
          expect(after).toEqual(before) // no half turn, nothing at all
          wellFormed(decodeMessages(after.messages))
          expect(calls().filter((c) => c === "r3")).toHaveLength(2)

          // the same request again: the recorded result, appended once, no model call
          expect(yield* run("r3", "turn 3: my code is FACT-3-XYZ")).toMatchObject({ ok: true, output: "ok" })
          expect(calls().filter((c) => c === "r3")).toHaveLength(2)
          const appended = yield* thread
          expect([appended.version, appended.lastRunId]).toEqual([3, "r3"])
          const messages = decodeMessages(appended.messages)
          wellFormed(messages)
          expect(messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual([
            "turn 1: my code is FACT-1-ABC",
            "what was the code of turn 1?",
            "turn 3: my code is FACT-3-XYZ"
          ])
          // and driven a third time, it is refused: its turns are in the thread already
          expect(yield* run("r3", "turn 3: my code is FACT-3-XYZ")).toMatchObject({
            ok: false,
            error: "StaleThreadClaim"
          })
          expect(yield* run("r4", "what was the code of turn 3?")).toMatchObject({ ok: true, output: "XYZ" })
        }),
      { timeout: 180_000 }
    )

    it.scopedLive(
      "two processes on one thread at once never interleave: one is refused or they run in turn",
      () =>
        Effect.gen(function*() {
          yield* Effect.sync(buildWorker)
          const place = yield* target.fresh
          const stores = yield* Layer.build(place.stores())
          const sessions = Context.get(stores, SessionStore.SessionStore)
          const callsLog = join(packageDir, `build/session-calls-${process.pid}-${target.name}-2.log`)
          writeFileSync(callsLog, "")
          const base = { database: databaseOf(place), threadId: "t-2", callsLog, modelDelayMs: 300 }
          const [a, b] = yield* Effect.promise(() =>
            Promise.all([
              drive({ ...base, runId: "a", input: "turn 1: FACT-1-AAA" }),
              drive({ ...base, runId: "b", input: "turn 2: FACT-2-BBB" })
            ])
          )
          const succeeded = [a, b].filter((o) => o.ok === true).length
          for (const outcome of [a, b]) {
            if (outcome.ok !== true) expect(outcome.error).toBe("ThreadBusy")
          }
          expect(succeeded).toBeGreaterThanOrEqual(1)
          const thread = Option.getOrThrow(yield* sessions.load(key("t-2")))
          expect(thread.version).toBe(succeeded)
          const messages = decodeMessages(thread.messages)
          wellFormed(messages)
          // each request's turns together: user, its call, its result, its answer
          expect(messages).toHaveLength(4 * succeeded)
          for (let i = 0; i < messages.length; i += 4) {
            expect(messages.slice(i, i + 4).map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"])
          }
        }),
      { timeout: 180_000 }
    )
  })
}
