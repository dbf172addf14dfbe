/**
 * `pnpm demo:approvals -- --console` as a real process (`node dist/src/approvals.js --console`):
 * it suspends the run, serves the operator console on 127.0.0.1 and prints its URL; over HTTP the
 * inbox shows the run, a write without the CSRF header is refused, a decision recorded through
 * the API resumes the run to the end, a second decision gets 409; the run's trace (its spans,
 * written to the SQL span store in the demo's SQLite file) is a tree with the model calls and the
 * tool call, and this test's own process reads the same spans from the file; a second demo on the
 * taken port fails clearly; SIGTERM (by PID) stops it.
 *
 * In Debian's chromium (playwright-core) the inbox shows the waiting call and the run's page shows
 * its span tree; screenshots go to build/screenshots/ (gitignored). Under `CI=true` a missing
 * chromium fails; elsewhere the browser part is skipped, saying why.
 */
import type { SpanStore } from "@agentkit/core"
import { SqlSpanStore, SqlStores } from "@agentkit/sql"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { chromium } from "playwright-core"
import type { Browser } from "playwright-core"

const chromiumPath = [process.env.CHROMIUM_PATH, "/usr/lib/chromium/chromium", "/usr/bin/chromium"].find(
  (path): path is string => path !== undefined && path !== "" && existsSync(path)
)
const ci = process.env.CI === "true"
if (chromiumPath === undefined) {
  if (ci) {
    throw new Error(
      "CI=true: the --console browser test needs chromium (apt-get install -y --no-install-recommends chromium)"
    )
  }
  console.log(
    "demo:approvals --console: the browser part is skipped: no chromium (apt-get install -y --no-install-recommends chromium, or set CHROMIUM_PATH)"
  )
}
const screenshots = fileURLToPath(new URL("../build/screenshots/", import.meta.url))

/**
 * The spans of a run tree as this process reads them from the SQLite file (a process other than
 * the demo's), and how many traces the file holds in all.
 */
