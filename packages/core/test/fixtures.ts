/**
 * Small in-test doubles shared by the core tests: a scripted chat model and an invokable tool.
 * (Not a test file: vitest only collects `*.test.ts`.)
 */
import { Effect } from "effect"
import { ChatModel, RunContext, Usage } from "@agentkit/core"
import type { Chat, ChatModelError, InvokableTool } from "@agentkit/core"

/** A response with sensible defaults: 100 in / 20 out tokens, $0.01. */
export const response = (overrides: Partial<Chat.ChatResponse> = {}): Chat.ChatResponse => ({
  content: "ok",
  toolCalls: [],
  usage: Usage.make({ inputTokens: 100, outputTokens: 20, costUsd: 0.01 }),
  finishReason: "end_turn",
  model: "m",
  provider: "fake",
  ...overrides
})

/** A request for model `model` with one user message. */
export const request = (model = "m", text = "hi"): Chat.ChatRequest => ({
  model,
  messages: [{ role: "user", content: text }],
  tools: []
})

/**
 * A chat model that records every request it sees. `reply` decides each call's outcome from the
 * 1-based call number and the request; by default it emits the deltas `["o", "k"]` and answers
 * `response()` with the request's model.
 */
export const scriptedModel = (
  reply?: (call: number, request: Chat.ChatRequest, emit: (delta: Chat.ChatDelta) => void) => Effect.Effect<Chat.ChatResponse, ChatModelError>
) => {
  const requests: Array<Chat.ChatRequest> = []
  const service: ChatModel.Service = {
    chat: (req, { emit }) =>
      Effect.suspend(() => {
        requests.push(req)
        if (reply !== undefined) return reply(requests.length, req, emit)
        emit({ text: "o" })
        emit({ text: "k" })
        return Effect.succeed(response({ model: req.model }))
      })
  }
  return {
    service,
    layer: ChatModel.layer(service),
    requests,
    get calls() {
      return requests.length
    }
  }
}

/** An invokable tool whose `run` is given; every flag has a plain default. */
export const makeTool = <E = never, R = never>(
  name: string,
  run: (args: unknown) => Effect.Effect<unknown, E, RunContext | R>,
  flags: Partial<Pick<InvokableTool, "sideEffecting" | "idempotent" | "requiresApproval" | "delegating">> = {}
): InvokableTool<E, R> => ({
  name,
  schema: { name, description: `the ${name} tool, for tests`, parameters: { type: "object", properties: {} } },
  sideEffecting: flags.sideEffecting ?? false,
  idempotent: flags.idempotent ?? true,
  requiresApproval: flags.requiresApproval ?? false,
  caps: [],
  urlArg: undefined,
  delegating: flags.delegating ?? false,
  run,
  execute: (args, { context }) => Effect.provideService(run(args), RunContext, context),
  render: (value) => (typeof value === "string" ? value : JSON.stringify(value))
})
