/**
 * The example end to end on Postgres (DATABASE_URL): two runner processes and the HTTP front
 * (compiled JS, `node`), on loopback. A run started through the front suspends on its charge;
 * a decision with a stale digest is refused (400, nothing recorded); the approval recorded through
 * the front is applied by a runner, and the run finishes. Then a takeover, measured: a run approved,
 * the runner driving it SIGKILLed while its record shows it in flight, the time until the other
 * runner holds it and until it ends.
 */
import { PgClient } from "@effect/sql-pg"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Effect, ManagedRuntime, Redacted } from "effect"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const appDir = fileURLToPath(new URL("..", import.meta.url))
const postgresUrl = process.env["DATABASE_URL"] === "" ? undefined : process.env["DATABASE_URL"]
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const start = (
  script: string,
  arg: string,
  env: Record<string, string>,
  ready: string,
  children: Array<ChildProcess>
): Promise<ChildProcess> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(appDir, "dist/src", script), arg], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.push(child)
    let output = ""
    const seen = (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes(ready)) resolve(child)
    }
    child.stdout!.on("data", seen)
    child.stderr!.on("data", seen)
    child.on("exit", (code) => reject(new Error(`${script} exited (${code}): ${output.slice(0, 2000)}`)))
  })

/** Polls until the front answers (the server listens). */
const waitFor = async (url: string, until = Date.now() + 240_000) => {
  while (Date.now() < until) {
    try {
      return await fetch(url)
    } catch {
      await sleep(100)
    }
  }
  throw new Error(`${url} never answered`)
}

