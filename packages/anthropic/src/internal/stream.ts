/**
 * Stream assembly: the raw Messages API stream events of one call folded into one answer.
 *
 * - `text_delta`s are passed to the sink as they arrive and concatenated.
 * - `input_json_delta` fragments are concatenated per content block and parsed at that block's
 *   `content_block_stop`. Input that does not parse to a JSON object becomes the arguments
 *   `{ _raw: "<the text>" }` (the Python agentkit's representation): the tool's argument check then
 *   rejects the unexpected `_raw` key with a `ToolArgumentError`, which the agent loop answers with
 *   an `is_error` tool result the model can fix. It is never a crash.
 * - `message_start` gives the message id, the served model and the input/cache usage;
 *   `message_delta` the stop reason and the cumulative output tokens.
 * - A `max_tokens` stop whose last block is a `tool_use` drops that call: its input may be cut off,
 *   so it must not run. A `tool_use` block that never stopped is dropped too.
 * - `ping`, thinking/signature/citation deltas, server-tool blocks and unknown event types are
 *   ignored.
 *
 * @internal
 */
import type { Chat, ToolCall } from "@agentkit/core"
import type Anthropic from "@anthropic-ai/sdk"

/** The key that carries tool input the model sent but that is not a JSON object. */
export const RAW_ARGUMENTS_KEY = "_raw"

interface TextState {
  readonly kind: "text"
  text: string
}

interface ToolUseState {
  readonly kind: "tool_use"
  readonly id: string
  readonly name: string
  readonly initial: unknown
  readonly fragments: Array<string>
  stopped: boolean
  arguments: Record<string, unknown> | undefined
  invalid: boolean
}

type BlockState = TextState | ToolUseState

/** Token counts as the API reports them (`input` excludes cached tokens). */
export interface RawUsage {
  input: number
  output: number
  cacheRead: number
  cacheWrite: number
}

/** One assembled answer. */
export interface Assembled {
  readonly messageId: string | undefined
  readonly model: string | undefined
  readonly content: string
  readonly toolCalls: ReadonlyArray<ToolCall.ToolCall>
  readonly stopReason: string | null
  readonly usage: Readonly<RawUsage>
  /** Tool calls whose input did not parse to an object (sent with `{ _raw }` arguments). */
  readonly invalidToolInputs: ReadonlyArray<{ readonly id: string; readonly name: string }>
  /** Tool calls dropped because their input may be incomplete. */
  readonly droppedToolCalls: ReadonlyArray<{ readonly id: string; readonly name: string }>
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** `{}` for no input, the object for a JSON object, `{ _raw }` for anything else. */
export const coerceToolInput = (
  raw: string
): { readonly value: Record<string, unknown>; readonly invalid: boolean } => {
  if (raw.trim() === "") return { value: {}, invalid: false }
  try {
    const parsed: unknown = JSON.parse(raw)
    if (isRecord(parsed)) return { value: parsed, invalid: false }
  } catch {
    // fall through: not JSON
  }
  return { value: { [RAW_ARGUMENTS_KEY]: raw }, invalid: true }
}

const count = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) ? value : undefined

