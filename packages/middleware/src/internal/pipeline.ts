/** One middleware value for both pipelines. @internal */
import type { ChatCall, ChatHandler, ChatMiddleware, ToolHandler, ToolInvocation, ToolMiddleware } from "@agentkit/core"

/** A middleware that fits either list: it looks at the first call to know which pipeline it is in. */
export type Both = ChatMiddleware & ToolMiddleware

/** Whether a pipeline call is a tool call (a tool invocation carries the tool). */
export const isToolInvocation = (call: ChatCall | ToolInvocation<unknown, unknown>): call is ToolInvocation<unknown, unknown> =>
  "tool" in call

/**
 * Joins a chat middleware and a tool middleware into one value. Each side is composed once, on the
 * first call that reaches it.
 */
export const both = (chat: ChatMiddleware, tool: ToolMiddleware): Both => {
  const wrap = (next: ChatHandler | ToolHandler) => {
    let chatHandler: ChatHandler | undefined
    let toolHandler: ToolHandler | undefined
    return (call: ChatCall | ToolInvocation<unknown, unknown>) =>
      isToolInvocation(call)
        ? (toolHandler ??= tool(next as ToolHandler))(call)
        : (chatHandler ??= chat(next as ChatHandler))(call)
  }
  return wrap as unknown as Both
}