describe("durable-billing: two runners and the HTTP front", { timeout: 300_000 }, () => {
  it.skipIf(postgresUrl === undefined)(
    "a run started through the front suspends, refuses a stale decision, and finishes once approved; a runner SIGKILLed with a run in flight: the other takes it over",
    async () => {
      if (postgresUrl === undefined) return
      const tsc = join(appDir, "../../node_modules/typescript/bin/tsc")
      execFileSync(process.execPath, [tsc, "-b", appDir], { stdio: "inherit" })
      const name = `billing_${process.pid}_${Date.now().toString(36)}`
      const admin = ManagedRuntime.make(PgClient.layer({ url: Redacted.make(postgresUrl) }))
      await admin.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`CREATE DATABASE ${name}`)))
      const url = new URL(postgresUrl)
      url.pathname = `/${name}`
      const env = { DATABASE_URL: url.href }
      const base = 35000 + (process.pid % 500) * 3
      const children: Array<ChildProcess> = []
      try {
        // the first runner creates the tables; then the second and the front
        const t0 = Date.now()
        const mark = (what: string) => console.log(`durable-billing: ${what} at ${Date.now() - t0} ms`)
        await start("runner.js", String(base), env, "Listening on", children)
        await start("runner.js", String(base + 1), env, "Listening on", children)
        children.push(
          spawn(process.execPath, [join(appDir, "dist/src/front.js"), String(base + 2)], {
            env: { ...process.env, ...env },
            stdio: "ignore"
          })
        )
        const front = `http://127.0.0.1:${base + 2}`
        await waitFor(`${front}/runs/none`)
        mark("runners and front up")
        const started = await fetch(`${front}/runs`, {
          method: "POST",
          body: JSON.stringify({ runId: "order-1", input: "bill customer acme" })
        })
        expect(started.status).toBe(202)
        let run: { status: string; pending: Array<{ id: string; digest: string }>; result?: { output: string } } = {
          status: "",
          pending: []
        }
        while (run.status !== "suspended") {
          await sleep(100)
          const response = await fetch(`${front}/runs/order-1`)
          if (response.status === 200) run = (await response.json()) as typeof run
        }
        mark("suspended")
        expect(run.status).toBe("suspended")
        const entry = run.pending[0]!
        const stale = await fetch(`${front}/runs/order-1/decisions`, {
          method: "POST",
          body: JSON.stringify({
            pendingId: entry.id,
            decision: { verdict: "approve", digest: "0".repeat(64) },
            by: "ops"
          })
        })
        expect(stale.status).toBe(400)
        expect(((await stale.json()) as { error: string }).error).toBe("DigestMismatch")
        const unknown = await fetch(`${front}/runs/nope/decisions`, {
          method: "POST",
          body: JSON.stringify({
            pendingId: entry.id,
            decision: { verdict: "approve", digest: entry.digest },
            by: "ops"
          })
        })
        expect(unknown.status).toBe(404)
        const approved = await fetch(`${front}/runs/order-1/decisions`, {
          method: "POST",
          body: JSON.stringify({
            pendingId: entry.id,
            decision: { verdict: "approve", digest: entry.digest },
            by: "ops"
          })
        })
        expect(approved.status).toBe(200)
        while (run.status !== "done") {
          await sleep(100)
          run = (await (await fetch(`${front}/runs/order-1`)).json()) as typeof run
        }
        mark("done")
        expect(run.status).toBe("done")
        expect(run.result?.output).toBe("Done: charged acme 1200 cents")

        // takeover: a run in flight on one runner, that runner SIGKILLed; the other takes it over
        // once the dead runner's shard locks (10 s) and the run's lease (10 s) have expired
        const db = ManagedRuntime.make(PgClient.layer({ url: Redacted.make(url.href) }))
        const record = (runId: string) =>
          db.runPromise(
            Effect.flatMap(SqlClient.SqlClient, (client) =>
              client<{ status: string; lease_owner: string | null }>`
                SELECT status, lease_owner FROM agentkit_runs WHERE run_id = ${runId}`)
          ).then((rows) => rows[0])
        const runners = { [`billing-runner-${base}`]: children[0]!, [`billing-runner-${base + 1}`]: children[1]! }
        let measured: { killed: string; takenOverMs: number; doneMs: number; status: string } | undefined
        try {
          for (let attempt = 0; attempt < 5 && measured === undefined; attempt++) {
            const runId = `order-k${attempt}`
            await fetch(`${front}/runs`, {
              method: "POST",
              body: JSON.stringify({ runId, input: `bill customer k${attempt}` })
            })
            let pending: { id: string; digest: string } | undefined
            while (pending === undefined) {
              await sleep(100)
              const response = await fetch(`${front}/runs/${runId}`)
              if (response.status !== 200) continue
              const body = (await response.json()) as typeof run
              if (body.status === "suspended") pending = body.pending[0]
            }
            await fetch(`${front}/runs/${runId}/decisions`, {
              method: "POST",
              body: JSON.stringify({
                pendingId: pending.id,
                decision: { verdict: "approve", digest: pending.digest },
                by: "ops"
              })
            })
            // the moment a runner drives it again (its lease on the record), that runner is killed
            let owner: string | undefined
            for (let i = 0; i < 3000 && owner === undefined; i++) {
              const now = await record(runId)
              if (now?.status === "done") break
              if (now?.status === "running" && now.lease_owner !== null && now.lease_owner in runners) {
                owner = now.lease_owner
              } else await sleep(5)
            }
            if (owner === undefined) continue // it finished before it could be caught in flight: another run
            const victim = runners[owner]!
            const exited = new Promise((resolve) => victim.once("exit", resolve))
            victim.kill("SIGKILL")
            const killedAt = Date.now()
            await exited
            let takenOverMs: number | undefined
            for (;;) {
              const now = await record(runId)
              if (
                takenOverMs === undefined && now !== undefined &&
                (now.status !== "running" || now.lease_owner !== owner)
              ) {
                takenOverMs = Date.now() - killedAt
              }
              if (now?.status === "done" || now?.status === "suspended") {
                measured = {
                  killed: owner,
                  takenOverMs: takenOverMs!,
                  doneMs: Date.now() - killedAt,
                  status: now.status
                }
                break
              }
              await sleep(50)
            }
          }
        } finally {
          await db.dispose()
        }
        console.log(
          `durable-billing takeover: ${
            measured?.killed ?? "no runner"
          } SIGKILLed with a run in flight; the other runner held it ${
            measured?.takenOverMs ?? "?"
          } ms after the kill and it ended ${measured?.status ?? "?"} ${
            measured?.doneMs ?? "?"
          } ms after it (lock expiry 10 s, run lease 10 s)`
        )
        expect(measured).toBeDefined()
        // not before the dead runner's lease expired (10 s after its last renewal, at most 3 s before the kill)
        expect(measured!.takenOverMs).toBeGreaterThanOrEqual(7_000)
      } finally {
        for (const child of children) if (child.exitCode === null) child.kill("SIGKILL")
        await admin.runPromise(
          Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
        ).catch(() => undefined)
        await admin.dispose()
      }
    }
  )
})
