/** `pnpm demo:approvals -- --console`: the flag is read (and, until the durable demo lands, says what it needs). */
import { describe, expect, it } from "@effect/vitest"
import { consolePending, parseFlags, usage } from "../src/flags.js"

describe("demo:approvals flags", () => {
  it("reads --console, with or without pnpm's literal --", () => {
    expect(parseFlags([])).toEqual({ console: false })
    expect(parseFlags(["--console"])).toEqual({ console: true })
    expect(parseFlags(["--", "--console"])).toEqual({ console: true })
  })

  it("refuses an unknown argument, naming it and the usage", () => {
    expect(parseFlags(["--consol"])).toEqual({ error: `unknown argument "--consol"; ${usage}` })
  })

  it("says what --console needs", () => {
    expect(consolePending).toContain("durable approvals demo")
  })
})
