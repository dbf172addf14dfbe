/**
 * @agentkit/openai: the OpenAI provider, a `ChatModel` layer on the `openai` SDK (the Responses
 * API, and Chat Completions for OpenAI-compatible servers).
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as OpenAIChatModel from "./OpenAIChatModel.js"
