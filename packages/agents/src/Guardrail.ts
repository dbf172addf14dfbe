/**
 * Guardrails: checks of what goes into a run and what comes out of it. A guardrail is a value (a
 * name, a description and an Effect function) of one of three kinds:
 *
 * - `input`: sees the run's messages before the first model call of a run (or, made with
 *   `beside: true`, while that call is in flight: a trip cancels the call);
 * - `output`: sees the answer (its text and, with structured output, the parsed value) before the
 *   run returns it;
 * - `toolResult`: sees a tool's result text before it reaches the model.
 *
 * Each check answers `pass`, `rewrite(value)` (the rewritten value is what flows on; an
 * `AuditStore` in the context records it with decision `rewritten`, `by: "guardrail:<name>"`,
 * `argHash` and `resultHash` the digests of the value before and after, and `tool`/`callId` the
 * call checked, or `input`/`output`) or `trip(reason)` (audited `denied`). A trip ends the run with `GuardrailTripped`, except a tool-result
 * guardrail made with `onTrip: "replace"` (its default), whose trip replaces the call's result with
 * the error text the model sees. Fail closed: a check that fails, dies, throws, answers something
 * that is not a verdict or outlives its `timeout` trips.
 *
 * Guardrails are given to `Agent.make({ guardrails })` or `Graph.make({ guardrails })` and hold on
 * every path of the run: the loop's tool calls, graph tool nodes, coordinators' children,
 * `runAgents`, sub-agents, MCP tools and durable runs. A run's children inherit its guardrails; a
 * child's own guardrails are added to them (they can never remove one); a trip that ends a
 * sub-agent's run (`asTool`) is its delegating call's error, which the parent's model sees as the
 * call's result (the text names the guardrail and its reason). Each check has a span
 * (`guardrail {name}`); a check that calls a model through the `Invoker` is counted in the run's
 * usage and budget.
 *
 * @since 0.3.0
 */
import type { Invoker, Message, RunContext, ToolCall } from "@agentkit/core"
import { ErrorTypeId } from "@agentkit/core"
import * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import { AgentDefinitionError } from "./Errors.js"
import * as internal from "./internal/guardrails.js"
import * as secretsInternal from "./internal/secrets.js"

/**
 * The unique identifier of a guardrail value.
 *
 * @example
 * ```ts
 * import { Guardrail } from "@agentkit/agents"
 *
 * const id: Guardrail.TypeId = Guardrail.TypeId
 * ```
 *
 * @since 0.3.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("@agentkit/agents/Guardrail")

/**
 * The type of `TypeId`.
 *
 * @example
 * ```ts
 * import { Guardrail } from "@agentkit/agents"
 *
 * const hasId = (value: object): boolean => Guardrail.TypeId in value
 * ```
 *
 * @since 0.3.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * Where a guardrail checks: the run's input, its output, or a tool's result.
 *
 * @example
 * ```ts
 * import type { Guardrail } from "@agentkit/agents"
 *
 * const kind: Guardrail.Kind = "toolResult"
 * ```
 *
 * @since 0.3.0
 * @category models
 */
export type Kind = "input" | "output" | "toolResult"

/**
 * An answer as an output guardrail sees and rewrites it: its text and, for an agent with
 * structured output, the parsed value (`undefined` otherwise).
 *
 * @example
 * ```ts
 * import type { Guardrail } from "@agentkit/agents"
 *
 * const answer: Guardrail.Answer = { text: "Order A-771 shipped.", parsed: undefined }
 * ```
 *
 * @since 0.3.0
 * @category models
 */
export interface Answer {
  readonly text: string
  readonly parsed: unknown
}

/**
 * What a guardrail of each kind is given: the value it checks (`value`) and what surrounds it.
 * An input guardrail sees the run's messages (`value` and `messages` are the same), an output
 * guardrail the run's transcript (`messages`) beside the answer, a tool-result guardrail the
 * call that produced the result.
 *
 * @example
 * ```ts
 * import type { Guardrail } from "@agentkit/agents"
 *
 * const toolName = (subject: Guardrail.Subject<"toolResult">) => subject.call.name
 * const question = (subject: Guardrail.Subject<"input">) => subject.value.at(-1)?.content
 * ```
 *
 * @since 0.3.0
 * @category models
 */