const spansInFile = (filename: string, key: string) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function*() {
        const spans = yield* Effect.flatMap(SqlSpanStore.SqlSpanStore, (store) => store.trace(key))
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ readonly n: unknown }>`SELECT COUNT(DISTINCT trace_id) AS n FROM agentkit_spans`
        return { spans, traces: Number(row?.n) }
      }).pipe(Effect.provide(SqlSpanStore.layer().pipe(Layer.provideMerge(SqlStores.layerSqlite({ filename })))))
    )
  )

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
        const db = join(dir, "approvals.db")
        const app = fileURLToPath(new URL("../dist/src/approvals.js", import.meta.url))
        const child = spawn(process.execPath, [app, "--", "--console", "--db", db], { stdio: ["pipe", "pipe", "pipe"] })
        let browser: Browser | undefined
        let stdout = ""
        let stderr = ""
        let exitCode: number | null | undefined
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
        const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(exitCode = code)))
        const gone = () => exitCode !== undefined
        try {
          const url = (await waitFor(
            () => stdout,
            /operator console: (http:\/\/127\.0\.0\.1:\d+\/console)\n/,
            "the URL",
            gone
          ))[1]!
          const runId = /run (support-desk-[0-9a-f]{8}) is suspended/.exec(stdout)![1]!
          const inbox = (await (await fetch(`${url}/api/runs?status=suspended`)).json()) as {
            runs: Array<{ runId: string; pending: Array<{ id: string; digest: string; call: { name: string } }> }>
          }
          const waiting = inbox.runs.find((run) => run.runId === runId)
          expect(waiting?.pending.map((entry) => entry.call.name)).toEqual(["cancel_order"])
          const entry = waiting!.pending[0]!
          // the inbox in chromium: the waiting call, then the run's page with its span tree so far
          const page = chromiumPath === undefined
            ? undefined
            : await (browser = await chromium.launch({
              executablePath: chromiumPath,
              headless: true,
              args: ["--no-sandbox", "--disable-gpu"]
            })).newPage({ viewport: { width: 1280, height: 860 } })
          if (page !== undefined) {
            mkdirSync(screenshots, { recursive: true })
            await page.goto(url)
            const card = page.getByTestId("inbox").locator(`[data-pending="${entry.id}"]`)
            await card.waitFor()
            expect(await card.getByTestId("tool").textContent()).toBe("cancel_order")
            expect(await card.getByTestId("digest").textContent()).toBe(entry.digest)
            // the demo's run has no scope: it reads as such, never as its raw key
            const scope = page.locator(`article[data-run="${runId}"] [data-testid="scope"]`)
            expect(await scope.textContent()).toBe("scope (no scope)")
            await page.screenshot({ path: `${screenshots}/console-1-inbox.png` })
            await page.locator(`article[data-run="${runId}"] a`).first().click()
            await page.getByTestId("trace").getByTestId("span-name").first().waitFor()
            const before = await page.getByTestId("trace").getByTestId("span-name").allTextContents()
            expect(before[0]).toBe("invoke_agent support")
            expect(before).toContain("chat claude-sonnet-4-6")
            // the waterfall: the run waits for the decision (still waiting)
            expect(await page.getByTestId("approval-wait").textContent()).toContain(
              "waiting for a decision: cancel_order"
            )
          }
          const decision = JSON.stringify({ runId, pendingId: entry.id, verdict: "approve", digest: entry.digest })
          // a write without the CSRF header is refused, and nothing is recorded
          const forged = await fetch(`${url}/api/decide`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: decision
          })
          expect(forged.status).toBe(403)
          const { csrf } = (await (await fetch(`${url}/api/session`)).json()) as { csrf: string }
          const post = () =>
            fetch(`${url}/api/decide`, {
              method: "POST",
              headers: { "content-type": "application/json", "x-agentkit-csrf": csrf },
              body: decision
            })
          const decided = await post()
          expect(decided.status).toBe(200)
          await waitFor(() => stdout, new RegExp(`run ${runId}: done\\n`), "the finished run", gone)
          expect(stdout).toContain("support: Done: order B-102 cancelled (duplicate order). Anything else?")
          expect(stdout).toContain("order B-102: cancelled")
          const run = (await (await fetch(`${url}/api/run?runId=${runId}`)).json()) as {
            status: string
            decided: Array<{ by: string }>
          }
          expect(run.status).toBe("done")
          expect(run.decided.length).toBe(1)
          expect((await post()).status).toBe(409) // the decision is taken: a second one loses
          // the run's trace: a tree (every parent is in it) of both turns, with the model calls and the tool call
          const { spans } = (await (await fetch(`${url}/api/trace?runId=${runId}`)).json()) as {
            spans: Array<SpanStore.SpanRecord>
          }
          expect(spans.length).toBeGreaterThan(0)
          const ids = new Set(spans.map((span) => span.spanId))
          const roots = spans.filter((span) => span.parentSpanId === undefined)
          expect(roots.map((span) => span.name)).toEqual(["invoke_agent support", "invoke_agent support"]) // suspended, then resumed
          expect(roots.every((span) => span.attributes["gen_ai.conversation.id"] === runId)).toBe(true)
          expect(spans.every((span) => span.parentSpanId === undefined || ids.has(span.parentSpanId))).toBe(true)
          const byId = new Map(spans.map((span) => [span.spanId, span]))
          const models = spans.filter((span) => span.name === "chat claude-sonnet-4-6")
          expect(models.length).toBe(2)
          const tool = spans.find((span) => span.name === "execute_tool cancel_order")
          expect(tool?.attributes["gen_ai.tool.name"]).toBe("cancel_order")
          expect(byId.get(tool!.parentSpanId!)?.name).toBe("invoke_agent support")
          expect(tool!.status).toBe("ok")
          // another process (this one) reads the same spans from the SQLite file
          const fromFile = await spansInFile(db, runId)
          expect(fromFile.spans.map((span) => span.spanId).sort()).toEqual(spans.map((span) => span.spanId).sort())
          // besides the run's two traces the file holds only the resumption's own recovery statements
          // (each a one-statement trace): the recovery worker's polls, every 500 ms, are not traced
          expect(fromFile.traces - 2).toBeGreaterThanOrEqual(0)
          expect(fromFile.traces - 2).toBeLessThanOrEqual(3)
          if (page !== undefined) {
            await page.reload()
            const summaries = page.getByTestId("trace").getByTestId("span-name")
            await summaries.filter({ hasText: "execute_tool cancel_order" }).first().waitFor()
            const after = await summaries.allTextContents()
            expect(after.filter((text) => text === "invoke_agent support").length).toBe(2)
            expect(after.filter((text) => text === "chat claude-sonnet-4-6").length).toBe(2)
            // the demo run's waterfall: turn one, the approval wait with its decision, turn two, in
            // order on one time axis
            const rows = await page.getByTestId("trace").locator("li[data-kind]").evaluateAll((items) =>
              items.map((item) =>
                item.getAttribute("data-kind") === "wait"
                  ? "WAIT"
                  : item.querySelector("[data-testid=span-name]")!.textContent
              )
            )
            const turns = rows.flatMap((row, i) => (row === "invoke_agent support" ? [i] : []))
            expect(turns).toHaveLength(2)
            expect(rows.indexOf("WAIT")).toBeGreaterThan(turns[0]!)
            expect(rows.indexOf("WAIT")).toBeLessThan(turns[1]!)
            expect(rows.indexOf("execute_tool cancel_order")).toBeGreaterThan(turns[1]!)
            expect(await page.getByTestId("approval-wait").getByTestId("decision").textContent()).toMatch(
              /^approve by \S+ at /
            )
            const offsets = await page.getByTestId("trace").locator("li[data-kind] .wf-when").allTextContents()
            const startOf = (text: string) => {
              const [value, unit] = text.slice(1).split(" ")
              return Number(value) * (unit === "s" ? 1000 : 1)
            }
            expect(startOf(offsets[rows.indexOf("WAIT")]!)).toBeLessThanOrEqual(startOf(offsets[turns[1]!]!))
            // the stores' own queries are in the trace but hidden until asked for
            expect(after.some((text) => text.startsWith("sql."))).toBe(false)
            const queries = spans.filter((span) => span.name.startsWith("sql.")).length
            expect(queries).toBeGreaterThan(0)
            await page.getByTestId("show-queries").check()
            expect((await summaries.allTextContents()).length).toBe(after.length + queries)
            await page.getByTestId("show-queries").uncheck()
            await page.getByTestId("trace").scrollIntoViewIfNeeded()
            await page.screenshot({ path: `${screenshots}/console-2-trace.png` })
            // the flow in one picture (inbox above, the trace below), as the console README shows it
            const shot = (name: string) =>
              `data:image/png;base64,${readFileSync(`${screenshots}/${name}`).toString("base64")}`
            const flow = await browser!.newPage({ viewport: { width: 960, height: 930 } })
            await flow.setContent(
              `<body style="margin:0;background:#1f4e79"><div style="height:458px;overflow:hidden"><img src="${
                shot("console-1-inbox.png")
              }" style="width:960px"></div>` +
                `<div style="height:6px"></div><div style="height:466px;overflow:hidden"><img src="${
                  shot("console-2-trace.png")
                }" style="width:960px"></div></body>`
            )
            await flow.screenshot({ path: `${screenshots}/console-flow.png` })
          }
          expect(gone()).toBe(false) // it keeps serving after the run finished
          // a port already taken: a clear error, exit 1, and no run is started
          const port = new URL(url).port
          const taken = spawnSync(process.execPath, [app, "--console", "--port", port, "--db", join(dir, "other.db")], {
            input: "",
            encoding: "utf8"
          })
          expect(taken.status).toBe(1)
          expect(taken.stdout).toMatch(
            new RegExp(`^error: the console could not listen on 127\\.0\\.0\\.1:${port} \\(.*EADDRINUSE.*\\)\n$`)
          )
          process.kill(child.pid!, "SIGTERM")
          expect(await exited).toBe(0)
          expect(stdout).toContain("console stopped")
          expect(stderr).toBe("")
        } finally {
          await browser?.close()
          if (!gone()) process.kill(child.pid!, "SIGKILL")
          rmSync(dir, { recursive: true, force: true })
        }
      }),
    60_000
  )
})
