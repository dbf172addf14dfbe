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
  events.addEventListener("change", () => {
    if (pending !== undefined) return
    pending = setTimeout(() => {
      pending = undefined
      render(true)
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

/** @param {boolean} quiet */
const render = (quiet) => {
  const route = location.hash.replace(/^#\/?/, "") || "inbox"
  for (const link of document.querySelectorAll("[data-nav]")) link.classList.toggle("active", route.startsWith(link.getAttribute("data-nav") ?? "-"))
  if (!quiet) say("")
  if (route.startsWith("run/")) return runView(decodeURIComponent(route.slice(4)))
  if (route === "runs") return runsView()
  if (route === "audit") return auditView()
  return inboxView()
}

/** @param {string} name @param {string} label @param {string[]} [options] */
const filterInput = (name, label, options) => {
  const input = options
    ? h("select", { name }, ...options.map((o) => h("option", { value: o, selected: filters[name] === o }, o === "" ? "any" : o)))
    : h("input", { name, value: filters[name], size: 12 })
  input.addEventListener("change", () => {
    filters[name] = /** @type {HTMLInputElement} */ (input).value
    render(false)
  })
  return h("label", {}, label, input)
}

const inboxView = async () => {
  const list = h("div", { "data-testid": "inbox" })
  const more = h("div", { class: "more" })
  replace(
    main,
    h("h1", {}, "Waiting for a decision"),
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
    more
  )
  /** @param {string | undefined} cursor */
  const page = async (cursor) => {
    try {
      const result = await api("api/runs", { query: { ...filters, cursor, limit: "50" } })
      if (cursor === undefined && result.runs.length === 0) list.append(h("p", { class: "muted", "data-testid": "empty" }, "Nothing is waiting."))
      for (const run of result.runs) {
        list.append(
          h(
            "article",
            { class: "inbox-run", "data-run": run.runId },
            h(
              "div",
              { class: "row run-head" },
              h("a", { href: `#/run/${encodeURIComponent(run.runId)}`, class: "mono" }, run.runId),
              h("span", {}, `agent ${run.agent}`),
              tenantText(run.tenant),
              h("span", {}, `thread ${run.threadId ?? "—"}`),
              h("span", {}, `waiting since ${when(run.updatedAt)}`),
              h("span", {}, `cost so far ${money(run.usage.costUsd)}`),
              h("span", { class: "muted" }, `${run.usage.inputTokens} / ${run.usage.outputTokens} tokens`),
              run.status === "in_doubt" ? h("span", { class: "tag bad" }, "in doubt") : null
            ),
            ...run.pending.map((/** @type {any} */ entry) => pendingCard(run, entry))
          )
        )
      }
      replace(more, ...(result.cursor ? [h("button", { onclick: () => page(result.cursor) }, "More")] : []))
    } catch (error) {
      failure(error)
    }
  }
  await page(undefined)
}

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

/** @param {any} run @param {any} entry */
const pendingCard = (run, entry) => {
  const decided = run.decided.find((/** @type {any} */ d) => d.pendingId === entry.id)
  const args = JSON.stringify(entry.call.arguments, null, 2)
  const reason = /** @type {HTMLInputElement} */ (h("input", { placeholder: "reason (optional for approve, shown to the model on reject)", "data-testid": "reason" }))
  const editor = /** @type {HTMLTextAreaElement} */ (h("textarea", { "data-testid": "edit-arguments", spellcheck: "false" }))
  editor.value = args
  const editBox = h("div", { hidden: true }, h("p", { class: "muted" }, "Edit the arguments (JSON); they are checked against the tool's schema."), editor)
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
        onclick: () => {
          if (editBox.hidden) return void (editBox.hidden = false)
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
    reason
  ]
  const outcome = /** @type {HTMLInputElement} */ (h("input", { placeholder: "outcome (what happened) or reason", "data-testid": "outcome" }))
  const doubtActions = [
    h("button", { class: "primary", "data-testid": "mark-done", onclick: () => send({ verdict: "markDone", outcome: outcome.value }, "api/resolve") }, "It happened"),
    h("button", { class: "danger", "data-testid": "mark-failed", onclick: () => send({ verdict: "markFailed", reason: outcome.value }, "api/resolve") }, "It did not happen"),
    h("button", { "data-testid": "retry", onclick: () => send({ verdict: "retry" }, "api/resolve") }, "Run it again"),
    outcome
  ]
  const tool = entry.tool
  const card = h(
    "section",
    { class: decided ? "card" : "card waiting", "data-testid": "pending", "data-pending": entry.id },
    h("div", { class: "row" }, h("strong", { "data-testid": "tool" }, entry.call.name), h("span", { class: "tag" }, entry.kind), h("span", { class: "muted mono" }, entry.id)),
    h(
      "div",
      { class: "row" },
      tool.sideEffecting ? h("span", { class: "tag warn" }, "side-effecting") : h("span", { class: "tag" }, "read-only"),
      tool.idempotent ? h("span", { class: "tag" }, "idempotent") : null,
      tool.requiresApproval ? h("span", { class: "tag warn" }, "requiresApproval") : null,
      ...tool.caps.map((/** @type {string} */ cap) => h("span", { class: "tag" }, cap))
    ),
    h("h2", {}, "Why it waits"),
    h(
      "ul",
      { "data-testid": "reasons" },
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
    h("h2", {}, "Arguments"),
    h("pre", { "data-testid": "arguments" }, args),
    h("div", { class: "muted" }, "digest ", h("code", { class: "digest", "data-testid": "digest" }, entry.digest)),
    decided
      ? h("p", { "data-testid": "decided" }, `${decided.decision.verdict} by ${decided.by} at ${when(decided.at)}`)
      : session?.operator.role === "approver"
        ? h("div", {}, editBox, h("div", { class: "actions" }, ...(entry.kind === "InDoubt" ? doubtActions : approvalActions)))
        : h("p", { class: "muted" }, "You are a viewer: an approver decides.")
  )
  return card
}

/** A store's own query (`sql.execute`, `sql.transaction`): hidden from the tree unless asked for. @param {any} span */
const isStoreQuery = (span) => typeof span.name === "string" && span.name.startsWith("sql.")

/**
 * A run's span tree. The stores' queries are hidden by default (a checkbox shows them); a span
 * under a hidden one hangs from its nearest shown ancestor.
 * @param {any[]} all
 */
const spanTree = (all) => {
  const queries = all.filter(isStoreQuery).length
  const tree = h("div", {})
  const draw = (/** @type {boolean} */ showQueries) => replace(tree, spanList(showQueries ? all : all.filter((span) => !isStoreQuery(span)), all))
  draw(false)
  const toggle = h("label", { class: "muted" }, h("input", { type: "checkbox", "data-testid": "show-queries", onchange: (/** @type {Event} */ e) => draw(/** @type {HTMLInputElement} */ (e.target).checked) }), ` show the stores' queries (${queries})`)
  return h("div", { class: "tree", "data-testid": "trace" }, queries > 0 ? toggle : null, tree)
}

/** @param {any[]} spans the spans shown @param {any[]} all every span of the run (for the ancestors of hidden ones) */
const spanList = (spans, all) => {
  const byId = new Map(all.map((s) => [s.spanId, s]))
  const shown = new Set(spans.map((s) => s.spanId))
  /** The nearest shown ancestor's id, "" for none. @param {any} span */
  const parentOf = (span) => {
    const seen = new Set()
    let id = span.parentSpanId
    while (id && !shown.has(id) && byId.has(id) && !seen.has(id)) {
      seen.add(id)
      id = byId.get(id).parentSpanId
    }
    return id && shown.has(id) ? id : ""
  }
  /** @type {Map<string, any[]>} */
  const children = new Map()
  for (const span of spans) {
    const parent = parentOf(span)
    children.set(parent, [...(children.get(parent) ?? []), span])
  }
  /** @param {string} parent @returns {HTMLElement} */
  const list = (parent) =>
    h(
      "ul",
      {},
      ...(children.get(parent) ?? []).map((span) =>
        h(
          "li",
          { "data-testid": "span" },
          h(
            "details",
            {},
            h(
              "summary",
              { class: span.status === "ok" ? "" : "span-error" },
              `${span.name} — ${span.durationMs.toFixed(1)} ms${span.status === "ok" ? "" : ` (${span.status}${span.error ? `: ${span.error}` : ""})`}`
            ),
            h("pre", {}, JSON.stringify(span.attributes, null, 2)),
            span.events.length > 0 ? h("pre", {}, span.events.map((/** @type {any} */ e) => `${e.name} ${JSON.stringify(e.attributes)}`).join("\n")) : null
          ),
          children.has(span.spanId) ? list(span.spanId) : null
        )
      )
    )
  return spans.length === 0 ? h("p", { class: "muted" }, "No spans recorded for this run.") : list("")
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

/** @param {string} runId */
const runView = async (runId) => {
  try {
    const [run, trace, audit] = await Promise.all([
      api("api/run", { query: { runId } }),
      api("api/trace", { query: { runId } }),
      api("api/audit", { query: { runId, limit: "200" } })
    ])
    const live = run.status === "suspended" || run.status === "in_doubt" || run.status === "running"
    replace(
      main,
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
                  h("td", { class: "mono" }, child.runId),
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
      spanTree(trace.spans),
      h("h2", {}, "Audit"),
      auditTable(audit.records),
      h("h2", {}, "Transcript"),
      ...run.transcript.map((/** @type {any} */ m) => h("div", { class: "card" }, h("strong", {}, m.role), h("pre", {}, m.content ?? ""), m.toolCalls?.length ? h("pre", {}, JSON.stringify(m.toolCalls, null, 2)) : null)),
      run.result !== undefined ? h("div", {}, h("h2", {}, "Result"), h("pre", { "data-testid": "result" }, JSON.stringify(run.result, null, 2))) : null
    )
  } catch (error) {
    failure(error)
  }
}

const runsView = async () => {
  try {
    const result = await api("api/runs", { query: { tenant: filters.tenant, agent: filters.agent, limit: "500", order: "desc" } })
    /** @type {Map<string, any[]>} */
    const threads = new Map()
    for (const run of result.runs) {
      const key = `${tenantLabel(run.tenant)} · ${run.threadId ?? "(no thread)"}`
      threads.set(key, [...(threads.get(key) ?? []), run])
    }
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
            h("thead", {}, h("tr", {}, h("th", {}, "run"), h("th", {}, "agent"), h("th", {}, "status"), h("th", { class: "num" }, "cost"), h("th", { class: "num" }, "tokens in"), h("th", { class: "num" }, "tokens out"), h("th", {}, "updated"))),
            h(
              "tbody",
              {},
              ...runs.map((run) =>
                h(
                  "tr",
                  { class: "link", onclick: () => (location.hash = `#/run/${encodeURIComponent(run.runId)}`) },
                  h("td", { class: "mono" }, run.runId),
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
  } catch (error) {
    failure(error)
  }
}

const auditView = async () => {
  try {
    const result = await api("api/audit", { query: { limit: "200" } })
    replace(main, h("h1", {}, "Audit trail"), auditTable(result.records))
  } catch (error) {
    failure(error)
  }
}

window.addEventListener("hashchange", () => render(false))
start()
