/**
 * The operator CLI (`agentkit-console`), on `@effect/cli`: the console's HTTP API from a
 * terminal, with the same authentication (a bearer token), tenant scoping and decisions as the
 * browser. `--url` (or `AGENTKIT_CONSOLE_URL`) is where the console is mounted, e.g.
 * `http://127.0.0.1:4100/console`; `--token` (or `AGENTKIT_CONSOLE_TOKEN`) the operator token.
 *
 * The connection options come before the command (or from the environment):
 *
 * ```text
 * agentkit-console --url http://127.0.0.1:4100/console --token "$TOKEN" list
 * agentkit-console list [--status suspended,in_doubt] [--tenant t] [--agent a] [--tool x] [--thread th] [--limit n] [--cursor c]
 * agentkit-console show <runId>
 * agentkit-console approve <runId> <pendingId> --digest <digest> [--reason r]
 * agentkit-console reject <runId> <pendingId> --digest <digest> --reason r
 * agentkit-console edit <runId> <pendingId> --digest <digest> --args '{"order_id":"A-772"}' [--reason r]
 * agentkit-console resolve <runId> <pendingId> --digest <digest> --verdict markDone|markFailed|retry [--outcome o] [--reason r]
 * agentkit-console cancel <runId>
 * agentkit-console tail <runId>        (prints each change until the run finishes)
 * ```
 *
 * A decision names the digest `show` printed: the console refuses a stale one. Every command
 * prints `--json` output on request.
 *
 * @since 0.1.0
 */
import type { Operator } from "@agentkit/agents"
import { Scope } from "@agentkit/core"
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { ConsoleApi } from "./ConsoleApi.js"
import { CliError } from "./Errors.js"

type RunDetail = Operator.RunDetail
type RunStatus = Operator.RunStatus
type RunSummary = Operator.RunSummary

const url = Options.text("url").pipe(
  Options.withDescription("where the console is mounted, e.g. http://127.0.0.1:4100/console"),
  Options.withFallbackConfig(Config.string("AGENTKIT_CONSOLE_URL")),
  Options.optional
)
const token = Options.redacted("token").pipe(
  Options.withDescription("the operator token"),
  Options.withFallbackConfig(Config.redacted("AGENTKIT_CONSOLE_TOKEN")),
  Options.optional
)
const json = Options.boolean("json").pipe(Options.withDescription("print JSON"))
const runId = Args.text({ name: "runId" })
const pendingId = Args.text({ name: "pendingId" })
const digest = Options.text("digest").pipe(Options.withDescription("the pending call's digest, as `show` prints it"))
const reason = Options.text("reason").pipe(Options.optional)
const optionalText = (name: string) => Options.text(name).pipe(Options.optional)

const runStatuses: ReadonlyArray<string> = ["running", "suspended", "in_doubt", "done", "failed", "cancelled"]

const root = Command.make("agentkit-console", { url, token })

/**
 * Text from the console as a terminal shows it: control characters (C0, DEL, C1: the escape
 * sequences that move a cursor or retitle a window) as `\uXXXX` escapes.
 */
const clean = (text: string): string =>
  Array.from(text, (c) => {
    const code = c.charCodeAt(0)
    return code < 0x20 || (code >= 0x7f && code < 0xa0) ? `\\u${code.toString(16).padStart(4, "0")}` : c
  }).join("")

