// @ts-check
// The operator console's web app: plain DOM, no framework, no build step. Every value from the
// server (arguments, transcripts, reasons: attacker-controlled text among them) reaches the page
// through `textContent` only; nothing is ever parsed as HTML (the CSP's Trusted Types enforce it).

/** The console's base URL (the directory this script is served from). */
const base = new URL("./", import.meta.url)
const main = /** @type {HTMLElement} */ (document.getElementById("main"))
const banner = /** @type {HTMLElement} */ (document.getElementById("banner"))
const liveBadge = /** @type {HTMLElement} */ (document.getElementById("live"))
const who = /** @type {HTMLElement} */ (document.getElementById("who"))

/** @type {{ operator: { id: string, role: string, tenants: "*" | string[] }, csrf: string } | undefined} */
let session
/** @type {EventSource | undefined} */
let events

// ---------------------------------------------------------------------------------------------
// DOM: elements from text, never from HTML

/**
 * A tenant key (or an operator's grant) as people read it: a scope's store key
 * (`["acme",null,"u1",null]`: org, domain, user, session) by its present parts,
 * `org acme · user u1`; a pattern (the first parts of a key, `["acme"]`) ends `· …`, everything
 * under it; `(no scope)` when no part is present; any other key as it is.
 * @param {string} key
 */
const tenantLabel = (key) => {
  if (key === "*") return "all tenants"
  let parts
  try {
    parts = JSON.parse(key)
  } catch {
    return key
  }
  if (!Array.isArray(parts) || parts.length === 0 || parts.length > 4) return key
  const shown = (/** @type {unknown} */ part) =>
    typeof part === "object" && part !== null && "$number" in part ? String(part.$number) : String(part)
  const named = ["org", "domain", "user", "session"].flatMap((name, i) =>
    parts[i] === null || parts[i] === undefined ? [] : [`${name} ${shown(parts[i])}`]
  )
  if (parts.length < 4) named.push("…")
  return named.length === 0 ? "(no scope)" : named.join(" · ")
}

/** The scope of a run or record, by its parts. @param {string} key */
const tenantText = (key) => h("span", { "data-testid": "scope" }, `scope ${tenantLabel(key)}`)

/**
 * @param {string} tag
 * @param {Record<string, unknown>} [attrs]
 * @param {...(Node | string | number | null | undefined | false)} children
 * @returns {HTMLElement}
 */
const h = (tag, attrs = {}, ...children) => {
  const el = document.createElement(tag)
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue
    if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), /** @type {EventListener} */ (value))
    else if (key === "class") el.className = String(value)
    else if (key === "value") /** @type {HTMLInputElement} */ (el).value = String(value)
    else if (key !== "style" && !key.startsWith("on")) el.setAttribute(key, value === true ? "" : String(value))
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue
    el.append(typeof child === "object" ? child : document.createTextNode(String(child)))
  }
  return el
}

/** @param {HTMLElement} el @param {...(Node | null)} nodes */
const replace = (el, ...nodes) => el.replaceChildren(.../** @type {Node[]} */ (nodes.filter((n) => n !== null)))

/** @param {string} message @param {boolean} [info] */
const say = (message, info = false) => {
  banner.textContent = message
  banner.className = info ? "banner info" : "banner"
  banner.hidden = message === ""
}

/** @param {number} ms */
const when = (ms) => new Date(ms).toLocaleString()
/** @param {number} usd */
const money = (usd) => `$${usd.toFixed(usd < 0.01 ? 6 : 4)}`

// ---------------------------------------------------------------------------------------------
// API

class ApiError extends Error {
  /** @param {number} status @param {any} body */
  constructor(status, body) {
    super(typeof body?.message === "string" ? body.message : `HTTP ${status}`)
    this.status = status
    this.body = body
  }
}

/**
 * @param {string} path
 * @param {{ method?: string, body?: unknown, query?: Record<string, string | undefined> }} [options]
 * @returns {Promise<any>}
 */
const api = async (path, options = {}) => {
  const url = new URL(path, base)
  for (const [key, value] of Object.entries(options.query ?? {})) if (value !== undefined && value !== "") url.searchParams.set(key, value)
  /** @type {Record<string, string>} */
  const headers = { accept: "application/json" }
  if (options.body !== undefined) headers["content-type"] = "application/json"
  if (options.method !== undefined && options.method !== "GET" && session !== undefined) headers["x-agentkit-csrf"] = session.csrf
  const response = await fetch(url, {
    method: options.method ?? "GET",
    headers,
    credentials: "same-origin",
    body: options.body === undefined ? null : JSON.stringify(options.body)
  })
  const text = await response.text()
  /** @type {any} */
  let body
  try {
    body = text === "" ? {} : JSON.parse(text)
  } catch {
    body = { message: text }
  }
  if (!response.ok) throw new ApiError(response.status, body)
  return body
}

/** @param {unknown} error */
const failure = (error) => {
  if (error instanceof ApiError) {
    if (error.status === 401) return showLogin(error.message)
    const who = error.body?.by ? ` (decided by ${error.body.by}${error.body.verdict ? `: ${error.body.verdict}` : ""})` : ""
    say(`${error.status} ${error.body?._tag ?? ""}: ${error.message}${who}`)
  } else say(String(error))
}

// ---------------------------------------------------------------------------------------------
// Session and live updates

