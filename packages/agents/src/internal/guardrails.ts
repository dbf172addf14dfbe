/**
 * How guardrails are applied to a run. The guardrails in force are a fiber reference (`current`):
 * a run adds its own to the ones it inherits and sets the union for everything under it, so a
 * child run (a sub-agent, a coordinator's child, a graph's agent node) can add guardrails and never
 * remove one. A run with guardrails runs under a guarded `Invoker`: tool results are checked as
 * the tool pipeline returns them (so every path that runs a tool through the Invoker is covered:
 * the loop, graph tool nodes, MCP tools, durable activities), and the first model call runs beside
 * the input guardrails that ask to. A run without any guardrail takes none of this (one fiber
 * reference read). @internal
 */
import { AuditStore, CanonicalJson, Invoker, Message } from "@agentkit/core"
import type { Chat, RunContext, ToolCall, ToolOutcome } from "@agentkit/core"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { AgentResult } from "../AgentResult.js"
import { AgentDefinitionError } from "../Errors.js"
import type * as Guardrail from "../Guardrail.js"
import { GuardrailTripped } from "../Guardrail.js"

type Any = Guardrail.Any

const none: ReadonlyArray<Any> = Object.freeze([])

/** The guardrails in force for the runs of this fiber (and its children). */
export const current: FiberRef.FiberRef<ReadonlyArray<Any>> = FiberRef.unsafeMake(none)

/** `guardrails` checked to be guardrails, frozen (a wiring mistake throws where they are given). */
export const checked = (guardrails: unknown, where: string): ReadonlyArray<Any> => {
  if (guardrails === undefined) return none
  if (!Array.isArray(guardrails)) {
    throw new AgentDefinitionError({ message: `${where}: guardrails must be an array of Guardrail values` })
  }
  for (const guardrail of guardrails) {
    if (typeof guardrail !== "object" || guardrail === null || !(guardrailId in guardrail)) {
      throw new AgentDefinitionError({
        message: `${where}: guardrails must be made with Guardrail.input, Guardrail.output or Guardrail.toolResult`
      })
    }
  }
  return guardrails.length === 0 ? none : Object.freeze(guardrails.slice())
}

const guardrailId = Symbol.for("@agentkit/agents/Guardrail")

/** The union of inherited and own guardrails, inherited first (a guardrail given twice counts once). */
export const merge = (inherited: ReadonlyArray<Any>, own: ReadonlyArray<Any>): ReadonlyArray<Any> => {
  if (own.length === 0) return inherited
  if (inherited.length === 0) return own
  const all = inherited.slice()
  for (const guardrail of own) if (!all.includes(guardrail)) all.push(guardrail)
  return all
}