export type Subject<K extends Kind> = K extends "toolResult" ? {
    readonly value: string
    readonly call: ToolCall.ToolCall
  }
  : { readonly value: Value<K>; readonly messages: ReadonlyArray<Message.Message> }

/**
 * The value a guardrail of each kind checks and may rewrite: the run's messages, the answer, or
 * the tool's result text.
 *
 * @example
 * ```ts
 * import type { Guardrail } from "@agentkit/agents"
 *
 * const redacted: Guardrail.Value<"toolResult"> = "card [REDACTED:card_number]"
 * ```
 *
 * @since 0.3.0
 * @category models
 */
export type Value<K extends Kind> = K extends "input" ? ReadonlyArray<Message.Message>
  : K extends "output" ? Answer
  : string

/**
 * A guardrail's answer: the value passes, is rewritten (the new value flows on), or trips (with a
 * reason that is shown in the error; it must not repeat what it caught).
 *
 * @example
 * ```ts
 * import { Guardrail } from "@agentkit/agents"
 *
 * const verdicts: ReadonlyArray<Guardrail.Verdict<string>> = [Guardrail.pass, Guardrail.rewrite("[redacted]"), Guardrail.trip("an API key")]
 * ```
 *
 * @since 0.3.0
 * @category models
 */
export type Verdict<A> =
  | { readonly _tag: "Pass" }
  | { readonly _tag: "Rewrite"; readonly value: A }
  | { readonly _tag: "Trip"; readonly reason: string }

/**
 * The verdict that lets the value through unchanged.
 *
 * @example
 * ```ts
 * import { Guardrail } from "@agentkit/agents"
 * import { Effect } from "effect"
 *
 * const allowAll = Guardrail.input({ name: "allow_all", description: "Lets every input through.", check: () => Effect.succeed(Guardrail.pass) })
 * ```
 *
 * @since 0.3.0
 * @category constructors
 */
export const pass: Verdict<never> = Object.freeze({ _tag: "Pass" })

/**
 * The verdict that replaces the value with `value`.
 *
 * @example
 * ```ts
 * import { Guardrail } from "@agentkit/agents"
 * import { Effect } from "effect"
 *
 * const shout = Guardrail.toolResult({
 *   name: "upper",
 *   description: "Upper-cases every tool result.",
 *   check: ({ value }) => Effect.succeed(Guardrail.rewrite(value.toUpperCase()))
 * })
 * ```
 *
 * @since 0.3.0
 * @category constructors
 */
export const rewrite = <A>(value: A): Verdict<A> => ({ _tag: "Rewrite", value })

/**
 * The verdict that trips the guardrail, with the reason shown in `GuardrailTripped`.
 *
 * @example
 * ```ts
 * import { Guardrail } from "@agentkit/agents"
 * import { Effect } from "effect"
 *
 * const noRefunds = Guardrail.input({
 *   name: "no_refunds",
 *   description: "Refuses runs that ask for a refund.",
 *   check: ({ value }) =>
 *     Effect.succeed(value.some((message) => message.content.includes("refund")) ? Guardrail.trip("refunds are handled by people") : Guardrail.pass)
 * })
 * ```
 *
 * @since 0.3.0
 * @category constructors
 */
export const trip = (reason: string): Verdict<never> => ({ _tag: "Trip", reason })

/**
 * A guardrail of kind `K`. Made with `input`, `output` or `toolResult`; `check` may read
 * `RunContext` and call the model through the `Invoker` (its usage counts in the run's).
 *
 * @example
 * ```ts
 * import type { Guardrail } from "@agentkit/agents"
 *
 * const describe = (guardrail: Guardrail.Guardrail<Guardrail.Kind>) => `${guardrail.kind} ${guardrail.name}: ${guardrail.description}`
 * ```
 *
 * @since 0.3.0
 * @category models
 */