/** @param {string} [message] */
const showLogin = (message) => {
  session = undefined
  who.textContent = ""
  events?.close()
  events = undefined
  liveBadge.textContent = "offline"
  liveBadge.className = "live"
  const token = /** @type {HTMLInputElement} */ (h("input", { type: "password", name: "token", autocomplete: "current-password", "data-testid": "token" }))
  const form = h(
    "form",
    {
      class: "login card",
      onsubmit: async (/** @type {Event} */ event) => {
        event.preventDefault()
        try {
          session = await api("api/login", { method: "POST", body: { token: token.value } })
          say("")
          start()
        } catch (error) {
          failure(error)
        }
      }
    },
    h("h1", {}, "Sign in"),
    h("label", {}, "Operator token", token),
    h("button", { class: "primary", type: "submit", "data-testid": "sign-in" }, "Sign in")
  )
  replace(main, form)
  if (message) say(message)
}

const connect = () => {
  events?.close()
  events = new EventSource(new URL("api/live", base), { withCredentials: true })
  events.onopen = () => {
    liveBadge.textContent = "live"
    liveBadge.className = "live on"
  }
  events.onerror = () => {
    liveBadge.textContent = "reconnecting"
    liveBadge.className = "live"
  }
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let pending
  /** The runs changed since the last refresh (ids of the runs and their roots). */
  const changed = new Set()
  events.addEventListener("change", (event) => {
    try {
      const change = JSON.parse(/** @type {MessageEvent} */ (event).data)
      changed.add(change.runId)
      changed.add(change.rootRunId)
    } catch {
      changed.add("*")
    }
    if (pending !== undefined) return
    pending = setTimeout(() => {
      pending = undefined
      const ids = new Set(changed)
      changed.clear()
      refresh(ids)
    }, 150)
  })
}

const start = async () => {
  try {
    session = await api("api/session")
  } catch (error) {
    return failure(error)
  }
  if (session === undefined) return
  const scope = session.operator.tenants === "*" ? "all tenants" : session.operator.tenants.map(tenantLabel).join(", ")
  replace(
    who,
    h("span", { "data-testid": "operator" }, `${session.operator.id} (${session.operator.role}, ${scope})`),
    document.createTextNode(" "),
    h("button", { onclick: () => api("api/logout", { method: "POST" }).then(() => showLogin(), failure) }, "Sign out")
  )
  connect()
  render(false)
}

// ---------------------------------------------------------------------------------------------
// Views

/** @type {Record<string, string>} */
const filters = { status: "suspended,in_doubt", tenant: "", agent: "", tool: "", thread: "" }

/**
 * The view on screen: its route and how it brings itself up to date in place (a live update
 * patches the view; it never rebuilds it, so typed input, open boxes, loaded pages and the
 * scroll position stay).
 * @type {{ route: string, update: (changed: Set<string>) => Promise<void> } | undefined}
 */
let current

