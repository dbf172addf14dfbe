/**
 * The support desk's chat page, on `@ag-ui/client`'s `HttpAgent`: the endpoint streams the run
 * as AG-UI events and the client folds them into `agent.messages`, which the page renders as it
 * changes (text as it streams, each tool call with its arguments and result). A call waiting for
 * approval arrives as an interrupt (`agent.pendingInterrupts`); Approve or Reject answers it with
 * a new run whose `resume` carries the answer. The thread id is kept in `sessionStorage`, and on
 * load the page asks the endpoint for the thread (`GET <endpoint>/threads/<id>`): a reload in the
 * middle of a suspended run shows the run and its waiting approval again. Everything is rendered
 * as text (no HTML made from data).
 */
import { HttpAgent } from "@ag-ui/client"
import type { AgentSubscriber } from "@ag-ui/client"
import type { Interrupt, Message } from "@ag-ui/core"

const endpoint = document.body.dataset["endpoint"] ?? "/chat/agent"
const THREAD_KEY = "agentkit-chat-thread"
/** Set once the thread has a run: only then has the endpoint a thread to give back after a reload. */
const STARTED_KEY = "agentkit-chat-thread-started"

const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T
const log = byId<HTMLOListElement>("log")
const approvals = byId<HTMLElement>("approvals")
const status = byId<HTMLElement>("status")
const form = byId<HTMLFormElement>("composer")
const input = byId<HTMLInputElement>("message")
const send = byId<HTMLButtonElement>("send")
const stop = byId<HTMLButtonElement>("stop")

const threadId = (() => {
  const kept = sessionStorage.getItem(THREAD_KEY)
  if (kept !== null) return kept
  const made = crypto.randomUUID()
  sessionStorage.setItem(THREAD_KEY, made)
  return made
})()

const agent = new HttpAgent({ url: endpoint, threadId })
/** How many text deltas each message was streamed in (the page shows it; the browser test reads it). */
const deltas = new Map<string, number>()

const element = <K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text?: string) => {
  const node = document.createElement(tag)
  node.className = className
  if (text !== undefined) node.textContent = text
  return node
}

const setStatus = (state: "ready" | "running" | "waiting" | "error", text: string) => {
  status.dataset["state"] = state
  status.textContent = text
}

const textOf = (content: Message["content"]): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
    ? content.map((part) => ("text" in part && typeof part.text === "string" ? part.text : "")).join("")
    : ""

const render = () => {
  const results = new Map<string, string>()
  for (const message of agent.messages) {
    if (message.role === "tool") results.set(message.toolCallId, textOf(message.content))
  }
  const items: Array<HTMLElement> = []
  for (const message of agent.messages) {
    if (message.role === "user" || message.role === "assistant") {
      const text = textOf(message.content)
      if (text !== "") {
        const item = element("li", `msg ${message.role}`, text)
        item.dataset["role"] = message.role
        item.dataset["deltas"] = String(deltas.get(message.id) ?? 0)
        items.push(item)
      }
    }
    if (message.role === "assistant") {
      for (const call of message.toolCalls ?? []) {
        const item = element("li", "tool")
        item.dataset["tool"] = call.function.name
        item.append(element("span", "name", `tool call: ${call.function.name}`))
        item.append(element("span", "args", call.function.arguments))
        const result = results.get(call.id)
        item.append(element("span", "result", result === undefined ? "(not run yet)" : `→ ${result}`))
        items.push(item)
      }
    }
  }
  log.replaceChildren(...items)
  renderApprovals()
}

const renderApprovals = () => {
  const cards = agent.pendingInterrupts.map((interrupt) => approvalCard(interrupt))
  approvals.replaceChildren(...cards)
  if (cards.length > 0) setStatus("waiting", "waiting for your approval")
}

const approvalCard = (interrupt: Interrupt) => {
  const card = element("article", "approval")
  card.dataset["interrupt"] = interrupt.id
  const metadata = (interrupt.metadata ?? {}) as { toolName?: string; arguments?: unknown; digest?: string }
  card.append(element("h2", "", "Approval needed"))
  card.append(element("p", "", "The assistant wants to run this. Nothing happens until you answer."))
  const args = element("p", "")
  args.append(element("code", "", `${metadata.toolName ?? "?"} ${JSON.stringify(metadata.arguments ?? {})}`))
  card.append(args)
  const actions = element("div", "actions")
  const reason = element("input", "")
  reason.placeholder = "reason (optional)"
  reason.setAttribute("aria-label", "reason")
  const approve = element("button", "primary", "Approve")
  approve.type = "button"
  approve.dataset["answer"] = "approve"
  const reject = element("button", "", "Reject")
  reject.type = "button"
  reject.dataset["answer"] = "reject"
  const answer = (approved: boolean) => {
    approve.disabled = true
    reject.disabled = true
    const why = reason.value.trim()
    void run({
      resume: [{
        interruptId: interrupt.id,
        status: "resolved",
        payload: {
          approved,
          ...(why === "" ? {} : { reason: why }),
          ...(metadata.digest ? { digest: metadata.digest } : {})
        }
      }]
    })
  }
  approve.addEventListener("click", () => answer(true))
  reject.addEventListener("click", () => answer(false))
  actions.append(reason, approve, reject)
  card.append(actions)
  return card
}

const subscriber: AgentSubscriber = {
  onTextMessageContentEvent: ({ event }) => {
    deltas.set(event.messageId, (deltas.get(event.messageId) ?? 0) + 1)
  },
  onMessagesChanged: () => render(),
  onRunFinishedEvent: ({ event }) => {
    if (event.outcome?.type === "interrupt") setStatus("waiting", "waiting for your approval")
    else setStatus("ready", "ready")
  },
  onRunErrorEvent: ({ event }) => setStatus("error", `error: ${event.message}`)
}

const busy = (running: boolean) => {
  send.disabled = running
  input.disabled = running
  stop.hidden = !running
}

const run = async (parameters: Parameters<HttpAgent["runAgent"]>[0] = {}) => {
  busy(true)
  setStatus("running", "the assistant is working…")
  try {
    await agent.runAgent(parameters, subscriber)
  } catch (error) {
    setStatus("error", `error: ${error instanceof Error ? error.message : String(error)}`)
  } finally {
    busy(false)
    render()
    input.focus()
  }
}

form.addEventListener("submit", (event) => {
  event.preventDefault()
  const text = input.value.trim()
  if (text === "" || agent.isRunning) return
  input.value = ""
  sessionStorage.setItem(STARTED_KEY, threadId)
  agent.addMessage({ id: crypto.randomUUID(), role: "user", content: text })
  render()
  void run()
})

stop.addEventListener("click", () => agent.abortRun())

byId<HTMLButtonElement>("new-chat").addEventListener("click", () => {
  sessionStorage.removeItem(THREAD_KEY)
  sessionStorage.removeItem(STARTED_KEY)
  location.reload()
})

/** The thread as the endpoint keeps it: after a reload, the conversation and its waiting approvals. */
const restore = async () => {
  if (sessionStorage.getItem(STARTED_KEY) !== threadId) return
  const response = await fetch(`${endpoint}/threads/${encodeURIComponent(threadId)}`)
  if (response.status === 404) return
  if (!response.ok) {
    setStatus("error", `could not load the conversation (${response.status})`)
    return
  }
  const thread = (await response.json()) as { messages: Array<Message>; interrupts: Array<Interrupt> }
  agent.setMessages(thread.messages)
  agent.pendingInterrupts = thread.interrupts
  render()
}

setStatus("ready", "ready")
void restore().then(() => {
  document.body.dataset["ready"] = "true"
})