export interface Guardrail<K extends Kind> {
  readonly [TypeId]: TypeId
  readonly kind: K
  readonly name: string
  readonly description: string
  readonly check: (subject: Subject<K>) => Effect.Effect<Verdict<Value<K>>, unknown, RunContext | Invoker>
  /** How long a check may take before it trips (default 30 seconds). */
  readonly timeout: Duration.Duration
  /** Input guardrails: whether the check runs beside the first model call (a trip cancels it). */
  readonly beside: boolean
  /** Tool-result guardrails: whether a trip ends the run or replaces the call's result (the default). */
  readonly onTrip: "end" | "replace"
}

/**
 * A guardrail of any kind: what `Agent.make({ guardrails })` takes.
 *
 * @example
 * ```ts
 * import type { Guardrail } from "@agentkit/agents"
 *
 * const names = (guardrails: ReadonlyArray<Guardrail.Any>) => guardrails.map((guardrail) => guardrail.name)
 * ```
 *
 * @since 0.3.0
 * @category models
 */
export type Any = Guardrail<"input"> | Guardrail<"output"> | Guardrail<"toolResult">

/**
 * Whether a value is a guardrail.
 *
 * @example
 * ```ts
 * import { Guardrail } from "@agentkit/agents"
 *
 * Guardrail.isGuardrail({ name: "x" }) // false
 * ```
 *
 * @since 0.3.0
 * @category guards
 */
export const isGuardrail = (value: unknown): value is Any => Predicate.hasProperty(value, TypeId)

/**
 * The options every guardrail takes: `name` (`^[a-zA-Z0-9_-]{1,64}$`), a non-empty
 * `description`, the `check`, and a `timeout` (default 30 seconds).
 *
 * @example
 * ```ts
 * import type { Guardrail } from "@agentkit/agents"
 * import { Effect } from "effect"
 *
 * const options: Guardrail.Options<"output"> = {
 *   name: "non_empty",
 *   description: "Trips on an empty answer.",
 *   check: ({ value }) => Effect.succeed(value.text.trim() === "" ? { _tag: "Trip", reason: "the answer is empty" } : { _tag: "Pass" })
 * }
 * ```
 *
 * @since 0.3.0
 * @category models
 */
export interface Options<K extends Kind> {
  readonly name: string
  readonly description: string
  readonly check: (subject: Subject<K>) => Effect.Effect<Verdict<Value<K>>, unknown, RunContext | Invoker>
  readonly timeout?: Duration.DurationInput | undefined
}

const NAME = /^[a-zA-Z0-9_-]{1,64}$/
const defaultTimeout = Duration.seconds(30)

const made = <K extends Kind>(
  kind: K,
  options: Options<K>,
  beside: boolean,
  onTrip: "end" | "replace"
): Guardrail<K> => {
  const fail = (message: string): never => {
    throw new AgentDefinitionError({ message })
  }
  if (typeof options !== "object" || options === null) fail(`Guardrail.${kind}: options must be an object`)
  if (typeof options.name !== "string" || !NAME.test(options.name)) {
    fail(`Guardrail.${kind}: name ${JSON.stringify(options.name)} must match ^[a-zA-Z0-9_-]{1,64}$`)
  }
  if (typeof options.description !== "string" || options.description.trim() === "") {
    fail(`guardrail '${options.name}' needs a non-empty description`)
  }
  if (typeof options.check !== "function") fail(`guardrail '${options.name}': check must be a function`)
  let timeout = defaultTimeout
  if (options.timeout !== undefined) {
    const decoded = Duration.decodeUnknown(options.timeout)
    if (decoded._tag === "None" || !Duration.isFinite(decoded.value) || Duration.toMillis(decoded.value) <= 0) {
      fail(`guardrail '${options.name}': timeout must be a positive, finite duration; got ${String(options.timeout)}`)
    }
    timeout = (decoded as { readonly value: Duration.Duration }).value
  }
  return Object.freeze({
    [TypeId]: TypeId,
    kind,
    name: options.name,
    description: options.description.trim(),
    check: options.check,
    timeout,
    beside,
    onTrip
  }) as Guardrail<K>
}