const routeOf = () => location.hash.replace(/^#\/?/, "") || "inbox"

/** @param {boolean} quiet */
const render = (quiet) => {
  const route = routeOf()
  for (const link of document.querySelectorAll("[data-nav]")) {
    const active = route.startsWith(link.getAttribute("data-nav") ?? "-")
    link.classList.toggle("active", active)
    if (active) link.setAttribute("aria-current", "page")
    else link.removeAttribute("aria-current")
  }
  if (quiet && current !== undefined && current.route === route) return current.update(new Set(["*"]))
  if (!quiet) say("")
  current = undefined
  if (route.startsWith("run/")) return runView(decodeURIComponent(route.slice(4)), route)
  if (route === "runs") return runsView(route)
  if (route === "audit") return auditView(route)
  if (route === "durable") return durableView(route)
  return inboxView(route)
}

/** A live update: the view on screen patches itself. @param {Set<string>} changed */
const refresh = (changed) => {
  const route = routeOf()
  if (current === undefined || current.route !== route) return
  return current.update(changed)
}

/**
 * Moves what the operator typed or opened from a view's old nodes to its new ones (matched by
 * pending entry and field), and the focus with its selection.
 * @param {Element} from @param {Element} to
 */
const carry = (from, to) => {
  const active = document.activeElement
  for (const field of from.querySelectorAll("[data-keep]")) {
    const key = field.getAttribute("data-keep")
    const target = to.querySelector(`[data-keep="${CSS.escape(key ?? "")}"]`)
    if (target === null) continue
    if (field instanceof HTMLInputElement || field instanceof HTMLTextAreaElement) {
      const into = /** @type {HTMLInputElement | HTMLTextAreaElement} */ (target)
      into.value = field.value
      if (field === active) {
        queueMicrotask(() => {
          into.focus()
          try {
            into.setSelectionRange(field.selectionStart, field.selectionEnd)
          } catch {
            // not a text field
          }
        })
      }
    } else if (field instanceof HTMLElement && target instanceof HTMLElement) {
      target.hidden = field.hidden
      const expanded = field.getAttribute("aria-expanded")
      if (expanded !== null) target.setAttribute("aria-expanded", expanded)
      if (field instanceof HTMLDetailsElement && target instanceof HTMLDetailsElement) target.open = field.open
    }
  }
}

/** @param {string} name @param {string} label @param {string[]} [options] */
const filterInput = (name, label, options) => {
  const input = options
    ? h("select", { name }, ...options.map((o) => h("option", { value: o, selected: filters[name] === o }, o === "" ? "any" : o)))
    : h("input", { name, value: filters[name], size: 12, type: "search" })
  input.addEventListener("change", () => {
    filters[name] = /** @type {HTMLInputElement} */ (input).value
    render(false)
  })
  return h("label", {}, label, input)
}

/** @param {string} route */
const inboxView = async (route) => {
  const total = h("span", { class: "muted total", "data-testid": "total", "aria-live": "polite" })
  const list = h("div", { "data-testid": "inbox", class: "inbox" })
  const empty = h("p", { class: "muted", "data-testid": "empty", hidden: true }, "Nothing is waiting.")
  const more = h("div", { class: "more" })
  replace(
    main,
    h("h1", {}, "Waiting for a decision ", total),
    h(
      "div",
      { class: "filters" },
      filterInput("status", "status", ["suspended,in_doubt", "suspended", "in_doubt"]),
      filterInput("tenant", "tenant"),
      filterInput("agent", "agent"),
      filterInput("tool", "tool"),
      filterInput("thread", "thread")
    ),
    list,
    empty,
    more
  )
  /** The rows on screen by run, with the version of the run each shows. @type {Map<string, { key: string, el: HTMLElement }>} */
  const shown = new Map()
  /** How many runs the operator has loaded ("More" adds a page; a live update keeps them). */
  let wanted = 50
  /** @param {any} run */
  const keyOf = (run) => `${run.updatedAt}|${run.status}|${run.pending.length}|${run.decided.length}`
  const update = async () => {
    try {
      const result = await api("api/runs", { query: { ...filters, limit: String(Math.min(500, wanted)), total: "true" } })
      if (current?.update !== update) return
      const ids = new Set(result.runs.map((/** @type {any} */ run) => run.runId))
      for (const [runId, row] of shown) {
        if (ids.has(runId)) continue
        row.el.remove()
        shown.delete(runId)
      }
      result.runs.forEach((/** @type {any} */ run, /** @type {number} */ index) => {
        let row = shown.get(run.runId)
        const key = keyOf(run)
        if (row === undefined || row.key !== key) {
          const el = inboxRow(run)
          if (row !== undefined) {
            carry(row.el, el)
            row.el.replaceWith(el)
          }
          row = { key, el }
          shown.set(run.runId, row)
        }
        if (list.children[index] !== row.el) list.insertBefore(row.el, list.children[index] ?? null)
      })
      empty.hidden = result.runs.length > 0
      const count = typeof result.total === "number" ? result.total : result.runs.length
      const calls = result.runs.reduce((/** @type {number} */ n, /** @type {any} */ run) => n + run.pending.length, 0)
      total.textContent = `— ${count} run${count === 1 ? "" : "s"} waiting${result.cursor ? `, ${result.runs.length} shown (${calls} calls)` : ` (${calls} calls)`}`
      total.setAttribute("data-total", String(count))
      replace(
        more,
        ...(result.cursor && wanted < 500
          ? [h("button", { "data-testid": "more", onclick: () => ((wanted += 50), update()) }, "More")]
          : result.cursor
            ? [h("p", { class: "muted" }, "The first 500 are shown: narrow the filters to see others.")]
            : [])
      )
    } catch (error) {
      failure(error)
    }
  }
  current = { route, update }
  await update()
}

/** One run of the inbox: a compact head and its waiting calls. @param {any} run */
const inboxRow = (run) =>
  h(
    "article",
    { class: "inbox-run", "data-run": run.runId, "aria-label": `run ${run.runId}` },
    h(
      "div",
      { class: "row run-head" },
      h("a", { href: `#/run/${encodeURIComponent(run.runId)}`, class: "mono" }, run.runId),
      h("span", {}, `agent ${run.agent}`),
      tenantText(run.tenant),
      h("span", {}, "thread ", h("span", { class: "mono" }, shownText(run.threadId ?? "—"))),
      h("span", {}, `waiting since ${when(run.updatedAt)}`),
      h("span", {}, `cost so far ${money(run.usage.costUsd)}`),
      h("span", { class: "muted" }, `${run.usage.inputTokens} / ${run.usage.outputTokens} tokens`),
      run.status === "in_doubt" ? h("span", { class: "tag bad" }, "in doubt") : null
    ),
    ...run.pending.map((/** @type {any} */ entry) => pendingCard(run, entry))
  )

/** Text as it is shown: control characters as escapes (a thread id is the caller's text). @param {string} text */
const shownText = (text) =>
  Array.from(text, (c) => {
    const code = c.charCodeAt(0)
    return code < 0x20 || (code >= 0x7f && code < 0xa0) ? `\\u${code.toString(16).padStart(4, "0")}` : c
  }).join("")

/** The longest text a value shows before "Show all". */
const cutAt = 2000

/**
 * A large value, cut, with a button that shows it whole.
 * @param {string} text @param {Record<string, unknown>} [attrs]
 */
const longText = (text, attrs = {}) => {
  const pre = h("pre", attrs, text.length > cutAt ? `${text.slice(0, cutAt)}…` : text)
  if (text.length <= cutAt) return pre
  const toggle = h(
    "button",
    {
      class: "link-button",
      "aria-expanded": "false",
      onclick: () => {
        const open = toggle.getAttribute("aria-expanded") === "true"
        pre.textContent = open ? `${text.slice(0, cutAt)}…` : text
        toggle.setAttribute("aria-expanded", String(!open))
        toggle.textContent = open ? `Show all (${kb(text)})` : "Show less"
      }
    },
    `Show all (${kb(text)})`
  )
  return h("div", {}, pre, toggle)
}
/** @param {string} text */
const kb = (text) => `${(new TextEncoder().encode(text).length / 1024).toFixed(1)} KB`

/** @type {Record<string, string>} */
const reasonText = {
  requires_approval: "the tool requires approval",
  autonomy_gated: "the run's autonomy tier is gated: side-effecting calls wait",
  autonomy_manual: "the run's autonomy tier is manual: every call waits",
  trifecta: "the call would complete the lethal trifecta (private data + untrusted content + egress)",
  in_doubt: "in doubt: the call was claimed and never completed; whether it happened is unknown",
  gate: "a policy gate holds it",
  input_requested: "the tool asks for input"
}

/** A decision as people read it: verdict, who, when, and why. @param {any} decided */
const decisionText = (decided) =>
  `${decided.decision.verdict} by ${decided.by} at ${when(decided.at)}${decided.decision.reason ? ` — reason: ${decided.decision.reason}` : ""}${decided.decision.outcome ? ` — outcome: ${decided.decision.outcome}` : ""}`

/** @param {any} run @param {any} entry */
const pendingCard = (run, entry) => {
  const decided = run.decided.find((/** @type {any} */ d) => d.pendingId === entry.id)
  const args = JSON.stringify(entry.call.arguments, null, 2)
  const keep = (/** @type {string} */ field) => `${entry.id}/${field}`
  const ids = { reason: `reason-${uid()}`, edit: `edit-${uid()}`, outcome: `outcome-${uid()}` }
  const reason = /** @type {HTMLInputElement} */ (
    h("input", { id: ids.reason, placeholder: "optional for approve, shown to the model on reject", "data-testid": "reason", "data-keep": keep("reason") })
  )
  const editor = /** @type {HTMLTextAreaElement} */ (h("textarea", { id: ids.edit, "data-testid": "edit-arguments", "data-keep": keep("editor"), spellcheck: "false" }))
  editor.value = args
  const editBox = h(
    "div",
    { hidden: true, "data-keep": keep("edit-box"), class: "edit-box" },
    h("label", { for: ids.edit }, "Edited arguments (JSON); they are checked against the tool's schema"),
    editor
  )
  /** @param {Record<string, unknown>} body @param {string} path */
  const send = async (body, path = "api/decide") => {
    for (const b of card.querySelectorAll("button")) /** @type {HTMLButtonElement} */ (b).disabled = true
    try {
      const recorded = await api(path, { method: "POST", body: { runId: run.runId, pendingId: entry.id, digest: entry.digest, ...body } })
      say(`${recorded.decision.verdict} recorded by ${recorded.by}`, true)
      render(true)
    } catch (error) {
      failure(error)
      for (const b of card.querySelectorAll("button")) /** @type {HTMLButtonElement} */ (b).disabled = false
    }
  }
  const reasonOf = () => (reason.value === "" ? {} : { reason: reason.value })
  const approvalActions = [
    h("button", { class: "primary", "data-testid": "approve", onclick: () => send({ verdict: "approve", ...reasonOf() }) }, "Approve"),
    h("button", { class: "danger", "data-testid": "reject", onclick: () => send({ verdict: "reject", ...reasonOf() }) }, "Reject"),
    h(
      "button",
      {
        "data-testid": "edit",
        "data-keep": keep("edit-button"),
        "aria-expanded": "false",
        onclick: (/** @type {Event} */ event) => {
          if (editBox.hidden) {
            editBox.hidden = false
            const button = /** @type {HTMLElement} */ (event.currentTarget)
            button.setAttribute("aria-expanded", "true")
            return
          }
          /** @type {unknown} */
          let edited
          try {
            edited = JSON.parse(editor.value)
          } catch (error) {
            return say(`the edited arguments are not JSON: ${String(error)}`)
          }
          send({ verdict: "edit", arguments: edited, ...reasonOf() })
        }
      },
      "Edit and approve"
    ),
    h("label", { for: ids.reason, class: "inline-label" }, "Reason"),
    reason
  ]
  const outcome = /** @type {HTMLInputElement} */ (h("input", { id: ids.outcome, placeholder: "what happened, or why not", "data-testid": "outcome", "data-keep": keep("outcome") }))
  const doubtActions = [
    h("button", { class: "primary", "data-testid": "mark-done", onclick: () => send({ verdict: "markDone", outcome: outcome.value }, "api/resolve") }, "It happened"),
    h("button", { class: "danger", "data-testid": "mark-failed", onclick: () => send({ verdict: "markFailed", reason: outcome.value }, "api/resolve") }, "It did not happen"),
    h("button", { "data-testid": "retry", onclick: () => send({ verdict: "retry" }, "api/resolve") }, "Run it again"),
    h("label", { for: ids.outcome, class: "inline-label" }, "Outcome or reason"),
    outcome
  ]
  const tool = entry.tool
  const card = h(
    "section",
    { class: decided ? "card decided" : "card waiting", "data-testid": "pending", "data-pending": entry.id, "aria-label": `${entry.kind} ${entry.call.name}` },
    h(
      "div",
      { class: "row" },
      h("strong", { "data-testid": "tool" }, entry.call.name),
      h("span", { class: "tag" }, entry.kind),
      decided ? h("span", { class: "tag ok", "data-testid": "state" }, "Decided") : h("span", { class: "tag warn", "data-testid": "state" }, "Waiting"),
      tool.sideEffecting ? h("span", { class: "tag warn" }, "side-effecting") : h("span", { class: "tag" }, "read-only"),
      tool.idempotent ? h("span", { class: "tag" }, "idempotent") : null,
      tool.requiresApproval ? h("span", { class: "tag warn" }, "requiresApproval") : null,
      ...tool.caps.map((/** @type {string} */ cap) => h("span", { class: "tag" }, cap)),
      h("span", { class: "muted mono" }, entry.id)
    ),
    h(
      "ul",
      { "data-testid": "reasons", class: "reasons", "aria-label": "why it waits" },
      ...entry.reasons.map((/** @type {string} */ r) => h("li", {}, reasonText[r] ?? r)),
      run.autonomy ? h("li", { class: "muted" }, `autonomy tier: ${run.autonomy}`) : null,
      run.legs
        ? h(
            "li",
            { class: "muted" },
            `trifecta legs touched: ${["privateData", "untrustedContent", "egress"].filter((l) => run.legs[l]).join(", ") || "none"}`
          )
        : null
    ),
    longText(args, { "data-testid": "arguments", "aria-label": "arguments" }),
    h("div", { class: "muted" }, "digest ", h("code", { class: "digest", "data-testid": "digest" }, entry.digest)),
    decided
      ? h("p", { "data-testid": "decided" }, decisionText(decided))
      : session?.operator.role === "approver"
        ? h("div", {}, editBox, h("div", { class: "actions" }, ...(entry.kind === "InDoubt" ? doubtActions : approvalActions)))
        : h("p", { class: "muted" }, "You are a viewer: an approver decides.")
  )
  return card
}

let uids = 0
const uid = () => String(++uids)

/** A store's own query (`sql.execute`, `sql.transaction`): hidden unless asked for. @param {any} span */
const isStoreQuery = (span) => typeof span.name === "string" && span.name.startsWith("sql.")

/** @param {number} ms */
const duration = (ms) => (ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`)

/**
 * A run's trace as a waterfall: every span on one time axis (offset from the run's first span,
 * duration as a bar), nested under its parent; the run's turns (each its own trace) in the order
 * they ran; the wait for each decision and the decision (who, when, why) as rows of their own;
 * tokens and cost on model spans; a span's attributes and events on demand. The stores' queries
 * are hidden unless asked for (a span under a hidden one hangs from its nearest shown ancestor).
 * @param {any[]} all @param {any} run @param {any[]} audit
 */
const waterfall = (all, run, audit) => {
  const queries = all.filter(isStoreQuery).length
  const body = h("div", {})
  const draw = (/** @type {boolean} */ showQueries) =>
    replace(body, waterfallRows(showQueries ? all : all.filter((span) => !isStoreQuery(span)), all, run, audit))
  draw(false)
  const toggle = h(
    "label",
    { class: "muted" },
    h("input", { type: "checkbox", "data-testid": "show-queries", onchange: (/** @type {Event} */ e) => draw(/** @type {HTMLInputElement} */ (e.target).checked) }),
    ` show the stores' queries (${queries})`
  )
  return h("div", { class: "waterfall", "data-testid": "trace" }, queries > 0 ? toggle : null, body)
}

