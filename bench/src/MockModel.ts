/**
 * The mock model every case of a workload calls. It answers asynchronously (a resolved promise),
 * as a real provider does: a synchronous mock lets a run finish without ever suspending, which
 * hides what a run keeps alive while it waits.
 *
 * It can also park calls: `park(step)` holds every call at that model step until `release()`,
 * which is how the live heap of an in-flight run is measured.
 */
import { Usage } from "@agentkit/core"
import { Effect } from "effect"
import type { Workload } from "./Workload.js"

/** What the mock reads of a request (agentkit's `ChatRequest` and the floor's request both fit). */
export interface MockRequest {
  readonly model: string
  readonly messages: ReadonlyArray<{ readonly role: string }>
}

/** A tool call the mock asks for. */
export interface MockToolCall {
  readonly id: string
  readonly name: string
  readonly arguments: { readonly [key: string]: unknown }
}

/** The mock's answer to one call (the shape of agentkit's `ChatResponse`). */
export interface MockResponse {
  readonly content: string
  readonly toolCalls: ReadonlyArray<MockToolCall>
  readonly usage: ReturnType<typeof Usage.make>
  readonly finishReason: "tool_use" | "end_turn"
  readonly model: string
  readonly provider: string
}

/** Calls held at one model step until released. */
export interface Park {
  /** Resolves once `count` calls are waiting at the step. */
  readonly arrived: (count: number) => Promise<void>
  /** Lets every held call (and every later one) answer; the model stops parking. */
  readonly release: () => void
}

const usage = Usage.make({ inputTokens: 10, outputTokens: 5, costUsd: 0.0001 })

export interface MockModel {
  readonly workload: Workload
  /** One model call. The step is 1 + the number of tool results in the request. */
  readonly chat: (request: MockRequest) => Effect.Effect<MockResponse>
  /** Holds every call at `step` (1-based) until the returned park is released. */
  readonly park: (step: number) => Park
  /** Called at the start of every model call while set (the concurrent measurement samples memory here). */
  probe: (() => void) | undefined
}

export const make = (workload: Workload): MockModel => {
  let parked: { readonly step: number; readonly gate: Promise<void>; readonly arrive: () => void } | undefined

  const respond = (step: number, model: string): MockResponse =>
    step <= workload.toolRounds
      ? {
        content: "",
        toolCalls: [{ id: `call-${step}`, name: "echo", arguments: { text: workload.argument } }],
        usage,
        finishReason: "tool_use",
        model,
        provider: "mock"
      }
      : { content: workload.answer, toolCalls: [], usage, finishReason: "end_turn", model, provider: "mock" }

  const self: MockModel = {
    workload,
    probe: undefined,
    chat: (request) => {
      self.probe?.()
      let step = 1
      for (const message of request.messages) if (message.role === "tool") step++
      const held = parked
      if (held !== undefined && held.step === step) {
        return Effect.promise(() => {
          held.arrive()
          return held.gate.then(() => respond(step, request.model))
        })
      }
      return Effect.promise(() => Promise.resolve(respond(step, request.model)))
    },
    park: (step) => {
      let waiting = 0
      let wanted = Infinity
      let onArrived: (() => void) | undefined
      let open!: () => void
      const gate = new Promise<void>((resolve) => {
        open = resolve
      })
      parked = {
        step,
        gate,
        arrive: () => {
          waiting++
          if (waiting >= wanted) onArrived?.()
        }
      }
      return {
        arrived: (count) =>
          new Promise<void>((resolve) => {
            wanted = count
            onArrived = resolve
            if (waiting >= count) resolve()
          }),
        release: () => {
          parked = undefined
          open()
        }
      }
    }
  }
  return self
}
