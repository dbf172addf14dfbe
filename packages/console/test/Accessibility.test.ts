/**
 * The console by keyboard and for assistive technology, in a real chromium: axe-core (pinned,
 * injected into the page by the test) finds no serious or critical violation on an inbox with
 * three pending calls and an open edit box, on a run's page with its waterfall (a span's
 * attributes open), and on a populated runs table; an operator opens a run from the runs table
 * and approves its call with the keyboard alone.
 *
 * Under CI=true these tests never skip: a missing chromium fails. Elsewhere they skip, saying why.
 */
import { SpanStore } from "@agentkit/console"
import { Tracing } from "@agentkit/testing"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import type { Page } from "playwright-core"
import { artifacts, launch, unavailable } from "./support/browser.js"
import { seed, start, tokens, traceRun } from "./support/harness.js"
import * as MemoryOperator from "./support/MemoryOperator.js"

const ci = process.env.CI === "true"
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

interface Violation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly targets: ReadonlyArray<string>
}

/** axe-core's serious and critical violations on the page as it is now. */
const audit = async (page: Page): Promise<ReadonlyArray<Violation>> => {
  await page.evaluate(axeSource)
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as {
      axe: {
        run: (context: Document, options: unknown) => Promise<{
          violations: Array<
            { id: string; impact: string | null; help: string; nodes: Array<{ target: Array<string> }> }
          >
          passes: Array<unknown>
        }>
      }
    }).axe
    const result = await axe.run(document, { resultTypes: ["violations"] })
    if (result.passes.length === 0) throw new Error("axe-core checked nothing")
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.map((node) => node.target.join(" "))
    }))
  })
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical")
}

describe.skipIf(unavailable !== undefined && !ci)("the console by keyboard and for assistive technology", () => {
  let server: Awaited<ReturnType<typeof start>>
  let browser: Awaited<ReturnType<typeof launch>>
  let runs: ReturnType<typeof seed>

  beforeAll(async () => {
    const operator = MemoryOperator.make({ owner: "auto" })
    runs = seed(operator)
    for (let i = 0; i < 3; i++) {
      operator.plant({ runId: `run-acme-done-${i}`, tenant: "acme", threadId: "thread-7", status: "done" })
    }
    const spans = SpanStore.makeMemory()
    await traceRun(spans, "run-acme-1", Tracing.recording().layer)
    server = await start(operator, { spans })
    browser = await launch()
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  const signIn = async (token: string): Promise<Page> => {
    await browser.context.clearCookies()
    const page = await browser.context.newPage()
    await page.goto(server.url)
    await page.getByTestId("token").fill(token)
    await page.keyboard.press("Enter")
    await page.getByTestId("operator").waitFor()
    await page.locator("#live.on").waitFor()
    return page
  }

  it("no serious or critical violation: inbox with an open edit box, run page and waterfall, runs table", async () => {
    const page = await signIn(tokens.root)
    // the audit sees what it should: a field without a label is a critical violation
    await page.evaluate(() => document.getElementById("main")!.append(document.createElement("input")))
    expect((await audit(page)).map((v) => v.id)).toContain("label")
    await page.evaluate(() => document.querySelector("#main > input")!.remove())
    const inbox = page.getByTestId("inbox")
    await expect.poll(() => inbox.getByTestId("pending").count(), { timeout: 30_000 }).toBe(3)
    await inbox.locator(`[data-pending="${runs.acme.pending[0]!.id}"]`).getByTestId("edit").click()
    await inbox.getByTestId("edit-arguments").first().waitFor()
    expect(await audit(page)).toEqual([])

    await page.goto(`${server.url}#/run/run-acme-1`)
    const trace = page.getByTestId("trace")
    await trace.getByTestId("span-name").first().waitFor()
    await trace.locator("details summary").first().click()
    expect(await audit(page)).toEqual([])

    await page.goto(`${server.url}#/runs`)
    await page.getByTestId("thread").first().waitFor()
    expect(await page.locator("[data-testid=thread] tbody tr").count()).toBeGreaterThanOrEqual(5)
    expect(await audit(page)).toEqual([])
    await page.close()
  }, 120_000)

  it("opens a run from the runs table and approves its call by keyboard alone", async () => {
    const page = await signIn(tokens.alice)
    await page.goto(`${server.url}#/runs`)
    await page.getByTestId("thread").first().waitFor()
    /** Tabs until the focused element has the attribute's value, at most `limit` presses. */
    const tabTo = async (attribute: string, value: string, limit = 200) => {
      for (let i = 0; i < limit; i++) {
        await page.keyboard.press("Tab")
        const found = await page.evaluate(
          ([name, wanted]) => document.activeElement?.getAttribute(name!) === wanted,
          [attribute, value] as const
        )
        if (found) return
      }
      throw new Error(`never reached by Tab: [${attribute}="${value}"]`)
    }
    await tabTo("href", "#/run/run-acme-1")
    await page.keyboard.press("Enter")
    await page.getByTestId("run-page").waitFor()
    expect(await page.getByTestId("run-page").getAttribute("data-run")).toBe("run-acme-1")
    await tabTo("data-testid", "approve")
    await page.keyboard.press("Enter")
    await page.getByTestId("status").getByText("done").waitFor({ timeout: 30_000 })
    expect(server.operator.audits).toContainEqual(
      expect.objectContaining({ runId: "run-acme-1", action: "approve", by: "alice" })
    )
    await page.screenshot({ path: `${artifacts}/7-keyboard-approved.png`, fullPage: true })
    await page.close()
  }, 120_000)
})