/** @param {any[]} spans @param {any[]} all @param {any} run @param {any[]} audit */
const waterfallRows = (spans, all, run, audit) => {
  /** The waits for a decision: from the call's entry (or the end of the turn it stopped) to its decision. */
  /** @type {{ name: string, start: number, end: number | undefined, decided: any, pendingId: string }[]} */
  const waits = []
  /** A span's key: its id within its trace (ids repeat across traces). @param {any} span */
  const keyOf = (span) => `${span.traceId}/${span.spanId}`
  const known = new Set(all.map(keyOf))
  const roots = spans.filter((span) => !span.parentSpanId || !known.has(`${span.traceId}/${span.parentSpanId}`))
  for (const entry of run.pending) {
    const decided = run.decided.find((/** @type {any} */ d) => d.pendingId === entry.id)
    waits.push({ name: entry.call.name, start: entry.createdAt, end: decided?.at, decided, pendingId: entry.id })
  }
  for (const decided of run.decided) {
    if (waits.some((w) => w.pendingId === decided.pendingId)) continue
    // the entry is gone (applied): the wait began when the turn that asked ended
    const before = roots.filter((span) => span.startMs + span.durationMs <= decided.at)
    const start = before.length === 0 ? decided.at : Math.max(...before.map((span) => span.startMs + span.durationMs))
    const record = audit.find((r) => r.action === decided.decision.verdict && r.by === decided.by && r.at === decided.at)
    waits.push({ name: record?.tool || decided.pendingId, start, end: decided.at, decided, pendingId: decided.pendingId })
  }
  if (spans.length === 0 && waits.length === 0) return h("p", { class: "muted" }, "No spans recorded for this run.")
  const now = Date.now()
  const starts = [...spans.map((span) => span.startMs), ...waits.map((w) => w.start)]
  const ends = [...spans.map((span) => span.startMs + span.durationMs), ...waits.map((w) => w.end ?? now)]
  const t0 = Math.min(...starts)
  const total = Math.max(1, Math.max(...ends) - t0)
  const byKey = new Map(all.map((span) => [keyOf(span), span]))
  const shown = new Set(spans.map(keyOf))
  /** The nearest shown ancestor's key, "" for none. @param {any} span */
  const parentOf = (span) => {
    const seen = new Set()
    let key = span.parentSpanId ? `${span.traceId}/${span.parentSpanId}` : ""
    while (key && !shown.has(key) && byKey.has(key) && !seen.has(key)) {
      seen.add(key)
      const parent = byKey.get(key)
      key = parent.parentSpanId ? `${parent.traceId}/${parent.parentSpanId}` : ""
    }
    return key && shown.has(key) ? key : ""
  }
  /** @type {Map<string, any[]>} */
  const children = new Map()
  for (const span of spans) {
    const parent = parentOf(span)
    children.set(parent, [...(children.get(parent) ?? []), span])
  }
  for (const list of children.values()) list.sort((a, b) => a.startMs - b.startMs || keyOf(a).localeCompare(keyOf(b)))
  /** @type {{ kind: "span", span: any, depth: number } | { kind: "wait", wait: any, depth: number }} */
  /** @type {any[]} */
  const rows = []
  /** @param {string} parent @param {number} depth */
  const walk = (parent, depth) => {
    for (const span of children.get(parent) ?? []) {
      rows.push({ kind: "span", span, depth, start: span.startMs })
      walk(keyOf(span), depth + 1)
    }
  }
  // the run's turns (its root spans) and its waits, in the order they happened
  /** @type {any[]} */
  const top = [
    ...(children.get("") ?? []).map((span) => ({ kind: "span", span, start: span.startMs })),
    ...waits.map((wait) => ({ kind: "wait", wait, start: wait.start }))
  ].sort((a, b) => a.start - b.start || (a.kind === "wait" ? 1 : -1))
  for (const item of top) {
    if (item.kind === "wait") rows.push({ ...item, depth: 0 })
    else {
      rows.push({ ...item, depth: 0 })
      walk(keyOf(item.span), 1)
    }
  }
  const bar = (/** @type {number} */ start, /** @type {number} */ length, /** @type {string} */ cls) => {
    const el = h("span", { class: `wf-bar ${cls}`, "aria-hidden": "true" })
    el.style.left = `${((start - t0) / total) * 100}%`
    el.style.width = `${Math.max(0.3, (length / total) * 100)}%`
    return h("span", { class: "wf-track" }, el)
  }
  const indent = (/** @type {HTMLElement} */ el, /** @type {number} */ depth) => {
    el.style.paddingLeft = `${depth * 14}px`
    return el
  }
  return h(
    "ol",
    { class: "wf", "aria-label": `trace: ${rows.length} rows over ${duration(total)}` },
    h("li", { class: "wf-row wf-axis", "aria-hidden": "true" }, h("span", { class: "wf-name" }, "span"), h("span", { class: "wf-when" }, "offset · duration"), h("span", { class: "wf-track wf-ticks" }, h("span", {}, "0"), h("span", {}, duration(total / 2)), h("span", {}, duration(total)))),
    ...rows.map((row) => {
      if (row.kind === "wait") {
        const wait = row.wait
        const length = (wait.end ?? now) - wait.start
        const decision = wait.decided
          ? h("span", { class: "wf-decision", "data-testid": "decision" }, decisionText(wait.decided))
          : h("span", { class: "wf-decision muted" }, "still waiting")
        return h(
          "li",
          { class: "wf-row wf-wait", "data-testid": "approval-wait", "data-kind": "wait" },
          indent(h("span", { class: "wf-name" }, `waiting for a decision: ${wait.name}`), row.depth),
          h("span", { class: "wf-when mono" }, `+${duration(wait.start - t0)} · ${duration(length)}`),
          bar(wait.start, length, wait.decided ? "wait decided" : "wait"),
          h("div", { class: "wf-detail" }, decision)
        )
      }
      const span = row.span
      const a = span.attributes ?? {}
      const model = a["gen_ai.operation.name"] === "chat" || span.name.startsWith("chat ")
      const usage = a["gen_ai.usage.input_tokens"] !== undefined || a["gen_ai.usage.output_tokens"] !== undefined
        ? h(
            "span",
            { class: "wf-usage muted", "data-testid": "span-usage" },
            `${a["gen_ai.usage.input_tokens"] ?? 0} in / ${a["gen_ai.usage.output_tokens"] ?? 0} out tokens${typeof a["gen_ai.usage.cost_usd"] === "number" ? `, ${money(a["gen_ai.usage.cost_usd"])}` : ""}`
          )
        : null
      const error = span.status === "ok" ? null : h("span", { class: "span-error" }, ` (${span.status}${span.error ? `: ${span.error}` : ""})`)
      return h(
        "li",
        { class: "wf-row", "data-testid": "span", "data-kind": "span" },
        indent(h("span", { class: span.status === "ok" ? "wf-name" : "wf-name span-error" }, h("span", { "data-testid": "span-name" }, span.name), error), row.depth),
        h("span", { class: "wf-when mono" }, `+${duration(span.startMs - t0)} · ${duration(span.durationMs)}`),
        bar(span.startMs, span.durationMs, span.status === "ok" ? (model ? "model" : "") : "error"),
        h(
          "details",
          { class: "wf-detail", "data-keep": `span/${span.traceId}/${span.spanId}` },
          h("summary", {}, usage ?? "attributes", usage ? " · attributes" : ""),
          h("pre", {}, JSON.stringify(span.attributes, null, 2)),
          span.events.length > 0 ? h("pre", {}, span.events.map((/** @type {any} */ e) => `${e.name} ${JSON.stringify(e.attributes)}`).join("\n")) : null
        )
      )
    })
  )
}