/** Folds stream events into an answer; passes text deltas on at once. */
export class Assembler {
  /** Whether a text delta has been passed to the sink (a retry would then repeat text). */
  emitted = false
  /** Whether `message_stop` arrived. */
  complete = false
  private messageId: string | undefined = undefined
  private model: string | undefined = undefined
  private stopReason: string | null = null
  private readonly usage: RawUsage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }
  private readonly blocks = new Map<number, BlockState>()

  constructor(private readonly emit: (delta: Chat.ChatDelta) => void) {}

  push(event: Anthropic.RawMessageStreamEvent | { readonly type: string }): void {
    switch (event.type) {
      case "message_start": {
        const message = (event as Anthropic.RawMessageStartEvent).message
        this.messageId = typeof message.id === "string" ? message.id : undefined
        this.model = typeof message.model === "string" ? message.model : undefined
        this.readUsage(message.usage)
        if (message.stop_reason != null) this.stopReason = message.stop_reason
        return
      }
      case "content_block_start": {
        const { index, content_block: block } = event as Anthropic.RawContentBlockStartEvent
        if (block.type === "text") {
          this.blocks.set(index, { kind: "text", text: "" })
          if (block.text !== "") this.text(index, block.text)
        } else if (block.type === "tool_use") {
          this.blocks.set(index, {
            kind: "tool_use",
            id: block.id,
            name: block.name,
            initial: block.input,
            fragments: [],
            stopped: false,
            arguments: undefined,
            invalid: false
          })
        }
        return
      }
      case "content_block_delta": {
        const { index, delta } = event as Anthropic.RawContentBlockDeltaEvent
        if (delta.type === "text_delta") this.text(index, delta.text)
        else if (delta.type === "input_json_delta") {
          const block = this.blocks.get(index)
          if (block?.kind === "tool_use") block.fragments.push(delta.partial_json)
        }
        return
      }
      case "content_block_stop": {
        const block = this.blocks.get((event as Anthropic.RawContentBlockStopEvent).index)
        if (block?.kind === "tool_use" && !block.stopped) {
          block.stopped = true
          if (block.fragments.length > 0) {
            const { invalid, value } = coerceToolInput(block.fragments.join(""))
            block.arguments = value
            block.invalid = invalid
          } else {
            block.arguments = isRecord(block.initial) ? block.initial : {}
          }
        }
        return
      }
      case "message_delta": {
        const { delta, usage } = event as Anthropic.RawMessageDeltaEvent
        if (delta?.stop_reason != null) this.stopReason = delta.stop_reason
        this.readUsage(usage)
        return
      }
      case "message_stop":
        this.complete = true
        return
      default:
        // `ping` and event types this version does not know
        return
    }
  }

  /** The answer, once `message_stop` has arrived. */
  finish(): Assembled {
    const texts: Array<string> = []
    const toolCalls: Array<ToolCall.ToolCall> = []
    const invalidToolInputs: Array<{ id: string; name: string }> = []
    const droppedToolCalls: Array<{ id: string; name: string }> = []
    const indices = [...this.blocks.keys()].sort((a, b) => a - b)
    const lastIndex = indices[indices.length - 1]
    for (const index of indices) {
      const block = this.blocks.get(index)!
      if (block.kind === "text") {
        texts.push(block.text)
        continue
      }
      const cutOff = this.stopReason === "max_tokens" && index === lastIndex
      if (!block.stopped || block.arguments === undefined || cutOff) {
        droppedToolCalls.push({ id: block.id, name: block.name })
        continue
      }
      if (block.invalid) invalidToolInputs.push({ id: block.id, name: block.name })
      toolCalls.push({ id: block.id, name: block.name, arguments: block.arguments })
    }
    return {
      messageId: this.messageId,
      model: this.model,
      content: texts.join(""),
      toolCalls,
      stopReason: this.stopReason,
      usage: { ...this.usage },
      invalidToolInputs,
      droppedToolCalls
    }
  }

  private text(index: number, text: string): void {
    if (text === "") return
    const block = this.blocks.get(index)
    if (block?.kind === "text") block.text += text
    else this.blocks.set(index, { kind: "text", text })
    this.emitted = true
    this.emit({ text })
  }

  private readUsage(usage: Partial<Anthropic.Usage> | Partial<Anthropic.MessageDeltaUsage> | null | undefined): void {
    if (usage == null) return
    this.usage.input = count(usage.input_tokens) ?? this.usage.input
    this.usage.output = count(usage.output_tokens) ?? this.usage.output
    this.usage.cacheRead = count(usage.cache_read_input_tokens) ?? this.usage.cacheRead
    this.usage.cacheWrite = count(usage.cache_creation_input_tokens) ?? this.usage.cacheWrite
  }
}
