/**
 * The console's HTTP API against a real server on 127.0.0.1 (random port), over the in-memory
 * operator: reads, tenant scoping, roles, decisions (first one wins, stale digests, edits checked
 * against the schema), the requester rule, CSRF on cookie sessions, security headers, 10,000
 * runs paginated, live updates across two console processes sharing one store.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { call, hostile, seed, start, tokens } from "./support/harness.js"
import * as MemoryOperator from "./support/MemoryOperator.js"

describe("console API", () => {
  let server: Awaited<ReturnType<typeof start>>
  let runs: ReturnType<typeof seed>

  beforeAll(async () => {
    const operator = MemoryOperator.make({ owner: "manual" })
    runs = seed(operator)
    server = await start(operator)
  })
  afterAll(() => server.close())

  it("refuses every read without a token, and a wrong token", async () => {
    for (
      const path of [
        "api/session",
        "api/runs",
        "api/run?runId=run-acme-1",
        "api/audit",
        "api/trace?runId=run-acme-1",
        "api/live"
      ]
    ) {
      const none = await call(server.url, path)
      expect(none.status, path).toBe(401)
      const wrong = await call(server.url, path, { token: "not-a-real-token-at-all" })
      expect(wrong.status, path).toBe(401)
    }
  })

  it("returns a hostile argument as data, unchanged, with JSON and nosniff headers", async () => {
    const reply = await call(server.url, "api/run?runId=run-acme-1", { token: tokens.alice })
    expect(reply.status).toBe(200)
    expect(reply.headers.get("content-type")).toMatch(/^application\/json/)
    expect(reply.headers.get("x-content-type-options")).toBe("nosniff")
    expect(reply.headers.get("cache-control")).toBe("no-store")
    expect(reply.body.pending[0].call.arguments.reason).toBe(hostile)
    expect(reply.body.pending[0].digest).toBe(runs.acme.pending[0]!.digest)
    expect(reply.body.requestedBy).toBe("bob")
  })

  it("lists only the caller's tenants, and answers another tenant's run as missing", async () => {
    const acme = await call(server.url, "api/runs?status=suspended,in_doubt", { token: tokens.alice })
    expect(acme.body.runs.map((r: { runId: string }) => r.runId).sort()).toEqual(["run-acme-1", "run-acme-doubt"])
    const asked = await call(server.url, "api/runs?tenant=globex", { token: tokens.alice })
    expect(asked.body.runs).toEqual([])
    const guessed = await call(server.url, "api/run?runId=run-globex-1", { token: tokens.alice })
    const missing = await call(server.url, "api/run?runId=no-such-run", { token: tokens.alice })
    expect(guessed.status).toBe(404)
    expect(missing.status).toBe(404)
    expect(guessed.body.message).toBe("no run 'run-globex-1' that you may see")
    expect((await call(server.url, "api/trace?runId=run-globex-1", { token: tokens.alice })).status).toBe(404)
    expect((await call(server.url, "api/audit?runId=run-globex-1", { token: tokens.alice })).status).toBe(404)
    const all = await call(server.url, "api/runs", { token: tokens.root })
    expect(all.body.runs).toHaveLength(3)
  })

  it("refuses a decision on another tenant's run without deciding it", async () => {
    const entry = runs.globex.pending[0]!
    const reply = await call(server.url, "api/decide", {
      token: tokens.alice,
      body: { runId: "run-globex-1", pendingId: entry.id, verdict: "approve", digest: entry.digest }
    })
    expect(reply.status).toBe(404)
    expect((await call(server.url, "api/cancel", { token: tokens.alice, body: { runId: "run-globex-1" } })).status)
      .toBe(404)
    expect(server.operator.calls.decide ?? 0).toBe(0)
    expect(server.operator.calls.cancel ?? 0).toBe(0)
  })

  it("refuses a viewer's decision (403) and a decision without a token (401)", async () => {
    const entry = runs.acme.pending[0]!
    const body = { runId: "run-acme-1", pendingId: entry.id, verdict: "approve", digest: entry.digest }
    const viewer = await call(server.url, "api/decide", { token: tokens.victor, body })
    expect(viewer.status).toBe(403)
    expect(viewer.body.message).toBe("operator 'victor' is a viewer: deciding needs the approver role")
    expect((await call(server.url, "api/decide", { body })).status).toBe(401)
    expect(server.operator.calls.decide ?? 0).toBe(0)
  })

  it("refuses the run's requester approving it", async () => {
    const entry = runs.acme.pending[0]!
    const reply = await call(server.url, "api/decide", {
      token: tokens.bob,
      body: { runId: "run-acme-1", pendingId: entry.id, verdict: "approve", digest: entry.digest }
    })
    expect(reply.status).toBe(403)
    expect(reply.body.message).toBe(
      "operator 'bob' requested run 'run-acme-1' and may not approve it: another operator must"
    )
  })

  it("refuses a stale digest (409) and a malformed verdict (400)", async () => {
    const entry = runs.acme.pending[0]!
    const stale = await call(server.url, "api/decide", {
      token: tokens.alice,
      body: { runId: "run-acme-1", pendingId: entry.id, verdict: "approve", digest: "0".repeat(64) }
    })
    expect(stale.status).toBe(409)
    expect(stale.body._tag).toBe("StaleDigest")
    expect(stale.body.expected).toBe(entry.digest)
    const maybe = await call(server.url, "api/decide", {
      token: tokens.alice,
      body: { runId: "run-acme-1", pendingId: entry.id, verdict: "maybe", digest: entry.digest }
    })
    expect(maybe.status).toBe(400)
    expect(maybe.body._tag).toBe("HttpApiDecodeError")
    const unknown = await call(server.url, "api/decide", {
      token: tokens.alice,
      body: { runId: "run-acme-1", pendingId: "p-nope", verdict: "approve", digest: entry.digest }
    })
    expect(unknown.status).toBe(400)
    expect(unknown.body.message).toContain("has no pending entry 'p-nope'")
  })

  it("checks edited arguments against the recorded schema (422) and records nothing", async () => {
    const entry = runs.acme.pending[0]!
    const reply = await call(server.url, "api/decide", {
      token: tokens.alice,
      body: {
        runId: "run-acme-1",
        pendingId: entry.id,
        verdict: "edit",
        digest: entry.digest,
        arguments: { order: "A-771" }
      }
    })
    expect(reply.status).toBe(422)
    expect(reply.body).toMatchObject({
      _tag: "InvalidArguments",
      toolName: "cancel_order",
      unexpected: ["order"],
      missing: ["order_id"]
    })
    expect(reply.body.message).toBe(
      "tool 'cancel_order' call rejected: unexpected argument(s) ['order']; missing required argument(s) ['order_id']. Accepted arguments: ['order_id', 'reason']"
    )
    const wrongType = await call(server.url, "api/decide", {
      token: tokens.alice,
      body: {
        runId: "run-acme-1",
        pendingId: entry.id,
        verdict: "edit",
        digest: entry.digest,
        arguments: { order_id: 7 }
      }
    })
    expect(wrongType.status).toBe(422)
    expect(wrongType.body.invalid).toEqual(["order_id: must be string"])
    expect(server.operator.audits).toHaveLength(0)
  })

  it("lets exactly one of two concurrent decisions win; the other gets 409 naming the winner", async () => {
    const entry = runs.acme.pending[0]!
    const body = (verdict: string) => ({ runId: "run-acme-1", pendingId: entry.id, verdict, digest: entry.digest })
    const [a, r] = await Promise.all([
      call(server.url, "api/decide", {
        token: tokens.alice,
        body: { ...body("edit"), arguments: { order_id: "A-772" } }
      }),
      call(server.url, "api/decide", { token: tokens.root, body: { ...body("reject"), reason: "duplicate" } })
    ])
    const statuses = [a.status, r.status].sort()
    expect(statuses).toEqual([200, 409])
    const [won, lost] = a.status === 200 ? [a, r] : [r, a]
    const winner = won === a ? "alice" : "root"
    expect(won.body.by).toBe(winner)
    expect(lost.body).toMatchObject({ _tag: "DecisionConflict", by: winner, verdict: won === a ? "edit" : "reject" })
    expect(lost.body.message).toBe(`pending entry '${entry.id}' of run 'run-acme-1' was decided already by ${winner}`)
    // each recorded decision writes one audit record naming the operator
    const audit = await call(server.url, "api/audit?runId=run-acme-1", { token: tokens.alice })
    expect(audit.body.records).toHaveLength(1)
    expect(audit.body.records[0]).toMatchObject({
      decision: "operator",
      action: won === a ? "edit" : "reject",
      by: winner,
      tool: "cancel_order"
    })
    // a third, later decision is refused the same way
    const third = await call(server.url, "api/decide", { token: tokens.alice, body: body("approve") })
    expect(third.status).toBe(409)
    expect(third.body.by).toBe(winner)
  })

  it("refuses the run's requester resolving its call in doubt, except marking it failed", async () => {
    const run = server.operator.plant({
      runId: "run-acme-own-doubt",
      tenant: "acme",
      requestedBy: "bob",
      pending: [{ kind: "InDoubt", tool: "charge_card", arguments: { order_id: "A-901" } }]
    })
    const entry = run.pending[0]!
    const body = (verdict: string) => ({
      runId: "run-acme-own-doubt",
      pendingId: entry.id,
      verdict,
      digest: entry.digest,
      outcome: "charged",
      reason: "not charged"
    })
    for (const verdict of ["markDone", "retry"]) {
      const own = await call(server.url, "api/resolve", { token: tokens.bob, body: body(verdict) })
      expect(own.status, verdict).toBe(403)
      expect(own.body.message).toBe(
        "operator 'bob' requested run 'run-acme-own-doubt' and may not approve it: another operator must"
      )
    }
    const failed = await call(server.url, "api/resolve", { token: tokens.bob, body: body("markFailed") })
    expect(failed.status).toBe(200)
    expect(failed.body.by).toBe("bob")
  })

  it("resolves a call in doubt (and refuses an approval verdict on it)", async () => {
    const entry = runs.doubt.pending[0]!
    const wrong = await call(server.url, "api/resolve", {
      token: tokens.alice,
      body: { runId: "run-acme-doubt", pendingId: entry.id, verdict: "markDone", digest: entry.digest }
    })
    expect(wrong.status).toBe(400)
    expect(wrong.body.message).toBe("markDone carries the call's `outcome` (the text the model sees)")
    const approve = await call(server.url, "api/decide", {
      token: tokens.alice,
      body: { runId: "run-acme-doubt", pendingId: entry.id, verdict: "approve", digest: entry.digest }
    })
    expect(approve.status).toBe(400)
    expect(approve.body.message).toContain("(kind InDoubt) must be one of")
    const done = await call(server.url, "api/resolve", {
      token: tokens.alice,
      body: {
        runId: "run-acme-doubt",
        pendingId: entry.id,
        verdict: "markDone",
        digest: entry.digest,
        outcome: "charged $12, receipt R-88"
      }
    })
    expect(done.status).toBe(200)
    expect(done.body.decision).toMatchObject({ verdict: "markDone", outcome: "charged $12, receipt R-88", by: "alice" })
  })

  it("cancels a run once; a finished run answers 409", async () => {
    const operator = server.operator
    operator.plant({ runId: "run-acme-cancel", tenant: "acme", status: "running" })
    const first = await call(server.url, "api/cancel", { token: tokens.alice, body: { runId: "run-acme-cancel" } })
    expect(first.status).toBe(200)
    const again = await call(server.url, "api/cancel", { token: tokens.alice, body: { runId: "run-acme-cancel" } })
    expect(again.status).toBe(409)
    expect(again.body.message).toBe("run 'run-acme-cancel' is finished (cancelled)")
    expect(operator.audits.filter((a) => a.action === "cancel")).toEqual([
      expect.objectContaining({ runId: "run-acme-cancel", by: "alice" })
    ])
  })

  it("serves the page with a strict CSP and no inline script", async () => {
    const page = await fetch(`${server.url}`)
    const html = await page.text()
    const csp = page.headers.get("content-security-policy") ?? ""
    expect(csp).toContain("default-src 'self'")
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).toContain("require-trusted-types-for 'script'")
    expect(csp).not.toContain("unsafe-inline")
    expect(page.headers.get("x-frame-options")).toBe("DENY")
    expect(html).toContain("<script type=\"module\" src=\"/console/app.js\"></script>")
    expect(html.match(/<script/g)).toHaveLength(1)
    const script = await fetch(`${server.url}/app.js`)
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    expect(await script.text()).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/)
    const slash = await fetch(`${server.url}/`)
    expect(slash.status).toBe(200)
    expect(await slash.text()).toBe(html)
  })
})

describe("console API: cookie sessions and CSRF", () => {
  let server: Awaited<ReturnType<typeof start>>
  let runs: ReturnType<typeof seed>
  beforeAll(async () => {
    const operator = MemoryOperator.make({ owner: "manual" })
    runs = seed(operator)
    server = await start(operator, { basePath: "/ops" })
  })
  afterAll(() => server.close())

  const login = async () => {
    const reply = await call(server.url, "api/login", { body: { token: tokens.alice } })
    expect(reply.status).toBe(200)
    const cookie = reply.headers.get("set-cookie") ?? ""
    expect(cookie).toMatch(/^agentkit_console=/)
    expect(cookie).toContain("HttpOnly")
    expect(cookie).toContain("SameSite=Strict")
    expect(cookie).toContain("Path=/ops")
    return { cookie: cookie.split(";")[0]!, csrf: reply.body.csrf as string }
  }

  it("refuses a wrong sign-in token", async () => {
    const reply = await call(server.url, "api/login", { body: { token: "guessing-a-token-here" } })
    expect(reply.status).toBe(401)
    expect(reply.headers.get("set-cookie")).toBeNull()
  })

  it("reads with the cookie, and refuses a cookie write without the CSRF header, with a wrong one, or cross-site", async () => {
    const { cookie, csrf } = await login()
    const session = await call(server.url, "api/session", { headers: { cookie } })
    expect(session.body).toEqual({ operator: { id: "alice", role: "approver", tenants: ["acme"] }, csrf })
    const entry = runs.acme.pending[0]!
    const body = { runId: "run-acme-1", pendingId: entry.id, verdict: "reject", digest: entry.digest }
    const bare = await call(server.url, "api/decide", { headers: { cookie }, body })
    expect(bare.status).toBe(403)
    expect(bare.body.message).toBe("a write must carry the x-agentkit-csrf header from GET /api/session")
    const wrong = await call(server.url, "api/decide", { headers: { cookie, "x-agentkit-csrf": "0".repeat(64) }, body })
    expect(wrong.status).toBe(403)
    const crossSite = await call(server.url, "api/decide", {
      headers: { cookie, "x-agentkit-csrf": csrf, origin: "https://evil.example" },
      body
    })
    expect(crossSite.status).toBe(403)
    expect(crossSite.body.message).toBe(
      "a write from origin https://evil.example is refused: only this console's own pages may write"
    )
    const fetchSite = await call(server.url, "api/decide", {
      headers: { cookie, "x-agentkit-csrf": csrf, "sec-fetch-site": "cross-site" },
      body
    })
    expect(fetchSite.status).toBe(403)
    expect(server.operator.calls.decide ?? 0).toBe(0)
    const ok = await call(server.url, "api/decide", {
      headers: { cookie, "x-agentkit-csrf": csrf, origin: server.url.replace("/ops", "") },
      body
    })
    expect(ok.status).toBe(200)
    expect(ok.body.by).toBe("alice")
  })
})

// the in-memory store decodes every record on each page it lists: 10,000 of them take seconds on a loaded machine
describe("console API: 10,000 runs", { timeout: 120_000 }, () => {
  let server: Awaited<ReturnType<typeof start>>
  beforeAll(async () => {
    const operator = MemoryOperator.make({ owner: "manual" })
    for (let i = 0; i < 10_000; i++) {
      operator.plant({
        runId: `run-${String(i).padStart(5, "0")}`,
        tenant: i % 4 === 0 ? "globex" : "acme",
        threadId: `thread-${i % 37}`,
        agent: i % 2 === 0 ? "support" : "billing",
        updatedAt: 1_700_000_000_000 + Math.floor(i / 3), // ties: the order falls back to the run id
        pending: [{ tool: i % 5 === 0 ? "refund" : "cancel_order", arguments: { order_id: `O-${i}` } }]
      })
    }
    server = await start(operator)
  }, 180_000) // 10,000 real run records (a RunState each) written through the in-memory store
  afterAll(() => server.close())

  const all = async (query: string, token: string, limit: number) => {
    const seen: Array<string> = []
    let cursor: string | undefined
    let pages = 0
    do {
      const reply = await call(
        server.url,
        `api/runs?${query}&limit=${limit}${cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`}`,
        { token }
      )
      expect(reply.status).toBe(200)
      expect(reply.body.runs.length).toBeLessThanOrEqual(limit)
      for (const run of reply.body.runs) seen.push(run.runId)
      cursor = reply.body.cursor
      pages++
    } while (cursor !== undefined)
    return { seen, pages }
  }

  it("pages through every visible run once, in a stable order", async () => {
    const { seen, pages } = await all("status=suspended", tokens.root, 500)
    expect(seen).toHaveLength(10_000)
    expect(new Set(seen).size).toBe(10_000)
    expect(pages).toBe(20)
    expect(seen[0]).toBe("run-00000")
    expect(seen[9_999]).toBe("run-09999")
  })

  it("scopes and filters the pages: a tenant's operator sees 7,500, filtered by agent, tool and thread", async () => {
    const { seen } = await all("status=suspended,in_doubt", tokens.alice, 500)
    expect(seen).toHaveLength(7_500)
    expect(seen.every((id) => Number(id.slice(4)) % 4 !== 0)).toBe(true)
    const billing = await all("agent=billing&tool=refund", tokens.alice, 200)
    // odd, a multiple of 5, not of 4: i ≡ 5 (mod 10)
    expect(billing.seen).toHaveLength(1_000)
    const thread = await all("thread=thread-3", tokens.root, 100)
    expect(thread.seen).toEqual(
      Array.from({ length: 10_000 }, (_, i) => i).filter((i) => i % 37 === 3).map((i) =>
        `run-${String(i).padStart(5, "0")}`
      )
    )
  })

  it("pages newest first with order=desc, and refuses a cursor of the other direction", async () => {
    const { seen } = await all("order=desc", tokens.root, 500)
    expect(seen).toHaveLength(10_000)
    expect(seen[0]).toBe("run-09999")
    expect(seen[9_999]).toBe("run-00000")
    const first = await call(server.url, "api/runs?order=desc&limit=10", { token: tokens.root })
    const flipped = await call(server.url, `api/runs?order=asc&cursor=${encodeURIComponent(first.body.cursor)}`, {
      token: tokens.root
    })
    expect(flipped.status).toBe(400)
  })

  it("refuses a cursor it did not make (400) and a limit over 500", async () => {
    const forged = await call(server.url, "api/runs?cursor=not-a-cursor", { token: tokens.root })
    expect(forged.status).toBe(400)
    expect(forged.body.message).toBe("cursor \"not-a-cursor\" is not one this store returned")
    expect((await call(server.url, "api/runs?limit=501", { token: tokens.root })).status).toBe(400)
  })
})

describe("console API: live updates across processes", () => {
  it("a decision made through one console reaches the other console's stream, scoped by tenant", async () => {
    const operator = MemoryOperator.make({ owner: "auto" })
    const runs = seed(operator)
    const one = await start(operator)
    const two = await start(operator)
    try {
      const received = { gina: [] as Array<string>, alice: [] as Array<string> }
      const listen = async (token: string, into: Array<string>, signal: AbortSignal) => {
        const response = await fetch(`${two.url}/api/live`, { headers: { authorization: `Bearer ${token}` }, signal })
        expect(response.headers.get("content-type")).toBe("text/event-stream")
        const reader = response.body!.getReader()
        const decoder = new TextDecoder()
        let buffer = ""
        try {
          for (;;) {
            const { value, done } = await reader.read()
            if (done) return
            buffer += decoder.decode(value, { stream: true })
            let end: number
            while ((end = buffer.indexOf("\n\n")) !== -1) {
              const frame = buffer.slice(0, end)
              buffer = buffer.slice(end + 2)
              const data = frame.split("\n").find((line) => line.startsWith("data: "))
              if (data !== undefined) into.push(JSON.parse(data.slice(6)).runId)
            }
          }
        } catch {
          // aborted
        }
      }
      const stop = new AbortController()
      const streams = [
        listen(tokens.gina, received.gina, stop.signal),
        listen(tokens.alice, received.alice, stop.signal)
      ]
      await new Promise((resolve) => setTimeout(resolve, 150))
      const entry = runs.acme.pending[0]!
      const decided = await call(one.url, "api/decide", {
        token: tokens.alice,
        body: { runId: "run-acme-1", pendingId: entry.id, verdict: "approve", digest: entry.digest }
      })
      expect(decided.status).toBe(200)
      const globex = runs.globex.pending[0]!
      expect(
        (await call(one.url, "api/decide", {
          token: tokens.gina,
          body: { runId: "run-globex-1", pendingId: globex.id, verdict: "reject", digest: globex.digest }
        })).status
      ).toBe(200)
      while (received.alice.length === 0 || received.gina.length === 0) {
        await new Promise((r) => setTimeout(r, 25))
      }
      stop.abort()
      await Promise.all(streams)
      expect(received.alice).toContain("run-acme-1")
      expect(received.alice).not.toContain("run-globex-1")
      expect(received.gina).toContain("run-globex-1")
      expect(received.gina).not.toContain("run-acme-1")
      // the owner applied the decision: the run left the inbox
      const inbox = await call(two.url, "api/runs?status=suspended,in_doubt", { token: tokens.alice })
      expect(inbox.body.runs.map((r: { runId: string }) => r.runId)).toEqual(["run-acme-doubt"])
    } finally {
      await one.close()
      await two.close()
    }
  })
})