/** @param {any[]} records */
const auditTable = (records) =>
  h(
    "table",
    { "data-testid": "audit" },
    h("thead", {}, h("tr", {}, h("th", {}, "when"), h("th", {}, "run"), h("th", {}, "scope"), h("th", {}, "tool"), h("th", {}, "decision"), h("th", {}, "by"), h("th", {}, "reason"))),
    h(
      "tbody",
      {},
      ...records.map((r) =>
        h(
          "tr",
          { "data-testid": "audit-row" },
          h("td", {}, when(r.at)),
          h("td", { class: "mono" }, r.runId),
          h("td", {}, tenantLabel(r.tenant)),
          h("td", {}, r.tool || "—"),
          h("td", {}, r.action ? `${r.decision}: ${r.action}` : r.decision),
          h("td", {}, r.by ?? "—"),
          h("td", {}, r.reason ?? "")
        )
      ),
      records.length === 0 ? h("tr", {}, h("td", { colspan: 7, class: "muted" }, "No audit records.")) : null
    )
  )

/**
 * A run's page. A failed load clears the page (no buttons stay live for another run); a live
 * update of this run tree rebuilds it with what was typed and opened carried over, at the same
 * scroll position.
 * @param {string} runId @param {string} route
 */
const runView = async (runId, route) => {
  /** @param {boolean} quiet */
  const load = async (quiet) => {
    try {
      const [run, trace, audit] = await Promise.all([
        api("api/run", { query: { runId } }),
        api("api/trace", { query: { runId } }),
        api("api/audit", { query: { runId, limit: "200" } })
      ])
      if (current?.update !== update) return
      const page = h("div", { "data-testid": "run-page", "data-run": run.runId }, ...runPage(run, trace, audit).filter((n) => n !== null))
      const scroll = window.scrollY
      const old = main.firstElementChild
      if (quiet && old !== null) carry(old, page)
      replace(main, page)
      if (quiet) window.scrollTo(0, scroll)
      rootOf = run.rootRunId
    } catch (error) {
      if (current?.update !== update) return
      if (!quiet || !(error instanceof ApiError) || error.status !== 503) {
        replace(main, h("h1", {}, "Run ", h("span", { class: "mono" }, runId)), h("p", { class: "muted", "data-testid": "run-error" }, "This run cannot be shown."))
      }
      failure(error)
    }
  }
  let rootOf = runId
  /** @param {Set<string>} changed */
  const update = (changed) => (changed.has("*") || changed.has(runId) || changed.has(rootOf) ? load(true) : Promise.resolve())
  current = { route, update }
  // the previous page goes at once: nothing on screen acts on another run while this one loads
  replace(main, h("p", { class: "muted" }, "Loading…"))
  await load(false)
}

