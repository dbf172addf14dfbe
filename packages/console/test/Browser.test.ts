/**
 * The console in a real browser: Debian's chromium driven by playwright-core, against a real
 * console on 127.0.0.1. An operator signs in, sees the pending call with its digest in the
 * inbox, opens it (the hostile `<script>` argument is text, and no script ran), edits an
 * argument, approves, and sees the run leave the inbox and the audit row; a viewer sees no
 * decision buttons. The run's span tree shows a hostile span (markup in its name and arguments, a
 * huge value) as text, its value cut. Screenshots of each screen go to build/screenshots/ (gitignored).
 *
 * Under CI=true these tests never skip: a missing chromium fails. Elsewhere they skip, saying why.
 */
import { SpanStore } from "@agentkit/console"
import { Tracing } from "@agentkit/testing"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Page } from "playwright-core"
import { artifacts, launch, unavailable } from "./support/browser.js"
import { hostile, seed, start, tokens, traceRun } from "./support/harness.js"
import * as MemoryOperator from "./support/MemoryOperator.js"

const ci = process.env.CI === "true"
if (unavailable !== undefined && !ci) console.log(`browser tests skipped: ${unavailable}`)

describe("chromium is there when CI runs", () => {
  it.runIf(ci)("finds chromium (CI=true: the browser tests must not skip)", () => {
    expect(unavailable).toBeUndefined()
  })
})

