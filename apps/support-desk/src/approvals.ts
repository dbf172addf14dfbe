/**
 * `pnpm demo:approvals`: human in the loop. A customer asks to cancel an order; the (scripted)
 * model calls `cancel_order`, which is side-effecting, so under `gated` autonomy the call waits
 * for a person. An in-process `Approver` asks on the terminal: y approves, n rejects (with a
 * reason the model sees). With no terminal attached (CI, a pipe) the run suspends to a SQLite
 * file instead, and the demo prints the command that decides it from a new process
 * (`durable.ts`), so it never hangs. `--console` suspends the run and serves the operator console
 * on 127.0.0.1, where it is decided in the browser.
 */
import { Approval } from "@agentkit/agents"
import type { AgentResult } from "@agentkit/agents"
import { Message } from "@agentkit/core"
import type { ChatModel, Invoker } from "@agentkit/core"
import { Effect, Exit, Fiber, Layer } from "effect"
import type { Context } from "effect"
import { createInterface } from "node:readline/promises"
import { describePending, REQUEST, runLayer, scriptedModel, supportAgent } from "./conversation.js"
import * as Durable from "./durable.js"
import { isEntry } from "./entry.js"
import { parseFlags } from "./flags.js"
import { seedOrders } from "./orders.js"

export { describePending, REQUEST, scriptedModel } from "./conversation.js"

/** Where the approver talks to a person: whether one is there, a question, a line of output. */
export interface Terminal {
  /** False when no terminal is attached (CI, a pipe): nobody can answer. */
  readonly interactive: boolean
  /** Asks a question and resolves with the answer line ("" when the input has ended). */
  readonly ask: (question: string) => Promise<string>
  readonly print: (line: string) => void
}

const YES = /^\s*y(es)?\s*$/i

/**
 * Asks about one pending call. `y`/`yes` approves; anything else rejects (fail closed), with the
 * reason typed next, if any. No terminal: rejects without asking.
 */
export const decideOne = async (
  terminal: Terminal,
  agent: string,
  pending: AgentResult.PendingCall
): Promise<Approval.Decision> => {
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
      const decisions: Array<readonly [Approval.PendingId, Approval.Decision]> = []
      for (const entry of pending) {
        try {
          decisions.push([entry.id, await decideOne(terminal, agent, entry)])
        } catch (error) {
          terminal.print(
            `could not ask (${error instanceof Error ? error.message : String(error)}): rejecting ${entry.call.name}`
          )
          decisions.push([entry.id, Approval.reject(entry.digest, "the approval prompt failed")])
        }
      }
      return Approval.decisions(decisions)
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

/**
 * The conversation under `gated` autonomy; prints as it goes and returns the run's result. The
 * Invoker's pipelines can be given middleware (a recorder, a replay).
 */
export const program = (
  terminal: Terminal,
  model: Layer.Layer<ChatModel> = scriptedModel(),
  pipelines: Invoker.Options = {}
) =>
  Effect.gen(function*() {
    const book = seedOrders()
    const agent = supportAgent(book)
    terminal.print(`customer: ${REQUEST}`)
    const result = yield* agent.run([Message.user(REQUEST)])
    terminal.print(`support: ${result.output}`)
    const order = yield* book.get("B-102")
    terminal.print(`order ${order.id}: ${order.status}`)
    return result
  }).pipe(
    Effect.provide(
      Layer.merge(
        runLayer("support-desk-approvals", model, pipelines),
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
  const print = (line: string) => console.log(line)
  if (flags.console) {
    // serve until SIGINT/SIGTERM: the signal interrupts the fiber, which closes the server and the stores
    const fiber = Effect.runFork(Durable.serveConsole({ print }, flags.db, { port: flags.port }))
    const stop = () => void Effect.runFork(Fiber.interrupt(fiber))
    process.once("SIGINT", stop)
    process.once("SIGTERM", stop)
    const exit = await Effect.runPromise(Fiber.await(fiber))
    process.exitCode = Exit.isSuccess(exit) ? exit.value : Exit.isInterrupted(exit) ? 0 : 1
    return
  }
  if (flags.decide !== undefined) {
    process.exitCode = await Effect.runPromise(Durable.decide({ print }, flags.db, flags.decide))
    return
  }
  const interactive = process.stdin.isTTY === true
  if (!interactive) {
    // nobody at a terminal: the run waits in a SQLite file for a decision from another process
    process.exitCode = await Effect.runPromise(Durable.suspend({ print }, flags.db))
    return
  }
  const reader = lineReader(process.stdin, process.stdout)
  try {
    await Effect.runPromise(program({ interactive, ask: reader.ask, print }))
  } finally {
    reader.close()
  }
}

if (isEntry(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error(error)
    process.exitCode = 1
  })
}