/** @param {any} run @param {any} trace @param {any} audit @returns {(HTMLElement | null)[]} */
const runPage = (run, trace, audit) => {
    const live = run.status === "suspended" || run.status === "in_doubt" || run.status === "running"
    return [
      h("h1", {}, `${run.agent} · `, h("span", { class: "mono" }, run.runId)),
      h(
        "div",
        { class: "row card" },
        h("span", { "data-testid": "status" }, h("span", { class: run.status === "done" ? "tag ok" : run.status === "failed" || run.status === "cancelled" ? "tag bad" : "tag warn" }, run.status)),
        tenantText(run.tenant),
        h("span", {}, `thread ${run.threadId ?? "—"}`),
        h("span", {}, `cost ${money(run.usage.costUsd)}`),
        h("span", {}, `tokens ${run.usage.inputTokens} in / ${run.usage.outputTokens} out`),
        run.requestedBy ? h("span", {}, `requested by ${run.requestedBy}`) : null,
        h("span", { class: "muted" }, `started ${when(run.createdAt)}, updated ${when(run.updatedAt)}`),
        live && session?.operator.role === "approver"
          ? h(
              "button",
              {
                class: "danger",
                "data-testid": "cancel",
                onclick: () =>
                  api("api/cancel", { method: "POST", body: { runId: run.runId } }).then(() => {
                    say("cancel requested", true)
                    render(true)
                  }, failure)
              },
              "Cancel run"
            )
          : null
      ),
      h("h2", {}, run.pending.length > 0 ? "Pending calls" : "Nothing pending"),
      ...(run.children.length > 0
        ? [
            h("h2", {}, "Sub-runs"),
            h(
              "table",
              { "data-testid": "children" },
              h("tbody", {}, ...run.children.map((/** @type {any} */ child) =>
                h(
                  "tr",
                  { class: "link", onclick: () => (location.hash = `#/run/${encodeURIComponent(child.runId)}`) },
                  h("td", { class: "mono" }, h("a", { href: `#/run/${encodeURIComponent(child.runId)}` }, child.runId)),
                  h("td", {}, child.agent),
                  h("td", {}, child.status),
                  h("td", { class: "num" }, money(child.usage.costUsd)),
                  h("td", { class: "num" }, `${child.usage.inputTokens} / ${child.usage.outputTokens} tokens`)
                )
              ))
            )
          ]
        : []),
      ...run.pending.map((/** @type {any} */ entry) => pendingCard(run, entry)),
      h("h2", {}, "Trace"),
      waterfall(trace.spans, run, audit.records),
      h("h2", {}, "Audit"),
      auditTable(audit.records),
      h("h2", {}, "Transcript"),
      ...run.transcript.map((/** @type {any} */ m) => h("div", { class: "card" }, h("strong", {}, m.role), h("pre", {}, m.content ?? ""), m.toolCalls?.length ? h("pre", {}, JSON.stringify(m.toolCalls, null, 2)) : null)),
      run.result !== undefined ? h("div", {}, h("h2", {}, "Result"), h("pre", { "data-testid": "result" }, JSON.stringify(run.result, null, 2))) : null
    ]
}

