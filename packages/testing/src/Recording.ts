/**
 * A recorded run: every model exchange (the request, the deltas, the response or the provider
 * error) and every tool result, in order, as a JSON file a test can commit. `Recorder` writes one,
 * `Replay` plays one back. The file is an Effect Schema, so a hand-edited or truncated file fails
 * to load with a message naming the bad field.
 *
 * @since 0.1.0
 */
import { Chat, ChatModelErrorReason, ErrorTypeId } from "@agentkit/core"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { mkdir, readFile, writeFile } from "node:fs/promises"
import { dirname } from "node:path"

/**
 * The format tag a recording file carries.
 *
 * @example
 * ```ts
 * import { Recording } from "@agentkit/testing"
 *
 * Recording.FORMAT // "agentkit.recording/1"
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const FORMAT = "agentkit.recording/1"

/**
 * A provider error as recorded: what a `ChatModelError` carries that a replay needs.
 *
 * @example
 * ```ts
 * import { Recording } from "@agentkit/testing"
 *
 * const error: Recording.RecordedError = { reason: "overloaded", retryable: true, message: "529 overloaded" }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const RecordedError = Schema.Struct({
  reason: ChatModelErrorReason,
  retryable: Schema.Boolean,
  message: Schema.String,
  status: Schema.optional(Schema.Number)
})

/**
 * A provider error as recorded.
 *
 * @example
 * ```ts
 * import type { Recording } from "@agentkit/testing"
 *
 * const error: Recording.RecordedError = { reason: "auth", retryable: false, message: "401 invalid key", status: 401 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface RecordedError extends Schema.Schema.Type<typeof RecordedError> {}

/**
 * One model call: its turn (the call's number in the run, from 1), the request, the text deltas
 * passed on, and the response or the error.
 *
 * @example
 * ```ts
 * import { Recording } from "@agentkit/testing"
 * import { Schema } from "effect"
 *
 * Schema.is(Recording.ChatExchange)({ _tag: "Chat", turn: 1, request: { model: "m", messages: [], tools: [] }, deltas: [] }) // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatExchange = Schema.TaggedStruct("Chat", {
  turn: Schema.Number,
  request: Chat.ChatRequest,
  deltas: Schema.Array(Schema.String),
  response: Schema.optional(Chat.ChatResponse),
  error: Schema.optional(RecordedError)
})

/**
 * One model call as recorded.
 *
 * @example
 * ```ts
 * import type { Recording } from "@agentkit/testing"
 *
 * const turns = (exchanges: ReadonlyArray<Recording.ChatExchange>) => exchanges.map((exchange) => exchange.turn)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ChatExchange extends Schema.Schema.Type<typeof ChatExchange> {}

/**
 * One tool call that went through the tool pipeline: the model turn that asked for it, its call
 * id, name and arguments, the text the model was shown, the value (when it is JSON) and whether
 * it failed.
 *
 * @example
 * ```ts
 * import { Recording } from "@agentkit/testing"
 * import { Schema } from "effect"
 *
 * Schema.is(Recording.ToolExchange)({
 *   _tag: "Tool", turn: 1, callId: "c1", name: "lookup_order", arguments: { order_id: "A-771" }, text: "shipped", isError: false
 * }) // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolExchange = Schema.TaggedStruct("Tool", {
  turn: Schema.Number,
  callId: Schema.String,
  name: Schema.String,
  arguments: Schema.Unknown,
  text: Schema.String,
  value: Schema.optional(Schema.Unknown),
  isError: Schema.Boolean
})

/**
 * One tool call as recorded.
 *
 * @example
 * ```ts
 * import type { Recording } from "@agentkit/testing"
 *
 * const failed = (exchanges: ReadonlyArray<Recording.ToolExchange>) => exchanges.filter((exchange) => exchange.isError)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolExchange extends Schema.Schema.Type<typeof ToolExchange> {}

/**
 * An exchange of a recording: a model call or a tool call.
 *
 * @example
 * ```ts
 * import { Recording } from "@agentkit/testing"
 * import { Schema } from "effect"
 *
 * const decode = Schema.decodeUnknownSync(Recording.Exchange)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Exchange = Schema.Union(ChatExchange, ToolExchange)

/**
 * An exchange of a recording.
 *
 * @example
 * ```ts
 * import type { Recording } from "@agentkit/testing"
 *
 * const describe = (exchange: Recording.Exchange) =>
 *   exchange._tag === "Chat" ? `turn ${exchange.turn}: model` : `turn ${exchange.turn}: ${exchange.name}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Exchange = ChatExchange | ToolExchange

/**
 * A recording file: its format tag and its exchanges.
 *
 * @example
 * ```ts
 * import { Recording } from "@agentkit/testing"
 * import { Schema } from "effect"
 *
 * Schema.is(Recording.Recording)({ format: Recording.FORMAT, exchanges: [] }) // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Recording = Schema.Struct({
  format: Schema.Literal(FORMAT),
  exchanges: Schema.Array(Exchange)
})

/**
 * A recorded run.
 *
 * @example
 * ```ts
 * import type { Recording } from "@agentkit/testing"
 *
 * const modelTurns = (recording: Recording.Recording) => recording.exchanges.filter((exchange) => exchange._tag === "Chat").length
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Recording extends Schema.Schema.Type<typeof Recording> {}

/**
 * A recording file could not be read, decoded or written; the message names the file and the
 * problem.
 *
 * @example
 * ```ts
 * import { Recording } from "@agentkit/testing"
 *
 * new Recording.RecordingError({ path: "test/run.json", message: "no such file" }).message
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class RecordingError
  extends Schema.TaggedError<RecordingError>("@agentkit/testing/RecordingError")("RecordingError", {
    path: Schema.String,
    message: Schema.String
  })
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

const decode = Schema.decodeUnknownEither(Recording)
const encode = Schema.encodeSync(Recording)

/**
 * Decodes a recording from parsed JSON; a value that is not one fails with `RecordingError`
 * naming the first bad field.
 *
 * @example
 * ```ts
 * import { Recording } from "@agentkit/testing"
 *
 * const recording = Recording.fromJson({ format: Recording.FORMAT, exchanges: [] }, "inline")
 * ```
 *
 * @since 0.1.0
 * @category testing
 */
