/**
 * One streamed answer, assembled: what both wire protocols' assemblers give the provider.
 *
 * @internal
 */
import type { Chat, ToolCall } from "@agentkit/core"

/** Token counts as `Usage` counts them (`input` excludes cached input) plus reasoning tokens. */
export interface RawUsage {
  input: number
  output: number
  cacheRead: number
  /** Output tokens spent on reasoning (already inside `output`). */
  reasoning: number
}

/** One assembled answer. */
export interface Assembled {
  readonly responseId: string | undefined
  readonly model: string | undefined
  readonly content: string
  readonly toolCalls: ReadonlyArray<ToolCall.ToolCall>
  readonly finishReason: Chat.FinishReason
  readonly usage: Readonly<RawUsage>
  /** Tool calls whose arguments did not parse to an object (sent with `{ _raw }` arguments). */
  readonly invalidToolInputs: ReadonlyArray<{ readonly id: string; readonly name: string }>
  /** Tool calls dropped because their arguments may be incomplete. */
  readonly droppedToolCalls: ReadonlyArray<{ readonly id: string; readonly name: string }>
}

/** What went wrong in a stream that the provider turns into a `ChatModelError`. */
export type StreamProblem =
  | { readonly _tag: "incomplete" }
  | { readonly _tag: "inconsistent"; readonly detail: string }
  | { readonly _tag: "failed"; readonly code: string | null | undefined; readonly message: string }

/** An assembler of one wire protocol. */
export interface Assembler {
  /** Whether a text delta has been passed to the sink (a retry would then repeat text). */
  readonly emitted: boolean
  push(event: unknown): void
  /** The answer, or why there is none. */
  finish(): Assembled | StreamProblem
}
