/**
 * @agentkit/anthropic: the Anthropic provider, a `ChatModel` layer on `@anthropic-ai/sdk`.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as AnthropicChatModel from "./AnthropicChatModel.js"
/** @since 0.1.0 */
export * as Pricing from "./Pricing.js"
