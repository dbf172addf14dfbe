/**
 * `pnpm demo:approvals`: the terminal approver's logic (answers, the no-terminal path, a failing
 * prompt, readline over a stream) and the whole conversation, offline.
 */
import { Approval } from "@agentkit/agents"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { PassThrough } from "node:stream"
import { decideOne, describePending, lineReader, program, REQUEST, terminalApprover } from "../src/approvals.js"
import type { Terminal } from "../src/approvals.js"
import { orderTools, seedOrders } from "../src/orders.js"

const CANCEL = { id: "c1", name: "cancel_order", arguments: { order_id: "B-102", reason: "duplicate order" } }
/** The entry the demo's run waits on: the first call of its first turn, gated by the autonomy tier. */
const entryOf = (call: typeof CANCEL | { id: string; name: string; arguments: { order_id: string } }, index = 0) =>
  Approval.makeEntry({
    kind: "Approval",
    path: "support-desk-approvals",
    iteration: 0,
    index,
    call,
    tool: orderTools(seedOrders()).cancelOrder,
    reasons: ["autonomy_gated"],
    createdAt: 0
  })
const PENDING = entryOf(CANCEL)

/** A terminal that answers from a list and records what it printed and asked. */
const fakeTerminal = (answers: ReadonlyArray<string>, interactive = true) => {
  const printed: Array<string> = []
  const asked: Array<string> = []
  let next = 0
  const terminal: Terminal = {
    interactive,
    ask: (question) => {
      asked.push(question)
      return Promise.resolve(answers[next++] ?? "")
    },
    print: (line) => printed.push(line)
  }
  return { terminal, printed, asked }
}

describe("the terminal approver", () => {
  it("shows the tool name, the arguments and the digest", () => {
    expect(describePending("support", PENDING)).toEqual([
      "approval needed: support wants to run cancel_order",
      `  arguments: {"order_id":"B-102","reason":"duplicate order"}`,
      `  digest:    ${PENDING.digest}`
    ])
  })

  it("y / yes / Y approve the call with its digest", async () => {
    for (const answer of ["y", "yes", "Y", " YES "]) {
      const { asked, terminal } = fakeTerminal([answer])
      expect(await decideOne(terminal, "support", PENDING)).toEqual(Approval.approve(PENDING.digest))
      expect(asked).toEqual(["approve? [y/n] "])
    }
  })

  it("n rejects with the reason typed next", async () => {
    const { asked, terminal } = fakeTerminal(["n", "  the customer must confirm by email "])
    expect(await decideOne(terminal, "support", PENDING)).toEqual(
      Approval.reject(PENDING.digest, "the customer must confirm by email")
    )
    expect(asked).toEqual(["approve? [y/n] ", "reason (optional): "])
  })

  it("n with no reason, an empty answer or anything else rejects (fail closed)", async () => {
    for (const answer of ["n", "", "sure", "approve", "yy"]) {
      const { terminal } = fakeTerminal([answer, ""])
      expect(await decideOne(terminal, "support", PENDING)).toEqual(
        Approval.reject(PENDING.digest, "rejected by the operator")
      )
    }
  })

  it("no terminal attached: rejects without asking, and says so", async () => {
    const { asked, printed, terminal } = fakeTerminal(["y"], false)
    expect(await decideOne(terminal, "support", PENDING)).toEqual(
      Approval.reject(PENDING.digest, "no person was available to approve it")
    )
    expect(asked).toEqual([])
    expect(printed.at(-1)).toBe("no terminal attached: rejecting cancel_order")
  })

  it.effect("as an Approver: one decision per pending entry, by pending id, in order", () =>
    Effect.gen(function*() {
      const other = entryOf({ id: "c2", name: "cancel_order", arguments: { order_id: "A-771" } }, 1)
      const { asked, terminal } = fakeTerminal(["y", "n", "wrong order"])
      const decisions = yield* terminalApprover(terminal).decide({
        runId: "r",
        agent: "support",
        pending: [PENDING, other]
      })
      expect(decisions).toEqual(
        Approval.decisions([[PENDING.id, Approval.approve(PENDING.digest)], [
          other.id,
          Approval.reject(other.digest, "wrong order")
        ]])
      )
      expect(asked).toHaveLength(3)
    }))

  it.effect("a prompt that fails rejects the call (fail closed) and says why", () =>
    Effect.gen(function*() {
      const printed: Array<string> = []
      const terminal: Terminal = {
        interactive: true,
        ask: () => Promise.reject(new Error("stdin closed")),
        print: (line) => printed.push(line)
      }
      const decisions = yield* terminalApprover(terminal).decide({ runId: "r", agent: "support", pending: [PENDING] })
      expect(decisions).toEqual(
        Approval.decisions([[PENDING.id, Approval.reject(PENDING.digest, "the approval prompt failed")]])
      )
      expect(printed.at(-1)).toBe("could not ask (stdin closed): rejecting cancel_order")
    }))
})

describe("lineReader (node:readline over a stream)", () => {
  it("answers a question with the next line, and writes the question", async () => {
    const input = new PassThrough()
    const output = new PassThrough()
    const written: Array<string> = []
    output.on("data", (chunk: Buffer) => written.push(chunk.toString()))
    const reader = lineReader(input, output)
    const answer = reader.ask("approve? [y/n] ")
    input.write("y\n")
    expect(await answer).toBe("y")
    expect(written.join("")).toContain("approve? [y/n] ")
    reader.close()
  })

  it("once the input ends, a pending and every later question get '' (so they reject), never hang", async () => {
    const input = new PassThrough()
    const reader = lineReader(input, new PassThrough())
    const pending = reader.ask("approve? [y/n] ")
    input.end()
    expect(await pending).toBe("")
    expect(await reader.ask("reason (optional): ")).toBe("")
    reader.close()
  })
})

describe("the demo conversation (gated autonomy, scripted model)", () => {
  it.effect("approved: the order is cancelled and the model says so", () =>
    Effect.gen(function*() {
      const { printed, terminal } = fakeTerminal(["y"])
      const result = yield* program(terminal)
      expect(printed).toEqual([
        `customer: ${REQUEST}`,
        ...describePending("support", PENDING),
        "support: Done: order B-102 cancelled (duplicate order). Anything else?",
        "order B-102: cancelled"
      ])
      expect(result).toMatchObject({ partial: false, stopReason: "end_turn" })
    }))

  it.effect("rejected with a reason: the order stays active and the model passes the reason on", () =>
    Effect.gen(function*() {
      const { printed, terminal } = fakeTerminal(["n", "customer must confirm by email"])
      yield* program(terminal)
      expect(printed.slice(-2)).toEqual([
        "support: I have not cancelled order B-102: the cancellation was not approved (customer must confirm by email). It is still active.",
        "order B-102: processing, ships in 2 days"
      ])
    }))

  it.effect("no terminal attached (CI): rejected without waiting, and it says so", () =>
    Effect.gen(function*() {
      const { asked, printed, terminal } = fakeTerminal([], false)
      yield* program(terminal)
      expect(asked).toEqual([])
      expect(printed).toEqual([
        `customer: ${REQUEST}`,
        ...describePending("support", PENDING),
        "no terminal attached: rejecting cancel_order",
        "support: I have not cancelled order B-102: the cancellation was not approved (no person was available to approve it). It is still active.",
        "order B-102: processing, ships in 2 days"
      ])
    }))
})
