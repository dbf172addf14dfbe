/**
 * The operator CLI against a real console on 127.0.0.1: the same tenant scoping, roles, digests
 * and first-decision-wins as the browser, and `tail` following a run until it finishes.
 */
import { Cli, CliError } from "@agentkit/console"
import { FetchHttpClient } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Fiber, Layer } from "effect"
import { hostile, seed, start, tokens } from "./support/harness.js"
import * as MemoryOperator from "./support/MemoryOperator.js"

const Env = Layer.merge(NodeContext.layer, FetchHttpClient.layer)

/** The control characters (other than newline) in a text: none may reach a terminal raw. */
const controls = (text: string) =>
  Array.from(text).filter((c) => {
    const code = c.charCodeAt(0)
    return c !== "\n" && (code < 0x20 || (code >= 0x7f && code < 0xa0))
  })

describe("agentkit-console CLI", () => {
  let server: Awaited<ReturnType<typeof start>>
  let runs: ReturnType<typeof seed>
  let lines: Array<string>

  beforeAll(async () => {
    const operator = MemoryOperator.make({ owner: "auto" })
    runs = seed(operator)
    server = await start(operator)
  })
  afterAll(() => server.close())
  afterEach(() => vi.restoreAllMocks())

  const cli = (token: string, ...args: Array<string>) => {
    lines = []
    vi.spyOn(console, "log").mockImplementation((...parts: Array<unknown>) =>
      void lines.push(parts.map(String).join(" "))
    )
    return Cli.run(["node", "agentkit-console", "--url", server.url, "--token", token, ...args]).pipe(
      Effect.provide(Env),
      Effect.either
    )
  }
  const ok = async (token: string, ...args: Array<string>) => {
    const result = await Effect.runPromise(cli(token, ...args))
    if (Either.isLeft(result)) throw new Error(`expected success, got ${String(result.left)}`)
    return lines
  }
  const fails = async (token: string, ...args: Array<string>) => {
    const result = await Effect.runPromise(cli(token, ...args))
    if (Either.isRight(result)) throw new Error(`expected a failure, got: ${lines.join("\n")}`)
    if (!(result.left instanceof CliError)) throw new Error(`expected a CliError, got ${String(result.left)}`)
    return result.left
  }

  it("lists the waiting runs of the operator's tenants only", async () => {
    const out = await ok(tokens.alice, "list")
    expect(out.filter((line) => line.startsWith("run-")).map((line) => line.split("  ")[0])).toEqual([
      "run-acme-1",
      "run-acme-doubt"
    ])
    expect(out.at(-1)).toBe("2 run(s)")
    const json = JSON.parse((await ok(tokens.root, "list", "--json")).join("\n"))
    expect(json.runs).toHaveLength(3)
  })

  it("shows a run with its pending call, digest and the hostile argument as data", async () => {
    const out = await ok(tokens.alice, "show", "run-acme-1")
    const entry = runs.acme.pending[0]!
    expect(out).toContain(`    digest: ${entry.digest}`)
    expect(out).toContain(`    arguments: ${JSON.stringify({ order_id: "A-771", reason: hostile })}`)
    expect(out).toContain(`  pending ${entry.id}  Approval  cancel_order  reasons=requires_approval,autonomy_gated`)
  })

  it("refuses another tenant's run, a viewer's decision, a stale digest and a wrong token", async () => {
    const entry = runs.acme.pending[0]!
    expect((await fails(tokens.alice, "show", "run-globex-1")).message).toBe(
      "NotFound: no run 'run-globex-1' that you may see; `agentkit-console list --status <statuses>` shows the runs you may see"
    )
    expect((await fails(tokens.victor, "approve", "run-acme-1", entry.id, "--digest", entry.digest)).message).toBe(
      "Forbidden: operator 'victor' is a viewer: deciding needs the approver role"
    )
    expect((await fails(tokens.alice, "approve", "run-acme-1", entry.id, "--digest", "f".repeat(64))).message).toMatch(
      /^StaleDigest: .*; `agentkit-console show <runId>` prints the current digest$/
    )
    expect((await fails("wrong-token-wrong-token", "list")).message).toBe(
      "Unauthorized: the token is not one this console accepts; check the operator token (--token or AGENTKIT_CONSOLE_TOKEN)"
    )
    expect(server.operator.audits).toHaveLength(0)
  })

  it("edits a call; a second decision is refused naming who decided", async () => {
    const entry = runs.acme.pending[0]!
    const bad = await fails(
      tokens.alice,
      "edit",
      "run-acme-1",
      entry.id,
      "--digest",
      entry.digest,
      "--args",
      "{\"order\":\"A-772\"}"
    )
    expect(bad.message).toMatch(
      /^InvalidArguments: tool 'cancel_order' call rejected: unexpected argument\(s\) \['order'\]/
    )
    const out = await ok(
      tokens.alice,
      "edit",
      "run-acme-1",
      entry.id,
      "--digest",
      entry.digest,
      "--args",
      "{\"order_id\":\"A-772\"}"
    )
    expect(out).toEqual([`edit recorded for ${entry.id} by alice`])
    const again = await fails(tokens.root, "approve", "run-acme-1", entry.id, "--digest", entry.digest)
    expect(again.message).toBe(
      `DecisionConflict: pending entry '${entry.id}' of run 'run-acme-1' was decided already by alice`
    )
  })

  it("tails a run until it finishes, while another operator resolves it", async () => {
    const entry = runs.doubt.pending[0]!
    const tail = Effect.runFork(cli(tokens.alice, "tail", "run-acme-doubt"))
    // wait until the tail printed the run's current state (it is listening from then on)
    while (lines.length === 0) await new Promise((r) => setTimeout(r, 10))
    await new Promise((r) => setTimeout(r, 100))
    const resolved = await Effect.runPromise(
      Effect.either(
        server.operator.resolve("run-acme-doubt", entry.id, {
          verdict: "markFailed",
          digest: entry.digest,
          by: "bob",
          reason: "no charge"
        })
      )
    )
    expect(Either.isRight(resolved)).toBe(true)
    const result = await Effect.runPromise(Fiber.join(tail))
    expect(Either.isRight(result)).toBe(true)
    expect(lines[0]).toMatch(/ {2}run-acme-doubt {2}in_doubt {2}pending=1$/)
    expect(lines.at(-1)).toMatch(/ {2}run-acme-doubt {2}done {2}pending=0$/)
  }, 120_000)

  it("says what is wrong and what to do, on one line, with no stack trace", async () => {
    const bare = (...args: Array<string>) =>
      Effect.runPromise(
        Cli.run(["node", "agentkit-console", ...args]).pipe(
          Effect.provide(Env),
          // no AGENTKIT_CONSOLE_* in this environment, whatever the machine's
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map())),
          Effect.flip
        )
      )
    const noToken = await bare("--url", server.url, "list")
    expect(noToken).toBeInstanceOf(CliError)
    expect((noToken as CliError).message).toBe(
      "no operator token: pass --token <token> or set AGENTKIT_CONSOLE_TOKEN"
    )
    expect(((await bare("--token", tokens.alice, "list")) as CliError).message).toBe(
      "no console URL: pass --url (e.g. --url http://127.0.0.1:4100/console) or set AGENTKIT_CONSOLE_URL"
    )
    const unreachable = (await bare("--url", "http://127.0.0.1:9/console", "--token", tokens.alice, "list")) as CliError
    expect(unreachable.message).toMatch(
      /^cannot reach the console at http:\/\/127\.0\.0\.1:9\/console: .*; check --url \(or AGENTKIT_CONSOLE_URL\) and that the console is running$/
    )
    expect((await fails(tokens.alice, "list", "--status", "bogus")).message).toBe(
      "--status takes statuses separated by commas, among running, suspended, in_doubt, done, failed, cancelled; got \"bogus\""
    )
    // the server's refusal of a query is one line, not its whole schema
    const refused = await fails(tokens.alice, "list", "--limit", "100000")
    expect(refused.message).not.toContain("\n")
    expect(refused.message.length).toBeLessThan(400)
    for (const error of [noToken as CliError, unreachable, refused]) {
      expect(error.message).not.toMatch(/\bat .*:\d+:\d+/)
    }
  })

  it("escapes control characters a run's text carries to the terminal", async () => {
    server.operator.plant({
      runId: "run-acme-ansi",
      tenant: "acme",
      threadId: "thread\u001b]0;pwned\u0007\u009b31m",
      pending: [{ tool: "refund", arguments: { order_id: "\u001b[2J" } }]
    })
    const out = await ok(tokens.alice, "list")
    const line = out.find((l) => l.startsWith("run-acme-ansi"))!
    expect(line).toContain("thread=thread\\u001b]0;pwned\\u0007\\u009b31m")
    expect(controls(out.join("\n"))).toEqual([])
    const json = (await ok(tokens.alice, "show", "run-acme-ansi", "--json")).join("\n")
    expect(controls(json)).toEqual([])
    expect(JSON.parse(json).threadId).toBe("thread\u001b]0;pwned\u0007\u009b31m")
    server.operator.setStatus("run-acme-ansi", "done")
  })

  it("cancels a run", async () => {
    server.operator.plant({ runId: "run-acme-long", tenant: "acme", status: "running" })
    expect(await ok(tokens.alice, "cancel", "run-acme-long")).toEqual(["cancel requested for run-acme-long"])
    expect((await fails(tokens.alice, "cancel", "run-acme-long")).message).toBe(
      "Finished: run 'run-acme-long' is finished (cancelled)"
    )
  })
})
