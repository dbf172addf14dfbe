/**
 * The ReAct loop: ask the model, run the tool calls it asks for, hand the results back, repeat
 * until the model answers without tool calls or the iterations run out. It is also where the
 * approval gate, the dynamic lethal-trifecta check and checkpoints live.
 *
 * @since 0.1.0
 */
import {
  approvalDeniedText,
  Cancellation,
  CheckpointStore,
  endsRun,
  Invoker,
  Message,
  RunContext,
  ToolDenied,
  toolFailureText,
  Tracing,
  unknownToolText,
  Usage
} from "@agentkit/core"
import type { ToolCall } from "@agentkit/core"
import { ToolRegistry } from "@agentkit/tools"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as AgentEvent from "./AgentEvent.js"
import { AgentDefinitionError, RunNotResumable, trifectaReason } from "./Errors.js"
import type { AgentResult, PendingCall } from "./AgentResult.js"
import * as Approval from "./Approval.js"
import type { AgentError, AgentSettings, Cognition, Drive, Resume, ResumeError } from "./Cognition.js"
import type { RunPolicy } from "./RunPolicy.js"

/**
 * The options of `ReActCognition.make`.
 *
 * @example
 * ```ts
 * import { ReActCognition } from "@agentkit/agents"
 * import { ToolRegistry } from "@agentkit/tools"
 *
 * const options: ReActCognition.Options<typeof lookupOrder> = { tools: ToolRegistry.fromTools([lookupOrder]), maxIterations: 4 }
 * const cognition = ReActCognition.make(options)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<T extends ToolRegistry.AnyTool> {
  /** A list of tools (registered in order; a duplicate name throws) or a registry. */
  readonly tools: ReadonlyArray<T> | ToolRegistry.ToolRegistry<T>
  /** How many model calls a run may make (default 8). */
  readonly maxIterations?: number | undefined
}

interface CallResult {
  readonly call: ToolCall.ToolCall
  readonly content: string
  readonly isError: boolean
}

/** The legs of the trifecta a run has touched: a tool with that capability returned a result. */
interface Legs {
  readonly privateData: boolean
  readonly untrustedContent: boolean
}

/**
 * What a checkpoint holds (plain JSON). `phase: "model"`: the next step is the model call of
 * `iteration`. `phase: "tools"`: the model call of `iteration` is done (its assistant turn is the
 * last message) and `done` holds the results of the calls that already ran, so a resumed run
 * neither repeats the model call nor re-runs a completed tool.
 */
interface LoopState {
  readonly transcript: ReadonlyArray<Message.Message>
  readonly usage: Usage.Usage
  readonly iteration: number
  readonly legs: Legs
  readonly phase: "model" | "tools"
  readonly done: ReadonlyArray<CallResult>
  readonly pending: ReadonlyArray<PendingCall>
}

const freezeDeep = <A>(value: A): A => {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const key of Object.keys(value)) freezeDeep((value as Record<string, unknown>)[key])
  }
  return value
}

/** The pending calls a `Suspended` value hands out: a frozen copy, cut off from the transcript. */
const frozenPending = (pending: ReadonlyArray<PendingCall>): ReadonlyArray<PendingCall> =>
  freezeDeep(structuredClone(pending))

const isLoopState = (u: unknown): u is LoopState =>
  typeof u === "object" && u !== null && "transcript" in u && "usage" in u && "iteration" in u && "phase" in u

