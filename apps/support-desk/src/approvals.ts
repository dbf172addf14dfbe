/**
 * `pnpm demo:approvals`: human in the loop. A customer asks to cancel an order; the (scripted)
 * model calls `cancel_order`, which is side-effecting, so under `gated` autonomy the call waits
 * for a person. An in-process `Approver` asks on the terminal: y approves, n rejects (with a
 * reason the model sees). With no terminal attached it rejects and says so, so it never hangs
 * in CI.
 */
import { Agent, Approval, ReActCognition } from "@agentkit/agents"
import type { AgentResult } from "@agentkit/agents"
import { Invoker, Message, RunContext } from "@agentkit/core"
import type { ChatModel } from "@agentkit/core"
import { FakeLLM, Turn } from "@agentkit/testing"
import { Effect, Layer } from "effect"
import type { Context } from "effect"
import { realpathSync } from "node:fs"
import { createInterface } from "node:readline/promises"
import { pathToFileURL } from "node:url"
import { consolePending, parseFlags } from "./flags.js"
import { orderTools, seedOrders } from "./orders.js"

/** Where the approver talks to a person: whether one is there, a question, a line of output. */
export interface Terminal {
  /** False when no terminal is attached (CI, a pipe): nobody can answer. */
  readonly interactive: boolean
  /** Asks a question and resolves with the answer line ("" when the input has ended). */
  readonly ask: (question: string) => Promise<string>
  readonly print: (line: string) => void
}

/** The lines that show a person what they are asked to approve. */
export const describePending = (agent: string, pending: AgentResult.PendingCall): ReadonlyArray<string> => [
  `approval needed: ${agent} wants to run ${pending.call.name}`,
  `  arguments: ${JSON.stringify(pending.call.arguments)}`,
  `  digest:    ${pending.digest}`
]

const YES = /^\s*y(es)?\s*$/i

/**
 * Asks about one pending call. `y`/`yes` approves; anything else rejects (fail closed), with the
 * reason typed next, if any. No terminal: rejects without asking.
 */
export const decideOne = async (terminal: Terminal, agent: string, pending: AgentResult.PendingCall): Promise<Approval.Decision> => {
  for (const line of describePending(agent, pending)) terminal.print(line)
  if (!terminal.interactive) {
    terminal.print(`no terminal attached: rejecting ${pending.call.name}`)
    return Approval.reject(pending.digest, "no person was available to approve it")
  }
  const answer = await terminal.ask("approve? [y/n] ")
  if (YES.test(answer)) return Approval.approve(pending.digest)
  const reason = (await terminal.ask("reason (optional): ")).trim()
  return Approval.reject(pending.digest, reason === "" ? "rejected by the operator" : reason)
}

/**
 * An `Approver` over a terminal: every pending call of the turn, in order. A failure while asking
 * rejects what is left (fail closed).
 */
export const terminalApprover = (terminal: Terminal): Context.Tag.Service<typeof Approval.Approver> => ({
  decide: ({ agent, pending }) =>
    Effect.promise(async () => {
      const decisions: Record<string, Approval.Decision> = {}
      for (const entry of pending) {
        try {
          decisions[entry.id] = await decideOne(terminal, agent, entry)
        } catch (error) {
          terminal.print(`could not ask (${error instanceof Error ? error.message : String(error)}): rejecting ${entry.call.name}`)
          decisions[entry.id] = Approval.reject(entry.digest, "the approval prompt failed")
        }
      }
      return decisions
    })
})

/**
 * Reads answers from a stream with node:readline. Once the input ends, every question (pending
 * or later) is answered with "" — which rejects.
 */
export const lineReader = (input: NodeJS.ReadableStream, output: NodeJS.WritableStream) => {
  const rl = createInterface({ input, output })
  let closed = false
  let asking = false
  const ended = new Promise<string>((resolve) =>
    rl.once("close", () => {
      closed = true
      if (asking) output.write("\n") // the input ended mid-question (Ctrl-D): end the prompt's line
      resolve("")
    })
  )
  const ask = async (question: string): Promise<string> => {
    if (closed) return ""
    asking = true
    try {
      return await Promise.race([rl.question(question), ended])
    } finally {
      asking = false
    }
  }
  return { ask, close: () => rl.close() }
}

/** The customer's message. */
export const REQUEST = "Hi, I ordered B-102 twice by mistake. Please cancel it."

const CANCEL = { id: "c1", name: "cancel_order", arguments: { order_id: "B-102", reason: "duplicate order" } }

/**
 * The scripted model: it asks to cancel B-102, then answers from what the tool call returned
 * (the cancellation, or the rejection and its reason).
 */
export const scriptedModel = (): Layer.Layer<ChatModel> =>
  FakeLLM.respond((request, n) => {
    if (n === 1) return Turn({ content: "I'll cancel order B-102 for you.", toolCalls: [CANCEL] })
    const result = request.messages.at(-1)
    if (result?.role === "tool" && !result.isError) return Turn({ content: `Done: ${result.content}. Anything else?` })
    const why = result?.role === "tool" ? result.content.replace(/^DENIED: tool call rejected by human approval:? ?/, "") : ""
    return Turn({
      content: `I have not cancelled order B-102: the cancellation was not approved${why === "" ? "" : ` (${why})`}. It is still active.`
    })
  }).layer

/** The conversation under `gated` autonomy; prints as it goes and returns the run's result. */
export const program = (terminal: Terminal, model: Layer.Layer<ChatModel> = scriptedModel()) =>
  Effect.gen(function* () {
    const book = seedOrders()
    const { cancelOrder, lookupOrder } = orderTools(book)
    const agent = Agent.make({
      name: "support",
      model: "claude-sonnet-4-6",
      prompt: "Answer order questions. Use the tools; never guess a status. Cancel only what the customer asks to cancel.",
      cognition: ReActCognition.make({ tools: [lookupOrder, cancelOrder] })
    })
    terminal.print(`customer: ${REQUEST}`)
    const result = yield* agent.run([Message.user(REQUEST)])
    terminal.print(`support: ${result.output}`)
    const order = yield* book.get("B-102")
    terminal.print(`order ${order.id}: ${order.status}`)
    return result
  }).pipe(
    Effect.provide(
      Layer.mergeAll(
        RunContext.layer({ runId: "support-desk-approvals", autonomy: "gated" }),
        Layer.provide(Invoker.layer(), model),
        Layer.succeed(Approval.Approver, terminalApprover(terminal))
      )
    )
  )

const main = async () => {
  const flags = parseFlags(process.argv.slice(2))
  if ("error" in flags) {
    console.error(flags.error)
    process.exitCode = 2
    return
  }
  if (flags.console) {
    console.error(consolePending)
    process.exitCode = 2
    return
  }
  const interactive = process.stdin.isTTY === true
  const reader = interactive ? lineReader(process.stdin, process.stdout) : undefined
  const terminal: Terminal = {
    interactive,
    ask: reader?.ask ?? (() => Promise.resolve("")),
    print: (line) => console.log(line)
  }
  try {
    await Effect.runPromise(program(terminal))
  } finally {
    reader?.close()
  }
}

/** Whether this module is the program node was started with (not imported by a test). */
const isEntry = (): boolean => {
  const entry = process.argv[1]
  if (entry === undefined) return false
  try {
    return import.meta.url === pathToFileURL(realpathSync(entry)).href
  } catch {
    return false
  }
}

if (isEntry()) {
  main().catch((error: unknown) => {
    console.error(error)
    process.exitCode = 1
  })
}
