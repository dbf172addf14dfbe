/**
 * Approvals bound to what runs (issue 12): the approver gets frozen copies and its answers are
 * copied when they arrive; a resume's decisions are copied when they are handed over; the pinned
 * digest is re-checked at execution with the tool as it is then; conditional approval; every
 * denial and rejection audited with its decider.
 */
import { Agent, Approval, ReActCognition, RunPolicy } from "@agentkit/agents"
import { AuditStore, CheckpointStore, ToolDenied } from "@agentkit/core"
import type { Message, RunContext, ToolMiddleware } from "@agentkit/core"
import { FakeLLM, makeTestCtx, Seed, Turn } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { call, untyped } from "./fixtures.js"

const { MODEL, TASK } = Seed

const makeWorld = (options: { readonly caps?: ReadonlyArray<"egress"> } = {}) => {
  const paid: Array<{ readonly to: string; readonly amount: number }> = []
  const pay = Tool.make("pay", {
    description: "Pay an amount to an account. The money really moves; there is no undo.",
    parameters: { to: Schema.String, amount: Schema.Number },
    sideEffecting: true,
    requiresApproval: true,
    caps: options.caps ?? [],
    handler: ({ amount, to }) => {
      paid.push({ to, amount })
      return `paid ${amount} to ${to}`
    }
  })
  const agent = Agent.make({ name: "payer", model: MODEL, cognition: ReActCognition.make({ tools: [pay] }) })
  return { agent, paid }
}

const PAY = call("c1", "pay", { to: "alice", amount: 10 })
const script = () => FakeLLM.script([Turn({ toolCalls: [PAY] }), Turn({ content: "done" })])

const toolMessages = (messages: ReadonlyArray<Message.Message>) =>
  messages.flatMap((message) => (message.role === "tool" ? [message] : []))

/** Arguments whose `to` reads `alice` the first time and `mallory` every time after (a time-of-check attack). */
const shifty = () => {
  let reads = 0
  const args = { amount: 10 } as { amount: number; to: string }
  Object.defineProperty(args, "to", { enumerable: true, get: () => (reads++ === 0 ? "alice" : "mallory") })
  return args
}

describe("the in-process approver path", () => {
  it.effect("the approver gets frozen copies: changing what it was given throws and changes nothing that runs", () =>
    Effect.gen(function*() {
      const { agent, paid } = makeWorld()
      const tried: Array<string> = []
      const approver = Layer.succeed(Approval.Approver, {
        decide: ({ pending }) =>
          Effect.sync(() => {
            const entry = pending[0]!
            try {
              ;(entry.call.arguments as { to: string }).to = "mallory"
            } catch (error) {
              tried.push((error as Error).constructor.name)
            }
            return Approval.decisions([[entry.id, Approval.approve(entry.digest)]])
          })
      })
      const llm = script()
      yield* agent.run(TASK).pipe(Effect.provide(Layer.merge(makeTestCtx({ llm }), approver)))
      expect(tried).toEqual(["TypeError"])
      expect(paid).toEqual([{ to: "alice", amount: 10 }])
    }))

  it.effect("an edit whose arguments change after they were read: what runs is what was validated, read once", () =>
    Effect.gen(function*() {
      const { agent, paid } = makeWorld()
      const approver = Layer.succeed(Approval.Approver, {
        decide: ({ pending }) =>
          Effect.succeed(Approval.decisions([[pending[0]!.id, Approval.edit(pending[0]!.digest, shifty())]]))
      })
      const llm = script()
      yield* agent.run(TASK).pipe(Effect.provide(Layer.merge(makeTestCtx({ llm }), approver)))
      expect(paid).toEqual([{ to: "alice", amount: 10 }])
    }))

  // live: the pipeline waits a real moment, so the approver's queued write lands before the call runs
  it.live("an answer changed after the approver returned it (a callback that keeps a reference) changes nothing", () =>
    Effect.gen(function*() {
      const { agent, paid } = makeWorld()
      let answer: Record<string, { verdict: string; digest: string; arguments?: Record<string, unknown> }> = {}
      const approver = Layer.succeed(Approval.Approver, {
        decide: ({ pending }) => {
          answer = {
            [pending[0]!.id]: { verdict: "edit", digest: pending[0]!.digest, arguments: { to: "alice", amount: 10 } }
          }
          // the approver's other code changes the answer once the loop has taken it
          return Effect.as(
            Effect.sync(() =>
              queueMicrotask(() => ((answer[pending[0]!.id]!.arguments as Record<string, unknown>).to = "mallory"))
            ),
            untyped(answer)
          )
        }
      })
      const slowPay: ToolMiddleware = (next) => (invocation) =>
        Effect.zipRight(Effect.sleep("5 millis"), next(invocation))
      const llm = script()
      yield* agent.run(TASK).pipe(
        Effect.provide(Layer.merge(makeTestCtx({ llm, toolMiddleware: [slowPay] }), approver))
      )
      expect((answer[Object.keys(answer)[0]!]!.arguments as Record<string, unknown>).to).toBe("mallory") // it did change
      expect(paid).toEqual([{ to: "alice", amount: 10 }])
    }))

  it.effect("an edit goes through the tool pipeline again: an egress check there denies an edited destination", () =>
    Effect.gen(function*() {
      const { agent, paid } = makeWorld()
      const egress: ToolMiddleware = (next) => (invocation) =>
        (invocation.call.arguments as { to?: unknown }).to === "alice"
          ? next(invocation)
          : Effect.fail(
            new ToolDenied({
              toolName: invocation.tool.name,
              reason: "egress",
              message: "destination not on the allowlist"
            })
          )
      const approver = Layer.succeed(Approval.Approver, {
        decide: ({ pending }) =>
          Effect.succeed(
            Approval.decisions([[pending[0]!.id, Approval.edit(pending[0]!.digest, { to: "mallory", amount: 10 })]])
          )
      })
      const llm = script()
      yield* agent.run(TASK).pipe(Effect.provide(Layer.merge(makeTestCtx({ llm, toolMiddleware: [egress] }), approver)))
      expect(paid).toEqual([])
      expect(toolMessages(llm.requests[1]!.messages)[0]).toMatchObject({
        isError: true,
        content: expect.stringContaining("allowlist")
      })
    }))
})

