/** `pnpm demo:approvals -- --console`: the flag is read (and, until the durable demo lands, says what it needs). */
import { describe, expect, it } from "@effect/vitest"
import { consolePending, defaultDb, parseFlags, usage } from "../src/flags.js"

describe("demo:approvals flags", () => {
  it("reads --console, with or without pnpm's literal --", () => {
    expect(parseFlags([])).toEqual({ console: false, db: defaultDb })
    expect(parseFlags(["--console"])).toEqual({ console: true, db: defaultDb })
    expect(parseFlags(["--", "--console"])).toEqual({ console: true, db: defaultDb })
  })

  it("reads a decision from another process: --approve / --reject <run id> [--reason], --db", () => {
    expect(parseFlags(["--", "--approve", "run-1", "--db", "/tmp/a.db"])).toEqual({ console: false, db: "/tmp/a.db", decide: { verdict: "approve", runId: "run-1" } })
    expect(parseFlags(["--reject", "run-1", "--reason", "not confirmed"])).toEqual({
      console: false,
      db: defaultDb,
      decide: { verdict: "reject", runId: "run-1", reason: "not confirmed" }
    })
  })

  it("refuses a flag without its value, two decisions, a reason without a reject, a decision with --console", () => {
    expect(parseFlags(["--approve"])).toEqual({ error: `--approve needs a run id; ${usage}` })
    expect(parseFlags(["--approve", "--db", "x"])).toEqual({ error: `--approve needs a run id; ${usage}` })
    expect(parseFlags(["--db"])).toEqual({ error: `--db needs a file; ${usage}` })
    expect(parseFlags(["--approve", "a", "--reject", "a"])).toEqual({ error: `give one of --approve and --reject, once; ${usage}` })
    expect(parseFlags(["--approve", "a", "--reason", "x"])).toEqual({ error: `--reason goes with --reject; ${usage}` })
    expect("error" in parseFlags(["--console", "--approve", "a"])).toBe(true)
  })

  it("refuses an unknown argument, naming it and the usage", () => {
    expect(parseFlags(["--consol"])).toEqual({ error: `unknown argument "--consol"; ${usage}` })
  })

  it("says what --console needs", () => {
    expect(consolePending).toContain("durable approvals demo")
  })
})