/**
 * Makes an input guardrail: it sees the run's messages before the first model call. With
 * `beside: true` it runs while that call is in flight (a trip interrupts the call, so it is
 * charged no more than its reservation); such a guardrail checks but cannot rewrite (a rewrite
 * from it trips). A bad name, description, check or timeout throws `AgentDefinitionError`.
 *
 * @example
 * ```ts
 * import { Guardrail } from "@agentkit/agents"
 * import { Effect } from "effect"
 *
 * const onTopic = Guardrail.input({
 *   name: "orders_only",
 *   description: "Trips when the user's last message is not about an order.",
 *   beside: true,
 *   check: ({ value }) => Effect.succeed(/order/i.test(value.at(-1)?.content ?? "") ? Guardrail.pass : Guardrail.trip("not about an order"))
 * })
 * ```
 *
 * @since 0.3.0
 * @category constructors
 */
export const input = (
  options: Options<"input"> & { readonly beside?: boolean | undefined }
): Guardrail<"input"> => made("input", options, options.beside === true, "end")

/**
 * Makes an output guardrail: it sees the answer (text and parsed value) before the run returns
 * it; a rewrite changes `result.output` (and `result.parsed`) and the answer in the transcript.
 *
 * @example
 * ```ts
 * import { Guardrail } from "@agentkit/agents"
 * import { Effect } from "effect"
 *
 * const signed = Guardrail.output({
 *   name: "signed",
 *   description: "Adds the desk's signature to every answer.",
 *   check: ({ value }) => Effect.succeed(Guardrail.rewrite({ ...value, text: `${value.text}\n— the support desk` }))
 * })
 * ```
 *
 * @since 0.3.0
 * @category constructors
 */
export const output = (options: Options<"output">): Guardrail<"output"> => made("output", options, false, "end")

/**
 * Makes a tool-result guardrail: it sees a tool's result text before the model does (on every
 * path a tool runs). A trip replaces the call's result with the error text the model sees
 * (`onTrip: "replace"`, the default) or ends the run (`onTrip: "end"`).
 *
 * @example
 * ```ts
 * import { Guardrail } from "@agentkit/agents"
 * import { Effect } from "effect"
 *
 * const noInjection = Guardrail.toolResult({
 *   name: "no_injection",
 *   description: "Trips on tool results that address the model with new instructions.",
 *   onTrip: "replace",
 *   check: ({ value }) => Effect.succeed(/ignore (all )?previous instructions/i.test(value) ? Guardrail.trip("a prompt injection") : Guardrail.pass)
 * })
 * ```
 *
 * @since 0.3.0
 * @category constructors
 */
export const toolResult = (
  options: Options<"toolResult"> & { readonly onTrip?: "end" | "replace" | undefined }
): Guardrail<"toolResult"> => {
  const onTrip = options.onTrip ?? "replace"
  if (onTrip !== "end" && onTrip !== "replace") {
    throw new AgentDefinitionError({
      message: `guardrail '${String(options.name)}': onTrip must be "end" or "replace"; got ${String(onTrip)}`
    })
  }
  return made("toolResult", options, false, onTrip)
}

/**
 * A guardrail tripped: `guardrail` names it, `kind` says where it checked, `reason` why (a check
 * that failed, died or timed out trips with a reason saying so). `endsRun` is false only for a
 * tool-result trip that replaced the call's result (the model sees this error's text).
 *
 * @example
 * ```ts
 * import { GuardrailTripped } from "@agentkit/agents"
 *
 * const tripped = new GuardrailTripped({ guardrail: "secrets", kind: "output", reason: "an API key", endsRun: true })
 * tripped.message // "guardrail 'secrets' tripped on the output: an API key"
 * ```
 *
 * @since 0.3.0
 * @category errors
 */
