/**
 * Durable runs in the console, through the operator port (`DurableRunsPort`, implemented here
 * by a test port over fixed views: the console depends on no workflow engine): the API shows an
 * operator only their tenants' runs and problems, says when the app serves none, and the browser
 * shows each run's store and engine state, its in-doubt call, and, once an operator resolves the
 * call on the run's page, the resolution with who and why.
 *
 * Under CI=true the browser test never skips: a missing chromium fails. Elsewhere it skips.
 */
import type { DurableRunsPort } from "@agentkit/agents"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { artifacts, launch, unavailable } from "./support/browser.js"
import { call, seed, start, tokens } from "./support/harness.js"
import * as MemoryOperator from "./support/MemoryOperator.js"

const ci = process.env.CI === "true"

const view = (
  runId: string,
  tenant: string,
  fields: Partial<DurableRunsPort.RunView> & { readonly status?: DurableRunsPort.RunView["store"]["status"] } = {}
): DurableRunsPort.RunView => ({
  runId,
  agent: "billing",
  tenant,
  store: {
    status: fields.status ?? "suspended",
    updatedAt: 1_700_000_000_000,
    lease: undefined,
    pending: [],
    decided: 0
  },
  engine: "suspended",
  version: 1,
  problem: undefined,
  ...fields
})

describe("durable runs through the operator port", () => {
  let server: Awaited<ReturnType<typeof start>>
  let bare: Awaited<ReturnType<typeof start>>
  let runs: ReturnType<typeof seed>
  let asked: Array<DurableRunsPort.ListQuery>

  beforeAll(async () => {
    const operator = MemoryOperator.make({ owner: "manual" })
    runs = seed(operator)
    const doubt = runs.doubt.pending[0]!
    const views = [
      view("run-acme-doubt", "acme", {
        store: {
          status: "suspended",
          updatedAt: 1_700_000_000_000,
          lease: undefined,
          pending: [{ id: doubt.id, kind: "InDoubt" }],
          decided: 0
        }
      }),
      view("run-globex-1", "globex"),
      view("run-acme-done", "acme", { status: "done", engine: "done" })
    ]
    const problems = [
      view("run-acme-stuck", "acme", {
        status: "done",
        engine: "suspended",
        problem: "finished in the store, suspended in the engine"
      }),
      view("run-globex-stuck", "globex", { engine: "none", problem: "no execution in the engine" })
    ]
    asked = []
    const port: DurableRunsPort.Service = {
      list: (query = {}) =>
        Effect.sync(() => {
          asked.push(query)
          return {
            runs: views.filter((run) =>
              (query.tenant === undefined || run.tenant === query.tenant) &&
              (query.status === undefined || run.store.status === query.status)
            ),
            cursor: undefined
          }
        }),
      inspect: (runId) => Effect.succeed(Option.fromNullable(views.find((run) => run.runId === runId))),
      reconcile: Effect.succeed(problems)
    }
    server = await start(operator, { durable: port })
    bare = await start(MemoryOperator.make())
  }, 60_000)
  afterAll(async () => {
    await server?.close()
    await bare?.close()
  })

  it("shows an operator their tenants' durable runs and problems only; none when the app has no port", async () => {
    const alice = await call(server.url, "api/durable", { token: tokens.alice })
    expect(alice.status).toBe(200)
    expect(alice.body.available).toBe(true)
    expect(alice.body.runs.map((run: { runId: string }) => run.runId)).toEqual(["run-acme-doubt", "run-acme-done"])
    expect(alice.body.problems).toEqual([
      expect.objectContaining({
        runId: "run-acme-stuck",
        engine: "suspended",
        problem: "finished in the store, suspended in the engine"
      })
    ])
    // one exact grant is asked of the port itself
    expect(asked.at(-1)).toEqual({ tenant: "acme", limit: 50 })
    const root = await call(server.url, "api/durable?status=suspended", { token: tokens.root })
    expect(root.body.runs.map((run: { runId: string }) => run.runId)).toEqual(["run-acme-doubt", "run-globex-1"])
    expect(root.body.problems).toHaveLength(2)
    expect((await call(server.url, "api/durable?status=bogus", { token: tokens.root })).status).toBe(400)
    expect((await call(server.url, "api/durable")).status).toBe(401)
    expect((await call(bare.url, "api/durable", { token: tokens.alice })).body).toEqual({
      available: false,
      runs: [],
      problems: []
    })
  })

  it.skipIf(unavailable !== undefined && !ci)(
    "lists durable runs in the browser and shows an in-doubt call's resolution",
    async () => {
      const browser = await launch()
      try {
        const page = await browser.context.newPage()
        await page.goto(server.url)
        await page.getByTestId("token").fill(tokens.alice)
        await page.getByTestId("sign-in").click()
        await page.getByTestId("operator").waitFor()
        await page.locator("a[data-nav=\"durable\"]").click()
        const row = page.locator("[data-testid=durable-row][data-run=\"run-acme-doubt\"]")
        await row.waitFor()
        expect(await page.getByTestId("durable").getByTestId("durable-row").count()).toBe(2)
        expect(await row.textContent()).toContain("1 in doubt")
        expect(await row.textContent()).toContain("0 of 1")
        expect(await page.getByTestId("durable-problems").textContent()).toContain(
          "finished in the store, suspended in the engine"
        )
        expect(await page.getByTestId("durable-problems").textContent()).not.toContain("run-globex-stuck")
        await page.screenshot({ path: `${artifacts}/10-durable.png`, fullPage: true })

        await row.locator("a").click()
        const card = page.getByTestId("pending")
        await card.getByTestId("outcome").fill("no charge on the card")
        await card.getByTestId("mark-failed").click()
        await expect.poll(() => card.getByTestId("state").textContent(), { timeout: 30_000 }).toBe("Decided")
        expect(await card.getByTestId("decided").textContent()).toMatch(
          /^markFailed by alice at .* — reason: no charge on the card$/
        )
        await page.close()
      } finally {
        await browser.close()
      }
    },
    120_000
  )
})
