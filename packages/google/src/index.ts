/**
 * @agentkit/google: the Google provider, a `ChatModel` layer on `@google/genai` (the Gemini API).
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as GoogleChatModel from "./GoogleChatModel.js"
