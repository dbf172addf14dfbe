/**
 * The seed's tools and agent, shared by the agents tests. (Not a test file: vitest only collects
 * `*.test.ts`.)
 */
import { Agent, ReActCognition } from "@agentkit/agents"
import type { ToolCall } from "@agentkit/core"
import { Tool } from "@agentkit/tools"
import { Cause, Effect, Exit, Option, Schema } from "effect"
import { expect } from "@effect/vitest"

export const MODEL = "claude-sonnet-4-6"
export const PROMPT = "Answer order questions. Use the tools; never guess a status."
export const TASK = "What happened to order A-771?"
export const ANSWER = "Order A-771 shipped on 14 August and arrives Tuesday."
export const STATUS = "order A-771: shipped 2026-08-14, arriving Tuesday"

export const lookupOrder = Tool.make("lookup_order", {
  description: "Look up an order by its id and return its status line.\n\nUse this whenever the user mentions an order number.",
  parameters: { order_id: Schema.String },
  sideEffecting: false,
  idempotent: true,
  handler: ({ order_id }) => Effect.succeed(`order ${order_id}: shipped 2026-08-14, arriving Tuesday`)
})

export const cancelOrder = Tool.make("cancel_order", {
  description: "Cancel an order. This really cancels it — there is no undo.\n\nOnly call it after the user has confirmed the order id.",
  parameters: {
    order_id: Schema.String,
    reason: Schema.String.pipe(Schema.optionalWith({ default: () => "customer request" }))
  },
  sideEffecting: true,
  handler: ({ order_id, reason }) => `order ${order_id} cancelled (${reason})`
})

/** The seed's agent. */
export const support = Agent.make({
  name: "support",
  model: MODEL,
  prompt: PROMPT,
  cognition: ReActCognition.make({ tools: [lookupOrder, cancelOrder] })
})

/** A tool call literal. */
export const call = (id: string, name: string, args: Record<string, unknown> = {}): ToolCall.ToolCall => ({
  id,
  name,
  arguments: args
})

/** The `lookup_order` call of the seed. */
export const lookupCall = (id = "c1", orderId = "A-771") => call(id, "lookup_order", { order_id: orderId })

/** A long-enough description for test-only tools. */
export const DESCRIPTION = "A test tool whose description is long enough to pass the rule."

/** The failure of an exit, asserting there is exactly one typed failure. */
export const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  expect(Exit.isFailure(exit)).toBe(true)
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const failure = Cause.failureOption(exit.cause)
  if (Option.isNone(failure)) throw new Error(`expected a typed failure, got ${Cause.pretty(exit.cause)}`)
  return failure.value
}

/** The defect of an exit, asserting it died. */
export const defectOf = <A, E>(exit: Exit.Exit<A, E>): unknown => {
  expect(Exit.isFailure(exit)).toBe(true)
  if (Exit.isSuccess(exit)) throw new Error("expected a defect")
  const defect = Cause.dieOption(exit.cause)
  if (Option.isNone(defect)) throw new Error(`expected a defect, got ${Cause.pretty(exit.cause)}`)
  return defect.value
}

/**
 * `Effect.never`, typed as a string result. A tool whose Success type is `never` (a handler that
 * only waits, only fails or only dies) is not assignable to `ToolRegistry.AnyTool`, so
 * `ReActCognition.make` rejects it at compile time: the tests give such handlers a string type.
 */
export const forever: Effect.Effect<string> = Effect.never