/** JSON for a terminal: what `JSON.stringify` leaves raw of the C1 controls and DEL, escaped. */
const cleanJson = (value: unknown): string =>
  JSON.stringify(value, null, 2).replace(
    /[\u007f-\u009f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`
  )

const firstLine = (text: string, max = 200): string => {
  const line = text.split("\n").find((l) => l.trim() !== "")?.trim() ?? ""
  return line.length > max ? `${line.slice(0, max)}…` : line
}

/** What to do about a console error, by its tag. */
const hints: Record<string, string> = {
  Unauthorized: "check the operator token (--token or AGENTKIT_CONSOLE_TOKEN)",
  Unauthenticated: "pass the operator token (--token or AGENTKIT_CONSOLE_TOKEN)",
  NotFound: "`agentkit-console list --status <statuses>` shows the runs you may see",
  StaleDigest: "`agentkit-console show <runId>` prints the current digest",
  BadRequest: "check the command's options (`agentkit-console <command> --help`)",
  InvalidArguments: "make --args match the tool's parameters (`agentkit-console show <runId>` prints the call)",
  Unavailable: "the console's stores failed; try again, and if it persists look at the console's log"
}

/** One line naming the problem and what to do (the console's own message first). */
const describeError = (error: unknown, base: string): string => {
  if (typeof error === "object" && error !== null && "_tag" in error) {
    const tagged = error as {
      readonly _tag: string
      readonly message?: unknown
      readonly by?: unknown
      readonly reason?: unknown
      readonly response?: { readonly status?: unknown }
      readonly cause?: unknown
    }
    const message = typeof tagged.message === "string" && tagged.message !== "" ? tagged.message : String(error)
    switch (tagged._tag) {
      case "RequestError":
        return `cannot reach the console at ${base}: ${
          firstLine(describeCause(tagged.cause) ?? message)
        }; check --url (or AGENTKIT_CONSOLE_URL) and that the console is running`
      case "ResponseError":
        return `the console at ${base} answered HTTP ${
          String(tagged.response?.status ?? "?")
        } with something this CLI cannot read; check that --url is where the console is mounted (e.g. http://127.0.0.1:4100/console)`
      case "HttpApiDecodeError":
        return `the console refused the request's options: ${
          firstLine(message)
        }; check them with \`agentkit-console <command> --help\``
      case "ParseError":
        return `an option has a value the console does not accept: ${
          firstLine(message)
        }; check it with \`agentkit-console <command> --help\``
    }
    const by = typeof tagged.by === "string" && !message.includes(`by ${tagged.by}`) ? ` (decided by ${tagged.by})` : ""
    const hint = hints[tagged._tag]
    return `${tagged._tag}: ${message}${by}${hint === undefined ? "" : `; ${hint}`}`
  }
  return error instanceof Error ? error.message : String(error)
}

const describeCause = (cause: unknown): string | undefined => {
  if (cause instanceof Error) {
    const inner = (cause as { readonly cause?: unknown }).cause
    return inner instanceof Error ? `${cause.message} (${inner.message})` : cause.message
  }
  return undefined
}

const makeClient = (baseUrl: string, httpClient: HttpClient.HttpClient) =>
  HttpApiClient.makeWith(ConsoleApi, { baseUrl, httpClient })
type ConsoleClient = Effect.Effect.Success<ReturnType<typeof makeClient>>

const withClient = <A, E>(
  f: (client: ConsoleClient, http: HttpClient.HttpClient, base: string) => Effect.Effect<A, E>
) =>
  Effect.gen(function*() {
    const config = yield* root
    if (Option.isNone(config.url)) {
      return yield* new CliError({
        message: "no console URL: pass --url (e.g. --url http://127.0.0.1:4100/console) or set AGENTKIT_CONSOLE_URL"
      })
    }
    if (Option.isNone(config.token)) {
      return yield* new CliError({
        message: "no operator token: pass --token <token> or set AGENTKIT_CONSOLE_TOKEN"
      })
    }
    const base = config.url.value.replace(/\/+$/, "")
    if (!/^https?:\/\/[^/]/.test(base)) {
      return yield* new CliError({
        message: `--url must be an http(s) URL where the console is mounted (e.g. http://127.0.0.1:4100/console); got ${
          clean(JSON.stringify(base))
        }`
      })
    }
    const bearer = Redacted.value(config.token.value)
    const http = (yield* HttpClient.HttpClient).pipe(
      HttpClient.mapRequest(HttpClientRequest.bearerToken(bearer))
    )
    const client = yield* makeClient(base, http)
    return yield* f(client, http, base).pipe(
      Effect.mapError((error) =>
        error instanceof CliError ? error : new CliError({ message: clean(describeError(error, base)) })
      )
    )
  })

const money = (usd: number) => `$${usd.toFixed(usd < 0.01 ? 6 : 4)}`

const summaryLine = (run: RunSummary) =>
  clean([
    run.runId,
    run.status,
    `scope=${Scope.label(run.tenant)}`,
    `agent=${run.agent}`,
    `thread=${run.threadId ?? "-"}`,
    `cost=${money(run.usage.costUsd)}`,
    `tokens=${run.usage.inputTokens}/${run.usage.outputTokens}`,
    `pending=${run.pending.map((p) => p.call.name).join(",") || "-"}`
  ].join("  "))

