/**
 * The operator CLI against a real console on 127.0.0.1: the same tenant scoping, roles, digests
 * and first-decision-wins as the browser, and `tail` following a run until it finishes.
 */
import { Cli, CliError } from "@agentkit/console"
import { FetchHttpClient } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "@effect/vitest"
import { Effect, Either, Fiber, Layer } from "effect"
import { hostile, seed, start, tokens } from "./support/harness.js"
import * as MemoryOperator from "./support/MemoryOperator.js"

const Env = Layer.merge(NodeContext.layer, FetchHttpClient.layer)

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
      "NotFound: no run 'run-globex-1' that you may see"
    )
    expect((await fails(tokens.victor, "approve", "run-acme-1", entry.id, "--digest", entry.digest)).message).toBe(
      "Forbidden: operator 'victor' is a viewer: deciding needs the approver role"
    )
    expect((await fails(tokens.alice, "approve", "run-acme-1", entry.id, "--digest", "f".repeat(64))).message).toMatch(
      /^StaleDigest: /
    )
    expect((await fails("wrong-token-wrong-token", "list")).message).toBe(
      "Unauthorized: the token is not one this console accepts"
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

  it("cancels a run", async () => {
    server.operator.plant({ runId: "run-acme-long", tenant: "acme", status: "running" })
    expect(await ok(tokens.alice, "cancel", "run-acme-long")).toEqual(["cancel requested for run-acme-long"])
    expect((await fails(tokens.alice, "cancel", "run-acme-long")).message).toBe(
      "Finished: run 'run-acme-long' is finished (cancelled)"
    )
  })
})
