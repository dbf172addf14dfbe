/**
 * The chat page in Debian's chromium (playwright-core, no browser download): a question whose
 * answer streams in after a tool call, a cancellation that waits for approval, a reload in the
 * middle of that suspended run (the page asks the endpoint for its thread and shows the approval
 * again), and the approval given in the page, which resumes the run to its answer. The page's
 * screenshot, taken with the approval waiting after the reload, is the README's docs/chat.png.
 *
 * Under CI=true these tests never skip: a missing chromium fails. Elsewhere they skip, saying why.
 */
import { HttpServer } from "@effect/platform"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { chromium } from "playwright-core"
import type { BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { serve } from "../src/chat.js"

const candidates = [process.env.CHROMIUM_PATH, "/usr/lib/chromium/chromium", "/usr/bin/chromium"].filter(
  (path): path is string => path !== undefined && path !== ""
)
const chromiumPath = candidates.find((path) => existsSync(path))
const unavailable = chromiumPath === undefined ? `no chromium at ${candidates.join(", ")}` : undefined
const ci = process.env.CI === "true"
if (unavailable !== undefined && !ci) console.log(`chat browser tests skipped: ${unavailable}`)

// build/screenshots/ (gitignored) on every run; the README's docs/chat.png with UPDATE_SCREENSHOTS=true
const screenshots = [
  fileURLToPath(new URL("../build/screenshots/chat.png", import.meta.url)),
  ...(process.env.UPDATE_SCREENSHOTS === "true" ? [fileURLToPath(new URL("../docs/chat.png", import.meta.url))] : [])
]

describe("chromium is there when CI runs", () => {
  it.runIf(ci)("finds chromium (CI=true: the browser tests must not skip)", () => {
    expect(unavailable).toBeUndefined()
  })
})

describe.skipIf(unavailable !== undefined && !ci)("the chat page in chromium", () => {
  const scope = Effect.runSync(Scope.make())
  let url = ""
  let context: BrowserContext
  let profile = ""
  const problems: Array<string> = []

  beforeAll(async () => {
    const built = await Effect.runPromise(Layer.buildWithScope(serve(), scope))
    const address = Context.get(built, HttpServer.HttpServer).address
    if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
    url = `http://127.0.0.1:${address.port}/chat`
    profile = mkdtempSync(join(tmpdir(), "agentkit-chat-chromium-"))
    context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath!,
      headless: true,
      viewport: { width: 900, height: 860 },
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run", "--disable-sync"]
    })
    // anything but loopback would mean a CDN or an external font: refused and reported
    await context.route(/^(?!http:\/\/127\.0\.0\.1)/, async (route) => {
      problems.push(`external request: ${route.request().url()}`)
      await route.abort()
    })
  }, 180_000)

  afterAll(async () => {
    await context?.close()
    if (profile !== "") rmSync(profile, { recursive: true, force: true })
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  const ask = async (page: Page, text: string) => {
    await page.fill("#message", text)
    await page.click("#send")
  }

  it(
    "streams an answer with its tool call, asks for approval, survives a reload and resumes when approved",
    async () => {
      const page = await context.newPage()
      page.on("pageerror", (error) => problems.push(`page error: ${error.message}`))
      page.on("console", (message) => {
        if (message.type() === "error") problems.push(`console error: ${message.text()}`)
      })
      await page.goto(url)
      await page.waitForSelector("body[data-ready='true']")

      // a question: the tool call is shown with its result, the answer streams in pieces
      await ask(page, "What happened to order A-771?")
      const answer = page.locator(".msg.assistant", { hasText: "Here is what I found" })
      await answer.waitFor()
      await page.waitForSelector("#status[data-state='ready']")
      expect(await answer.textContent()).toBe(
        "Here is what I found: order A-771: shipped 2026-08-14, arriving Tuesday."
      )
      expect(Number(await answer.getAttribute("data-deltas"))).toBeGreaterThan(5)
      const lookup = page.locator(".tool[data-tool='lookup_order']")
      expect(await lookup.locator(".args").textContent()).toBe("{\"order_id\":\"A-771\"}")
      expect(await lookup.locator(".result").textContent()).toContain("shipped 2026-08-14")

      // a cancellation: the run suspends and the page asks for approval
      await ask(page, "Please cancel B-102, I ordered it twice")
      const card = page.locator(".approval")
      await card.waitFor()
      expect(await card.textContent()).toContain(
        "cancel_order {\"order_id\":\"B-102\",\"reason\":\"customer request\"}"
      )
      expect(await page.locator(".tool[data-tool='cancel_order'] .result").textContent()).toBe("(not run yet)")

      // a reload in the middle of the suspended run: the conversation and the approval come back
      await page.reload()
      await page.waitForSelector("body[data-ready='true']")
      await card.waitFor()
      expect(await page.locator(".msg.user").allTextContents()).toEqual([
        "What happened to order A-771?",
        "Please cancel B-102, I ordered it twice"
      ])
      expect(await page.locator(".msg.assistant").allTextContents()).toContain(
        "Here is what I found: order A-771: shipped 2026-08-14, arriving Tuesday."
      )
      for (const path of screenshots) await page.screenshot({ path })

      // approved in the page: the run resumes, the tool runs, the answer arrives
      await card.locator("button[data-answer='approve']").click()
      const done = page.locator(".msg.assistant", { hasText: "Done:" })
      await done.waitFor()
      expect(await done.textContent()).toBe("Done: order B-102 cancelled (customer request). Anything else?")
      expect(await page.locator(".tool[data-tool='cancel_order'] .result").textContent()).toBe(
        "→ order B-102 cancelled (customer request)"
      )
      expect(await page.locator(".approval").count()).toBe(0)
      await page.waitForSelector("#status[data-state='ready']")
      expect(problems).toEqual([])
    },
    180_000
  )
})
