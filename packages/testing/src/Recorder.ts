/**
 * Records a run: a middleware on both pipelines of the `Invoker` that keeps every model exchange
 * and every tool result, redacted (`Redaction`: the secrets given, credential-named keys and
 * credential-shaped text), as a `Recording` a test can write to a file and `Replay` can play back.
 *
 * Put it last in both middleware lists (innermost), so it sees each provider request (a retried
 * call is two exchanges) and each tool execution, as a replay will.
 *
 * @since 0.1.0
 */
import { ChatModelError, Middleware, toolFailureText } from "@agentkit/core"
import type { ChatMiddleware, ToolCallRequest, ToolHandler, ToolMiddleware } from "@agentkit/core"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Recording from "./Recording.js"
import * as Redaction from "./Redaction.js"

/**
 * A recorder: its middleware (for both lists), the recording so far, and a way to write it.
 *
 * @example
 * ```ts
 * import { FakeLLM, Recorder, Turn, makeTestCtx } from "@agentkit/testing"
 *
 * const llm = FakeLLM.script([Turn({ content: "Order A-771 shipped." })])
 * const recorder: Recorder.Recorder = Recorder.make({ secrets: [process.env.ANTHROPIC_API_KEY ?? ""] })
 * const layer = makeTestCtx({ llm, chatMiddleware: [recorder.middleware], toolMiddleware: [recorder.middleware] })
 * // ... run the agent, then:
 * const saved = recorder.write("test/fixtures/run.recording.json")
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Recorder {
  /** The middleware, for both `chatMiddleware` and `toolMiddleware` (put it last). */
  readonly middleware: Middleware.Both
  /** The chat pipeline's half alone. */
  readonly chat: ChatMiddleware
  /** The tool pipeline's half alone. */
  readonly tool: ToolMiddleware
  /** The recording so far: model exchanges by turn, each turn's tool calls after it. */
  readonly recording: () => Recording.Recording
  /** Writes the recording so far to a file. */
  readonly write: (path: string) => Effect.Effect<void, Recording.RecordingError>
}

/** A JSON copy of a value, or undefined when it has none (a class instance that throws, a BigInt). */
const jsonCopy = (value: unknown): unknown => {
  if (value === undefined) return undefined
  try {
    const text = JSON.stringify(value)
    return text === undefined ? undefined : JSON.parse(text)
  } catch {
    return undefined
  }
}

const order = (exchange: Recording.Exchange): number => exchange.turn * 2 + (exchange._tag === "Tool" ? 1 : 0)

/**
 * Makes a recorder. `options.secrets` are removed wherever they occur (pass the API keys and
 * tokens the run is given); credential-named keys and credential-shaped text are removed
 * whatever the options. A tool call that dies or is interrupted is not recorded (it has no result
 * a model saw).
 *
 * @example
 * ```ts
 * import { Recorder } from "@agentkit/testing"
 * import { Redacted } from "effect"
 *
 * const recorder = Recorder.make({ secrets: [Redacted.make("sk-ant-api03-example")] })
 * recorder.recording().exchanges.length // 0
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options?: Redaction.Options): Recorder => {
  const redactor = Redaction.make(options)
  const exchanges: Array<Recording.Exchange> = []
  const turnOf = new Map<string, number>()
  let turns = 0

  const chat: ChatMiddleware = (next) => (call) =>
    Effect.suspend(() => {
      const turn = ++turns
      const request = redactor.value(call.request) as Recording.ChatExchange["request"]
      const deltas: Array<string> = []
      return next(Middleware.tapEmit(call, (delta) => void deltas.push(redactor.text(delta.text)))).pipe(
        Effect.onExit((exit) =>
          Effect.sync(() => {
            if (Exit.isSuccess(exit)) {
              for (const toolCall of exit.value.toolCalls) turnOf.set(toolCall.id, turn)
              const response = redactor.value(exit.value) as NonNullable<Recording.ChatExchange["response"]>
              exchanges.push({ _tag: "Chat", turn, request, deltas, response })
              return
            }
            const failure = Cause.failureOption(exit.cause)
            if (Option.isSome(failure) && failure.value instanceof ChatModelError) {
              const error = failure.value
              exchanges.push({
                _tag: "Chat",
                turn,
                request,
                deltas,
                error: {
                  reason: error.reason,
                  retryable: error.retryable,
                  message: redactor.text(error.message),
                  ...(error.status === undefined ? {} : { status: error.status })
                }
              })
            }
          })
        )
      )
    })

  const tool: ToolMiddleware = (next: ToolHandler): ToolHandler => <E, R>(request: ToolCallRequest<E, R>) =>
    Effect.suspend(() => {
      const { call } = request
      const turn = turnOf.get(call.id) ?? turns
      const base = {
        _tag: "Tool" as const,
        turn,
        callId: call.id,
        name: call.name,
        arguments: redactor.value(call.arguments)
      }
      return next(request).pipe(
        Effect.onExit((exit) =>
          Effect.sync(() => {
            if (Exit.isSuccess(exit)) {
              const value = jsonCopy(exit.value.value)
              exchanges.push({
                ...base,
                text: redactor.text(exit.value.text),
                ...(value === undefined ? {} : { value: redactor.value(value) }),
                isError: false
              })
              return
            }
            const failure = Cause.failureOption(exit.cause)
            if (Option.isSome(failure)) {
              exchanges.push({ ...base, text: redactor.text(toolFailureText(call.name, failure.value)), isError: true })
            }
          })
        )
      )
    })

  const recording = (): Recording.Recording => ({
    format: Recording.FORMAT,
    exchanges: exchanges.map((exchange, index) => ({ exchange, index }))
      .sort((a, b) => order(a.exchange) - order(b.exchange) || a.index - b.index)
      .map(({ exchange }) => exchange)
  })

  return {
    middleware: Middleware.both(chat, tool),
    chat,
    tool,
    recording,
    write: (path) => Effect.suspend(() => Recording.write(path, recording()))
  }
}
