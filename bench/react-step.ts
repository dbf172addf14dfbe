/**
 * Framework overhead of one agent run (two model steps, one tool call) with a model that answers
 * at once, tracing off and on; and the time and memory of 10,000 concurrent runs.
 *
 *   pnpm bench            (node --expose-gc is used when available for the memory figure)
 *
 * Figures are printed, never asserted: these machines are shared and noisy.
 */
import { Agent, ReActCognition } from "@agentkit/agents"
import { ChatModel, Invoker, RunContext, Usage } from "@agentkit/core"
import type { Chat } from "@agentkit/core"
import { Tool } from "@agentkit/tools"
import { Effect, Layer, ManagedRuntime, Schema } from "effect"

const usage = Usage.make({ inputTokens: 10, outputTokens: 5, costUsd: 0.0001 })

// A model that asks for the tool on the first step and answers on the second.
const instantModel = ChatModel.layer({
  chat: (request) => {
    const last = request.messages[request.messages.length - 1]
    const response: Chat.ChatResponse =
      last?.role === "tool"
        ? { content: "done", toolCalls: [], usage, finishReason: "end_turn", model: request.model, provider: "bench" }
        : {
            content: "",
            toolCalls: [{ id: "c1", name: "echo", arguments: { text: "hi" } }],
            usage,
            finishReason: "tool_use",
            model: request.model,
            provider: "bench"
          }
    return Effect.succeed(response)
  }
})

const echo = Tool.make("echo", {
  description: "Echo the text back to the caller, unchanged, for benchmarking.",
  parameters: { text: Schema.String },
  sideEffecting: false,
  idempotent: true,
  handler: ({ text }) => Effect.succeed(text)
})

const agent = Agent.make({
  name: "bench",
  model: "bench-model",
  prompt: "Echo.",
  cognition: ReActCognition.make({ tools: [echo] })
})

const runtime = ManagedRuntime.make(Layer.provide(Invoker.layer(), instantModel))

const oneRun = (tracing: boolean) =>
  agent.run("say hi").pipe(RunContext.provide({ correlationId: "bench", tracing }))

// Runs one after another inside one fiber, so the figure is the framework's cost per run, not
// the cost of entering the Effect runtime from a Promise.
const sequential = (tracing: boolean, runs: number) =>
  Effect.forEach(Array.from({ length: runs }), () => oneRun(tracing), { discard: true })

const timeRuns = async (label: string, tracing: boolean, runs: number) => {
  await runtime.runPromise(sequential(tracing, 2_000)) // warm up
  const cpu = process.cpuUsage()
  const start = process.hrtime.bigint()
  await runtime.runPromise(sequential(tracing, runs))
  const wall = Number(process.hrtime.bigint() - start) / 1_000 / runs
  const used = process.cpuUsage(cpu)
  const cpuMicros = (used.user + used.system) / runs
  // CPU time is the steadier figure on a shared machine; wall time includes waiting for the CPU.
  console.log(`${label}: ${cpuMicros.toFixed(1)} µs CPU, ${wall.toFixed(1)} µs wall per run (${runs} sequential runs in one fiber)`)
}

const concurrent = async (runs: number) => {
  const gc = (globalThis as { gc?: () => void }).gc
  gc?.()
  const before = process.memoryUsage().heapUsed
  let peak = before
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().heapUsed)
  }, 5)
  const start = process.hrtime.bigint()
  const all = Effect.forEach(Array.from({ length: runs }, (_, i) => i), (i) =>
    agent.run("say hi").pipe(RunContext.provide({ correlationId: `run-${i}`, tracing: false })), { concurrency: "unbounded" })
  const results = await runtime.runPromise(all)
  const millis = Number(process.hrtime.bigint() - start) / 1e6
  clearInterval(timer)
  peak = Math.max(peak, process.memoryUsage().heapUsed)
  const ok = results.filter((r) => r.output === "done").length
  console.log(
    `${runs} concurrent runs: ${millis.toFixed(0)} ms, peak heap +${((peak - before) / 1e6).toFixed(1)} MB${gc ? "" : " (no --expose-gc: baseline not collected)"}; ${ok} completed`
  )
}

await timeRuns("tracing off", false, 20_000)
await timeRuns("tracing on (Effect's default tracer)", true, 20_000)
await concurrent(10_000)
await runtime.dispose()