/** @param {string} route */
const runsView = async (route) => {
  const load = async () => {
  try {
    const result = await api("api/runs", { query: { tenant: filters.tenant, agent: filters.agent, limit: "500", order: "desc" } })
    /** @type {Map<string, any[]>} */
    const threads = new Map()
    for (const run of result.runs) {
      const key = `${tenantLabel(run.tenant)} · ${run.threadId ?? "(no thread)"}`
      threads.set(key, [...(threads.get(key) ?? []), run])
    }
    if (current?.update !== update) return
    const scroll = window.scrollY
    const focused = document.activeElement instanceof HTMLAnchorElement ? document.activeElement.getAttribute("href") : null
    replace(
      main,
      h("h1", {}, "Recent runs by thread"),
      h("p", { class: "muted" }, "The 500 most recently updated runs, grouped by tenant and thread."),
      h("div", { class: "filters" }, filterInput("tenant", "tenant"), filterInput("agent", "agent")),
      ...[...threads].map(([key, runs]) => {
        const cost = runs.reduce((n, r) => n + r.usage.costUsd, 0)
        const tokens = runs.reduce((n, r) => n + r.usage.inputTokens + r.usage.outputTokens, 0)
        return h(
          "div",
          { class: "thread", "data-testid": "thread" },
          h("h3", {}, `${key} — ${runs.length} run(s), ${money(cost)}, ${tokens} tokens`),
          h(
            "table",
            {},
            h("caption", { class: "visually-hidden" }, `runs of ${key}`),
            h("thead", {}, h("tr", {}, h("th", {}, "run"), h("th", {}, "agent"), h("th", {}, "status"), h("th", { class: "num" }, "cost"), h("th", { class: "num" }, "tokens in"), h("th", { class: "num" }, "tokens out"), h("th", {}, "updated"))),
            h(
              "tbody",
              {},
              ...runs.map((run) =>
                h(
                  "tr",
                  { class: "link", onclick: () => (location.hash = `#/run/${encodeURIComponent(run.runId)}`) },
                  h("td", { class: "mono" }, h("a", { href: `#/run/${encodeURIComponent(run.runId)}` }, run.runId)),
                  h("td", {}, run.agent),
                  h("td", {}, run.status),
                  h("td", { class: "num" }, money(run.usage.costUsd)),
                  h("td", { class: "num" }, run.usage.inputTokens),
                  h("td", { class: "num" }, run.usage.outputTokens),
                  h("td", {}, when(run.updatedAt))
                )
              )
            )
          )
        )
      }),
      result.runs.length === 0 ? h("p", { class: "muted" }, "No runs.") : null
    )
    window.scrollTo(0, scroll)
    if (focused !== null) /** @type {HTMLElement | null} */ (main.querySelector(`a[href="${CSS.escape(focused)}"]`))?.focus()
  } catch (error) {
    failure(error)
  }
  }
  const update = () => load()
  current = { route, update }
  await load()
}