export class GuardrailTripped extends Schema.TaggedError<GuardrailTripped>("@agentkit/agents/GuardrailTripped")(
  "GuardrailTripped",
  {
    guardrail: Schema.String,
    kind: Schema.Literal("input", "output", "toolResult"),
    reason: Schema.String,
    endsRun: Schema.Boolean
  }
) {
  /** @since 0.3.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  /** @since 0.3.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    const where = this.kind === "input" ? "the input" : this.kind === "output" ? "the output" : "a tool result"
    return `guardrail '${this.guardrail}' tripped on ${where}: ${this.reason}`
  }
}

/**
 * Whether a value is a `GuardrailTripped` error.
 *
 * @example
 * ```ts
 * import { Guardrail, GuardrailTripped } from "@agentkit/agents"
 *
 * Guardrail.isTripped(new GuardrailTripped({ guardrail: "g", kind: "input", reason: "r", endsRun: true })) // true
 * ```
 *
 * @since 0.3.0
 * @category guards
 */
export const isTripped = (value: unknown): value is GuardrailTripped => value instanceof GuardrailTripped

/**
 * What the secret detector finds: API keys (OpenAI, Anthropic, AWS, GitHub, Slack, Stripe,
 * Google), bearer tokens and JWTs, private key blocks, e-mail addresses and card numbers (checked
 * with Luhn).
 *
 * @example
 * ```ts
 * import type { Guardrail } from "@agentkit/agents"
 *
 * const only: ReadonlyArray<Guardrail.SecretKind> = ["api_key", "card_number"]
 * ```
 *
 * @since 0.3.0
 * @category models
 */
export type SecretKind = secretsInternal.SecretKind

/**
 * The secret and PII detector, for outputs or tool results: `action: "redact"` (the default)
 * rewrites each finding to `[REDACTED:<kind>]`; `action: "trip"` trips, naming the kinds found
 * (never the values). `kinds` limits what it looks for (default: all).
 *
 * @example
 * ```ts
 * import { Guardrail } from "@agentkit/agents"
 *
 * const redactResults = Guardrail.secrets({ kind: "toolResult" })
 * const refuseLeaks = Guardrail.secrets({ kind: "output", action: "trip", kinds: ["api_key", "private_key"] })
 * ```
 *
 * @since 0.3.0
 * @category constructors
 */
export const secrets: {
  (options: SecretsOptions<"output">): Guardrail<"output">
  (options: SecretsOptions<"toolResult">): Guardrail<"toolResult">
} = ((options: SecretsOptions<"output" | "toolResult">) => {
  const action = options.action ?? "redact"
  if (action !== "redact" && action !== "trip") {
    throw new AgentDefinitionError({
      message: `Guardrail.secrets: action must be "redact" or "trip"; got ${String(action)}`
    })
  }
  const kinds = secretsInternal.kindsOf(options.kinds)
  const name = options.name ?? (options.kind === "output" ? "secrets_output" : "secrets_tool_result")
  const description = `Finds ${kinds.join(", ")} and ${action === "redact" ? "redacts them" : "trips"}.`
  if (options.kind === "output") {
    return output({
      name,
      description,
      check: ({ value }) => internal.succeed(secretsInternal.checkAnswer(value, kinds, action))
    })
  }
  if (options.kind === "toolResult") {
    return toolResult({
      name,
      description,
      onTrip: options.onTrip,
      check: ({ value }) => internal.succeed(secretsInternal.checkText(value, kinds, action))
    })
  }
  throw new AgentDefinitionError({
    message: `Guardrail.secrets: kind must be "output" or "toolResult"; got ${String(options.kind)}`
  })
}) as never

/**
 * The options of `Guardrail.secrets`.
 *
 * @example
 * ```ts
 * import type { Guardrail } from "@agentkit/agents"
 *
 * const options: Guardrail.SecretsOptions<"toolResult"> = { kind: "toolResult", action: "trip", onTrip: "end" }
 * ```
 *
 * @since 0.3.0
 * @category models
 */
export interface SecretsOptions<K extends "output" | "toolResult"> {
  readonly kind: K
  readonly action?: "redact" | "trip" | undefined
  readonly kinds?: ReadonlyArray<SecretKind> | undefined
  readonly name?: string | undefined
  /** Tool results only: what a trip does (default `"replace"`). */
  readonly onTrip?: "end" | "replace" | undefined
}

/**
 * Finds and redacts secrets in a text, outside any run: what `Guardrail.secrets` does.
 *
 * @example
 * ```ts
 * import { Guardrail } from "@agentkit/agents"
 *
 * Guardrail.redact("mail ada@example.com") // { text: "mail [REDACTED:email]", found: ["email"] }
 * ```
 *
 * @since 0.3.0
 * @category constructors
 */
export const redact = (
  text: string,
  kinds?: ReadonlyArray<SecretKind>
): { readonly text: string; readonly found: ReadonlyArray<SecretKind> } =>
  secretsInternal.redact(text, secretsInternal.kindsOf(kinds))

/**
 * A topic or instruction check driven by a model, for inputs or outputs: the model is asked
 * (through the `Invoker`, so the call is counted in the run's usage and budget) whether the text
 * follows `instruction`, and must answer `ALLOW` or `BLOCK: <reason>`. Anything but an answer
 * starting with `ALLOW` trips (fail closed). An input check may run `beside` the first model call.
 *
 * @example
 * ```ts
 * import { Guardrail } from "@agentkit/agents"
 *
 * const ordersOnly = Guardrail.topic({
 *   kind: "input",
 *   model: "claude-haiku-4-5",
 *   instruction: "The user asks about their orders: status, delivery, cancellation.",
 *   beside: true
 * })
 * ```
 *
 * @since 0.3.0
 * @category constructors
 */
export const topic: {
  (options: TopicOptions<"input">): Guardrail<"input">
  (options: TopicOptions<"output">): Guardrail<"output">
} = ((options: TopicOptions<"input" | "output">) => {
  if (typeof options.instruction !== "string" || options.instruction.trim() === "") {
    throw new AgentDefinitionError({ message: "Guardrail.topic: instruction must be a non-empty string" })
  }
  if (typeof options.model !== "string" || options.model === "") {
    throw new AgentDefinitionError({ message: "Guardrail.topic: model must be a non-empty string" })
  }
  const name = options.name ?? `topic_${options.kind}`
  const description = `Asks ${options.model} whether the ${options.kind} follows: ${options.instruction.trim()}`
  if (options.kind === "input") {
    return input({
      name,
      description,
      beside: options.beside,
      timeout: options.timeout,
      check: ({ value }) => internal.topicCheck(options.model, options.instruction, internal.lastUserText(value))
    })
  }
  if (options.kind === "output") {
    return output({
      name,
      description,
      timeout: options.timeout,
      check: ({ value }) => internal.topicCheck(options.model, options.instruction, value.text)
    })
  }
  throw new AgentDefinitionError({
    message: `Guardrail.topic: kind must be "input" or "output"; got ${String(options.kind)}`
  })
}) as never

/**
 * The options of `Guardrail.topic`.
 *
 * @example
 * ```ts
 * import type { Guardrail } from "@agentkit/agents"
 *
 * const options: Guardrail.TopicOptions<"output"> = { kind: "output", model: "claude-haiku-4-5", instruction: "Never promise a refund." }
 * ```
 *
 * @since 0.3.0
 * @category models
 */
export interface TopicOptions<K extends "input" | "output"> {
  readonly kind: K
  /** The model asked. */
  readonly model: string
  /** What the text must follow (a topic, a rule). */
  readonly instruction: string
  readonly name?: string | undefined
  /** Inputs only: run beside the first model call. */
  readonly beside?: boolean | undefined
  readonly timeout?: Duration.DurationInput | undefined
}

/**
 * Applies guardrails to every run inside `self` (agents, graphs, `runAgents`), as if each declared
 * them: they are added to the ones a run inherits or declares.
 *
 * @example
 * ```ts
 * import { Guardrail } from "@agentkit/agents"
 * import { Effect } from "effect"
 *
 * const guarded = <A, E, R>(program: Effect.Effect<A, E, R>) => Guardrail.within([Guardrail.secrets({ kind: "output" })])(program)
 * ```
 *
 * @since 0.3.0
 * @category combinators
 */
export const within =
  (guardrails: ReadonlyArray<Any>) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    internal.within(internal.checked(guardrails, "Guardrail.within"), self)
