/**
 * A burst of runs while the console is open, in a real chromium, on the in-memory stores and on
 * SQLite: 10,000 waiting runs arrive after the operator has the inbox open and is typing a
 * reason. The inbox shows the new total, the reason being typed is still there (the same field,
 * still focused), the console keeps answering during the burst, and the store rows decoded while
 * the console follows the burst stay within a small multiple of the runs that changed (counted by
 * the stores' decode counters, a test hook of their internal modules).
 *
 * On SQLite the runs are written by another connection to the same file, as another process
 * would, with plain SQL inserts (cheap to make); the console reads them through its own store.
 *
 * Under CI=true these tests never skip: a missing chromium fails. Elsewhere they skip, saying why.
 */
import { Operator } from "@agentkit/agents"
import type { CheckpointStore } from "@agentkit/core"
import { SqlStores } from "@agentkit/sql"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { createClient } from "@libsql/client"
import { Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Page } from "playwright-core"
import { decodes as memoryDecodes } from "../../core/src/internal/checkpointStore.js"
import { decodes as sqlDecodes } from "../../sql/src/internal/checkpointStore.js"
import { launch, unavailable } from "./support/browser.js"
import { seed, startWith, tokens } from "./support/harness.js"
import * as MemoryOperator from "./support/MemoryOperator.js"

const ci = process.env.CI === "true"
const burst = 10_000
const typed = "customer called twice, \u00e9 and <b>markup</b>"

/** A waiting run of the burst, as an agent would have suspended it. */
const burstRun = (i: number): MemoryOperator.PlantedRun => ({
  runId: `run-burst-${String(i).padStart(5, "0")}`,
  tenant: "acme",
  threadId: `thread-burst-${i % 97}`,
  pending: [{ tool: "refund", arguments: { order_id: `B-${i}` } }]
})

/** Lets the server and the browser run between batches of writes. */
const breathe = () => new Promise((resolve) => setTimeout(resolve, 5))

interface World {
  readonly url: string
  /** Whether an owner applies a decision at once (the run then leaves the inbox). */
  readonly applies: boolean
  /** Writes the burst (in batches, yielding between them). */
  readonly arrive: () => Promise<void>
  /** How many store rows the console's stores have decoded so far. */
  readonly decoded: () => number
  readonly close: () => Promise<void>
}

/** The in-memory world: the burst is planted in the store the console reads. */
const memoryWorld = async (): Promise<World> => {
  const operator = MemoryOperator.make({ owner: "auto" })
  seed(operator)
  const server = await startWith(operator)
  return {
    url: server.url,
    applies: true,
    arrive: async () => {
      for (let i = 0; i < burst; i++) {
        operator.plant(burstRun(i))
        if (i % 250 === 249) await breathe()
      }
    },
    decoded: () => memoryDecodes.rows,
    close: server.close
  }
}

const columns = [
  "run_id",
  "root_run_id",
  "parent_run_id",
  "agent",
  "tenant",
  "thread_id",
  "status",
  "version",
  "state",
  "result",
  "created_at",
  "updated_at",
  "lease_owner",
  "lease_token",
  "lease_expires_at",
  "cancel_by",
  "cancel_at"
] as const

