/**
 * The durable approvals demo: with no terminal, the run suspends to a SQLite file and the demo
 * prints the command that decides it; that command, in a new process, records the decision with
 * the operator service and resumes the run to the end. In-process first (each step its own
 * stores on the same file), then with real processes (`node dist/src/approvals.js`, stdin a pipe).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { decide, decideCommands, suspend } from "../src/durable.js"
import { parseFlags } from "../src/flags.js"

const output = () => {
  const lines: Array<string> = []
  return { lines, out: { print: (line: string) => lines.push(line) } }
}

const scratch = () => {
  const dir = mkdtempSync(join(tmpdir(), "agentkit-demo-"))
  return Effect.as(
    Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))),
    join(dir, "nested", "approvals.db")
  )
}

describe("durable approvals demo", () => {
  it.live("suspends to the file and prints the decide command; approving from a new set of stores finishes the run", () =>
    Effect.gen(function*() {
      const db = yield* scratch()
      const first = output()
      expect(yield* suspend(first.out, db, "run-a")).toBe(0)
      expect(first.lines.slice(-4)).toEqual([
        `no terminal attached: run run-a is suspended in ${db}`,
        "decide it from another process (it resumes the run to the end):",
        ...decideCommands("run-a", db).map((c) => `  ${c}`)
      ])
      // the printed command parses to the decision it makes
      expect(parseFlags(decideCommands("run-a", db)[0]!.split(" ").slice(3))).toEqual({
        console: false,
        db,
        decide: { verdict: "approve", runId: "run-a" }
      })
      const second = output()
      expect(yield* decide(second.out, db, { verdict: "approve", runId: "run-a" })).toBe(0)
      expect(second.lines.slice(-3)).toEqual([
        "support: Done: order B-102 cancelled (duplicate order). Anything else?",
        "order B-102: cancelled",
        "run run-a: done"
      ])
      const again = output()
      expect(yield* decide(again.out, db, { verdict: "reject", runId: "run-a" })).toBe(1)
      expect(again.lines).toEqual(["run run-a is done: it waits on no decision"])
      const unknown = output()
      expect(yield* decide(unknown.out, db, { verdict: "approve", runId: "run-zz" })).toBe(1)
      expect(unknown.lines).toEqual(["error: no run 'run-zz' in the store"])
    }).pipe(Effect.scoped))

  it.live("rejecting with a reason: the order stays active and the model passes the reason on", () =>
    Effect.gen(function*() {
      const db = yield* scratch()
      yield* suspend(output().out, db, "run-b")
      const second = output()
      expect(
        yield* decide(second.out, db, { verdict: "reject", runId: "run-b", reason: "customer changed their mind" })
      ).toBe(0)
      expect(second.lines.slice(-3)).toEqual([
        "support: I have not cancelled order B-102: the cancellation was not approved (customer changed their mind). It is still active.",
        "order B-102: processing, ships in 2 days",
        "run run-b: done"
      ])
    }).pipe(Effect.scoped))

  it.live(
    "two real processes: the first suspends (stdin is not a terminal), the printed command approves and finishes it",
    () =>
      Effect.gen(function*() {
        const db = yield* scratch()
        const app = fileURLToPath(new URL("../dist/src/approvals.js", import.meta.url))
        const first = spawnSync(process.execPath, [app, "--db", db], { input: "", encoding: "utf8" })
        expect(first.status).toBe(0)
        const runId = /run (support-desk-[0-9a-f]{8}) is suspended/.exec(first.stdout)?.[1]
        expect(runId).toBeDefined()
        const command = first.stdout.split("\n").find((line) => line.includes("--approve"))!.trim()
        expect(command).toBe(`pnpm demo:approvals -- --approve ${runId} --db ${db}`)
        const second = spawnSync(process.execPath, [app, ...command.split(" ").slice(3)], {
          input: "",
          encoding: "utf8"
        })
        expect(second.stderr).toBe("")
        expect(second.status).toBe(0)
        expect(second.stdout).toContain("order B-102: cancelled")
        expect(second.stdout).toContain(`run ${runId}: done`)
      }).pipe(Effect.scoped),
    60_000
  )
})
