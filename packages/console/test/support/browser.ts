/**
 * Debian's chromium driven by playwright-core (no browser download). Under `CI=true` a missing
 * chromium fails the run; elsewhere the browser tests skip with the reason printed.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { chromium } from "playwright-core"
import type { BrowserContext } from "playwright-core"

const candidates = [process.env.CHROMIUM_PATH, "/usr/lib/chromium/chromium", "/usr/bin/chromium"].filter(
  (path): path is string => path !== undefined && path !== ""
)

/** The chromium binary, if one is installed. */
export const chromiumPath: string | undefined = candidates.find((path) => existsSync(path))

/** Why the browser tests cannot run here, or undefined when they can. */
export const unavailable: string | undefined = chromiumPath === undefined
  ? `no chromium at ${
    candidates.join(", ")
  } (install it: apt-get install -y --no-install-recommends chromium, or set CHROMIUM_PATH)`
  : undefined

/** Screenshots go here (gitignored). */
export const artifacts = fileURLToPath(new URL("../../build/screenshots/", import.meta.url))

/** A fresh headless chromium profile; close() removes it. */
export const launch = async (): Promise<{ readonly context: BrowserContext; readonly close: () => Promise<void> }> => {
  if (chromiumPath === undefined) throw new Error(unavailable)
  mkdirSync(artifacts, { recursive: true })
  const profile = mkdtempSync(join(tmpdir(), "agentkit-console-chromium-"))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-quic"
    ]
  })
  return {
    context,
    close: async () => {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    }
  }
}