/** The SQLite world: the console over SqlStores on a file; the runs arrive through another connection. */
const sqliteWorld = async (): Promise<World> => {
  const dir = mkdtempSync(join(tmpdir(), "agentkit-console-burst-"))
  const filename = join(dir, "agentkit.db")
  const served = {
    layer: Operator.Operator.layer.pipe(Layer.provide(SqlStores.layerSqlite({ filename })), Layer.orDie)
  }
  const server = await startWith(served)
  const writer = createClient({ url: `file:${filename}` })
  await writer.execute("PRAGMA busy_timeout = 30000")
  // the records as an agent leaves them, made by the in-memory template, written with new times
  const template = MemoryOperator.make()
  let tick = 0
  const insert = async (records: ReadonlyArray<CheckpointStore.RunRecord>) => {
    const placeholders = `(${columns.map(() => "?").join(", ")})`
    const args = records.flatMap((r) => {
      tick = Math.max(tick + 1, Date.now())
      return [
        r.runId,
        r.rootRunId,
        r.parentRunId ?? null,
        r.agent,
        r.tenant,
        r.threadId ?? null,
        r.status,
        r.version,
        r.state,
        r.result ?? null,
        r.createdAt,
        tick,
        r.lease?.owner ?? null,
        r.lease?.token ?? null,
        r.lease?.expiresAt ?? null,
        r.cancelRequested?.by ?? null,
        r.cancelRequested?.at ?? null
      ]
    })
    await writer.execute({
      sql: `INSERT INTO agentkit_runs (${columns.join(", ")}) VALUES ${records.map(() => placeholders).join(", ")}`,
      args
    })
  }
  const recordsOf = async (runIds: ReadonlyArray<string>) => {
    const out: Array<CheckpointStore.RunRecord> = []
    for (const runId of runIds) {
      const found = await Effect.runPromise(template.checkpoints.load(runId))
      if (found._tag === "Some") out.push(found.value)
    }
    return out
  }
  const seeded = seed(template)
  await insert(await recordsOf([seeded.acme.runId, seeded.globex.runId, seeded.doubt.runId]))
  return {
    url: server.url,
    applies: false,
    arrive: async () => {
      const batch = 50 // SQLite takes at most 32,766 parameters a statement
      for (let start = 0; start < burst; start += batch) {
        const ids: Array<string> = []
        for (let i = start; i < Math.min(burst, start + batch); i++) ids.push(template.plant(burstRun(i)).runId)
        await insert(await recordsOf(ids))
        await breathe()
      }
    },
    decoded: () => sqlDecodes.rows,
    close: async () => {
      writer.close()
      await server.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

describe.skipIf(unavailable !== undefined && !ci)("a burst of runs while the console is open", () => {
  let browser: Awaited<ReturnType<typeof launch>>
  beforeAll(async () => {
    browser = await launch()
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
  })

  const signIn = async (url: string): Promise<Page> => {
    await browser.context.clearCookies()
    const page = await browser.context.newPage()
    await page.goto(url)
    await page.getByTestId("token").fill(tokens.alice)
    await page.getByTestId("sign-in").click()
    await page.getByTestId("operator").waitFor()
    await page.locator("#live.on").waitFor()
    return page
  }

  for (const [name, open] of [["memory", memoryWorld], ["sqlite", sqliteWorld]] as const) {
    it(`${name}: the inbox shows the new total, keeps the reason being typed, and decodes what changed`, async () => {
      const world = await open()
      try {
        const page = await signIn(world.url)
        const total = page.getByTestId("total")
        await expect.poll(() => total.getAttribute("data-total"), { timeout: 60_000 }).toBe("2")
        const reason = page.locator("article[data-run=\"run-acme-1\"]").getByTestId("reason")
        await reason.click()
        await reason.pressSequentially(typed.slice(0, 10))
        await reason.evaluate((el) => el.setAttribute("data-mark", "the field typed in"))

        const before = world.decoded()
        const arriving = world.arrive()
        // the operator goes on typing while the runs arrive
        await reason.pressSequentially(typed.slice(10), { delay: 20 })
        // the console answers while the burst lands
        const answered = await fetch(`${world.url}/api/session`, {
          headers: { authorization: `Bearer ${tokens.alice}` }
        })
        expect(answered.status).toBe(200)
        await arriving
        await expect.poll(() => total.getAttribute("data-total"), { timeout: 300_000, interval: 250 })
          .toBe(String(burst + 2))
        const decoded = world.decoded() - before

        // the same field, still focused, with everything typed
        const field = page.locator("[data-mark=\"the field typed in\"]")
        expect(await field.inputValue()).toBe(typed)
        expect(await field.evaluate((el) => el === document.activeElement)).toBe(true)
        // the rows on screen are still the oldest waiting ones, in order
        expect(
          await page.locator("article[data-run]").evaluateAll((rows) =>
            rows.slice(0, 2).map((row) => row.getAttribute("data-run"))
          )
        ).toEqual(["run-acme-1", "run-acme-doubt"])
        // rows decoded while following the burst: a small multiple of the runs that changed
        // (before: every list decoded every run, and each change read its run again)
        console.log(`${name}: ${decoded} store rows decoded for ${burst} runs arriving`)
        expect(decoded).toBeLessThanOrEqual(3 * burst)

        // the typed reason goes with the decision: the card leaves "Waiting" and shows it (and,
        // where an owner applies decisions, the run leaves the inbox)
        const row = page.locator("article[data-run=\"run-acme-1\"]")
        await row.getByTestId("reject").click()
        if (world.applies) {
          await row.waitFor({ state: "detached", timeout: 120_000 })
          await expect.poll(() => total.getAttribute("data-total"), { timeout: 120_000 }).toBe(String(burst + 1))
        } else {
          await expect.poll(() => row.getByTestId("decided").textContent(), { timeout: 120_000 }).toContain(
            `reject by alice at`
          )
          expect(await row.getByTestId("decided").textContent()).toContain(`reason: ${typed}`)
          expect(await row.getByTestId("state").textContent()).toBe("Decided")
        }
        await page.close()
      } finally {
        await world.close()
      }
    }, 900_000)
  }
})