describe("the resume path", () => {
  const suspend = (store: CheckpointStore.MemoryStore, runId: string) =>
    Effect.gen(function*() {
      const { agent } = makeWorld()
      const result = yield* agent.run(TASK).pipe(
        Effect.provide(Layer.merge(makeTestCtx({ llm: script(), runId }), CheckpointStore.layer(store)))
      )
      return result.suspended!.pending[0]!
    })

  it.effect("decisions changed after they were handed to resume (a getter, a later write) change nothing that runs or is recorded", () =>
    Effect.gen(function*() {
      const store = CheckpointStore.makeMemory()
      const entry = yield* suspend(store, "bind-1")
      const { agent, paid } = makeWorld()
      const decisions = Approval.decisions([[entry.id, Approval.edit(entry.digest, shifty())]])
      const llm = FakeLLM.script([Turn({ content: "done" })])
      yield* agent.resume("bind-1", decisions).pipe(
        Effect.provide(Layer.merge(makeTestCtx({ llm, runId: "bind-1" }), CheckpointStore.layer(store)))
      )
      expect(paid).toEqual([{ to: "alice", amount: 10 }])
      const recorded = yield* store.decisions("bind-1")
      expect(JSON.parse(recorded[0]!.decision)).toMatchObject({
        verdict: "edit",
        arguments: { to: "alice", amount: 10 }
      })
    }))

  it.effect("the digest is re-checked at execution with the tool as it is now: a redefined tool (new caps) rejects the call, audited", () =>
    Effect.gen(function*() {
      const store = CheckpointStore.makeMemory()
      const entry = yield* suspend(store, "bind-2")
      // the process that resumes has a different `pay`: the same name, now with egress
      const { agent, paid } = makeWorld({ caps: ["egress"] })
      const audit = AuditStore.makeMemory()
      const llm = FakeLLM.script([Turn({ content: "done" })])
      yield* agent
        .resume(
          "bind-2",
          Approval.decisions([[entry.id, Approval.approve(entry.digest, { by: "alice-the-operator" })]])
        )
        .pipe(
          Effect.provide(
            Layer.mergeAll(
              makeTestCtx({ llm, runId: "bind-2" }),
              CheckpointStore.layer(store),
              Layer.succeed(AuditStore, audit)
            )
          )
        )
      expect(paid).toEqual([])
      expect(toolMessages(llm.requests[0]!.messages)[0]).toMatchObject({
        isError: true,
        content: expect.stringContaining("digest mismatch")
      })
      expect(audit.records).toMatchObject([{
        runId: "bind-2",
        tool: "pay",
        decision: "denied",
        by: "alice-the-operator",
        denial: { reason: "approval" }
      }])
    }))
})