describe.skipIf(unavailable !== undefined && !ci)("console in chromium", () => {
  let server: Awaited<ReturnType<typeof start>>
  let runs: ReturnType<typeof seed>
  let browser: Awaited<ReturnType<typeof launch>>
  const problems: Array<string> = []

  beforeAll(async () => {
    const operator = MemoryOperator.make({ owner: "auto" })
    runs = seed(operator)
    for (let i = 0; i < 3; i++) {
      operator.plant({
        runId: `run-acme-done-${i}`,
        tenant: "acme",
        threadId: "thread-7",
        status: "done",
        usage: { inputTokens: 900 + i, outputTokens: 200, costUsd: 0.003 }
      })
    }
    const spans = SpanStore.makeMemory()
    await traceRun(spans, "run-acme-1", Tracing.recording().layer)
    // a span of the same run tree whose name and attributes are hostile (markup, a huge value)
    spans.offer({
      traceId: "hostile-trace",
      spanId: "hostile-span",
      name: "<b>hostile</b> span",
      startMs: Date.now() + 60_000,
      durationMs: 1,
      status: "ok",
      attributes: {
        "gen_ai.conversation.id": "run-acme-1",
        "agentkit.tenant": "acme",
        "gen_ai.tool.call.arguments": hostile,
        huge: "x".repeat(100_000)
      },
      events: []
    })
    server = await start(operator, { spans, title: "Acme operations" })
    browser = await launch()
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  const open = async (): Promise<Page> => {
    await browser.context.clearCookies() // each test signs in afresh
    const page = await browser.context.newPage()
    page.on("console", (message) => {
      // the page asks for its session before signing in: that one 401 is expected
      if (message.type() === "error" && !message.text().includes("status of 401")) {
        problems.push(`console: ${message.text()}`)
      }
    })
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`))
    page.on("dialog", (dialog) => {
      problems.push(`dialog: ${dialog.message()}`)
      void dialog.dismiss()
    })
    await page.goto(server.url)
    return page
  }

  const signIn = async (page: Page, token: string) => {
    await page.getByTestId("token").fill(token)
    await page.getByTestId("sign-in").click()
    await page.getByTestId("operator").waitFor()
  }

  it("signs in, decides by editing an argument, and sees the run leave the inbox and the audit row", async () => {
    const page = await open()
    await page.screenshot({ path: `${artifacts}/0-sign-in.png` })
    await signIn(page, tokens.alice)
    expect(await page.getByTestId("operator").textContent()).toBe("alice (approver, acme)")

    // the inbox: acme's two waiting runs (not globex's), each pending call with its digest
    const inbox = page.getByTestId("inbox")
    await inbox.locator("article[data-run]").first().waitFor()
    expect(
      await inbox.locator("article[data-run]").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-run")))
    ).toEqual([
      "run-acme-1",
      "run-acme-doubt"
    ])
    const entry = runs.acme.pending[0]!
    const card = inbox.locator(`[data-pending="${entry.id}"]`)
    expect(await card.getByTestId("tool").textContent()).toBe("cancel_order")
    expect(await card.getByTestId("digest").textContent()).toBe(entry.digest)
    expect(await card.getByTestId("reasons").textContent()).toContain("the tool requires approval")
    expect(await card.getByTestId("reasons").textContent()).toContain("autonomy tier: gated")
    expect(await inbox.locator("article[data-run=\"run-acme-doubt\"]").getByTestId("reasons").textContent()).toContain(
      "in doubt"
    )
    // the hostile argument is text: no script ran, no element was made from it
    expect(JSON.parse((await card.getByTestId("arguments").textContent())!)).toEqual({
      order_id: "A-771",
      reason: hostile
    })
    expect(await page.evaluate(() => (window as unknown as { __pwned?: boolean }).__pwned)).toBeUndefined()
    expect(await page.title()).toBe("Acme operations")
    expect(await page.locator("main script, main img").count()).toBe(0)
    await page.locator("#live.on").waitFor()
    await page.screenshot({ path: `${artifacts}/1-inbox.png`, fullPage: true })

    // the run: its trace (the agent run's span tree)
    await inbox.locator("article[data-run=\"run-acme-1\"] a").first().click()
    const trace = page.getByTestId("trace")
    await trace.getByTestId("span-name").first().waitFor()
    expect(await trace.getByTestId("span-name").allTextContents()).toEqual([
      "invoke_agent support",
      "chat claude-sonnet-4-6",
      "execute_tool lookup_order",
      "chat claude-sonnet-4-6",
      "<b>hostile</b> span"
    ])
    // the hostile span is text: its markup made no element and ran nothing; its huge value was cut
    const attributes = await trace.locator("pre").allTextContents()
    const shown = attributes.find((text) => text.includes("gen_ai.tool.call.arguments") && text.includes("huge"))!
    expect(JSON.parse(shown)).toEqual({
      "gen_ai.conversation.id": "run-acme-1",
      "agentkit.tenant": "acme",
      "gen_ai.tool.call.arguments": hostile,
      huge: `${"x".repeat(4096)}…`
    })
    expect(await trace.locator("b, script, img").count()).toBe(0)
    expect(await page.evaluate(() => (window as unknown as { __pwned?: boolean }).__pwned)).toBeUndefined()
    await page.screenshot({ path: `${artifacts}/2-run.png`, fullPage: true })

    // back to the inbox: edit an argument and approve
    await page.locator("a[data-nav=\"inbox\"]").click()
    await card.getByTestId("edit").click()
    await card.getByTestId("edit-arguments").fill(
      JSON.stringify({ order_id: "A-771", reason: "customer asked by phone" }, null, 2)
    )
    await page.screenshot({ path: `${artifacts}/3-edit.png`, fullPage: true })
    await card.getByTestId("edit").click()

    // the owner applies the decision: the run leaves the inbox
    await inbox.locator("article[data-run=\"run-acme-1\"]").waitFor({ state: "detached" })
    // the inbox re-renders as the live update lands: poll until it settles on the other run
    await expect.poll(() => inbox.locator("article[data-run]").count(), { timeout: 30_000 }).toBe(1)
    await page.screenshot({ path: `${artifacts}/4-decided.png`, fullPage: true })
    expect(server.operator.audits).toEqual([
      expect.objectContaining({ runId: "run-acme-1", action: "edit", by: "alice" })
    ])

    // the audit trail has the row, and the run is done
    await page.locator("a[data-nav=\"audit\"]").click()
    const row = page.getByTestId("audit-row")
    await row.first().waitFor()
    expect(await row.allTextContents()).toEqual([
      expect.stringMatching(/run-acme-1acmecancel_orderoperator: editalice$/)
    ])
    await page.screenshot({ path: `${artifacts}/5-audit.png`, fullPage: true })
    await page.goto(`${server.url}#/run/run-acme-1`)
    await page.getByTestId("status").getByText("done").waitFor()

    // runs grouped by thread, with costs
    await page.locator("a[data-nav=\"runs\"]").click()
    await page.getByTestId("thread").first().waitFor()
    expect(await page.getByTestId("thread").locator("h3").allTextContents()).toContainEqual(
      expect.stringMatching(/^acme · thread-7 — 4 run\(s\), \$/)
    )
    await page.screenshot({ path: `${artifacts}/6-runs.png`, fullPage: true })
    await page.close()
    expect(problems).toEqual([])
  }, 60_000)

  it("updates the inbox live when another process decides", async () => {
    const page = await open()
    await signIn(page, tokens.root)
    const inbox = page.getByTestId("inbox")
    await inbox.locator("article[data-run=\"run-globex-1\"]").waitFor()
    await page.locator("#live.on").waitFor()
    const entry = runs.globex.pending[0]!
    // decided through the API, as another process sharing the store would
    await Effect.runPromise(
      server.operator.decide("run-globex-1", entry.id, { verdict: "reject", digest: entry.digest, by: "gina" })
    )
    await inbox.locator("article[data-run=\"run-globex-1\"]").waitFor({ state: "detached" })
    await page.close()
    expect(problems).toEqual([])
  }, 60_000)

  it("shows a viewer no decision buttons", async () => {
    const page = await open()
    await signIn(page, tokens.victor)
    await page.goto(`${server.url}#/run/run-acme-doubt`)
    const card = page.getByTestId("pending")
    await card.waitFor()
    expect(await card.locator("button").count()).toBe(0)
    expect(await card.textContent()).toContain("You are a viewer: an approver decides.")
    await page.close()
    expect(problems).toEqual([])
  }, 60_000)
})