/** Runs `self` with `guardrails` added to the ones in force. */
export const within = <A, E, R>(guardrails: ReadonlyArray<Any>, self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  guardrails.length === 0 ? self : Effect.locallyWith(self, current, (inherited) => merge(inherited, guardrails))

/** A set of guardrails split by where they check. */
export interface Plan {
  readonly all: ReadonlyArray<Any>
  readonly before: ReadonlyArray<Guardrail.Guardrail<"input">>
  readonly beside: ReadonlyArray<Guardrail.Guardrail<"input">>
  readonly output: ReadonlyArray<Guardrail.Guardrail<"output">>
  readonly toolResult: ReadonlyArray<Guardrail.Guardrail<"toolResult">>
}

export const plan = (all: ReadonlyArray<Any>): Plan => {
  const before: Array<Guardrail.Guardrail<"input">> = []
  const beside: Array<Guardrail.Guardrail<"input">> = []
  const output: Array<Guardrail.Guardrail<"output">> = []
  const toolResult: Array<Guardrail.Guardrail<"toolResult">> = []
  for (const guardrail of all) {
    switch (guardrail.kind) {
      case "input":
        ;(guardrail.beside ? beside : before).push(guardrail)
        break
      case "output":
        output.push(guardrail)
        break
      case "toolResult":
        toolResult.push(guardrail)
        break
    }
  }
  return { all, before, beside, output, toolResult }
}

/** `Effect.succeed`, for the ready guardrails (the public module keeps no implementation). */
export const succeed = <A>(value: A): Effect.Effect<A> => Effect.succeed(value)

const Messages = Schema.Array(Message.Message)
const isMessages = Schema.is(Messages)

const where = (kind: Guardrail.Kind): string =>
  kind === "input" ? "input" : kind === "output" ? "output" : "tool result"

/** A value's digest for the audit (its canonical JSON's SHA-256; a value JSON cannot hold is digested by its text). */
const digest = (value: unknown): string => {
  try {
    return CanonicalJson.hash(value)
  } catch {
    return CanonicalJson.sha256(String(value))
  }
}

/** What the audit names a check by: the call it checked, or the run's input or output. */
interface Target {
  readonly tool: string
  readonly callId: string
}

const audit = (
  context: RunContext.Service,
  target: Target,
  fields: Pick<AuditStore.AuditRecord, "decision" | "argHash" | "resultHash" | "reason" | "denial"> & {
    readonly by: string
  }
): Effect.Effect<void> =>
  Effect.flatMap(Effect.serviceOption(AuditStore), (store) =>
    Option.isNone(store)
      ? Effect.void
      : Effect.flatMap(Clock.currentTimeMillis, (at) =>
        Effect.catchAll(
          store.value.append({ runId: context.runId, tenant: context.scope.storeKey, ...target, ...fields, at }),
          (failed) =>
            Effect.logError(`audit: could not append the guardrail record of ${target.tool}: ${failed.message}`)
        )))

const tripped = (guardrail: Any, reason: string): GuardrailTripped =>
  new GuardrailTripped({
    guardrail: guardrail.name,
    kind: guardrail.kind,
    reason,
    endsRun: guardrail.kind !== "toolResult" || guardrail.onTrip === "end"
  })

/** A rewritten value of the guardrail's kind, or `undefined` when it is not one. */
const rewritten = (guardrail: Any, value: unknown): unknown => {
  switch (guardrail.kind) {
    case "input":
      return isMessages(value) && value.length > 0 ? value : undefined
    case "output":
      return typeof value === "object" && value !== null && typeof (value as Guardrail.Answer).text === "string"
        ? value
        : undefined
    case "toolResult":
      return typeof value === "string" ? value : undefined
  }
}

const spanName = (guardrail: Any) => `guardrail ${guardrail.name}`

/**
 * One guardrail's check of `subject`: the rewritten value, or `undefined` when it passes; a trip
 * (or a check that fails, dies, throws, answers something that is not a verdict, or outlives its
 * timeout) fails with `GuardrailTripped`. An interruption is passed on (it is the run's).
 */
const checkOne = (
  guardrail: Any,
  subject: unknown,
  context: RunContext.Service,
  rewrites: boolean
): Effect.Effect<unknown, GuardrailTripped, RunContext | Invoker> => {
  const check = guardrail.check as (subject: unknown) => Effect.Effect<unknown, unknown, RunContext | Invoker>
  const ran = Effect.suspend(() => {
    const effect = check(subject)
    return Effect.isEffect(effect) ? effect : Effect.dieMessage("the check did not return an Effect")
  }).pipe(
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.failCause(cause as Cause.Cause<never>)
        : Effect.fail(tripped(guardrail, `the check failed (fail closed): ${describe(cause)}`))
    ),
    Effect.timeoutFail({
      duration: guardrail.timeout,
      onTimeout: () =>
        tripped(guardrail, `the check timed out after ${Duration.format(guardrail.timeout)} (fail closed)`)
    }),
    Effect.flatMap((verdict): Effect.Effect<unknown, GuardrailTripped> => {
      const tag = typeof verdict === "object" && verdict !== null ? (verdict as { _tag?: unknown })._tag : undefined
      if (tag === "Pass") return Effect.succeed(undefined)
      if (tag === "Trip") {
        const reason = (verdict as { reason?: unknown }).reason
        return Effect.fail(tripped(guardrail, typeof reason === "string" ? reason : "tripped"))
      }
      if (tag === "Rewrite") {
        if (!rewrites) {
          return Effect.fail(tripped(guardrail, "a guardrail that runs beside the model call cannot rewrite"))
        }
        const value = rewritten(guardrail, (verdict as { value?: unknown }).value)
        if (value !== undefined) return Effect.succeed(value)
        return Effect.fail(
          tripped(
            guardrail,
            `the check rewrote the ${where(guardrail.kind)} to a value of the wrong shape (fail closed)`
          )
        )
      }
      return Effect.fail(
        tripped(guardrail, "the check answered something that is not a verdict: pass, rewrite or trip (fail closed)")
      )
    })
  )
  if (!context.tracing) return ran
  return ran.pipe(
    Effect.tapBoth({
      onFailure: () => Effect.annotateCurrentSpan("agentkit.guardrail.verdict", "trip"),
      onSuccess: (value) =>
        Effect.annotateCurrentSpan("agentkit.guardrail.verdict", value === undefined ? "pass" : "rewrite")
    }),
    Effect.withSpan(spanName(guardrail), {
      kind: "internal",
      captureStackTrace: false,
      attributes: { "agentkit.guardrail.name": guardrail.name, "agentkit.guardrail.kind": guardrail.kind }
    })
  )
}