describe("conditional approval", () => {
  type Condition =
    | boolean
    | ((args: { readonly amount: number }, context: RunContext.Service) => boolean | Effect.Effect<boolean, unknown>)
  const world = (requiresApproval: Condition) => {
    const paid: Array<number> = []
    const pay = Tool.make("pay", {
      description: "Pay an amount to the supplier. The money really moves.",
      parameters: { amount: Schema.Number },
      sideEffecting: true,
      requiresApproval,
      handler: ({ amount }) => {
        paid.push(amount)
        return `paid ${amount}`
      }
    })
    return {
      agent: Agent.make({ name: "payer", model: MODEL, cognition: ReActCognition.make({ tools: [pay] }) }),
      paid
    }
  }
  const twoPayments = () =>
    FakeLLM.script([
      Turn({ toolCalls: [call("c1", "pay", { amount: 50 })] }),
      Turn({ toolCalls: [call("c2", "pay", { amount: 5000 })] }),
      Turn({ content: "done" })
    ])

  it.effect("a function of the arguments: the small payment runs, the large one waits with requires_approval", () =>
    Effect.gen(function*() {
      const { agent, paid } = world((args: { readonly amount: number }) => args.amount > 1000)
      const result = yield* agent.run(TASK).pipe(Effect.provide(makeTestCtx({ llm: twoPayments() })))
      expect(paid).toEqual([50])
      expect(result.suspended?.pending).toMatchObject([{
        call: { id: "c2" },
        kind: "Approval",
        reasons: ["requires_approval"],
        tool: { requiresApproval: true }
      }])
    }))

  it.effect("an Effect of the arguments and the run context (the user's own limit)", () =>
    Effect.gen(function*() {
      const { agent, paid } = world((args: { readonly amount: number }, context: RunContext.Service) =>
        Effect.succeed(context.scope.userId !== "cfo" && args.amount > 100)
      )
      const asCfo = yield* agent.run(TASK).pipe(
        Effect.provide(makeTestCtx({ llm: twoPayments(), scope: { userId: "cfo" } }))
      )
      expect(asCfo.suspended).toBeUndefined()
      expect(paid).toEqual([50, 5000])
    }))

  it.effect("a condition that throws, fails or answers anything but false requires approval (fail closed)", () =>
    Effect.gen(function*() {
      for (
        const condition of [
          () => {
            throw new Error("bug")
          },
          () => Effect.fail("no"),
          () => Effect.die("defect"),
          () => "yes" as unknown as boolean
        ]
      ) {
        const { agent, paid } = world(condition)
        const result = yield* agent.run(TASK).pipe(Effect.provide(makeTestCtx({ llm: twoPayments() })))
        expect(paid).toEqual([])
        expect(result.suspended?.pending[0]?.reasons).toEqual(["requires_approval"])
      }
    }))

  it("a conditional tool fingerprints differently from both fixed flags; a non-function, non-boolean value is a definition error", () => {
    const base = {
      description: "Pay an amount to the supplier. The money really moves.",
      parameters: { amount: Schema.Number },
      sideEffecting: true,
      handler: () => "ok"
    }
    const prints = [true, false, () => true].map((requiresApproval) =>
      Approval.fingerprint(Tool.make("pay", { ...base, requiresApproval }))
    )
    expect(new Set(prints).size).toBe(3)
    expect(() => Tool.make("pay", { ...base, requiresApproval: "sometimes" as unknown as boolean })).toThrow(
      /requiresApproval/
    )
  })
})

describe("every decision audited", () => {
  it.effect("a policy denial (dynamic deny) and an approver's rejection, each with its decision, reason and decider", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const tool = (
        name: string,
        caps: ReadonlyArray<"private_data" | "untrusted_content" | "egress">,
        requiresApproval = false
      ) =>
        Tool.make(name, {
          description: `A tool of the audit test called ${name}, with a long description.`,
          parameters: {},
          sideEffecting: caps.includes("egress") || requiresApproval,
          requiresApproval,
          caps,
          handler: () => {
            log.push(name)
            return `${name} ok`
          }
        })
      const agent = Agent.make({
        name: "audited",
        model: MODEL,
        policy: RunPolicy.make({ dynamic: "deny" }),
        cognition: ReActCognition.make({
          tools: [
            tool("read", ["private_data"]),
            tool("fetch", ["untrusted_content"]),
            tool("send", ["egress"]),
            tool("wipe", [], true)
          ]
        })
      })
      const llm = FakeLLM.script([
        Turn({ toolCalls: [call("c1", "read"), call("c2", "fetch")] }),
        Turn({ toolCalls: [call("c3", "send")] }),
        Turn({ toolCalls: [call("c4", "wipe")] }),
        Turn({ content: "done" })
      ])
      const audit = AuditStore.makeMemory()
      const approver = Layer.succeed(Approval.Approver, {
        decide: ({ pending }) =>
          Effect.succeed(
            Approval.decisions([[pending[0]!.id, { ...Approval.reject(pending[0]!.digest, "not today"), by: "carol" }]])
          )
      })
      yield* agent.run(TASK).pipe(
        Effect.provide(Layer.mergeAll(makeTestCtx({ llm }), approver, Layer.succeed(AuditStore, audit)))
      )
      expect(log).toEqual(["read", "fetch"])
      expect(audit.records).toMatchObject([
        { tool: "send", callId: "c3", decision: "denied", denial: { reason: "policy" }, tenant: expect.any(String) },
        {
          tool: "wipe",
          callId: "c4",
          decision: "denied",
          by: "carol",
          reason: "not today",
          denial: { reason: "approval" }
        }
      ])
      expect(audit.records[0]!.by).toBeUndefined()
    }))
})
