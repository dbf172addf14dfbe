/**
 * The provider port: one model call, with text deltas passed to a sink as they arrive.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import type { ChatDelta, ChatRequest, ChatResponse } from "./Chat.js"
import type { ChatModelError } from "./ChatModelError.js"

/**
 * The model service. Providers (Anthropic) and fakes (`FakeLLM`) are layers of it.
 *
 * @example
 * ```ts
 * import { ChatModel, Usage } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const echo = ChatModel.layer({
 *   chat: (request, { emit }) => {
 *     const text = `you said ${request.messages.length} message(s)`
 *     emit({ text })
 *     return Effect.succeed({ content: text, toolCalls: [], usage: Usage.zero, finishReason: "end_turn", model: request.model, provider: "echo" })
 *   }
 * })
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class ChatModel extends Context.Tag("@agentkit/core/ChatModel")<ChatModel, ChatModel.Service>() {
  /** A layer of a chat model implementation. */
  static layer(service: ChatModel.Service): Layer.Layer<ChatModel> {
    return Layer.succeed(ChatModel, service)
  }

  /**
   * The deltas of one call as a `Stream`, for users who want one (the pipelines themselves use
   * the `emit` sink, which is much cheaper).
   */
  static stream(request: ChatRequest): Stream.Stream<ChatDelta, ChatModelError, ChatModel> {
    return Stream.unwrap(
      Effect.map(ChatModel, (model) =>
        Stream.asyncPush<ChatDelta, ChatModelError>(
          (emit) =>
            model.chat(request, { emit: (delta) => void emit.single(delta) }).pipe(
              // matchCause, not match (as `Agent.stream`): a defect or an interruption must end the
              // stream too, or the consumer would wait forever for a delta that never comes.
              Effect.matchCauseEffect({
                onFailure: (cause) => Effect.sync(() => emit.halt(cause)),
                onSuccess: () => Effect.sync(() => emit.end())
              }),
              Effect.forkScoped
            ),
          { bufferSize: "unbounded" }
        ))
    )
  }
}

/**
 * The chat model's types: `ChatModel.Service` (a model implementation), `ChatModel.Options`
 * (where a call passes its text deltas) and `ChatModel.Features` (what it honours beyond the
 * common request).
 *
 * @example
 * ```ts
 * import { ChatModel, Usage } from "@agentkit/core"
 * import { Effect } from "effect"
 *
 * const silent: ChatModel.Service = {
 *   chat: (request, _options: ChatModel.Options) =>
 *     Effect.succeed({ content: "", toolCalls: [], usage: Usage.zero, finishReason: "end_turn", model: request.model, provider: "silent" })
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace ChatModel {
  /**
   * Where a model call passes its text deltas, as they arrive.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Options {
    readonly emit: (delta: ChatDelta) => void
  }

  /**
   * What a provider honours beyond the common request: `toolChoice`, a forced call of one of the
   * request's tools (`ChatRequest.toolChoice`); `responseFormat`, JSON text matching a schema
   * (`ChatRequest.responseFormat`). Absent means no.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Features {
    readonly toolChoice?: boolean | undefined
    readonly responseFormat?: boolean | undefined
  }

  /**
   * A model implementation.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** Runs one call; passes text deltas to `emit` as they arrive; succeeds with the whole response. */
    readonly chat: (request: ChatRequest, options: Options) => Effect.Effect<ChatResponse, ChatModelError>
    /** What the provider honours beyond the common request (default: nothing). */
    readonly features?: Features | undefined
  }
}