export const fromJson = (json: unknown, path: string): Effect.Effect<Recording, RecordingError> => {
  const decoded = decode(json)
  return decoded._tag === "Right"
    ? Effect.succeed(decoded.right)
    : Effect.fail(
      new RecordingError({
        path,
        message: `${path} is not an ${FORMAT} file: ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}`
      })
    )
}

/**
 * The file text of a recording: two-space indented JSON with a final newline (stable, so a
 * committed fixture diffs well).
 *
 * @example
 * ```ts
 * import { Recording } from "@agentkit/testing"
 *
 * Recording.toText({ format: Recording.FORMAT, exchanges: [] })
 * ```
 *
 * @since 0.1.0
 * @category testing
 */
export const toText = (recording: Recording): string => `${JSON.stringify(encode(recording), null, 2)}\n`

/**
 * Reads a recording file.
 *
 * @example
 * ```ts
 * import { Recording } from "@agentkit/testing"
 *
 * const recording = Recording.read("test/fixtures/approvals.recording.json")
 * ```
 *
 * @since 0.1.0
 * @category testing
 */
export const read = (path: string): Effect.Effect<Recording, RecordingError> =>
  Effect.tryPromise({
    try: () => readFile(path, "utf8"),
    catch: (error) => new RecordingError({ path, message: `cannot read ${path}: ${String(error)}` })
  }).pipe(
    Effect.flatMap((text) =>
      Effect.try({
        try: () => JSON.parse(text) as unknown,
        catch: (error) => new RecordingError({ path, message: `${path} is not JSON: ${String(error)}` })
      })
    ),
    Effect.flatMap((json) => fromJson(json, path))
  )

/**
 * Writes a recording file (creating its directory).
 *
 * @example
 * ```ts
 * import { Recording } from "@agentkit/testing"
 *
 * const saved = Recording.write("test/fixtures/run.recording.json", { format: Recording.FORMAT, exchanges: [] })
 * ```
 *
 * @since 0.1.0
 * @category testing
 */
export const write = (path: string, recording: Recording): Effect.Effect<void, RecordingError> =>
  Effect.tryPromise({
    try: async () => {
      await mkdir(dirname(path), { recursive: true })
      await writeFile(path, toText(recording), "utf8")
    },
    catch: (error) => new RecordingError({ path, message: `cannot write ${path}: ${String(error)}` })
  })
