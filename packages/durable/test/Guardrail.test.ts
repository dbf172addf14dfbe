/**
 * Guardrails on durable runs (issue 41): a `DurableAgent` drives `agent.run`, so the agent's
 * guardrails hold as in-process: a tool-result guardrail rewrites the result inside the tool's
 * activity (the journal holds the redacted text, so a body re-driven after a crash replays it, and
 * the model never sees the secret), an output guardrail rewrites the answer, and an input
 * guardrail's trip fails the run before any model call.
 */
import { Agent, Guardrail, ReActCognition } from "@agentkit/agents"
import type { AgentResult } from "@agentkit/agents"
import type { Chat } from "@agentkit/core"
import { DurableAgent } from "@agentkit/durable"
import { FakeLLM, Turn } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Schema } from "effect"
import { crashingStore, harness, settle } from "./support.js"

const KEY = "sk-ant-DURABLESECRET0123456789abcdef"

const lookup = Tool.make("lookup_customer", {
  description: "Look up a customer by id and return their account line.",
  parameters: { id: Schema.String },
  sideEffecting: false,
  idempotent: true,
  handler: ({ id }) => `customer ${id}: mail ada@example.com, api key ${KEY}`
})

const noRefunds = Guardrail.input({
  name: "no_refunds",
  description: "Refuses runs that ask for a refund.",
  check: ({ value }) =>
    Effect.succeed(
      value.some((m) => m.content.includes("refund")) ? Guardrail.trip("refunds are for people") : Guardrail.pass
    )
})

const setup = (
  llm: FakeLLM.FakeLLM,
  guardrails: ReadonlyArray<Guardrail.Any>,
  store?: ReturnType<typeof crashingStore>
) => {
  const agent = Agent.make({
    name: "accounts",
    model: "m",
    cognition: ReActCognition.make({ tools: [lookup] }),
    guardrails
  })
  const durable = DurableAgent.make(agent, { version: 1, approvalTimeout: "1 hour" })
  const { layer } = harness([durable], { llm, store: store?.store })
  return { durable, layer }
}

const lookupThenEcho = () =>
  FakeLLM.respond((request) => {
    const last = request.messages.at(-1)!
    return last.role === "tool"
      ? Turn({ content: `found: ${last.content}` })
      : Turn({ toolCalls: [{ id: "c1", name: "lookup_customer", arguments: { id: "42" } }] })
  })

const toolTexts = (request: Chat.ChatRequest | undefined) =>
  (request?.messages ?? []).flatMap((message) => (message.role === "tool" ? [message.content] : []))

type Polled = Effect.Effect.Success<ReturnType<typeof settle>>

const outputOf = (polled: Polled) =>
  Exit.isSuccess(polled) && polled.value?._tag === "Complete" && Exit.isSuccess(polled.value.exit)
    ? (polled.value.exit.value as AgentResult.AgentResult).output
    : undefined

const redacted = `customer 42: mail [REDACTED:email], api key [REDACTED:api_key]`

describe("guardrails on a durable run", () => {
  it.effect("pass: the tool result and the answer are as they were", () => {
    const llm = lookupThenEcho()
    const { durable, layer } = setup(llm, [noRefunds])
    return Effect.gen(function*() {
      yield* durable.start({ runId: "g-1", input: "who is customer 42?" })
      expect(outputOf(yield* settle(durable, "g-1"))).toBe(`found: customer 42: mail ada@example.com, api key ${KEY}`)
    }).pipe(Effect.provide(layer))
  })

  it.effect("rewrite: the model never sees the secret, the answer is redacted, and a crash replays the redacted result", () => {
    const llm = lookupThenEcho()
    // the body "crashes" after the tool's activity returned, before its checkpoint: the re-driven body replays it
    const crashing = crashingStore((s) => s.phase === "tools" && s.completed === 1)
    const { durable, layer } = setup(
      llm,
      [Guardrail.secrets({ kind: "toolResult" }), Guardrail.secrets({ kind: "output" })],
      crashing
    )
    return Effect.gen(function*() {
      yield* durable.start({ runId: "g-2", input: "who is customer 42?" })
      const first = yield* settle(durable, "g-2")
      expect(crashing.crashed()).toBe(true)
      expect(Exit.isFailure(first)).toBe(true)
      yield* durable.workflow.resume(yield* durable.executionId("g-2"))
      const output = outputOf(yield* settle(durable, "g-2"))
      expect(output).toBe(`found: ${redacted}`)
      expect(llm.calls).toBe(2)
      expect(toolTexts(llm.requests[1])).toEqual([redacted])
      expect(JSON.stringify(llm.requests)).not.toContain(KEY)
    }).pipe(Effect.provide(layer))
  })

  it.effect("trip: an input guardrail fails the run before any model call", () => {
    const llm = lookupThenEcho()
    const { durable, layer } = setup(llm, [noRefunds])
    return Effect.gen(function*() {
      yield* durable.start({ runId: "g-3", input: "I want a refund" })
      const polled = yield* settle(durable, "g-3")
      const shown = Exit.isSuccess(polled) && polled.value?._tag === "Complete" && Exit.isFailure(polled.value.exit)
        ? Cause.pretty(polled.value.exit.cause)
        : JSON.stringify(polled)
      expect(shown).toContain("guardrail 'no_refunds' tripped on the input: refunds are for people")
      expect(llm.calls).toBe(0)
    }).pipe(Effect.provide(layer))
  })
})
