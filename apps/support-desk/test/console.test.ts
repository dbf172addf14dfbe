/**
 * `pnpm demo:approvals -- --console` as a real process (`node dist/src/approvals.js --console`):
 * it suspends the run, serves the operator console on 127.0.0.1 and prints its URL; over HTTP the
 * inbox shows the run, a write without the CSRF header is refused, a decision recorded through
 * the API resumes the run to the end, a second decision gets 409; a second demo on the taken port fails clearly; SIGTERM (by PID) stops it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

/** Resolves with the first match of `pattern` in what the process has printed so far (or later). */
const waitFor = (read: () => string, pattern: RegExp, what: string, exited: () => boolean) =>
  new Promise<RegExpExecArray>((resolve, reject) => {
    const poll = setInterval(() => {
      const match = pattern.exec(read())
      if (match !== null) {
        clearInterval(poll)
        resolve(match)
      } else if (exited()) {
        clearInterval(poll)
        reject(new Error(`the demo exited before printing ${what}:\n${read()}`))
      }
    }, 50)
  })

describe("demo:approvals --console", () => {
  it.live(
    "a real process serves the inbox over HTTP on 127.0.0.1; a decision recorded there finishes the run; SIGTERM stops it",
    () =>
      Effect.promise(async () => {
        const dir = mkdtempSync(join(tmpdir(), "agentkit-console-demo-"))
        const app = fileURLToPath(new URL("../dist/src/approvals.js", import.meta.url))
        const child = spawn(process.execPath, [app, "--", "--console", "--db", join(dir, "approvals.db")], { stdio: ["pipe", "pipe", "pipe"] })
        let stdout = ""
        let stderr = ""
        let exitCode: number | null | undefined
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
        const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve((exitCode = code))))
        const gone = () => exitCode !== undefined
        try {
          const url = (await waitFor(() => stdout, /operator console: (http:\/\/127\.0\.0\.1:\d+\/console)\n/, "the URL", gone))[1]!
          const runId = /run (support-desk-[0-9a-f]{8}) is suspended/.exec(stdout)![1]!
          const inbox = (await (await fetch(`${url}/api/runs?status=suspended`)).json()) as { runs: Array<{ runId: string; pending: Array<{ id: string; digest: string; call: { name: string } }> }> }
          const waiting = inbox.runs.find((run) => run.runId === runId)
          expect(waiting?.pending.map((entry) => entry.call.name)).toEqual(["cancel_order"])
          const entry = waiting!.pending[0]!
          const decision = JSON.stringify({ runId, pendingId: entry.id, verdict: "approve", digest: entry.digest })
          // a write without the CSRF header is refused, and nothing is recorded
          const forged = await fetch(`${url}/api/decide`, { method: "POST", headers: { "content-type": "application/json" }, body: decision })
          expect(forged.status).toBe(403)
          const { csrf } = (await (await fetch(`${url}/api/session`)).json()) as { csrf: string }
          const post = () => fetch(`${url}/api/decide`, { method: "POST", headers: { "content-type": "application/json", "x-agentkit-csrf": csrf }, body: decision })
          const decided = await post()
          expect(decided.status).toBe(200)
          await waitFor(() => stdout, new RegExp(`run ${runId}: done\\n`), "the finished run", gone)
          expect(stdout).toContain("support: Done: order B-102 cancelled (duplicate order). Anything else?")
          expect(stdout).toContain("order B-102: cancelled")
          const run = (await (await fetch(`${url}/api/run?runId=${runId}`)).json()) as { status: string; decided: Array<{ by: string }> }
          expect(run.status).toBe("done")
          expect(run.decided.length).toBe(1)
          expect((await post()).status).toBe(409) // the decision is taken: a second one loses
          expect(gone()).toBe(false) // it keeps serving after the run finished
          // a port already taken: a clear error, exit 1, and no run is started
          const port = new URL(url).port
          const taken = spawnSync(process.execPath, [app, "--console", "--port", port, "--db", join(dir, "other.db")], { input: "", encoding: "utf8" })
          expect(taken.status).toBe(1)
          expect(taken.stdout).toMatch(new RegExp(`^error: the console could not listen on 127\\.0\\.0\\.1:${port} \\(.*EADDRINUSE.*\\)\n$`))
          process.kill(child.pid!, "SIGTERM")
          expect(await exited).toBe(0)
          expect(stdout).toContain("console stopped")
          expect(stderr).toBe("")
        } finally {
          if (!gone()) process.kill(child.pid!, "SIGKILL")
          rmSync(dir, { recursive: true, force: true })
        }
      }),
    60_000
  )
})
