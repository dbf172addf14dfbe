/**
 * Live updates patch the view, in a real chromium: pages loaded with "More", the scroll position
 * and a reason being typed stay while runs arrive and others are decided; a call decided by
 * another operator leaves "Waiting" and shows who, when and why; a navigation that fails clears
 * the previous run's page (no button stays live for it); a run of two turns with an approval
 * between shows, on its waterfall, the first turn's spans, the wait with the decision, then the
 * second turn's spans, in order on one time axis.
 *
 * Under CI=true these tests never skip: a missing chromium fails. Elsewhere they skip, saying why.
 */
import type { Operator } from "@agentkit/agents"
import { SpanStore } from "@agentkit/console"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Page } from "playwright-core"
import { artifacts, launch, unavailable } from "./support/browser.js"
import { seed, start, tokens, traceRun } from "./support/harness.js"
import * as MemoryOperator from "./support/MemoryOperator.js"

const ci = process.env.CI === "true"

describe.skipIf(unavailable !== undefined && !ci)("live updates patch the view", () => {
  let server: Awaited<ReturnType<typeof start>>
  let browser: Awaited<ReturnType<typeof launch>>
  let operator: MemoryOperator.MemoryOperator
  let spans: SpanStore.Service
  let runs: ReturnType<typeof seed>
  let two: Operator.RunSummary

  beforeAll(async () => {
    operator = MemoryOperator.make({ owner: "manual" })
    runs = seed(operator)
    two = operator.plant({
      runId: "run-acme-two",
      tenant: "acme",
      pending: [
        { tool: "refund", arguments: { order_id: "A-1" } },
        { tool: "cancel_order", arguments: { order_id: "A-2" } }
      ]
    })
    for (let i = 0; i < 120; i++) {
      operator.plant({
        runId: `run-acme-wait-${String(i).padStart(3, "0")}`,
        tenant: "acme",
        pending: [{ tool: "refund", arguments: { order_id: `W-${i}` } }]
      })
    }
    // another tenant's run with a 450 KB argument (the acme operators above never see it)
    operator.plant({
      runId: "run-globex-big",
      tenant: "globex",
      pending: [{ tool: "refund", arguments: { order_id: "G-9", note: "n".repeat(450_000) } }]
    })
    spans = SpanStore.makeMemory()
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
    await page.getByTestId("sign-in").click()
    await page.getByTestId("operator").waitFor()
    await page.locator("#live.on").waitFor()
    return page
  }

  it("keeps loaded pages, the scroll position and typed text; a call decided elsewhere shows who and why", async () => {
    const page = await signIn(tokens.alice)
    const rows = page.locator("article[data-run]")
    const total = page.getByTestId("total")
    await expect.poll(() => total.getAttribute("data-total"), { timeout: 30_000 }).toBe("123")
    expect(await rows.count()).toBe(50)
    await page.getByTestId("more").click()
    await expect.poll(() => rows.count(), { timeout: 30_000 }).toBe(100)
    const target = page.locator("article[data-run=\"run-acme-wait-090\"]")
    const reason = target.getByTestId("reason")
    await reason.scrollIntoViewIfNeeded()
    await reason.click()
    await reason.pressSequentially("not before Monday")
    const scrolled = await page.evaluate(() => window.scrollY)
    expect(scrolled).toBeGreaterThan(1000)
    const onScreen = (await reason.boundingBox())!.y

    // another operator decides one call of a run of two, with a reason; then runs arrive
    const first = two.pending[0]!
    await Effect.runPromise(
      server.operator.decide("run-acme-two", first.id, {
        verdict: "reject",
        digest: first.digest,
        by: "bob",
        reason: "duplicate of A-2"
      })
    )
    for (let i = 120; i < 125; i++) {
      operator.plant({
        runId: `run-acme-wait-${i}`,
        tenant: "acme",
        pending: [{ tool: "refund", arguments: { order_id: `W-${i}` } }]
      })
    }
    await expect.poll(() => total.getAttribute("data-total"), { timeout: 30_000 }).toBe("128")
    const decidedCard = page.locator(`[data-pending="${first.id}"]`)
    await expect.poll(() => decidedCard.getByTestId("state").textContent(), { timeout: 30_000 }).toBe("Decided")
    expect(await decidedCard.getByTestId("decided").textContent()).toMatch(
      /^reject by bob at .* — reason: duplicate of A-2$/
    )
    expect(await decidedCard.getByTestId("approve").count()).toBe(0)
    const other = page.locator(`[data-pending="${two.pending[1]!.id}"]`)
    expect(await other.getByTestId("state").textContent()).toBe("Waiting")

    expect(await rows.count()).toBe(100)
    // the page stays scrolled where it was: the field being typed in has not moved on screen (a
    // card above it that changed height is made up for by the browser's scroll anchoring)
    expect(await page.evaluate(() => window.scrollY)).toBeGreaterThan(scrolled - 100)
    expect(Math.abs((await reason.boundingBox())!.y - onScreen)).toBeLessThanOrEqual(1)
    expect(await reason.inputValue()).toBe("not before Monday")
    expect(await reason.evaluate((el) => el === document.activeElement)).toBe(true)
    await page.screenshot({ path: `${artifacts}/8-inbox-patched.png` })
    await page.close()
  }, 120_000)

  it("cuts a large argument in a compact inbox, with a way to see it whole", async () => {
    const page = await signIn(tokens.gina)
    const row = page.locator("article[data-run=\"run-globex-big\"]")
    await row.waitFor()
    expect(await page.getByTestId("total").getAttribute("data-total")).toBe("2")
    const shown = row.getByTestId("arguments")
    expect((await shown.textContent())!.length).toBeLessThan(2100)
    expect((await row.boundingBox())!.height).toBeLessThan(700)
    const whole = row.getByRole("button", { name: /^Show all \(439\.\d KB\)$/ })
    await whole.click()
    expect(JSON.parse((await shown.textContent())!)).toEqual({ order_id: "G-9", note: "n".repeat(450_000) })
    expect(await row.getByRole("button", { name: "Show less" }).getAttribute("aria-expanded")).toBe("true")
    await page.close()
  }, 60_000)

  it("clears the previous run's page when a navigation fails", async () => {
    const page = await signIn(tokens.alice)
    await page.goto(`${server.url}#/run/run-acme-1`)
    await page.getByTestId("approve").waitFor()
    expect(await page.getByTestId("cancel").count()).toBe(1)
    // another tenant's run: refused, and nothing of run-acme-1 stays on screen
    await page.goto(`${server.url}#/run/run-globex-1`)
    await page.getByTestId("run-error").waitFor()
    expect(await page.getByTestId("approve").count()).toBe(0)
    expect(await page.getByTestId("cancel").count()).toBe(0)
    expect(await page.locator("#banner").textContent()).toContain("404")
    expect(await page.locator("main").textContent()).not.toContain("run-acme-1")
    await page.close()
  }, 60_000)

  it("draws a run of two turns with the approval between them on one time axis", async () => {
    // turn one asks for approval; an operator decides; turn two runs after the decision
    await traceRun(spans, "run-acme-1")
    await new Promise((resolve) => setTimeout(resolve, 30))
    const entry = runs.acme.pending[0]!
    const decided = await Effect.runPromise(
      server.operator.decide("run-acme-1", entry.id, {
        verdict: "approve",
        digest: entry.digest,
        by: "alice",
        reason: "customer confirmed by phone"
      })
    )
    await new Promise((resolve) => setTimeout(resolve, 30))
    operator.setStatus("run-acme-1", "done")
    await traceRun(spans, "run-acme-1")

    const page = await signIn(tokens.bob)
    await page.goto(`${server.url}#/run/run-acme-1`)
    const trace = page.getByTestId("trace")
    await trace.getByTestId("span-name").first().waitFor()
    const order = await trace.locator("li[data-kind]").evaluateAll((items) =>
      items.map((item) =>
        item.getAttribute("data-kind") === "wait"
          ? "WAIT"
          : item.querySelector("[data-testid=span-name]")!.textContent
      )
    )
    const turn = [
      "invoke_agent support",
      "chat claude-sonnet-4-6",
      "execute_tool lookup_order",
      "chat claude-sonnet-4-6"
    ]
    expect(order).toEqual([...turn, "WAIT", ...turn])
    const wait = trace.getByTestId("approval-wait")
    expect(await wait.textContent()).toContain("waiting for a decision: cancel_order")
    expect(await wait.getByTestId("decision").textContent()).toBe(
      `approve by alice at ${await page.evaluate(
        (at) => new Date(at).toLocaleString(),
        decided.at
      )} — reason: customer confirmed by phone`
    )
    // offsets grow down the axis, and each model span shows its tokens
    const offsets = await trace.locator("li[data-kind] .wf-when").allTextContents()
    const ms = offsets.map((text) => {
      const [value, unit] = text.slice(1).split(" ")
      return Number(value) * (unit === "s" ? 1000 : 1)
    })
    expect(ms[4]).toBeGreaterThanOrEqual(ms[3]!)
    expect(ms[5]).toBeGreaterThanOrEqual(ms[4]!)
    expect(await trace.getByTestId("span-usage").count()).toBeGreaterThanOrEqual(4)
    // attributes on demand
    const details = trace.locator("li[data-kind=span] details").nth(1)
    expect(await details.evaluate((el) => (el as HTMLDetailsElement).open)).toBe(false)
    await details.locator("summary").click()
    expect(await details.locator("pre").first().textContent()).toContain("gen_ai.request.model")
    await page.screenshot({ path: `${artifacts}/9-waterfall.png`, fullPage: true })
    await page.close()
  }, 120_000)
})