/** @param {string} route */
const auditView = async (route) => {
  const load = async () => {
    try {
      const result = await api("api/audit", { query: { limit: "200" } })
      if (current?.update !== update) return
      replace(main, h("h1", {}, "Audit trail"), auditTable(result.records))
    } catch (error) {
      failure(error)
    }
  }
  const update = () => load()
  current = { route, update }
  await load()
}

/**
 * Durable runs (through the app's operator port): each run's store record beside its workflow
 * execution, what it waits on (in-doubt calls among them) and how many have a decision, and the
 * runs whose store and engine disagree for good.
 * @param {string} route
 */
const durableView = async (route) => {
  const load = async () => {
    try {
      const result = await api("api/durable", { query: { limit: "200" } })
      if (current?.update !== update) return
      if (!result.available) {
        replace(main, h("h1", {}, "Durable runs"), h("p", { class: "muted", "data-testid": "durable-none" }, "This app serves no durable runs."))
        return
      }
      /** @param {any[]} runs @param {string} testid @param {string} caption */
      const table = (runs, testid, caption) =>
        h(
          "table",
          { "data-testid": testid },
          h("caption", { class: "visually-hidden" }, caption),
          h("thead", {}, h("tr", {}, h("th", {}, "run"), h("th", {}, "agent"), h("th", {}, "scope"), h("th", {}, "store"), h("th", {}, "engine"), h("th", {}, "waiting on"), h("th", {}, "decided"), h("th", {}, "problem"))),
          h(
            "tbody",
            {},
            ...runs.map((/** @type {any} */ run) => {
              const doubt = run.store.pending.filter((/** @type {any} */ p) => p.kind === "InDoubt").length
              return h(
                "tr",
                { "data-testid": "durable-row", "data-run": run.runId },
                h("td", { class: "mono" }, h("a", { href: `#/run/${encodeURIComponent(run.runId)}` }, run.runId)),
                h("td", {}, run.agent),
                h("td", {}, tenantLabel(run.tenant)),
                h("td", {}, run.store.status, run.store.lease ? h("span", { class: "muted" }, ` (lease ${run.store.lease.owner})`) : null),
                h("td", {}, run.engine, run.version === undefined ? null : h("span", { class: "muted" }, ` v${run.version}`)),
                h(
                  "td",
                  {},
                  run.store.pending.length === 0 ? "—" : run.store.pending.map((/** @type {any} */ p) => `${p.kind} ${p.id}`).join(", "),
                  doubt > 0 ? h("span", { class: "tag bad" }, ` ${doubt} in doubt`) : null
                ),
                h("td", { class: "num" }, run.store.pending.length === 0 ? String(run.store.decided) : `${run.store.decided} of ${run.store.pending.length}`),
                h("td", { class: run.problem ? "span-error" : "muted" }, run.problem ?? "—")
              )
            }),
            runs.length === 0 ? h("tr", {}, h("td", { colspan: 8, class: "muted" }, "None.")) : null
          )
        )
      replace(
        main,
        h("h1", {}, "Durable runs"),
        h("p", { class: "muted" }, "Each run as the checkpoint store holds it, beside its execution in the workflow engine. A run in doubt is resolved on its page."),
        table(result.runs, "durable", "durable runs"),
        h("h2", {}, `Store and engine disagree (${result.problems.length})`),
        table(result.problems, "durable-problems", "durable runs whose store and engine disagree")
      )
    } catch (error) {
      failure(error)
    }
  }
  const update = () => load()
  current = { route, update }
  await load()
}

window.addEventListener("hashchange", () => render(false))
start()