const detailLines = (run: RunDetail): Array<string> => [
  summaryLine(run),
  ...run.pending.flatMap((p) => [
    `  pending ${p.id}  ${p.kind}  ${p.call.name}  reasons=${p.reasons.join(",")}`,
    `    flags: sideEffecting=${p.tool.sideEffecting} idempotent=${p.tool.idempotent} requiresApproval=${p.tool.requiresApproval} caps=${
      p.tool.caps.join(",") || "-"
    }`,
    `    digest: ${p.digest}`,
    `    arguments: ${JSON.stringify(p.call.arguments)}`
  ]),
  ...run.decided.map((d) =>
    `  decided ${d.pendingId}: ${d.decision.verdict} by ${d.by} at ${new Date(d.at).toISOString()}${
      d.decision.reason === undefined ? "" : ` reason=${JSON.stringify(d.decision.reason)}`
    }`
  )
]

const print = (asJson: boolean, value: unknown, lines: () => ReadonlyArray<string>) =>
  asJson
    ? Console.log(cleanJson(value))
    : Effect.forEach(lines(), (line) => Console.log(clean(line)), { discard: true })

const list = Command.make(
  "list",
  {
    status: optionalText("status"),
    tenant: optionalText("tenant"),
    agent: optionalText("agent"),
    tool: optionalText("tool"),
    thread: optionalText("thread"),
    cursor: optionalText("cursor"),
    limit: Options.integer("limit").pipe(Options.optional),
    json
  },
  (o) =>
    withClient((client) =>
      Effect.gen(function*() {
        const status = Option.getOrElse(o.status, () => "suspended,in_doubt")
        const statuses = status.split(",")
        const unknown = statuses.filter((s) => !runStatuses.includes(s))
        if (unknown.length > 0) {
          return yield* new CliError({
            message: clean(
              `--status takes statuses separated by commas, among ${runStatuses.join(", ")}; got ${
                JSON.stringify(unknown.join(","))
              }`
            )
          })
        }
        const page = yield* client.read.runs({
          urlParams: {
            status: statuses as Array<RunStatus>,
            tenant: Option.getOrUndefined(o.tenant),
            agent: Option.getOrUndefined(o.agent),
            tool: Option.getOrUndefined(o.tool),
            thread: Option.getOrUndefined(o.thread),
            cursor: Option.getOrUndefined(o.cursor),
            limit: Option.getOrUndefined(o.limit)
          }
        })
        yield* print(o.json, page, () => [
          ...page.runs.map(summaryLine),
          page.runs.length === 0 ? "no runs" : `${page.runs.length} run(s)`,
          ...(page.cursor === undefined ? [] : [`next page: --cursor ${page.cursor}`])
        ])
      })
    )
).pipe(Command.withDescription("list runs (by default the ones waiting for a decision)"))

const show = Command.make(
  "show",
  { runId, json },
  (o) =>
    withClient((client) =>
      Effect.flatMap(
        client.read.run({ urlParams: { runId: o.runId } }),
        (run) => print(o.json, run, () => detailLines(run))
      )
    )
).pipe(Command.withDescription("show a run: its pending calls with their digests, its decisions"))

const decided =
  (asJson: boolean) =>
  (recorded: { readonly pendingId: string; readonly by: string; readonly decision: { readonly verdict: string } }) =>
    print(asJson, recorded, () => [`${recorded.decision.verdict} recorded for ${recorded.pendingId} by ${recorded.by}`])

const approve = Command.make(
  "approve",
  { runId, pendingId, digest, reason, json },
  (o) =>
    withClient((client) =>
      Effect.flatMap(
        client.decide.decide({
          payload: {
            runId: o.runId,
            pendingId: o.pendingId,
            verdict: "approve",
            digest: o.digest,
            reason: Option.getOrUndefined(o.reason)
          }
        }),
        decided(o.json)
      )
    )
).pipe(Command.withDescription("approve a pending call"))

const reject = Command.make(
  "reject",
  { runId, pendingId, digest, reason: Options.text("reason"), json },
  (o) =>
    withClient((client) =>
      Effect.flatMap(
        client.decide.decide({
          payload: { runId: o.runId, pendingId: o.pendingId, verdict: "reject", digest: o.digest, reason: o.reason }
        }),
        decided(o.json)
      )
    )
).pipe(Command.withDescription("reject a pending call with a reason (the model sees it)"))

