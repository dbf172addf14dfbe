/** `pnpm demo:approvals` flags: --console [--port], a decision from another process, --db. */
import { describe, expect, it } from "@effect/vitest"
import { defaultDb, parseFlags, usage } from "../src/flags.js"

describe("demo:approvals flags", () => {
  it("reads --console, with or without pnpm's literal --", () => {
    expect(parseFlags([])).toEqual({ console: false, db: defaultDb })
    expect(parseFlags(["--console"])).toEqual({ console: true, db: defaultDb })
    expect(parseFlags(["--", "--console"])).toEqual({ console: true, db: defaultDb })
  })

  it("reads a decision from another process: --approve / --reject <run id> [--reason], --db", () => {
    expect(parseFlags(["--", "--approve", "run-1", "--db", "/tmp/a.db"])).toEqual({
      console: false,
      db: "/tmp/a.db",
      decide: { verdict: "approve", runId: "run-1" }
    })
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
    expect(parseFlags(["--approve", "a", "--reject", "a"])).toEqual({
      error: `give one of --approve and --reject, once; ${usage}`
    })
    expect(parseFlags(["--approve", "a", "--reason", "x"])).toEqual({ error: `--reason goes with --reject; ${usage}` })
    expect("error" in parseFlags(["--console", "--approve", "a"])).toBe(true)
  })

  it("refuses an unknown argument, naming it and the usage", () => {
    expect(parseFlags(["--consol"])).toEqual({ error: `unknown argument "--consol"; ${usage}` })
  })

  it("reads --port with --console only, and refuses a port that is not one", () => {
    expect(parseFlags(["--", "--console", "--port", "4100"])).toEqual({ console: true, db: defaultDb, port: 4100 })
    expect(parseFlags(["--console", "--port", "0"])).toEqual({ console: true, db: defaultDb, port: 0 })
    for (const bad of ["65536", "-1", "80x", "1e3", ""]) {
      expect(parseFlags(["--console", "--port", bad])).toEqual({
        error: `--port needs a port number from 0 to 65535; ${usage}`
      })
    }
    expect(parseFlags(["--port", "4100"])).toEqual({ error: `--port goes with --console; ${usage}` })
  })
})