const describe = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  const error = Option.isSome(failure) ? failure.value : Option.getOrUndefined(Cause.dieOption(cause))
  if (error instanceof Error) return `${error.name}: ${error.message}`
  if (typeof error === "object" && error !== null && "_tag" in error) return String((error as { _tag: unknown })._tag)
  return String(error)
}

/**
 * Runs `guardrails` in order over `value` (each sees the value the previous one left), auditing
 * each rewrite (before and after digests) and each trip. `subjectOf` builds a check's subject.
 */
const runAll = <A>(
  guardrails: ReadonlyArray<Any>,
  value: A,
  subjectOf: (value: A) => unknown,
  context: RunContext.Service,
  target: Target,
  rewrites = true
): Effect.Effect<A, GuardrailTripped, RunContext | Invoker> =>
  Effect.reduce(guardrails, value, (value, guardrail) =>
    checkOne(guardrail, subjectOf(value), context, rewrites).pipe(
      Effect.tapError((error) =>
        audit(context, target, {
          decision: "denied",
          argHash: digest(value),
          by: `guardrail:${guardrail.name}`,
          reason: error.message,
          denial: { reason: "guardrail", message: error.message }
        })
      ),
      Effect.flatMap((after) =>
        after === undefined ? Effect.succeed(value) : Effect.as(
          audit(context, target, {
            decision: "rewritten",
            argHash: digest(value),
            resultHash: digest(after),
            by: `guardrail:${guardrail.name}`,
            reason: `guardrail '${guardrail.name}' rewrote the ${where(guardrail.kind)}`
          }),
          after as A
        )
      )
    ))

const inputTarget: Target = { tool: "input", callId: "input" }
const outputTarget: Target = { tool: "output", callId: "output" }

/** The run's messages after the input guardrails that run before the first model call. */
export const checkInput = (
  guardrails: ReadonlyArray<Guardrail.Guardrail<"input">>,
  messages: ReadonlyArray<Message.Message>,
  context: RunContext.Service
): Effect.Effect<ReadonlyArray<Message.Message>, GuardrailTripped, RunContext | Invoker> =>
  runAll(guardrails, messages, (value) => ({ value, messages: value }), context, inputTarget)

/** The run's result after the output guardrails (a suspended run has no answer yet: it passes as it is). */
export const checkOutput = (
  guardrails: ReadonlyArray<Guardrail.Guardrail<"output">>,
  result: AgentResult<unknown>,
  context: RunContext.Service
): Effect.Effect<AgentResult<unknown>, GuardrailTripped, RunContext | Invoker> => {
  if (guardrails.length === 0 || result.suspended !== undefined) return Effect.succeed(result)
  const answer: Guardrail.Answer = { text: result.output, parsed: result.parsed }
  return Effect.map(
    runAll(guardrails, answer, (value) => ({ value, messages: result.transcript }), context, outputTarget),
    (after) => {
      if (after === answer) return result
      const transcript = result.transcript.slice()
      const last = transcript.length - 1
      if (last >= 0 && transcript[last]!.role === "assistant" && transcript[last]!.content === result.output) {
        const message = transcript[last] as Message.AssistantMessage
        transcript[last] = Message.assistant(after.text, message.toolCalls)
      }
      const parsed = "parsed" in after ? after.parsed : result.parsed
      return parsed === undefined
        ? { ...result, output: after.text, transcript }
        : { ...result, output: after.text, parsed, transcript }
    }
  )
}

/** A tool's outcome after the tool-result guardrails (a rewrite changes the text the model sees). */
const checkToolResult = (
  guardrails: ReadonlyArray<Guardrail.Guardrail<"toolResult">>,
  call: ToolCall.ToolCall,
  outcome: ToolOutcome,
  context: RunContext.Service
): Effect.Effect<ToolOutcome, GuardrailTripped, RunContext | Invoker> =>
  Effect.map(
    runAll(
      guardrails,
      outcome.text,
      (value) => ({ value, call }),
      context,
      { tool: call.name, callId: call.id }
    ),
    (text) => (text === outcome.text ? outcome : { value: text, text })
  )

const baseKey = Symbol.for("@agentkit/agents/Guardrail/base")

/** The Invoker under any guarding (guardrails and their own model calls use it). */
export const baseOf = (invoker: Invoker.Service): Invoker.Service =>
  (invoker as { readonly [baseKey]?: Invoker.Service })[baseKey] ?? invoker