const edit = Command.make(
  "edit",
  { runId, pendingId, digest, args: Options.text("args"), reason, json },
  (o) =>
    withClient((client) =>
      Effect.gen(function*() {
        const parsed = yield* Effect.try({
          try: () => JSON.parse(o.args) as unknown,
          catch: (error) =>
            new CliError({ message: `--args is not JSON: ${error instanceof Error ? error.message : String(error)}` })
        })
        if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
          return yield* new CliError({ message: "--args must be a JSON object of arguments" })
        }
        const recorded = yield* client.decide.decide({
          payload: {
            runId: o.runId,
            pendingId: o.pendingId,
            verdict: "edit",
            digest: o.digest,
            arguments: parsed as Record<string, unknown>,
            reason: Option.getOrUndefined(o.reason)
          }
        })
        yield* decided(o.json)(recorded)
      })
    )
).pipe(Command.withDescription("run a pending call with other arguments (checked against the tool's schema)"))

const resolve = Command.make(
  "resolve",
  {
    runId,
    pendingId,
    digest,
    verdict: Options.choice("verdict", ["markDone", "markFailed", "retry"]),
    outcome: optionalText("outcome"),
    reason,
    json
  },
  (o) =>
    withClient((client) =>
      Effect.flatMap(
        client.decide.resolve({
          payload: {
            runId: o.runId,
            pendingId: o.pendingId,
            verdict: o.verdict,
            digest: o.digest,
            outcome: Option.getOrUndefined(o.outcome),
            reason: Option.getOrUndefined(o.reason)
          }
        }),
        decided(o.json)
      )
    )
).pipe(
  Command.withDescription(
    "resolve a call in doubt: it happened (markDone), it did not (markFailed), or run it again (retry)"
  )
)

const cancel = Command.make(
  "cancel",
  { runId, json },
  (o) =>
    withClient((client) =>
      Effect.flatMap(
        client.decide.cancel({ payload: { runId: o.runId } }),
        (done) => print(o.json, done, () => [`cancel requested for ${done.cancelled}`])
      )
    )
).pipe(Command.withDescription("ask a run's owner to cancel it"))

const terminal = new Set<string>(["done", "failed", "cancelled"])

const tail = Command.make("tail", {
  runId,
  follow: Options.boolean("follow").pipe(Options.withDescription("keep going after the run finishes"))
}, (o) =>
  withClient((client, http, base) =>
    Effect.gen(function*() {
      const first = yield* client.read.run({ urlParams: { runId: o.runId } })
      yield* Console.log(
        clean(
          `${new Date(first.updatedAt).toISOString()}  ${first.runId}  ${first.status}  pending=${first.pending.length}`
        )
      )
      if (terminal.has(first.status) && !o.follow) return
      const response = yield* http.get(`${base}/api/live`, { urlParams: { runId: o.runId } })
      if (response.status !== 200) {
        return yield* new CliError({
          message: `the console's live stream answered HTTP ${response.status}; check the token and that the run exists`
        })
      }
      yield* response.stream.pipe(
        Stream.decodeText(),
        Stream.splitLines,
        Stream.filter((line) => line.startsWith("data: ")),
        Stream.map((line) =>
          JSON.parse(line.slice(6)) as { runId: string; status: string; updatedAt: number; pending: number }
        ),
        Stream.tap((change) =>
          Console.log(
            clean(
              `${
                new Date(change.updatedAt).toISOString()
              }  ${change.runId}  ${change.status}  pending=${change.pending}`
            )
          )
        ),
        Stream.takeUntil((change) => !o.follow && change.runId === o.runId && terminal.has(change.status)),
        Stream.runDrain
      )
    })
  )).pipe(Command.withDescription("print a run's changes as they happen, until it finishes"))

/**
 * The CLI's root command with its subcommands.
 *
 * @example
 * ```ts
 * import { Cli } from "@agentkit/console"
 * import { Command } from "@effect/cli"
 *
 * const main = Command.run(Cli.command, { name: "agentkit-console", version: "0.1.0" })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const command = root.pipe(Command.withSubcommands([list, show, approve, reject, edit, resolve, cancel, tail]))

/**
 * Runs the CLI on `argv` (as `process.argv`: the first two entries are skipped). Needs the
 * platform's CLI environment (`NodeContext.layer`) and an `HttpClient` (`FetchHttpClient.layer`).
 *
 * @example
 * ```ts
 * import { Cli } from "@agentkit/console"
 * import { FetchHttpClient } from "@effect/platform"
 * import { NodeContext, NodeRuntime } from "@effect/platform-node"
 * import { Effect, Layer } from "effect"
 *
 * Cli.run(process.argv).pipe(Effect.provide(Layer.merge(NodeContext.layer, FetchHttpClient.layer)), NodeRuntime.runMain)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const run = Command.run(command, { name: "agentkit-console", version: "0.1.0" })
