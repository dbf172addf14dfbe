/**
 * Request mapping: an agentkit `ChatRequest` to the body of `POST /v1/messages`.
 *
 * - System messages (wherever they are) go to `system`, one text block each, in order.
 * - Tools go to `tools` as `{ name, description, input_schema }`, in the registry's order; a
 *   forced tool choice goes to `tool_choice` as `{ type: "tool", name }`, right after them.
 * - Consecutive messages of one Anthropic role merge into one message. A run of tool results
 *   (and any user text after them) becomes ONE user message, `tool_result` blocks first (as the
 *   API requires), each with `is_error`.
 * - Assistant text and tool calls become `text` then `tool_use` blocks.
 * - Message content is always a block array (never the string shorthand), so a message reads the
 *   same bytes whether or not it carries the newest-message cache breakpoint.
 * - Prompt caching puts `cache_control: { type: "ephemeral" }` on the last tool, the last system
 *   block and the last block of the newest message (3 of the API's 4 breakpoints). The prefix
 *   (tools + system) depends only on the tools and system messages, so it is byte-identical across
 *   the turns of a run and across runs of the same agent.
 *
 * @internal
 */
import type { Chat, Message } from "@agentkit/core"
import type Anthropic from "@anthropic-ai/sdk"

/** The settings the layer resolved once. */
export interface RequestSettings {
  readonly defaultModel: string | undefined
  readonly maxTokens: number
  readonly cache: boolean
}

/** The streaming request body the provider sends. */
export type StreamingParams = Anthropic.MessageCreateParamsStreaming

type TextBlock = Anthropic.TextBlockParam
type ToolResultBlock = Anthropic.ToolResultBlockParam
type ToolUseBlock = Anthropic.ToolUseBlockParam
type UserBlock = TextBlock | ToolResultBlock
type AssistantBlock = TextBlock | ToolUseBlock

const EPHEMERAL: Anthropic.CacheControlEphemeral = Object.freeze({
  type: "ephemeral"
}) as Anthropic.CacheControlEphemeral

/** The model a request is sent to: the request's own, else the layer's default, else `undefined`. */
export const resolveModel = (request: Chat.ChatRequest, settings: RequestSettings): string | undefined =>
  request.model !== "" ? request.model : settings.defaultModel

/** The `system` blocks: one per non-empty system message, in order. */
export const systemBlocks = (messages: ReadonlyArray<Message.Message>, cache: boolean): Array<TextBlock> => {
  const blocks: Array<TextBlock> = []
  for (const message of messages) {
    if (message.role === "system" && message.content !== "") blocks.push({ type: "text", text: message.content })
  }
  const last = blocks.length - 1
  if (cache && last >= 0) blocks[last] = { ...blocks[last]!, cache_control: EPHEMERAL }
  return blocks
}

/** The `tools` entries, in the given order; the last one carries the cache breakpoint. */
export const toolParams = (tools: ReadonlyArray<Chat.ToolSchema>, cache: boolean): Array<Anthropic.Tool> => {
  const last = tools.length - 1
  return tools.map((tool, index) => {
    const param: Anthropic.Tool = {
      name: tool.name,
      description: tool.description,
      input_schema: tool.parameters as Anthropic.Tool.InputSchema
    }
    if (cache && index === last) param.cache_control = EPHEMERAL
    return param
  })
}

interface UserTurn {
  readonly role: "user"
  readonly results: Array<ToolResultBlock>
  readonly texts: Array<TextBlock>
}

interface AssistantTurn {
  readonly role: "assistant"
  readonly blocks: Array<AssistantBlock>
}

/** The `messages` list: turns merged by role, tool results first in a user turn. */
export const messageParams = (
  messages: ReadonlyArray<Message.Message>,
  cache: boolean
): Array<Anthropic.MessageParam> => {
  const turns: Array<UserTurn | AssistantTurn> = []
  const userTurn = (): UserTurn => {
    const last = turns[turns.length - 1]
    if (last !== undefined && last.role === "user") return last
    const turn: UserTurn = { role: "user", results: [], texts: [] }
    turns.push(turn)
    return turn
  }
  const assistantTurn = (): AssistantTurn => {
    const last = turns[turns.length - 1]
    if (last !== undefined && last.role === "assistant") return last
    const turn: AssistantTurn = { role: "assistant", blocks: [] }
    turns.push(turn)
    return turn
  }

  for (const message of messages) {
    switch (message.role) {
      case "system":
        break
      case "user": {
        // an empty message opens no turn, so its neighbours still merge
        if (message.content !== "") userTurn().texts.push({ type: "text", text: message.content })
        break
      }
      case "tool": {
        userTurn().results.push({
          type: "tool_result",
          tool_use_id: message.toolCallId,
          content: message.content,
          is_error: message.isError
        })
        break
      }
      case "assistant": {
        if (message.content === "" && message.toolCalls.length === 0) break
        const turn = assistantTurn()
        if (message.content !== "") turn.blocks.push({ type: "text", text: message.content })
        for (const call of message.toolCalls) {
          turn.blocks.push({ type: "tool_use", id: call.id, name: call.name, input: call.arguments })
        }
        break
      }
    }
  }

  const params: Array<Anthropic.MessageParam> = turns.map((turn) =>
    turn.role === "user"
      ? { role: "user", content: [...turn.results, ...turn.texts] satisfies Array<UserBlock> }
      : { role: "assistant", content: turn.blocks }
  )

  if (cache) {
    const newest = params[params.length - 1]
    const content = newest?.content
    if (Array.isArray(content) && content.length > 0) {
      const index = content.length - 1
      content[index] = { ...content[index]!, cache_control: EPHEMERAL } as (typeof content)[number]
    }
  }
  return params
}

/**
 * The whole streaming request body, keys in a fixed order (`model`, `max_tokens`, `system`,
 * `tools`, `tool_choice`, `messages`, `stream`), so equal requests serialize to equal bytes.
 * `temperature` is not sent: API version 2026-10-21 (SDK 1.x) has no sampling parameters.
 */
export const toParams = (request: Chat.ChatRequest, model: string, settings: RequestSettings): StreamingParams => {
  const system = systemBlocks(request.messages, settings.cache)
  return {
    model,
    max_tokens: request.maxTokens ?? settings.maxTokens,
    ...(system.length > 0 ? { system } : {}),
    ...(request.tools.length > 0 ? { tools: toolParams(request.tools, settings.cache) } : {}),
    ...(request.toolChoice === undefined
      ? {}
      : { tool_choice: { type: "tool" as const, name: request.toolChoice.name } }),
    messages: messageParams(request.messages, settings.cache),
    stream: true
  }
}

/** Why a request cannot be sent as it is (checked before anything goes out), if it cannot. */
export const requestProblem = (request: Chat.ChatRequest): string | undefined => {
  const choice = request.toolChoice
  if (choice === undefined || request.tools.some((tool) => tool.name === choice.name)) return undefined
  const names = request.tools.map((tool) => tool.name)
  return `AnthropicChatModel: toolChoice names '${choice.name}', which is not one of the request's tools (${
    names.length === 0 ? "none" : names.join(", ")
  })`
}