/**
 * The Invoker a guarded run uses: tool outcomes pass the tool-result guardrails; the run's first
 * model call runs beside the input guardrails that ask to (a trip interrupts the call).
 */
export const guarded = (
  base: Invoker.Service,
  plan: Plan,
  context: RunContext.Service,
  beside: ReadonlyArray<Message.Message> | undefined
): Invoker.Service => {
  const toolResult = plan.toolResult
  const tool: Invoker.Service["tool"] = toolResult.length === 0
    ? base.tool
    : (call, invokable, options) =>
      Effect.flatMap(
        base.tool(call, invokable, options),
        (outcome) => checkToolResult(toolResult, call, outcome, context)
      ) as never
  let chat = base.chat
  if (beside !== undefined && plan.beside.length > 0) {
    let first = true
    const checks = runAll(plan.beside, beside, (value) => ({ value, messages: value }), context, inputTarget, false)
    chat = (request: Chat.ChatRequest, options) => {
      if (!first) return base.chat(request, options)
      first = false
      // both at once: a trip interrupts the call in flight (its provider sees the abort)
      return Effect.zipRight(checks, base.chat(request, options), { concurrent: true }) as never
    }
  }
  return { [baseKey]: base, chat, tool, features: base.features } as Invoker.Service
}

/** The text the topic model is shown (the last user message of the run). */
export const lastUserText = (messages: ReadonlyArray<Message.Message>): string => {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!
    if (message.role === "user") return message.content
  }
  return ""
}

const topicPrompt = (instruction: string) =>
  "You check text against a rule for an application. The rule:\n" + instruction.trim() +
  "\n\nAnswer ALLOW if the text follows the rule, else BLOCK: <a short reason>. Answer nothing else."

/** The model-driven topic check: `ALLOW` passes; anything else trips (fail closed). */
export const topicCheck = (
  model: string,
  instruction: string,
  text: string
): Effect.Effect<Guardrail.Verdict<never>, unknown, RunContext | Invoker> =>
  Effect.flatMap(Invoker, (invoker) =>
    Effect.map(
      baseOf(invoker).chat({
        model,
        messages: [Message.system(topicPrompt(instruction)), Message.user(text)],
        tools: []
      }),
      (response): Guardrail.Verdict<never> => {
        const answer = response.content.trim()
        if (/^ALLOW\b/.test(answer)) return { _tag: "Pass" }
        const reason = /^BLOCK\b:?\s*(.*)$/s.exec(answer)?.[1]?.trim()
        return {
          _tag: "Trip",
          reason: reason === undefined
            ? "the checking model did not answer ALLOW (fail closed)"
            : reason === ""
            ? "blocked by the checking model"
            : reason
        }
      }
    ))

/**
 * Runs `drive` under the guardrails in force (`all`, already merged): the input checked first
 * (`messages`, when the run starts; `undefined` on a resume), the run under the guarded Invoker
 * and with `all` set for its children, the output checked last.
 */
export const guard = <E, R>(
  p: Plan,
  context: RunContext.Service,
  messages: ReadonlyArray<Message.Message> | undefined,
  drive: (messages: ReadonlyArray<Message.Message> | undefined) => Effect.Effect<AgentResult<unknown>, E, R>
): Effect.Effect<AgentResult<unknown>, E | GuardrailTripped, R | RunContext | Invoker> =>
  Effect.flatMap(Invoker, (invoker) => {
    const base = baseOf(invoker)
    const started: Effect.Effect<ReadonlyArray<Message.Message> | undefined, GuardrailTripped, RunContext | Invoker> =
      messages === undefined || p.before.length === 0
        ? Effect.succeed(messages)
        : checkInput(p.before, messages, context)
    return started.pipe(
      Effect.flatMap((checked) =>
        Effect.provideService(drive(checked), Invoker, guarded(base, p, context, checked)).pipe(
          Effect.locally(current, p.all)
        )
      ),
      Effect.flatMap((result) => checkOutput(p.output, result, context))
    )
  })

/**
 * The event sink of a guarded run: under an output guardrail the answer's text deltas are held
 * back (the answer is shown once checked, in the run's result), so nothing it would redact or
 * trip on is streamed first.
 */
export const emitting = <E extends { readonly _tag: string }>(
  p: Plan,
  emit: ((event: E) => void) | undefined
): ((event: E) => void) | undefined =>
  emit === undefined || p.output.length === 0 ? emit : (event) => {
    if (event._tag !== "MessageDelta") emit(event)
  }

/** Whether a tool call's failure is a guardrail's trip that ends the run (not one shown to the model). */
export const endsRun = (error: unknown): error is GuardrailTripped => error instanceof GuardrailTripped && error.endsRun