/**
 * Makes a ReAct cognition. Each iteration checks cancellation, sends the transcript with the
 * registry's sorted schemas through the Invoker's chat pipeline (text deltas are passed on as
 * they arrive), and runs the turn's tool calls concurrently through the tool pipeline (bounded
 * by the run's concurrency limit, results kept in call order). Errors the model can fix come back
 * to it as `isError` tool results; budget exhaustion and cancellation end the run; a defect is
 * never shown to the model.
 *
 * If any call of a turn needs approval (the tool `requiresApproval`; autonomy `gated` and the
 * tool is side-effecting; autonomy `manual`; or the call would complete the lethal trifecta and
 * the policy gates it), no call of the turn runs: an `Approver`, when one is provided, is asked
 * in-process; otherwise the run suspends (`stopReason: "awaiting_approval"`), checkpointed when a
 * `CheckpointStore` is provided, and `agent.resume(runId, decisions)` continues it.
 *
 * @example
 * ```ts
 * import { Agent, ReActCognition } from "@agentkit/agents"
 *
 * const agent = Agent.make({
 *   name: "support",
 *   model: "claude-sonnet-4-6",
 *   prompt: "Answer order questions. Use the tools; never guess a status.",
 *   cognition: ReActCognition.make({ tools: [lookupOrder, cancelOrder] })
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <const T extends ToolRegistry.AnyTool>(
  options: Options<T>
): Cognition<ToolRegistry.Requirements<T>> => {
  const registry: ToolRegistry.ToolRegistry = ToolRegistry.isToolRegistry(options.tools)
    ? options.tools
    : ToolRegistry.fromTools(options.tools as ReadonlyArray<T>)
  const maxIterations = options.maxIterations ?? 8
  if (!Number.isInteger(maxIterations) || maxIterations < 1) {
    throw new AgentDefinitionError({
      message: `ReActCognition: maxIterations must be a positive integer; got ${String(options.maxIterations)}`
    })
  }
  const schemas = registry.schemas()
  const names = registry.names()

  /** One run (or resumed run) of the loop: its mutable state lives here, never on the cognition. */
  const loop = (
    agent: AgentSettings,
    runId: string,
    policy: RunPolicy,
    emit: ((event: AgentEvent.AgentEvent) => void) | undefined,
    start: LoopState
  ) =>
    Effect.gen(function* () {
      const invoker = yield* Invoker
      const context = yield* RunContext
      // Only a top-level run is checkpointed: a sub-agent's run (asTool, on RunContext.child())
      // shares its parent's correlation id, so it would read, overwrite and delete the parent's
      // checkpoints. The parent's own checkpoints cover it: a sub-run is one tool call.
      const store = context.depth === 0 ? Option.getOrUndefined(yield* Effect.serviceOption(CheckpointStore)) : undefined
      const approver = Option.getOrUndefined(yield* Effect.serviceOption(Approval.Approver))

      const transcript: Array<Message.Message> = [...start.transcript]
      let usage = start.usage
      let legs = start.legs

      const save = (state: Omit<LoopState, "transcript" | "usage" | "legs">, status: "running" | "suspended") =>
        store === undefined
          ? Effect.void
          : Effect.asVoid(store.save(runId, status, { ...state, transcript, usage, legs } satisfies LoopState))
      const forget = store === undefined ? Effect.void : store.delete(runId)

      const finish = (output: string, stopReason: AgentResult["stopReason"], partial: boolean) =>
        Effect.as(forget, { output, usage, partial, stopReason, transcript } satisfies AgentResult)

      const completesTrifecta = (tool: ToolRegistry.AnyTool) =>
        tool.caps.includes("egress") && legs.privateData && legs.untrustedContent

      const needsApproval = (call: ToolCall.ToolCall): boolean => {
        const tool = Option.getOrUndefined(registry.getOption(call.name))
        if (tool === undefined) return false // an unknown tool never gates: the model is told it does not exist
        return (
          tool.requiresApproval ||
          context.autonomy === "manual" ||
          (context.autonomy === "gated" && tool.sideEffecting) ||
          (policy.dynamic === "gate" && completesTrifecta(tool))
        )
      }

      /** The dynamic check's decision on an egress call, as a `policy.check` span with the legs seen. */
      const policyCheck = (tool: ToolRegistry.AnyTool, decision: "allow" | "deny" | "gate") =>
        tool.caps.includes("egress") && context.tracing && policy.dynamic !== "off"
          ? Effect.withSpan(
              // set through `annotate`, so the legs reach OpenTelemetry as an array of strings
              Tracing.annotate({
                [Tracing.Attribute.policyTool]: tool.name,
                [Tracing.Attribute.policyLegs]: [
                  ...(legs.privateData ? ["private_data"] : []),
                  ...(legs.untrustedContent ? ["untrusted_content"] : []),
                  "egress"
                ],
                [Tracing.Attribute.policyDecision]: decision
              }),
              Tracing.SpanName.policyCheck,
              { captureStackTrace: false }
            )
          : Effect.void

      /** Runs one call through the tool pipeline; what the model may fix comes back as a result. */
      const runCall = (call: ToolCall.ToolCall): Effect.Effect<CallResult, AgentError, RunContext> => {
        const found = registry.getOption(call.name)
        if (Option.isNone(found)) return Effect.succeed({ call, content: unknownToolText(call.name, names), isError: true })
        const tool = found.value
        const denied = policy.dynamic === "deny" && completesTrifecta(tool)
        const check = policyCheck(tool, denied ? "deny" : "allow")
        if (denied) {
          const error = new ToolDenied({ toolName: tool.name, reason: "policy", message: trifectaReason })
          return Effect.as(check, { call, content: toolFailureText(call.name, error), isError: true })
        }
        const untrusted = tool.caps.includes("untrusted_content")
        return Effect.zipRight(
          check,
          Effect.matchEffect(invoker.tool(call, tool), {
            onSuccess: (outcome) => {
              if (tool.caps.includes("private_data")) legs = { ...legs, privateData: true }
              if (untrusted) legs = { ...legs, untrustedContent: true }
              const content = untrusted ? policy.wrapUntrusted(outcome.text, tool.name) : outcome.text
              return Effect.succeed({ call, content, isError: false })
            },
            onFailure: (error) =>
              endsRun(error) ? Effect.fail(error) : Effect.succeed({ call, content: toolFailureText(call.name, error), isError: true })
          }) as Effect.Effect<CallResult, AgentError, RunContext>
        )
      }

      /** Appends a round's results, checkpoints, and goes on with the next iteration. */
      const completeRound = (iteration: number, results: ReadonlyArray<CallResult>) => {
        for (const result of results) {
          transcript.push(
            Message.toolResult({
              toolCallId: result.call.id,
              name: result.call.name,
              content: result.content,
              isError: result.isError
            })
          )
          if (emit !== undefined) emit(AgentEvent.ToolResult(result))
        }
        return save({ iteration: iteration + 1, phase: "model", done: [], pending: [] }, "running").pipe(
          Effect.tap(() => emit?.(AgentEvent.Step({ iteration: iteration + 1 }))),
          Effect.zipRight(Effect.suspend(() => iterate(iteration + 1)))
        )
      }

      /** Runs the calls of a turn that have not run yet, recording each result as it lands. */
      const runRound = (iteration: number, calls: ReadonlyArray<ToolCall.ToolCall>, done: ReadonlyArray<CallResult>) => {
        const finished = new Map(done.map((result) => [result.call.id, result]))
        const record = (result: CallResult) => {
          finished.set(result.call.id, result)
          if (store === undefined) return Effect.succeed(result) // nothing to checkpoint: no copy on the hot path
          return Effect.as(
            save({ iteration, phase: "tools", done: Array.from(finished.values()), pending: [] }, "running"),
            result
          )
        }
        const one = (call: ToolCall.ToolCall) => {
          const already = finished.get(call.id)
          return already !== undefined ? Effect.succeed(already) : Effect.flatMap(runCall(call), record)
        }
        const results =
          calls.length === 1
            ? Effect.map(one(calls[0]!), (result) => [result])
            : Effect.forEach(calls, one, { concurrency: "unbounded" })
        return Effect.flatMap(results, (results) => completeRound(iteration, results))
      }

      /**
       * Applies a person's decisions, in call order. Edits are all checked before anything runs: on
       * resume an invalid edit fails with `ToolArgumentError` and nothing runs (the run stays
       * suspended, so the decisions can be sent again); from an in-process approver it rejects that
       * call, and the model is told why. `done` holds the turn's calls that ran before it was gated
       * (a crashed round re-driven): their results are kept, in call order.
       */
      const decide = (
        iteration: number,
        pending: ReadonlyArray<PendingCall>,
        done: ReadonlyArray<CallResult>,
        decisions: Approval.Decisions,
        invalidEdit: "fail" | "reject"
      ) =>
        Effect.gen(function* () {
          const resolved = pending.map((entry) => ({ entry, decision: Approval.resolve(entry, decisions) }))
          const planned: Array<{ readonly call: ToolCall.ToolCall; readonly reject?: string | undefined }> = []
          for (const { decision, entry } of resolved) {
            if (decision._tag === "Reject") {
              planned.push({ call: entry.call, reject: decision.reason ?? "" })
              continue
            }
            if (decision._tag === "Edit") {
              const tool = Option.getOrUndefined(registry.getOption(entry.call.name))
              const checked = tool === undefined ? Either.void : yield* Effect.either(tool.validate(decision.arguments))
              if (Either.isLeft(checked)) {
                if (invalidEdit === "fail") return yield* checked.left
                planned.push({ call: entry.call, reject: `the edited arguments were invalid: ${checked.left.message}` })
                continue
              }
              planned.push({ call: { ...entry.call, arguments: decision.arguments } })
              continue
            }
            planned.push({ call: entry.call })
          }
          const results: Array<CallResult> = [...done]
          for (const { call, reject } of planned) {
            yield* Cancellation.check(context.cancellation) // cancellation beats approval
            if (reject !== undefined) {
              results.push({ call, content: approvalDeniedText(reject), isError: true })
              continue
            }
            results.push(yield* runCall(call))
            // Record what ran, so a crash now never runs it twice: a resume stays suspended on the
            // calls left (the same decisions can be sent again); an approver's run is re-driven.
            const left = pending.filter((entry) => !results.some((result) => result.call.id === entry.call.id))
            yield* save(
              { iteration, phase: "tools", done: results, pending: invalidEdit === "fail" ? left : [] },
              invalidEdit === "fail" ? "suspended" : "running"
            )
          }
          const turn = transcript.at(-1)
          const order = turn?.role === "assistant" ? turn.toolCalls.map((call) => call.id) : []
          if (done.length > 0) results.sort((a, b) => order.indexOf(a.call.id) - order.indexOf(b.call.id))
          return yield* completeRound(iteration, results)
        })

      /** A turn asked for tool calls: gate them, then run them (or suspend). */
      const onToolCalls = (
        iteration: number,
        calls: ReadonlyArray<ToolCall.ToolCall>,
        done: ReadonlyArray<CallResult>
      ): Effect.Effect<AgentResult, AgentError, RunContext> => {
        const waiting = calls.filter((call) => !done.some((result) => result.call.id === call.id))
        if (!waiting.some(needsApproval)) return runRound(iteration, calls, done)
        const pending: ReadonlyArray<PendingCall> = waiting.map((call) => ({ call, digest: Approval.digest(call) }))
        // the calls gated because they would complete the trifecta: their decision is a policy.check span
        const gatedByPolicy: Array<ToolRegistry.AnyTool> = []
        if (policy.dynamic === "gate") {
          for (const call of waiting) {
            const tool = Option.getOrUndefined(registry.getOption(call.name))
            if (tool !== undefined && completesTrifecta(tool)) gatedByPolicy.push(tool)
          }
        }
        const checks = Effect.forEach(gatedByPolicy, (tool) => policyCheck(tool, "gate"), { discard: true })
        if (emit !== undefined) for (const entry of pending) emit(AgentEvent.Interrupt(entry))
        if (approver !== undefined) {
          return Effect.flatMap(
            Effect.zipRight(checks, approver.decide({ runId, agent: agent.name, pending })),
            // in "reject" mode an invalid edit becomes a rejection, never a ToolArgumentError
            (decisions) => decide(iteration, pending, done, decisions, "reject") as Effect.Effect<AgentResult, AgentError, RunContext>
          )
        }
        return Effect.as(Effect.zipRight(checks, save({ iteration, phase: "tools", done, pending }, "suspended")), {
          output: "",
          usage,
          partial: true,
          stopReason: "awaiting_approval",
          transcript,
          suspended: { _tag: "Suspended", runId, pending: frozenPending(pending) }
        } satisfies AgentResult)
      }

      const iterate = (iteration: number): Effect.Effect<AgentResult, AgentError, RunContext> => {
        if (iteration >= maxIterations) {
          let last = ""
          for (let i = transcript.length - 1; i >= 0; i--) {
            const message = transcript[i]!
            if (message.role === "assistant") {
              last = message.content
              break
            }
          }
          return finish(last, "max_iterations", true)
        }
        const request = {
          model: agent.model,
          messages: transcript.slice(),
          tools: schemas,
          ...(agent.maxTokens === undefined ? {} : { maxTokens: agent.maxTokens }),
          ...(agent.temperature === undefined ? {} : { temperature: agent.temperature })
        }
        const onDelta = emit === undefined ? undefined : { emit: (delta: { readonly text: string }) => emit(AgentEvent.MessageDelta(delta)) }
        return Cancellation.check(context.cancellation).pipe(
          Effect.zipRight(invoker.chat(request, onDelta)),
          Effect.flatMap((response) => {
            usage = Usage.add(usage, response.usage)
            if (response.toolCalls.length === 0) {
              transcript.push(Message.assistant(response.content))
              return finish(response.content, response.finishReason === "tool_use" ? "end_turn" : response.finishReason, false)
            }
            transcript.push(Message.assistant(response.content, response.toolCalls))
            if (emit !== undefined) for (const call of response.toolCalls) emit(AgentEvent.ToolCall({ call }))
            return Effect.zipRight(
              save({ iteration, phase: "tools", done: [], pending: [] }, "running"),
              onToolCalls(iteration, response.toolCalls, [])
            )
          })
        )
      }

      return { iterate, onToolCalls, decide, transcript }
    })

  const fresh = (messages: ReadonlyArray<Message.Message>): LoopState => ({
    transcript: messages,
    usage: Usage.zero,
    iteration: 0,
    legs: { privateData: false, untrustedContent: false },
    phase: "model",
    done: [],
    pending: []
  })

  /** Continues a checkpointed turn: the tool round of its last assistant message, or its next model call. */
  const continueFrom = (state: LoopState, steps: Effect.Effect.Success<ReturnType<typeof loop>>) => {
    const last = state.transcript.at(-1)
    return state.phase === "tools" && last?.role === "assistant"
      ? steps.onToolCalls(state.iteration, last.toolCalls, state.done)
      : steps.iterate(state.iteration)
  }

  const drive = ({ agent, emit, messages, policy }: Drive) =>
    Effect.flatMap(RunContext, (context) =>
      Effect.flatMap(Effect.serviceOption(CheckpointStore), (store) => {
        const runId = context.correlationId
        // a crashed run (its latest checkpoint is "running") picks up where it was; a suspended
        // one is only continued by resume, so a fresh drive of its id starts over
        const saved = Option.isNone(store) || context.depth > 0
          ? Effect.succeed(Option.none<LoopState>())
          : Effect.map(store.value.latest(runId), (latest) =>
              Option.flatMap(latest, (checkpoint) =>
                checkpoint.status === "running" && isLoopState(checkpoint.state) ? Option.some(checkpoint.state) : Option.none()
              )
            )
        const run = Effect.flatMap(saved, (state) => {
          const start = Option.getOrElse(state, () => fresh(messages))
          return Effect.flatMap(loop(agent, runId, policy, emit, start), (steps) =>
            Option.isSome(state) ? continueFrom(start, steps) : steps.iterate(0)
          )
        })
        // A run that failed (a budget, a model error, cancellation) is over: it is marked so, and
        // a later run under the same id starts fresh. Only a crash (the process died, the fiber
        // was interrupted) leaves a "running" checkpoint to pick up.
        return Option.isNone(store) || context.depth > 0
          ? run
          : Effect.tapError(run, (error) => store.value.save(runId, "failed", { error: error._tag }))
      })
    ) as Effect.Effect<AgentResult, AgentError, RunContext | Invoker>

  const resume = ({ agent, decisions, emit, policy, runId }: Resume) =>
    Effect.gen(function* () {
      const store = yield* Effect.serviceOption(CheckpointStore)
      const notResumable = new RunNotResumable({ runId, message: `no suspended run '${runId}' to resume` })
      if (Option.isNone(store)) return yield* notResumable
      const latest = yield* store.value.latest(runId)
      if (Option.isNone(latest) || latest.value.status !== "suspended" || !isLoopState(latest.value.state)) {
        return yield* notResumable
      }
      const state = latest.value.state
      const context = yield* RunContext
      yield* Cancellation.check(context.cancellation) // cancellation beats approval: nothing runs
      const steps = yield* loop(agent, runId, policy, emit, state)
      return yield* steps.decide(state.iteration, state.pending, state.done, decisions, "fail")
    }) as Effect.Effect<AgentResult, ResumeError, RunContext | Invoker>

  return { name: "react", tools: registry, drive, resume } as Cognition<ToolRegistry.Requirements<T>>
}
