/**
 * The SDK client, built once per layer: `maxRetries` 0 unless asked (the chat retry middleware
 * owns retries), and the SDK's own OpenTelemetry span off (`openTelemetry: false`, which also
 * stops the SDK from injecting trace headers), so the `chat {model}` span is the only span of a
 * model call.
 *
 * @internal
 */
import Anthropic from "@anthropic-ai/sdk"
import * as Duration from "effect/Duration"
import * as Redacted from "effect/Redacted"

/** What the client is built from. */
export interface ClientOptions {
  readonly apiKey: Redacted.Redacted<string>
  readonly baseURL?: string | undefined
  readonly maxRetries?: number | undefined
  readonly timeout?: Duration.DurationInput | undefined
}

/** Builds the SDK client. */
export const makeClient = (options: ClientOptions): Anthropic =>
  new Anthropic({
    apiKey: Redacted.value(options.apiKey),
    ...(options.baseURL !== undefined ? { baseURL: options.baseURL } : {}),
    maxRetries: options.maxRetries ?? 0,
    ...(options.timeout !== undefined ? { timeout: Duration.toMillis(Duration.decode(options.timeout)) } : {}),
    openTelemetry: false
  })
